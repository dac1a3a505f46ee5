package testenv

import (
	"context"
	"os"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// ApplyFile creates the object of a YAML file (a sample) in namespace as kubectl apply
// would, with strict field validation: an unknown field fails the test.
func (e *Env) ApplyFile(t testing.TB, path, namespace string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path) //nolint:gosec // a sample file the test names
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &u.Object); err != nil {
		t.Fatal(err)
	}
	u.SetNamespace(namespace)
	if err := e.Client.Create(context.Background(), u, client.FieldValidation(metav1.FieldValidationStrict)); err != nil {
		t.Fatal(err)
	}
	return u
}

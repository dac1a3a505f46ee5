package release

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// OwnedBy is a Helm post-renderer that makes every object of a release controlled by the
// custom resource the release is for, and labels it: the manager watches them (drift wakes
// it), and the garbage collector removes them with the resource should the release be lost.
type OwnedBy struct {
	Owner                metav1.OwnerReference
	LabelKey, LabelValue string
}

// Run adds the owner reference and the label to each document of the rendered manifest.
func (o OwnedBy) Run(rendered *bytes.Buffer) (*bytes.Buffer, error) {
	objects, err := Objects(rendered)
	if err != nil {
		return nil, fmt.Errorf("post-rendering: %w", err)
	}
	out := &bytes.Buffer{}
	for _, obj := range objects {
		obj.SetOwnerReferences(append(obj.GetOwnerReferences(), o.Owner))
		labels := obj.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[o.LabelKey] = o.LabelValue
		obj.SetLabels(labels)
		data, err := yaml.Marshal(obj.Object)
		if err != nil {
			return nil, err
		}
		out.WriteString("---\n")
		out.Write(data)
	}
	return out, nil
}

// Objects splits a manifest (YAML documents) into its objects, in order, skipping empty
// documents.
func Objects(manifest io.Reader) ([]*unstructured.Unstructured, error) {
	decoder := utilyaml.NewYAMLOrJSONDecoder(manifest, 4096)
	var objects []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		err := decoder.Decode(&obj.Object)
		if errors.Is(err, io.EOF) {
			return objects, nil
		}
		if err != nil {
			return nil, err
		}
		if len(obj.Object) > 0 {
			objects = append(objects, obj)
		}
	}
}

package crd_test

import (
	"io/fs"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/quintet-operators/quintet/operators/etcd-cluster/config/crd"
	"github.com/quintet-operators/quintet/shared/restapi/restapitest"
)

// The REST API's OpenAPI document is valid and serves every kind the operator defines.
func TestTheRESTAPIServesEveryKind(t *testing.T) {
	restapitest.ExpectKinds(t, crd.Bases, "etcdbackups", "etcdclusters", "etcdrestores")
}

// The committed OpenAPI document (make docs-api) is the one the REST API serves: the same
// CRDs, the options the manager gives the API ("etcd-cluster", as cmd/main.go names the manager).
func TestTheCommittedOpenAPIDocumentIsTheServedOne(t *testing.T) {
	restapitest.ExpectServedDocument(t, crd.Bases, "etcd-cluster", "../../../../docs/api/openapi/etcd-cluster.json")
}

// Every list of CEL rules holds each rule once: the API server's server-side apply (kubectl
// apply --server-side, OLM, Helm) refuses a CRD whose x-kubernetes-validations repeat a rule,
// as they would where a struct inlines another with rules of its own.
func TestNoCRDRepeatsAValidationRule(t *testing.T) {
	files, err := fs.Glob(crd.Bases, "bases/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs: %v", err)
	}
	for _, f := range files {
		data, err := fs.ReadFile(crd.Bases, f)
		if err != nil {
			t.Fatal(err)
		}
		def := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(data, def); err != nil {
			t.Fatal(err)
		}
		for _, v := range def.Spec.Versions {
			walkSchema(v.Schema.OpenAPIV3Schema, v.Name, func(path string, s *apiextensionsv1.JSONSchemaProps) {
				seen := map[string]bool{}
				for _, r := range s.XValidations {
					if seen[r.Rule] {
						t.Errorf("%s: %s repeats the rule %q", f, path, r.Rule)
					}
					seen[r.Rule] = true
				}
			})
		}
	}
}

// walkSchema calls visit on s and every schema below it.
func walkSchema(s *apiextensionsv1.JSONSchemaProps, path string, visit func(string, *apiextensionsv1.JSONSchemaProps)) {
	if s == nil {
		return
	}
	visit(path, s)
	for name, p := range s.Properties {
		walkSchema(&p, path+"."+name, visit)
	}
	if s.Items != nil {
		walkSchema(s.Items.Schema, path+"[]", visit)
	}
	if s.AdditionalProperties != nil {
		walkSchema(s.AdditionalProperties.Schema, path+"{}", visit)
	}
}

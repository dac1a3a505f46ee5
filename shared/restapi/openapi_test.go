package restapi_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/quintet-operators/quintet/shared/internal/testkind"
	"github.com/quintet-operators/quintet/shared/restapi"
	"github.com/quintet-operators/quintet/shared/restapi/restapitest"
)

var widgetCRDs = testkind.CRDs

func TestDocumentIsValidOpenAPIWithTheCRDSchema(t *testing.T) {
	restapitest.ExpectKinds(t, widgetCRDs, "widgets")
	doc := restapitest.Document(t, widgetCRDs)
	item := doc.Paths.Find("/api/v1/namespaces/{namespace}/widgets/{name}")
	if item.Patch.RequestBody.Value.Content.Get("application/merge-patch+json") == nil ||
		item.Patch.RequestBody.Value.Content.Get("application/apply-patch+yaml") == nil {
		t.Fatal("PATCH documents merge patch and server-side apply")
	}
	widget := doc.Components.Schemas["Widget"].Value.Properties["spec"].Value.Properties["widget"].Value
	replicas := widget.Properties["replicas"].Value
	if replicas.Min == nil || *replicas.Min != 0 || replicas.Max == nil || *replicas.Max != 1000 {
		t.Errorf("the CRD's bounds are documented: min %v max %v", replicas.Min, replicas.Max)
	}
	if len(widget.Properties["imagePullPolicy"].Value.Enum) != 3 {
		t.Errorf("the CRD's enums are documented: %v", widget.Properties["imagePullPolicy"].Value.Enum)
	}
	image := widget.Properties["image"].Value
	if image.Extensions["x-kubernetes-validations"] == nil || !strings.Contains(image.Description, "image must not contain spaces") {
		t.Errorf("CEL rules are kept and described: %q", image.Description)
	}
	if len(doc.Components.SecuritySchemes) != 1 || doc.Components.SecuritySchemes["bearerAuth"].Value.Scheme != "bearer" {
		t.Error("the document asks for a bearer token")
	}
}

func TestKindsFromCRDsRefusesWhatItCannotServe(t *testing.T) {
	for name, crd := range map[string]string{
		"cluster-scoped": "kind: CustomResourceDefinition\nspec: {group: g, scope: Cluster, names: {kind: K, plural: ks}, versions: [{name: v1, served: true, storage: true}]}",
		"not a CRD":      "kind: ConfigMap",
		"no storage":     "kind: CustomResourceDefinition\nspec: {group: g, scope: Namespaced, names: {kind: K, plural: ks}, versions: [{name: v1, served: true}]}",
	} {
		if _, err := restapi.KindsFromCRDs(fstest.MapFS{"crd.yaml": {Data: []byte(crd)}}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

package release

import (
	"bytes"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func TestOwnedByMakesEveryObjectControlledAndLabelled(t *testing.T) {
	rendered := bytes.NewBufferString(`---
# Source: minimart/templates/service.yaml
apiVersion: v1
kind: Service
metadata:
  name: shop
  labels:
    app.kubernetes.io/name: minimart
---
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: shop
spec:
  replicas: 1
`)
	owner := metav1.OwnerReference{APIVersion: "charts.samutup.com/v1alpha1", Kind: "Minimart", Name: "shop", UID: "u-1",
		Controller: new(true), BlockOwnerDeletion: new(true)}
	out, err := OwnedBy{Owner: owner, LabelKey: "charts.samutup.com/minimart", LabelValue: "shop"}.Run(rendered)
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(strings.TrimPrefix(out.String(), "---\n"), "---\n")
	if len(docs) != 2 {
		t.Fatalf("%d documents, want 2 (the empty one dropped):\n%s", len(docs), out)
	}
	for i, kind := range []string{"Service", "Deployment"} {
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(docs[i]), &obj.Object); err != nil {
			t.Fatal(err)
		}
		if obj.GetKind() != kind {
			t.Errorf("document %d is a %s, want %s (the order is kept)", i, obj.GetKind(), kind)
		}
		refs := obj.GetOwnerReferences()
		if len(refs) != 1 || refs[0].UID != "u-1" || refs[0].Controller == nil || !*refs[0].Controller {
			t.Errorf("%s: owner references %+v", kind, refs)
		}
		if obj.GetLabels()["charts.samutup.com/minimart"] != "shop" {
			t.Errorf("%s: labels %v", kind, obj.GetLabels())
		}
	}
	if !strings.Contains(docs[0], "app.kubernetes.io/name: minimart") {
		t.Errorf("the chart's labels were lost:\n%s", docs[0])
	}
}

func TestOwnedByRefusesWhatIsNotYAML(t *testing.T) {
	if _, err := (OwnedBy{}).Run(bytes.NewBufferString("kind: [unclosed")); err == nil {
		t.Fatal("no error")
	}
}

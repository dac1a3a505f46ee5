package minimart

import (
	"strings"
	"testing"
	"testing/fstest"

	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestWatchesNamesTheMinimartKindAndItsEmbeddedChart(t *testing.T) {
	w, c, err := WatchFor(schema.GroupVersionKind{Group: "charts.samutup.com", Version: "v1alpha1", Kind: "Minimart"})
	if err != nil {
		t.Fatal(err)
	}
	if w.Chart != "helm-charts/minimart" || c.Name() != "minimart" || c.Metadata.Version != "0.1.0" || len(c.Schema) == 0 {
		t.Fatalf("watch %+v, chart %s %s (schema %d bytes)", w, c.Name(), c.Metadata.Version, len(c.Schema))
	}

	values, err := chartutil.ToRenderValues(c, map[string]any{"storeName": "Shop", "service": map[string]any{"nodePort": 30080}},
		chartutil.ReleaseOptions{Name: "shop", Namespace: "stores", IsInstall: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rendered, err := engine.Render(c, values)
	if err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{
		"minimart/templates/deployment.yaml": "value: \"Shop\"",
		"minimart/templates/service.yaml":    "nodePort: 30080",
	} {
		if !strings.Contains(rendered[file], want) {
			t.Errorf("%s lacks %q:\n%s", file, want, rendered[file])
		}
	}

	if _, _, err := WatchFor(schema.GroupVersionKind{Group: "charts.samutup.com", Version: "v1", Kind: "Minimart"}); err == nil {
		t.Error("a kind watches.yaml does not name was found")
	}
}

func TestTheChartsSchemaRefusesBadValues(t *testing.T) {
	_, c, err := WatchFor(schema.GroupVersionKind{Group: "charts.samutup.com", Version: "v1alpha1", Kind: "Minimart"})
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []map[string]any{
		{"replicaCount": -1},
		{"service": map[string]any{"type": "LoadBalancer"}},
		{"colour": "blue"},
	} {
		if _, err := chartutil.ToRenderValues(c, bad, chartutil.ReleaseOptions{Name: "shop"}, nil); err == nil {
			t.Errorf("values %v were accepted", bad)
		}
	}
}

func TestWatchesAreParsedStrictly(t *testing.T) {
	fsys := fstest.MapFS{"watches.yaml": {Data: []byte("- group: g\n  version: v\n  kind: K\n  chart: c\n  reconcilePeriod: 1m\n")}}
	if _, err := parseWatches(fsys); err == nil || !strings.Contains(err.Error(), "reconcilePeriod") {
		t.Fatalf("an unknown key: error %v", err)
	}
}

package monitoring

import (
	"context"
	"os"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/quintet-operators/quintet/shared/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.MainEnv(m, testenv.Options{AddToScheme: []func(*runtime.Scheme) error{apiextensionsv1.AddToScheme}}, func(e *testenv.Env) { env = e }))
}

// files are a config/prometheus, as an operator embeds it.
var files = fstest.MapFS{
	"monitor.yaml": {Data: []byte(`apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: widget-controller-manager-metrics-monitor
  namespace: widget-system
spec:
  endpoints:
  - port: https
`)},
	"prometheus_rule.yaml": {Data: []byte(`apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: widget-alerts
  namespace: widget-system
spec:
  groups:
  - name: widget
    rules:
    - alert: WidgetOperatorDown
      expr: absent(up{job="widget-operator"} == 1)
`)},
	"dashboard.json": {Data: []byte(`{"title": "Widget"}`)},
}

func TestObjectsAreTheFilesAndTheDashboardConfigMap(t *testing.T) {
	objects, err := Objects(files, "widget")
	if err != nil {
		t.Fatal(err)
	}
	got := make([]string, 0, len(objects))
	for _, o := range objects {
		got = append(got, o.GetKind()+"/"+o.GetName())
	}
	want := "ServiceMonitor/widget-controller-manager-metrics-monitor PrometheusRule/widget-alerts ConfigMap/widget-dashboard"
	if strings.Join(got, " ") != want {
		t.Fatalf("objects %v, want %s", got, want)
	}
	dashboard := objects[2]
	if dashboard.GetLabels()[DashboardLabel] != "1" {
		t.Errorf("dashboard labels %v, want %s=1", dashboard.GetLabels(), DashboardLabel)
	}
	if data, _, _ := unstructured.NestedString(dashboard.Object, "data", "widget.json"); data != `{"title": "Widget"}` {
		t.Errorf("dashboard data %q", data)
	}
}

func TestObjectsRefusesMissingOrShapelessFiles(t *testing.T) {
	for name, fsys := range map[string]fstest.MapFS{
		"no rules":          {"monitor.yaml": files["monitor.yaml"], "dashboard.json": files["dashboard.json"]},
		"no dashboard":      {"monitor.yaml": files["monitor.yaml"], "prometheus_rule.yaml": files["prometheus_rule.yaml"]},
		"a list, not a map": {"monitor.yaml": {Data: []byte("- a\n- b\n")}, "prometheus_rule.yaml": files["prometheus_rule.yaml"], "dashboard.json": files["dashboard.json"]},
		"no kind":           {"monitor.yaml": {Data: []byte("metadata: {name: x}\n")}, "prometheus_rule.yaml": files["prometheus_rule.yaml"], "dashboard.json": files["dashboard.json"]},
	} {
		if _, err := Objects(fsys, "widget"); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// monitoringCRDs are prometheus-operator's two kinds, schemaless: what the test needs of them.
func monitoringCRDs() []*apiextensionsv1.CustomResourceDefinition {
	kinds := []string{"ServiceMonitor", "PrometheusRule"}
	crds := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(kinds))
	for _, kind := range kinds {
		plural := strings.ToLower(kind) + "s"
		crds = append(crds, &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: plural + ".monitoring.coreos.com"},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Group: "monitoring.coreos.com", Scope: apiextensionsv1.NamespaceScoped,
				Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Kind: kind, ListKind: kind + "List"},
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
					Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
						Type: "object", XPreserveUnknownFields: ptr.To(true)}}}},
			},
		})
	}
	return crds
}

func TestInstallerWaitsForTheKindsThenAppliesTheObjectsOwnedByTheMetricsServiceAndPutsThemBack(t *testing.T) {
	ctx := t.Context()
	mgr, err := env.NewManager(testenv.ManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	objects, err := Objects(files, "widget")
	if err != nil {
		t.Fatal(err)
	}
	ns := env.NewNamespace(t, "monitoring")
	installer := &Installer{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Mapper: mgr.GetRESTMapper(),
		Namespace: ns, Owner: "widget-controller-manager-metrics-service", FieldOwner: "widget", Objects: objects,
		Interval: 200 * time.Millisecond, Log: mgr.GetLogger()}
	if err := mgr.Add(installer); err != nil {
		t.Fatal(err)
	}
	mgr.RunForTest(t)

	dashboard := &corev1.ConfigMap{}
	dashboardKey := client.ObjectKey{Namespace: ns, Name: "widget-dashboard"}
	eventually(t, "the installer says why it waits", func() bool {
		return len(mgr.Logs.Since(0, "Not applying the monitoring objects", "monitoring.coreos.com/v1, Kind=ServiceMonitor")) == 1
	})
	if err := env.Client.Get(ctx, dashboardKey, dashboard); err == nil {
		t.Fatal("the dashboard ConfigMap was applied before prometheus-operator's kinds are served")
	}

	if _, err := envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{CRDs: monitoringCRDs()}); err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, crd := range monitoringCRDs() {
			_ = env.Client.Delete(context.Background(), crd)
		}
	}()
	eventually(t, "the installer says it cannot apply the objects without their owner", func() bool {
		return len(mgr.Logs.Since(0, "Cannot apply the monitoring objects", "reading Service "+ns+"/widget-controller-manager-metrics-service")) > 0
	})
	service := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: installer.Owner},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 8443}}}}
	if err := env.Client.Create(ctx, service); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the objects are applied", func() bool { return installed(ctx, ns, service) == len(objects) })
	if got := mgr.Logs.Since(0, "Applied the monitoring objects"); len(got) != 1 {
		t.Errorf("the installer logged %d applications, want one: %v", len(got), got)
	}

	// An object deleted or changed by hand is put back.
	monitor := objects[0].DeepCopy()
	monitor.SetNamespace(ns)
	if err := env.Client.Delete(ctx, monitor); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Get(ctx, dashboardKey, dashboard); err != nil {
		t.Fatal(err)
	}
	dashboard.Data["widget.json"] = "{}"
	if err := env.Client.Update(ctx, dashboard); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the objects are put back", func() bool {
		if installed(ctx, ns, service) != len(objects) || env.Client.Get(ctx, dashboardKey, dashboard) != nil {
			return false
		}
		return dashboard.Data["widget.json"] == `{"title": "Widget"}`
	})
}

// installed counts the test's objects in ns owned by service.
func installed(ctx context.Context, ns string, service *corev1.Service) int {
	n := 0
	for _, kind := range []struct{ apiVersion, kind, name string }{
		{"monitoring.coreos.com/v1", "ServiceMonitor", "widget-controller-manager-metrics-monitor"},
		{"monitoring.coreos.com/v1", "PrometheusRule", "widget-alerts"},
		{"v1", "ConfigMap", "widget-dashboard"},
	} {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(kind.apiVersion)
		u.SetKind(kind.kind)
		if env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: kind.name}, u) != nil {
			continue
		}
		if refs := u.GetOwnerReferences(); len(refs) == 1 && refs[0].UID == service.UID && refs[0].Kind == "Service" {
			n++
		}
	}
	return n
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting until " + what)
		}
	}
}

package main

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// operatorsWithCharts are the operators of the workspace; each has a committed chart.
func operatorsWithCharts(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob("../../operators/*/dist/chart")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no charts under operators/*/dist/chart: %v", err)
	}
	ops := make([]string, 0, len(dirs))
	for _, d := range dirs {
		ops = append(ops, filepath.Base(filepath.Dir(filepath.Dir(d))))
	}
	return ops
}

// helmTemplate renders an operator's committed chart with the real helm CLI ($HELM, which
// `make test-hack-bundle` builds and sets) into namespace ns; it returns the objects, or
// helm's error output.
func helmTemplate(t *testing.T, operator, ns string, set ...string) ([]*unstructured.Unstructured, error) {
	t.Helper()
	return helmTemplateFor(t, nil, operator, ns, set...)
}

// helmTemplateFor is helmTemplate for a cluster that serves apiVersions (group/version/kind)
// besides Kubernetes' own, as helm install finds them.
func helmTemplateFor(t *testing.T, apiVersions []string, operator, ns string, set ...string) ([]*unstructured.Unstructured, error) {
	t.Helper()
	helm := os.Getenv("HELM")
	if helm == "" {
		t.Fatal("HELM is unset: run these tests through `make test-hack-bundle`, which builds the helm CLI")
	}
	args := make([]string, 0, 5+2*len(set)+2*len(apiVersions))
	args = append(args, "template", operator, filepath.Join("..", "..", "operators", operator, "dist", "chart"), "--namespace", ns)
	for _, v := range apiVersions {
		args = append(args, "--api-versions", v)
	}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(helm, args...) //nolint:gosec // the workspace's own helm
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%w: %s", err, stderr.String())
	}
	var objects []*unstructured.Unstructured
	for _, doc := range strings.Split(stdout.String(), "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatalf("helm template %s: %v\n%s", operator, err, doc)
		}
		if len(u.Object) > 0 {
			objects = append(objects, u)
		}
	}
	return objects, nil
}

func key(u *unstructured.Unstructured) string {
	return u.GetKind() + " " + u.GetNamespace() + "/" + u.GetName()
}

// The chart with its default values makes what `kubectl apply -k config/default` makes, apart
// from what Helm adds on purpose: the resource policy keeping CRDs, the image pull policy,
// and the release namespace in the names of cluster-scoped objects. Operators installed per
// namespace (no AllNamespaces install mode) watch the release namespace, so their manager's
// RBAC and WATCH_NAMESPACE differ from config/default's: TestChartRBACFollowsTheWatchedNamespaces checks those.
// On a cluster that serves prometheus-operator's kinds, a chart with its default values makes
// what config/default with config/prometheus makes.
func TestChartsRenderWhatTheirKustomizeConfigMakes(t *testing.T) {
	for _, op := range operatorsWithCharts(t) {
		t.Run(op, func(t *testing.T) {
			ns := op + "-system"
			overlay := t.TempDir()
			config, err := filepath.Abs(filepath.Join("..", "..", "operators", op, "config"))
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(overlay, config)
			kustomization := fmt.Sprintf("resources:\n- %s/default\ncomponents:\n- %s/prometheus\n", rel, rel)
			if err := os.WriteFile(filepath.Join(overlay, "kustomization.yaml"), []byte(kustomization), 0o644); err != nil {
				t.Fatal(err)
			}
			want, err := render(overlay)
			if err != nil {
				t.Fatal(err)
			}
			objects, err := render(filepath.Join("..", "..", "operators", op, "config", "manifests"))
			if err != nil {
				t.Fatal(err)
			}
			b, err := classify(objects)
			if err != nil {
				t.Fatal(err)
			}
			perNamespace := !supportsAllNamespaces(b.base)
			got, err := helmTemplateFor(t, monitoringKinds, op, ns)
			if err != nil {
				t.Fatal(err)
			}
			gotByKey := map[string]*unstructured.Unstructured{}
			for _, u := range got {
				normalizeHelmObject(u, ns)
				gotByKey[key(u)] = u
			}
			for _, w := range want {
				if w.GetKind() == "Namespace" {
					continue
				}
				manager := w.GetName() == op+"-manager-role" || w.GetName() == op+"-manager-rolebinding"
				if perNamespace && manager {
					continue
				}
				g, ok := gotByKey[key(w)]
				if !ok {
					t.Errorf("the chart does not make %s", key(w))
					continue
				}
				delete(gotByKey, key(w))
				if perNamespace && w.GetKind() == "Deployment" {
					setWatchNamespace(t, w, ns)
				}
				if !equality.Semantic.DeepEqual(g.Object, w.Object) {
					gy, _ := yaml.Marshal(g.Object)
					wy, _ := yaml.Marshal(w.Object)
					t.Errorf("%s differs:\nchart:\n%s\nkustomize:\n%s", key(w), gy, wy)
				}
			}
			for k := range gotByKey {
				if !perNamespace || !strings.Contains(k, op+"-manager-role") {
					t.Errorf("the chart makes %s, which config/default does not", k)
				}
			}
		})
	}
}

// normalizeHelmObject takes off what the chart adds on purpose.
func normalizeHelmObject(u *unstructured.Unstructured, ns string) {
	switch u.GetKind() {
	case "ClusterRole", "ClusterRoleBinding":
		u.SetName(strings.TrimSuffix(u.GetName(), "-"+ns))
	case "CustomResourceDefinition":
		annotations := u.GetAnnotations()
		delete(annotations, "helm.sh/resource-policy")
		u.SetAnnotations(annotations)
	case "Deployment":
		containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
		for _, c := range containers {
			delete(c.(map[string]any), "imagePullPolicy")
		}
		_ = unstructured.SetNestedSlice(u.Object, containers, "spec", "template", "spec", "containers")
	}
	if name, ok, _ := unstructured.NestedString(u.Object, "roleRef", "name"); ok {
		_ = unstructured.SetNestedField(u.Object, strings.TrimSuffix(name, "-"+ns), "roleRef", "name")
	}
}

func setWatchNamespace(t *testing.T, deployment *unstructured.Unstructured, value string) {
	t.Helper()
	containers, _, _ := unstructured.NestedSlice(deployment.Object, "spec", "template", "spec", "containers")
	for _, c := range containers {
		env, _ := c.(map[string]any)["env"].([]any)
		for _, e := range env {
			if e := e.(map[string]any); e["name"] == "WATCH_NAMESPACE" {
				e["value"] = value
			}
		}
	}
	if err := unstructured.SetNestedSlice(deployment.Object, containers, "spec", "template", "spec", "containers"); err != nil {
		t.Fatal(err)
	}
}

// permission is one verb on one resource of one API group.
type permission struct{ group, resource, verb string }

func permissions(t *testing.T, u *unstructured.Unstructured) []permission {
	t.Helper()
	var role rbacv1.ClusterRole
	if err := convert(u, &role); err != nil {
		t.Fatal(err)
	}
	var out []permission
	for _, r := range role.Rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					out = append(out, permission{g, res, v})
				}
			}
		}
	}
	return out
}

// Watching a list of namespaces, the manager gets its namespaced permissions as a Role in
// each of them, and a ClusterRole only for what no Role can grant (cluster-scoped resources):
// together exactly the permissions of config/rbac's manager-role, nothing lost, nothing more.
func TestChartRBACFollowsTheWatchedNamespaces(t *testing.T) {
	for _, op := range operatorsWithCharts(t) {
		t.Run(op, func(t *testing.T) {
			ns, watched := "operators", []string{"team-a", "team-b"}
			kustomized, err := render(filepath.Join("..", "..", "operators", op, "config", "default"))
			if err != nil {
				t.Fatal(err)
			}
			var want []permission
			for _, u := range kustomized {
				if u.GetKind() == "ClusterRole" && u.GetName() == op+"-manager-role" {
					want = permissions(t, u)
				}
			}
			objects, err := helmTemplate(t, op, ns, "watchNamespaces={"+strings.Join(watched, ",")+"}")
			if err != nil {
				t.Fatal(err)
			}
			got := map[string][]permission{} // by namespace; "" for the ClusterRole
			bound := map[string]bool{}
			for _, u := range objects {
				switch {
				case u.GetKind() == "Role" && u.GetName() == op+"-manager-role":
					got[u.GetNamespace()] = permissions(t, u)
				case u.GetKind() == "ClusterRole" && u.GetName() == op+"-manager-role-"+ns:
					got[""] = permissions(t, u)
				case u.GetKind() == "RoleBinding" || u.GetKind() == "ClusterRoleBinding":
					if subject, _, _ := unstructured.NestedSlice(u.Object, "subjects"); len(subject) == 1 &&
						subject[0].(map[string]any)["namespace"] == ns && strings.Contains(u.GetName(), "manager-rolebinding") {
						bound[u.GetNamespace()] = true
					}
				case u.GetKind() == "Deployment":
					env, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
					if !strings.Contains(fmt.Sprint(env), "team-a,team-b") {
						t.Errorf("WATCH_NAMESPACE is not team-a,team-b: %v", env)
					}
				}
			}
			for _, n := range watched {
				if !bound[n] || len(got[n]) == 0 {
					t.Errorf("no manager Role bound in %s: %v", n, got[n])
				}
				union := append(slices.Clone(got[n]), got[""]...)
				slices.SortFunc(union, comparePermission)
				sortedWant := slices.Clone(want)
				slices.SortFunc(sortedWant, comparePermission)
				if !slices.Equal(union, sortedWant) {
					t.Errorf("in %s the manager may\n%v\nconfig/rbac grants\n%v", n, union, sortedWant)
				}
			}
			scopes := newScopes(nil)
			for _, p := range got[""] {
				if namespaced, err := scopes.namespaced(p.group, p.resource); err == nil && namespaced {
					t.Errorf("the ClusterRole grants %v, a namespaced resource, in every namespace", p)
				}
			}
		})
	}
}

func comparePermission(a, b permission) int {
	return strings.Compare(a.group+"/"+a.resource+"/"+a.verb, b.group+"/"+b.resource+"/"+b.verb)
}

func TestValuesSchemaRejectsBadValues(t *testing.T) {
	for _, tt := range []struct{ set, want string }{
		{"manager.replicas=0", "at '/manager/replicas': minimum"},
		{"manager.image.pullPolicy=Sometimes", "at '/manager/image/pullPolicy'"},
		{"manager.image.tag=v1 2", "at '/manager/image/tag'"},
		{"watchNamespaces={Team_A}", "at '/watchNamespaces/0'"},
		{"metrics.port=70000", "at '/metrics/port': maximum"},
		{"crd.keep=maybe", "at '/crd/keep': got string, want boolean"},
		{"manager.nodeSelector.disk=1", "at '/manager/nodeSelector/disk'"},
		{"manager.env[0].value=x", "at '/manager/env/0': missing property 'name'"},
		{"replicas=2", "additional properties 'replicas' not allowed"},
		{"api.port=0", "at '/api/port': minimum"},
		{"api.enable=yes", "at '/api/enable': got string, want boolean"},
		{"networkPolicy.metricsFrom[0].namespaceSelectr.name=x", "at '/networkPolicy/metricsFrom/0'"},
		{"networkPolicy.enable=no", "at '/networkPolicy/enable': got string, want boolean"},
		{"prometheus.enable=maybe", "at '/prometheus/enable': value must be one of 'auto', true, false"},
		{"prometheus.labels.release=1", "at '/prometheus/labels/release'"},
		{"prometheus.dashboard.enable=yes", "at '/prometheus/dashboard/enable': got string, want boolean"},
	} {
		t.Run(tt.set, func(t *testing.T) {
			_, err := helmTemplate(t, "gordon", "gordon-system", tt.set)
			if err == nil || !strings.Contains(err.Error(), "values don't meet the specifications of the schema") || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("--set %s: got %v, want the schema to refuse %s", tt.set, err, tt.want)
			}
		})
	}
}

func TestValuesReachTheManager(t *testing.T) {
	objects, err := helmTemplate(t, "gordon", "ops", "manager.replicas=2", "manager.image.tag=v9.9.9", "manager.leaderElection=false",
		"manager.nodeSelector.pool=ops", "metrics.enable=false", "crd.enable=false",
		"manager.env[0].name=BACKUP_S3_ENDPOINTS", "manager.env[0].value=s3.example.svc")
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range objects {
		switch u.GetKind() {
		case "CustomResourceDefinition":
			t.Error("crd.enable=false still installs the CRD")
		case "Deployment":
			y, _ := yaml.Marshal(u.Object)
			for _, want := range []string{"replicas: 2", "image: 127.0.0.1:5000/quintet/gordon:v9.9.9", "pool: ops", "--metrics-bind-address=0",
				"name: BACKUP_S3_ENDPOINTS\n          value: s3.example.svc"} {
				if !strings.Contains(string(y), want) {
					t.Errorf("the Deployment lacks %q:\n%s", want, y)
				}
			}
			if strings.Contains(string(y), "--leader-elect") {
				t.Error("leaderElection=false still elects")
			}
		case "Service":
			t.Error("metrics.enable=false still makes the metrics Service")
		}
	}
}

func TestAPIValuesServeTheRESTAPI(t *testing.T) {
	for _, enable := range []bool{false, true} {
		objects, err := helmTemplate(t, "kre-runtime", "ops", fmt.Sprintf("api.enable=%t", enable), "api.port=9443")
		if err != nil {
			t.Fatal(err)
		}
		var deployment string
		var service *unstructured.Unstructured
		for _, u := range objects {
			switch {
			case u.GetKind() == "Deployment":
				y, _ := yaml.Marshal(u.Object)
				deployment = string(y)
			case u.GetKind() == "Service" && strings.HasSuffix(u.GetName(), "-api"):
				service = u
			}
		}
		for _, want := range []string{"--api-bind-address=:9443", "containerPort: 9443", "name: api"} {
			if strings.Contains(deployment, want) != enable {
				t.Errorf("api.enable=%t: the Deployment has %q: %t", enable, want, !enable)
			}
		}
		if (service != nil) != enable {
			t.Fatalf("api.enable=%t: the API Service is made: %t", enable, service != nil)
		}
		if enable {
			port, _, _ := unstructured.NestedSlice(service.Object, "spec", "ports")
			if service.GetNamespace() != "ops" || service.GetName() != "kre-runtime-controller-manager-api" ||
				len(port) != 1 || port[0].(map[string]any)["targetPort"] != "api" {
				t.Errorf("the API Service is config/api's, in the release namespace: %v", service.Object)
			}
		}
	}
}

// The manager's NetworkPolicies follow their values: the metrics one by default, admitting
// metricsFrom on the metrics port; the API one with api.enable, admitting apiFrom on the
// API's port; none with networkPolicy.enable=false.
func TestNetworkPolicyValuesAdmitWhoTheUserSays(t *testing.T) {
	cases := []struct {
		set  []string
		want map[string]string // policy name suffix → the peer label it admits, on which port
	}{
		{nil, map[string]string{"allow-metrics-traffic": "metrics=enabled metrics"}},
		{[]string{"api.enable=true", "networkPolicy.apiFrom[0].namespaceSelector.matchLabels.team=web"},
			map[string]string{"allow-metrics-traffic": "metrics=enabled metrics", "allow-api-traffic": "team=web api"}},
		{[]string{"api.enable=true", "networkPolicy.enable=false"}, map[string]string{}},
	}
	for _, c := range cases {
		objects, err := helmTemplate(t, "gordon", "ops", c.set...)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, u := range objects {
			if u.GetKind() != kindNetworkPolicy {
				continue
			}
			rules, _, _ := unstructured.NestedSlice(u.Object, "spec", "ingress")
			if len(rules) != 1 || u.GetNamespace() != "ops" {
				t.Fatalf("%v: %s: want one ingress rule in the release namespace: %v", c.set, u.GetName(), u.Object)
			}
			rule := rules[0].(map[string]any)
			peers, ports := rule["from"].([]any), rule["ports"].([]any)
			labels, _, _ := unstructured.NestedStringMap(peers[0].(map[string]any), "namespaceSelector", "matchLabels")
			var admitted []string
			for k, v := range labels {
				admitted = append(admitted, k+"="+v)
			}
			got[strings.TrimPrefix(u.GetName(), "gordon-")] = strings.Join(admitted, ",") + " " + fmt.Sprint(ports[0].(map[string]any)["port"])
		}
		if !maps.Equal(got, c.want) {
			t.Errorf("%v: policies %v, want %v", c.set, got, c.want)
		}
	}
}

// monitoringKinds are prometheus-operator's kinds the charts make, as a cluster serves them.
var monitoringKinds = []string{"monitoring.coreos.com/v1/ServiceMonitor", "monitoring.coreos.com/v1/PrometheusRule"}

func TestPrometheusValuesMakeTheMonitoringWhereItIsServed(t *testing.T) {
	served := monitoringKinds
	for _, c := range []struct {
		served bool
		set    []string
		want   []string // the monitoring kinds the chart makes
	}{
		{false, nil, nil},
		{true, nil, []string{"PrometheusRule", "ServiceMonitor"}},
		{false, []string{"prometheus.enable=true"}, []string{"PrometheusRule", "ServiceMonitor"}},
		{true, []string{"prometheus.enable=false"}, nil},
		{true, []string{"metrics.secure=false"}, []string{"PrometheusRule"}},
		{true, []string{"metrics.enable=false"}, []string{"PrometheusRule"}},
	} {
		var apiVersions []string
		if c.served {
			apiVersions = served
		}
		objects, err := helmTemplateFor(t, apiVersions, "gordon", "ops", append(c.set, "prometheus.labels.release=kps")...)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, u := range objects {
			if u.GetAPIVersion() != "monitoring.coreos.com/v1" {
				continue
			}
			got = append(got, u.GetKind())
			if u.GetNamespace() != "ops" || u.GetLabels()["release"] != "kps" || u.GetLabels()["app.kubernetes.io/name"] != "gordon-operator" {
				t.Errorf("served %t, %v: %s %s: namespace %q, labels %v", c.served, c.set, u.GetKind(), u.GetName(), u.GetNamespace(), u.GetLabels())
			}
			if u.GetKind() != "PrometheusRule" {
				continue
			}
			// The rules reach Prometheus as config/prometheus writes them: the alerts' own
			// templates ({{ $labels.name }}) are not Helm's.
			data, err := os.ReadFile(filepath.Join("..", "..", "operators", "gordon", "config", "prometheus", "prometheus_rule.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			want := &unstructured.Unstructured{}
			if err := yaml.Unmarshal(data, &want.Object); err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(u.Object["spec"], want.Object["spec"]) {
				t.Errorf("the chart's rules differ from config/prometheus's:\n%v", u.Object["spec"])
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("served %t, %v: the chart makes %v, want %v", c.served, c.set, got, c.want)
		}
	}
}

package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// gordonVersion is the gordon release the tests generate; the catalog template lists it.
const gordonVersion = "0.4.0"

// configuredImage is the manager image an operator's config/manager sets (newName:newTag),
// which the bundle must name: read, so that bumping the tag there does not break these tests.
func configuredImage(t *testing.T, operator string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "operators", operator, "config", "manager", "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Images []struct{ NewName, NewTag string } `json:"images"`
	}
	if err := yaml.Unmarshal(data, &k); err != nil || len(k.Images) != 1 {
		t.Fatalf("%s's config/manager/kustomization.yaml: want one image, %v", operator, err)
	}
	return k.Images[0].NewName + ":" + k.Images[0].NewTag
}

// generateGordon generates gordon's bundle, from the operator's real config, into a temp dir.
func generateGordon(t *testing.T) (string, *operatorsv1alpha1.ClusterServiceVersion) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "gordon")
	err := run(options{
		config: "../../operators/gordon/config/manifests", pkg: "quintet-gordon", versionText: gordonVersion,
		image: configuredImage(t, "gordon"), releaseTemplate: "../../config/catalog/quintet-gordon.yaml", out: out,
	})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(out, "manifests", "quintet-gordon.clusterserviceversion.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	if err := yaml.UnmarshalStrict(data, csv); err != nil {
		t.Fatal(err)
	}
	return out, csv
}

func TestCSVNamesTheVersionAndTheUpgradeEdge(t *testing.T) {
	_, csv := generateGordon(t)
	if csv.Name != "quintet-gordon.v"+gordonVersion || csv.Spec.Version.String() != gordonVersion {
		t.Errorf("name %s, version %s", csv.Name, csv.Spec.Version.String())
	}
	if csv.Spec.Replaces != "quintet-gordon.v0.3.0" || csv.Annotations["olm.skipRange"] != ">=0.1.0 <0.4.0" {
		t.Errorf("replaces %q, skipRange %q", csv.Spec.Replaces, csv.Annotations["olm.skipRange"])
	}
	if !strings.Contains(csv.Annotations["alm-examples"], `"kind": "Gordon"`) {
		t.Errorf("alm-examples lack the sample: %s", csv.Annotations["alm-examples"])
	}
	if csv.Spec.RelatedImages[0].Image != configuredImage(t, "gordon") {
		t.Errorf("relatedImages %v", csv.Spec.RelatedImages)
	}
}

func TestManagerWatchesTheOperatorGroupsTargetNamespacesAndInstallsItsMonitoring(t *testing.T) {
	_, csv := generateGordon(t)
	deployments := csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs
	if len(deployments) != 1 {
		t.Fatalf("%d deployments", len(deployments))
	}
	manager := deployments[0].Spec.Template.Spec.Containers[0]
	if manager.Image != configuredImage(t, "gordon") {
		t.Errorf("image %s", manager.Image)
	}
	i := slices.IndexFunc(manager.Env, func(e corev1.EnvVar) bool { return e.Name == "WATCH_NAMESPACE" })
	if i < 0 || manager.Env[i].ValueFrom == nil || manager.Env[i].ValueFrom.FieldRef.FieldPath != targetNamespaces {
		t.Fatalf("WATCH_NAMESPACE must come from %s: %+v", targetNamespaces, manager.Env)
	}
	if !slices.Contains(manager.Args, installMonitoring) {
		t.Errorf("the manager does not apply its monitoring objects: %v", manager.Args)
	}
	if manager.Resources.Requests.Cpu().IsZero() || manager.Resources.Limits.Memory().IsZero() {
		t.Errorf("the manager needs requests and limits: %+v", manager.Resources)
	}
}

func TestPermissionsAreExactlyTheBoundRoles(t *testing.T) {
	_, csv := generateGordon(t)
	spec := csv.Spec.InstallStrategy.StrategySpec
	for _, perms := range [][]operatorsv1alpha1.StrategyDeploymentPermissions{spec.Permissions, spec.ClusterPermissions} {
		if len(perms) != 1 || perms[0].ServiceAccountName != "gordon-controller-manager" {
			t.Fatalf("want the manager's service account alone: %+v", perms)
		}
	}
	if !grants(spec.Permissions[0].Rules, "coordination.k8s.io", "leases", "update") {
		t.Errorf("the leader-election Role belongs in permissions: %+v", spec.Permissions)
	}
	if !grants(spec.Permissions[0].Rules, "monitoring.coreos.com", "servicemonitors", "patch") ||
		!grants(spec.Permissions[0].Rules, "", "services", "get") {
		t.Errorf("--install-monitoring's rules belong in permissions: %+v", spec.Permissions)
	}
	// The manager role and the leader-election Role both grant events: once is enough.
	events := 0
	for _, p := range append(spec.ClusterPermissions, spec.Permissions...) {
		for _, r := range p.Rules {
			if slices.Contains(r.Resources, "events") {
				events++
			}
			if slices.Contains(r.Verbs, "*") || slices.Contains(r.Resources, "*") || slices.Contains(r.APIGroups, "*") {
				t.Errorf("wildcard rule %+v", r)
			}
		}
	}
	if events != 1 {
		t.Errorf("%d rules grant events, want 1: %+v", events, spec.Permissions)
	}
}

func grants(rules []rbacv1.PolicyRule, group, resource, verb string) bool {
	return slices.ContainsFunc(rules, func(r rbacv1.PolicyRule) bool {
		return slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb)
	})
}

func TestOwnedCRDsDescribeEveryTopLevelField(t *testing.T) {
	_, csv := generateGordon(t)
	owned := csv.Spec.CustomResourceDefinitions.Owned
	if len(owned) != 1 || owned[0].Version != "v1" || owned[0].Description == "" {
		t.Fatalf("owned %+v", owned)
	}
	spec := make([]string, 0, len(owned[0].SpecDescriptors))
	status := make([]string, 0, len(owned[0].StatusDescriptors))
	for _, d := range owned[0].SpecDescriptors {
		spec = append(spec, d.Path)
		if d.Path == "gordon.replicas" && !slices.Contains(d.XDescriptors, podCountDescriptor) {
			t.Error("gordon.replicas is a pod count")
		}
	}
	for _, d := range owned[0].StatusDescriptors {
		status = append(status, d.Path)
		if d.Path == "conditions" && !slices.Contains(d.XDescriptors, conditionsDescriptor) {
			t.Error("conditions need the conditions descriptor")
		}
	}
	for _, want := range []string{"gordon", "gordon.replicas", "gordon.image"} {
		if !slices.Contains(spec, want) {
			t.Errorf("no spec descriptor %s in %v", want, spec)
		}
	}
	for _, want := range []string{"conditions", "readyReplicas", "observedGeneration"} {
		if !slices.Contains(status, want) {
			t.Errorf("no status descriptor %s in %v", want, status)
		}
	}
}

func TestBundleShipsOnlyWhatOLMDoesNotMake(t *testing.T) {
	out, _ := generateGordon(t)
	files, err := filepath.Glob(filepath.Join(out, "manifests", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(files))
	for _, f := range files {
		name := filepath.Base(f)
		names = append(names, name)
		for _, kind := range []string{"_namespace.yaml", "_serviceaccount.yaml", "_deployment.yaml", "binding.yaml"} {
			if strings.HasSuffix(name, kind) {
				t.Errorf("%s: OLM makes that from the CSV", name)
			}
		}
	}
	for _, want := range []string{"operator.prgcont.cz_gordons.yaml", "gordon-controller-manager-metrics-service_v1_service.yaml",
		"gordon-editor-role_rbac.authorization.k8s.io_v1_clusterrole.yaml"} {
		if !slices.Contains(names, want) {
			t.Errorf("manifests lack %s: %v", want, names)
		}
	}
	annotations, err := os.ReadFile(filepath.Join(out, "metadata", "annotations.yaml"))
	if err != nil || !strings.Contains(string(annotations), "operators.operatorframework.io.bundle.package.v1: quintet-gordon") {
		t.Errorf("annotations.yaml: %v\n%s", err, annotations)
	}
	if _, err := os.Stat(filepath.Join(out, "tests", "scorecard", "config.yaml")); err != nil {
		t.Error(err)
	}
}

func TestChannelsAndEdgeComeFromTheCatalogTemplate(t *testing.T) {
	template := filepath.Join(t.TempDir(), "p.yaml")
	write := func(content string) {
		if err := os.WriteFile(template, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`entries:
- {schema: olm.package, name: p, defaultChannel: stable}
- {schema: olm.channel, name: candidate, entries: [{name: p.v0.1.0}, {name: p.v0.2.0, replaces: p.v0.1.0, skipRange: "<0.2.0"}]}
- {schema: olm.channel, name: stable, entries: [{name: p.v0.1.0}, {name: p.v0.2.0, replaces: p.v0.1.0, skipRange: "<0.2.0"}]}
- {schema: olm.channel, name: fast, entries: [{name: p.v0.1.0}]}
`)
	r, err := readRelease(template, "p.v0.2.0")
	if err != nil {
		t.Fatal(err)
	}
	if r.channelList() != "candidate,stable" || r.defaultChannel != "stable" || r.replaces != "p.v0.1.0" || r.skipRange != "<0.2.0" {
		t.Errorf("release %+v", r)
	}
	if _, err := readRelease(template, "p.v0.3.0"); err == nil || !strings.Contains(err.Error(), "no channel lists p.v0.3.0") {
		t.Errorf("a version in no channel: err %v", err)
	}
	write(`entries:
- {schema: olm.package, name: p, defaultChannel: stable}
- {schema: olm.channel, name: candidate, entries: [{name: p.v0.2.0, replaces: p.v0.1.0}]}
- {schema: olm.channel, name: stable, entries: [{name: p.v0.2.0}]}
`)
	if _, err := readRelease(template, "p.v0.2.0"); err == nil || !strings.Contains(err.Error(), "different upgrade edges") {
		t.Errorf("channels disagreeing on the edge: err %v", err)
	}
}

func TestBundleImageMustBeTheConfiguredOne(t *testing.T) {
	err := run(options{
		config: "../../operators/gordon/config/manifests", pkg: "quintet-gordon", versionText: gordonVersion,
		image: "registry.example/gordon:v9", releaseTemplate: "../../config/catalog/quintet-gordon.yaml", out: t.TempDir(),
	})
	if err == nil || !strings.Contains(err.Error(), "config/manager/kustomization.yaml") {
		t.Fatalf("err %v", err)
	}
}

func TestDisplayNameAndFirstSentence(t *testing.T) {
	for in, want := range map[string]string{"readyMembers": "Ready Members", "leaderID": "Leader ID", "size": "Size", "etcdArgs": "Etcd Args"} {
		if got := displayName(in); got != want {
			t.Errorf("displayName(%q) = %q, want %q", in, got, want)
		}
	}
	if got := firstSentence("size is the number of members.\nAn even size is allowed."); got != "size is the number of members." {
		t.Errorf("firstSentence = %q", got)
	}
}

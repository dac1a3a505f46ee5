package main

import (
	"slices"
	"strings"
	"testing"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// An OwnNamespace install must not let gordon create pods in every namespace: what its
// ClusterRole grants on namespaced resources goes to permissions (Roles OLM makes in the
// target namespaces, lifted to ClusterRoles only for AllNamespaces), and only cluster-scoped
// resources stay in clusterPermissions.
func TestGordonsManagerRoleIsNamespacedAndMetricsAuthIsClusterWide(t *testing.T) {
	_, csv := generateGordon(t)
	spec := csv.Spec.InstallStrategy.StrategySpec
	if len(spec.Permissions) != 1 || len(spec.ClusterPermissions) != 1 {
		t.Fatalf("want one service account in each: permissions %+v, clusterPermissions %+v", spec.Permissions, spec.ClusterPermissions)
	}
	namespaced, clusterWide := spec.Permissions[0].Rules, spec.ClusterPermissions[0].Rules
	for _, want := range []struct{ group, resource, verb string }{
		{"", "pods", "create"}, {"events.k8s.io", "events", "create"}, {"operator.prgcont.cz", "gordons", "watch"},
		{"operator.prgcont.cz", "gordons/status", "patch"}, {"operator.prgcont.cz", "gordons/finalizers", "update"},
		{"coordination.k8s.io", "leases", "update"},
	} {
		if !grants(namespaced, want.group, want.resource, want.verb) {
			t.Errorf("permissions lack %s %q %s: %+v", want.verb, want.group, want.resource, namespaced)
		}
		if grantsResource(clusterWide, want.group, want.resource) {
			t.Errorf("clusterPermissions grant %q %s cluster-wide: %+v", want.group, want.resource, clusterWide)
		}
	}
	for _, want := range []struct{ group, resource string }{
		{"authentication.k8s.io", "tokenreviews"}, {"authorization.k8s.io", "subjectaccessreviews"},
	} {
		if !grants(clusterWide, want.group, want.resource, "create") {
			t.Errorf("clusterPermissions lack create %s %s: %+v", want.group, want.resource, clusterWide)
		}
		if grantsResource(namespaced, want.group, want.resource) {
			t.Errorf("permissions hold the cluster-scoped %s %s", want.group, want.resource)
		}
	}
	if len(clusterWide) != 2 {
		t.Errorf("clusterPermissions hold more than the metrics auth rules: %+v", clusterWide)
	}
}

func TestARuleMixingScopesIsSplitAndNonResourceURLsStayClusterWide(t *testing.T) {
	spec, err := installStrategy(clusterRoleInput(t, []apiextensionsv1.ResourceScope{apiextensionsv1.ClusterScoped},
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods", "nodes", "pods/log"}, Verbs: []string{"get"}},
		rbacv1.PolicyRule{APIGroups: []string{"example.com"}, Resources: []string{"widgets0", "widgets0/status"}, Verbs: []string{"get"}},
		rbacv1.PolicyRule{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}},
	))
	if err != nil {
		t.Fatal(err)
	}
	want := operatorsv1alpha1.StrategyDetailsDeployment{
		Permissions: []operatorsv1alpha1.StrategyDeploymentPermissions{{ServiceAccountName: "manager", Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods", "pods/log"}, Verbs: []string{"get"}},
		}}},
		ClusterPermissions: []operatorsv1alpha1.StrategyDeploymentPermissions{{ServiceAccountName: "manager", Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get"}},
			{APIGroups: []string{"example.com"}, Resources: []string{"widgets0", "widgets0/status"}, Verbs: []string{"get"}},
			{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}},
		}}},
	}
	if !equalPermissions(spec.Permissions, want.Permissions) || !equalPermissions(spec.ClusterPermissions, want.ClusterPermissions) {
		t.Errorf("permissions %+v\nclusterPermissions %+v\nwant %+v\nand %+v", spec.Permissions, spec.ClusterPermissions,
			want.Permissions, want.ClusterPermissions)
	}
}

func TestAResourceOfUnknownScopeIsAnError(t *testing.T) {
	for _, rule := range []rbacv1.PolicyRule{
		{APIGroups: []string{"example.com"}, Resources: []string{"gadgets"}, Verbs: []string{"get"}},
		{APIGroups: []string{""}, Resources: []string{"pods", "gadgets"}, Verbs: []string{"get"}},
	} {
		_, err := installStrategy(clusterRoleInput(t, nil, rule))
		if err == nil || !strings.Contains(err.Error(), "gadgets") {
			t.Errorf("rule %+v: want an error naming gadgets, got %v", rule, err)
		}
	}
	_, err := installStrategy(clusterRoleInput(t, nil, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"*"}, Verbs: []string{"get"}}))
	if err == nil || !strings.Contains(err.Error(), "wildcard") {
		t.Errorf("a wildcard resource: want an error, got %v", err)
	}
}

// clusterRoleInput is an operator whose service account "manager" is bound cluster-wide to a
// ClusterRole with these rules, and which owns a CRD widgets<i>.example.com per given scope.
func clusterRoleInput(t *testing.T, crdScopes []apiextensionsv1.ResourceScope, rules ...rbacv1.PolicyRule) csvInput {
	t.Helper()
	role := &rbacv1.ClusterRole{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: "manager-role"}, Rules: rules}
	object, err := runtime.DefaultUnstructuredConverter.ToUnstructured(role)
	if err != nil {
		t.Fatal(err)
	}
	in := csvInput{
		roles: []*unstructured.Unstructured{{Object: object}},
		grants: []grant{{binding: "manager-rolebinding", clusterWide: true, serviceAccount: "manager",
			role: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "manager-role"}}},
	}
	for i, scope := range crdScopes {
		plural := "widgets" + string(rune('0'+i))
		in.crds = append(in.crds, &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: plural + ".example.com"},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{Group: "example.com", Scope: scope,
				Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Kind: "Widget"}},
		})
	}
	return in
}

// grantsResource says whether any rule is about resource in group, whatever its verbs.
func grantsResource(rules []rbacv1.PolicyRule, group, resource string) bool {
	return slices.ContainsFunc(rules, func(r rbacv1.PolicyRule) bool {
		return slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource)
	})
}

func equalPermissions(got, want []operatorsv1alpha1.StrategyDeploymentPermissions) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i].ServiceAccountName != want[i].ServiceAccountName || len(got[i].Rules) != len(want[i].Rules) {
			return false
		}
		for j := range got[i].Rules {
			if !equalRules(got[i].Rules[j], want[i].Rules[j]) {
				return false
			}
		}
	}
	return true
}

func equalRules(a, b rbacv1.PolicyRule) bool {
	join := func(s []string) string { return strings.Join(s, ",") }
	return join(a.APIGroups) == join(b.APIGroups) && join(a.Resources) == join(b.Resources) && join(a.Verbs) == join(b.Verbs) &&
		join(a.ResourceNames) == join(b.ResourceNames) && join(a.NonResourceURLs) == join(b.NonResourceURLs)
}

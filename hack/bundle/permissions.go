package main

import (
	"fmt"
	"slices"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// placeRules divides the rules of a cluster-wide grant (a ClusterRoleBinding) by the scope of
// what they are about. Rules on namespaced resources go to the CSV's permissions: OLM makes
// them Roles in the install namespace and copies those into each target namespace of the
// OperatorGroup, and lifts them to ClusterRoles only when the OperatorGroup targets all
// namespaces (operator-lifecycle-manager v0.41.0, olm/operatorgroup.go: ensureTenantRBAC,
// ensureSingletonRBAC). So an OwnNamespace install can touch pods in its own namespace only.
// Rules on cluster-scoped resources and non-resource URLs, which no Role can grant, go to
// clusterPermissions. A rule naming both scopes is split; the rules keep their order.
func (s scopes) placeRules(rules []rbacv1.PolicyRule) (namespaced, clusterWide []rbacv1.PolicyRule, err error) {
	for _, rule := range rules {
		if len(rule.NonResourceURLs) > 0 {
			clusterWide = append(clusterWide, rbacv1.PolicyRule{Verbs: slices.Clone(rule.Verbs), NonResourceURLs: slices.Clone(rule.NonResourceURLs)})
			rule.NonResourceURLs = nil
			if len(rule.Resources) == 0 {
				continue
			}
		}
		n, c, err := s.splitRule(rule)
		if err != nil {
			return nil, nil, err
		}
		namespaced, clusterWide = append(namespaced, n...), append(clusterWide, c...)
	}
	return namespaced, clusterWide, nil
}

// splitRule returns a resource rule unchanged on the side of its scope when every resource it
// names has the same scope, and otherwise one rule per API group and scope.
func (s scopes) splitRule(rule rbacv1.PolicyRule) (namespaced, clusterWide []rbacv1.PolicyRule, err error) {
	if len(rule.APIGroups) == 0 || len(rule.Resources) == 0 {
		return nil, nil, fmt.Errorf("rule %+v names no API group or no resource", rule)
	}
	type groupParts struct {
		group                       string
		namespaced, clusterResource []string
	}
	parts := make([]groupParts, 0, len(rule.APIGroups))
	var anyNamespaced, anyCluster bool
	for _, group := range rule.APIGroups {
		p := groupParts{group: group}
		for _, resource := range rule.Resources {
			isNamespaced, err := s.namespaced(group, resource)
			if err != nil {
				return nil, nil, err
			}
			if isNamespaced {
				p.namespaced = append(p.namespaced, resource)
			} else {
				p.clusterResource = append(p.clusterResource, resource)
			}
		}
		anyNamespaced = anyNamespaced || len(p.namespaced) > 0
		anyCluster = anyCluster || len(p.clusterResource) > 0
		parts = append(parts, p)
	}
	switch {
	case !anyCluster:
		return []rbacv1.PolicyRule{rule}, nil, nil
	case !anyNamespaced:
		return nil, []rbacv1.PolicyRule{rule}, nil
	}
	for _, p := range parts {
		if len(p.namespaced) > 0 {
			namespaced = append(namespaced, withResources(rule, p.group, p.namespaced))
		}
		if len(p.clusterResource) > 0 {
			clusterWide = append(clusterWide, withResources(rule, p.group, p.clusterResource))
		}
	}
	return namespaced, clusterWide, nil
}

// withResources is rule narrowed to one API group and some of its resources.
func withResources(rule rbacv1.PolicyRule, group string, resources []string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: []string{group}, Resources: resources,
		ResourceNames: slices.Clone(rule.ResourceNames), Verbs: slices.Clone(rule.Verbs)}
}

// mergePermissions adds rules to the entry of the service account, leaving out a rule the
// entry already holds (the manager and leader-election roles both grant events, and now both
// land in permissions).
func mergePermissions(perms []operatorsv1alpha1.StrategyDeploymentPermissions, serviceAccount string,
	rules []rbacv1.PolicyRule) []operatorsv1alpha1.StrategyDeploymentPermissions {
	i := slices.IndexFunc(perms, func(p operatorsv1alpha1.StrategyDeploymentPermissions) bool {
		return p.ServiceAccountName == serviceAccount
	})
	if i < 0 {
		perms, i = append(perms, operatorsv1alpha1.StrategyDeploymentPermissions{ServiceAccountName: serviceAccount}), len(perms)
	}
	for _, rule := range rules {
		held := slices.ContainsFunc(perms[i].Rules, func(r rbacv1.PolicyRule) bool { return equality.Semantic.DeepEqual(r, rule) })
		if !held {
			perms[i].Rules = append(perms[i].Rules, rule)
		}
	}
	return perms
}

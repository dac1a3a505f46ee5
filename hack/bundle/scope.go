package main

import (
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// groupResource names a resource as RBAC does: an API group ("" is core) and a plural.
type groupResource struct{ group, resource string }

// builtinScopes lists, per API group, the built-in resources (and the few from other projects
// Quintet's operators use) that are namespaced and those that are cluster-scoped. It is a
// table, not a discovery call, so that bundles are generated offline and the same everywhere;
// a resource missing here is an error, never a guess: add it with the scope `kubectl
// api-resources` shows.
var builtinScopes = map[string]struct{ namespaced, cluster []string }{
	"": {
		namespaced: []string{"bindings", "configmaps", "endpoints", "events", "limitranges", "persistentvolumeclaims", "pods",
			"podtemplates", "replicationcontrollers", "resourcequotas", "secrets", "serviceaccounts", "services"},
		cluster: []string{"componentstatuses", "namespaces", "nodes", "persistentvolumes"},
	},
	"admissionregistration.k8s.io": {cluster: []string{"mutatingadmissionpolicies", "mutatingadmissionpolicybindings",
		"mutatingwebhookconfigurations", "validatingadmissionpolicies", "validatingadmissionpolicybindings", "validatingwebhookconfigurations"}},
	"apiextensions.k8s.io":   {cluster: []string{"customresourcedefinitions"}},
	"apiregistration.k8s.io": {cluster: []string{"apiservices"}},
	"apps":                   {namespaced: []string{"controllerrevisions", "daemonsets", "deployments", "replicasets", "statefulsets"}},
	"authentication.k8s.io":  {cluster: []string{"selfsubjectreviews", "tokenreviews"}},
	"authorization.k8s.io": {
		namespaced: []string{"localsubjectaccessreviews"},
		cluster:    []string{"selfsubjectaccessreviews", "selfsubjectrulesreviews", "subjectaccessreviews"},
	},
	"autoscaling":                  {namespaced: []string{"horizontalpodautoscalers"}},
	"batch":                        {namespaced: []string{"cronjobs", "jobs"}},
	"certificates.k8s.io":          {cluster: []string{"certificatesigningrequests", "clustertrustbundles"}},
	"coordination.k8s.io":          {namespaced: []string{"leasecandidates", "leases"}},
	"discovery.k8s.io":             {namespaced: []string{"endpointslices"}},
	"events.k8s.io":                {namespaced: []string{"events"}},
	"flowcontrol.apiserver.k8s.io": {cluster: []string{"flowschemas", "prioritylevelconfigurations"}},
	"networking.k8s.io": {
		namespaced: []string{"ingresses", "networkpolicies"},
		cluster:    []string{"ingressclasses", "ipaddresses", "servicecidrs"},
	},
	"node.k8s.io": {cluster: []string{"runtimeclasses"}},
	"policy":      {namespaced: []string{"poddisruptionbudgets"}},
	"rbac.authorization.k8s.io": {
		namespaced: []string{"rolebindings", "roles"},
		cluster:    []string{"clusterrolebindings", "clusterroles"},
	},
	"resource.k8s.io": {
		namespaced: []string{"resourceclaims", "resourceclaimtemplates"},
		cluster:    []string{"deviceclasses", "resourceslices"},
	},
	"scheduling.k8s.io": {cluster: []string{"priorityclasses"}},
	"storage.k8s.io": {
		namespaced: []string{"csistoragecapacities"},
		cluster:    []string{"csidrivers", "csinodes", "storageclasses", "volumeattachments", "volumeattributesclasses"},
	},
	// cert-manager, whose Certificates etcd-cluster creates, signed by Issuers or ClusterIssuers.
	"cert-manager.io": {
		namespaced: []string{"certificaterequests", "certificates", "issuers"},
		cluster:    []string{"clusterissuers"},
	},
	// Kernel Module Management, whose Modules ptemplate creates.
	"kmm.sigs.x-k8s.io": {namespaced: []string{"modules"}},
	// OLM's own API, which operators reach through operator-lib (OperatorConditions).
	"operators.coreos.com": {
		namespaced: []string{"catalogsources", "clusterserviceversions", "installplans", "operatorconditions", "operatorgroups", "subscriptions"},
		cluster:    []string{"olmconfigs", "operators"},
	},
}

// scopes knows whether a resource is namespaced: the built-in table and the bundle's CRDs.
type scopes map[groupResource]bool

func newScopes(crds []*apiextensionsv1.CustomResourceDefinition) scopes {
	s := scopes{}
	for group, resources := range builtinScopes {
		for _, r := range resources.namespaced {
			s[groupResource{group, r}] = true
		}
		for _, r := range resources.cluster {
			s[groupResource{group, r}] = false
		}
	}
	for _, crd := range crds {
		s[groupResource{crd.Spec.Group, crd.Spec.Names.Plural}] = crd.Spec.Scope == apiextensionsv1.NamespaceScoped
	}
	return s
}

// namespaced says whether resource of group is namespaced. A subresource (pods/log,
// gordons/status) has its parent's scope.
func (s scopes) namespaced(group, resource string) (bool, error) {
	parent, _, _ := strings.Cut(resource, "/")
	if group == "*" || parent == "*" {
		return false, fmt.Errorf("a wildcard (group %q, resource %q) spans both scopes: list the resources the operator needs", group, resource)
	}
	namespaced, known := s[groupResource{group, parent}]
	if !known {
		return false, fmt.Errorf("resource %q of API group %q has no known scope: add it to builtinScopes in hack/bundle/scope.go "+
			"(namespaced or cluster-scoped, as `kubectl api-resources` says) or ship its CRD in the bundle", parent, group)
	}
	return namespaced, nil
}

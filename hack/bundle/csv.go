package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/api/pkg/lib/version"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// targetNamespaces is the annotation OLM sets on the operator's pods: the namespaces its
// OperatorGroup targets, comma-separated, empty for all. Managers read it as WATCH_NAMESPACE.
const targetNamespaces = "metadata.annotations['olm.targetNamespaces']"

// installMonitoring makes the manager apply its ServiceMonitor, PrometheusRule and dashboard
// where prometheus-operator runs: the bundle cannot carry them, as OLM fails an InstallPlan
// with an object of a kind the cluster does not serve (shared/monitoring).
const installMonitoring = "--install-monitoring"

// monitoringRules are what installMonitoring needs, in the manager's own namespace: apply the
// three objects, read the metrics Service that owns them.
var monitoringRules = []rbacv1.PolicyRule{
	{APIGroups: []string{"monitoring.coreos.com"}, Resources: []string{"prometheusrules", "servicemonitors"}, Verbs: []string{"create", "patch"}},
	{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"create", "patch"}},
	{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"get"}},
}

// conditionsDescriptor is the console's descriptor for a list of status conditions.
const conditionsDescriptor = "urn:alm:descriptor:io.kubernetes.conditions"

// csvInput is what a CSV is assembled from: the hand-written base (descriptions, icon,
// install modes, owned CRDs' display names and resources) and the rendered operator.
type csvInput struct {
	base        *operatorsv1alpha1.ClusterServiceVersion
	pkg         string
	version     semver.Version
	replaces    string
	skipRange   string
	image       string
	crds        []*apiextensionsv1.CustomResourceDefinition
	deployments []*appsv1.Deployment
	roles       []*unstructured.Unstructured // ClusterRoles and Roles
	grants      []grant
	samples     []*unstructured.Unstructured
}

// buildCSV completes the base into the bundle's ClusterServiceVersion.
func buildCSV(in csvInput) (*operatorsv1alpha1.ClusterServiceVersion, error) {
	csv := in.base.DeepCopy()
	csv.Name = fmt.Sprintf("%s.v%s", in.pkg, in.version)
	csv.Spec.Version = version.OperatorVersion{Version: in.version}
	csv.Spec.Replaces = in.replaces
	if csv.Annotations == nil {
		csv.Annotations = map[string]string{}
	}
	examples, err := json.MarshalIndent(sampleObjects(in.samples), "", "  ")
	if err != nil {
		return nil, err
	}
	csv.Annotations["alm-examples"] = string(examples)
	csv.Annotations["containerImage"] = in.image
	if in.skipRange != "" {
		csv.Annotations["olm.skipRange"] = in.skipRange
	}
	strategy, err := installStrategy(in)
	if err != nil {
		return nil, err
	}
	csv.Spec.InstallStrategy = operatorsv1alpha1.NamedInstallStrategy{
		StrategyName: operatorsv1alpha1.InstallStrategyNameDeployment, StrategySpec: strategy,
	}
	if csv.Spec.CustomResourceDefinitions.Owned, err = ownedCRDs(in.base.Spec.CustomResourceDefinitions.Owned, in.crds); err != nil {
		return nil, err
	}
	csv.Spec.RelatedImages = append([]operatorsv1alpha1.RelatedImage{{Name: managerContainer, Image: in.image}}, in.base.Spec.RelatedImages...)
	return csv, nil
}

func sampleObjects(samples []*unstructured.Unstructured) []map[string]any {
	objects := make([]map[string]any, 0, len(samples))
	for _, s := range samples {
		objects = append(objects, s.Object)
	}
	return objects
}

// installStrategy is the manager Deployment (image and watch namespaces as OLM runs it) and
// the RBAC bound to its service account: what namespaced bindings grant becomes permissions;
// what cluster-wide bindings grant becomes permissions too where it is about namespaced
// resources, so that it holds in the OperatorGroup's target namespaces only, and
// clusterPermissions where it is about cluster-scoped ones (placeRules). Exactly what the
// kubebuilder markers generated, and what --install-monitoring needs, nothing more.
func installStrategy(in csvInput) (operatorsv1alpha1.StrategyDetailsDeployment, error) {
	var strategy operatorsv1alpha1.StrategyDetailsDeployment
	var managerAccounts []string // of the Deployments running the manager: --install-monitoring needs monitoringRules
	for _, d := range in.deployments {
		spec := d.Spec.DeepCopy()
		for i := range spec.Template.Spec.Containers {
			c := &spec.Template.Spec.Containers[i]
			if c.Name != managerContainer {
				continue
			}
			if c.Image != in.image {
				return strategy, fmt.Errorf("deployment %s runs %s, the bundle is for %s: set the image in config/manager/kustomization.yaml",
					d.Name, c.Image, in.image)
			}
			c.Env = slices.DeleteFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == watchNamespaceEnv })
			c.Env = append(c.Env, corev1.EnvVar{Name: watchNamespaceEnv, ValueFrom: &corev1.EnvVarSource{
				FieldRef: &corev1.ObjectFieldSelector{FieldPath: targetNamespaces}}})
			if !slices.Contains(c.Args, installMonitoring) {
				c.Args = append(c.Args, installMonitoring)
			}
			managerAccounts = append(managerAccounts, spec.Template.Spec.ServiceAccountName)
		}
		strategy.DeploymentSpecs = append(strategy.DeploymentSpecs, operatorsv1alpha1.StrategyDeploymentSpec{
			Name: d.Name, Spec: *spec, Label: d.Labels,
		})
	}
	resourceScopes := newScopes(in.crds)
	for _, g := range in.grants {
		rules, err := roleRules(in.roles, g.role)
		if err != nil {
			return strategy, fmt.Errorf("binding %s: %w", g.binding, err)
		}
		// A RoleBinding's rules hold in its namespace only: permissions as they are.
		namespaced, clusterWide := rules, []rbacv1.PolicyRule(nil)
		if g.clusterWide {
			if namespaced, clusterWide, err = resourceScopes.placeRules(rules); err != nil {
				return strategy, fmt.Errorf("binding %s, %s %s: %w", g.binding, g.role.Kind, g.role.Name, err)
			}
		}
		if len(namespaced) > 0 {
			strategy.Permissions = mergePermissions(strategy.Permissions, g.serviceAccount, namespaced)
		}
		if len(clusterWide) > 0 {
			strategy.ClusterPermissions = mergePermissions(strategy.ClusterPermissions, g.serviceAccount, clusterWide)
		}
	}
	for _, account := range managerAccounts {
		strategy.Permissions = mergePermissions(strategy.Permissions, account, monitoringRules)
	}
	return strategy, nil
}

func roleRules(roles []*unstructured.Unstructured, ref rbacv1.RoleRef) ([]rbacv1.PolicyRule, error) {
	for _, r := range roles {
		if r.GetKind() == ref.Kind && r.GetName() == ref.Name {
			var role rbacv1.ClusterRole
			if err := convert(r, &role); err != nil {
				return nil, err
			}
			return role.Rules, nil
		}
	}
	return nil, fmt.Errorf("no %s %s in the rendered config", ref.Kind, ref.Name)
}

// grant is a role bound to a service account by a RoleBinding or ClusterRoleBinding.
type grant struct {
	binding        string
	clusterWide    bool // a ClusterRoleBinding: placed by the scope of each resource
	serviceAccount string
	role           rbacv1.RoleRef
}

// serviceAccountGrants are the roles the bindings give to service accounts: they make the
// CSV's permissions, and the bindings themselves are OLM's to create.
func serviceAccountGrants(bindings []*unstructured.Unstructured) ([]grant, error) {
	var grants []grant
	for _, b := range bindings {
		var binding rbacv1.RoleBinding // ClusterRoleBindings have the same shape
		if err := convert(b, &binding); err != nil {
			return nil, fmt.Errorf("%s %s: %w", b.GetKind(), b.GetName(), err)
		}
		for _, s := range binding.Subjects {
			if s.Kind == rbacv1.ServiceAccountKind {
				grants = append(grants, grant{binding: b.GetName(), clusterWide: b.GetKind() == kindClusterRoleBinding,
					serviceAccount: s.Name, role: binding.RoleRef})
			}
		}
	}
	return grants, nil
}

// ownedCRDs completes the base's owned entries from the CRDs: the served storage version,
// the schema's description, and a spec or status descriptor for every top-level field.
func ownedCRDs(base []operatorsv1alpha1.CRDDescription, crds []*apiextensionsv1.CustomResourceDefinition) ([]operatorsv1alpha1.CRDDescription, error) {
	owned := make([]operatorsv1alpha1.CRDDescription, 0, len(crds))
	for _, crd := range crds {
		i := slices.IndexFunc(base, func(d operatorsv1alpha1.CRDDescription) bool { return d.Name == crd.Name })
		if i < 0 {
			return nil, fmt.Errorf("CRD %s is not among the base CSV's owned CRDs", crd.Name)
		}
		d := base[i]
		for _, v := range crd.Spec.Versions {
			if !v.Storage {
				continue
			}
			d.Version, d.Kind = v.Name, crd.Spec.Names.Kind
			if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				return nil, fmt.Errorf("CRD %s version %s has no schema", crd.Name, v.Name)
			}
			root := v.Schema.OpenAPIV3Schema
			if d.Description == "" {
				d.Description = firstSentence(root.Description)
			}
			d.SpecDescriptors = specDescriptors(root.Properties["spec"])
			for _, p := range fields(root.Properties["status"]) {
				s := operatorsv1alpha1.StatusDescriptor{Path: p.name, DisplayName: displayName(p.name), Description: firstSentence(p.schema.Description)}
				if p.name == "conditions" {
					s.XDescriptors = []string{conditionsDescriptor}
				}
				d.StatusDescriptors = append(d.StatusDescriptors, s)
			}
		}
		owned = append(owned, d)
	}
	return owned, nil
}

// podCountDescriptor marks a field that is a number of pods.
const podCountDescriptor = "urn:alm:descriptor:com.tectonic.ui:podCount"

// specDescriptors describe every top-level spec field, and the fields of a top-level object
// (gordon's spec.gordon, etcd-cluster's spec.pod).
func specDescriptors(spec apiextensionsv1.JSONSchemaProps) []operatorsv1alpha1.SpecDescriptor {
	var out []operatorsv1alpha1.SpecDescriptor
	add := func(path string, p apiextensionsv1.JSONSchemaProps) {
		d := operatorsv1alpha1.SpecDescriptor{Path: path, DisplayName: displayName(path[strings.LastIndex(path, ".")+1:]),
			Description: firstSentence(p.Description)}
		if strings.HasSuffix(path, "replicas") || path == "size" {
			d.XDescriptors = []string{podCountDescriptor}
		}
		out = append(out, d)
	}
	for _, top := range fields(spec) {
		add(top.name, top.schema)
		for _, child := range fields(top.schema) {
			add(top.name+"."+child.name, child.schema)
		}
	}
	return out
}

type field struct {
	name   string
	schema apiextensionsv1.JSONSchemaProps
}

// fields are the top-level properties of a schema, sorted by name.
func fields(s apiextensionsv1.JSONSchemaProps) []field {
	out := make([]field, 0, len(s.Properties))
	for name, p := range s.Properties {
		out = append(out, field{name, p})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// displayName turns a field name into words: "readyMembers" -> "Ready Members".
func displayName(name string) string {
	var b strings.Builder
	for i, r := range name {
		switch {
		case i == 0:
			b.WriteString(strings.ToUpper(string(r)))
		case isUpper(name[i]) && !isUpper(name[i-1]): // a new word, not an acronym's next letter
			b.WriteByte(' ')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }

// firstSentence is the first sentence of a description, on one line.
func firstSentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

package main

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// chartOptions are the flags of `bundle chart`.
type chartOptions struct {
	config, name, versionText, repository, out string
}

// runChart generates an operator's Helm chart from the same kustomize config as its bundle:
//
//	bundle chart --config operators/gordon/config/manifests --name gordon --version 0.4.0 \
//	       --repository 127.0.0.1:5000/quintet/gordon --out operators/gordon/dist/chart
//
// The chart holds config/default's objects (CRDs, RBAC, the manager, the metrics Service),
// with what a Helm user sets (image, replicas, scheduling, security contexts, watched
// namespaces, metrics, CRDs) templated from values; the CSV base says which install modes,
// hence which watched namespaces, the operator supports.
func runChart(args []string) error {
	var o chartOptions
	fs := flag.NewFlagSet("chart", flag.ExitOnError)
	fs.StringVar(&o.config, "config", "", "the operator's config/manifests kustomization")
	fs.StringVar(&o.name, "name", "", "the chart's name (the operator's)")
	fs.StringVar(&o.versionText, "version", "", "the chart's version, the operator's, without a leading v")
	fs.StringVar(&o.repository, "repository", "", "the manager image's repository (the tag is v<version>)")
	fs.StringVar(&o.out, "out", "", "the chart folder (replaced)")
	_ = fs.Parse(args)
	if o.config == "" || o.name == "" || o.versionText == "" || o.repository == "" || o.out == "" {
		return fmt.Errorf("chart: --config, --name, --version, --repository and --out are required")
	}
	objects, err := render(o.config)
	if err != nil {
		return err
	}
	b, err := classify(objects)
	if err != nil {
		return err
	}
	files, err := chartFiles(o, b, objects)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(o.out); err != nil {
		return err
	}
	for path, content := range files {
		path = filepath.Join(o.out, path)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// supportsAllNamespaces reads the CSV base's AllNamespaces install mode.
func supportsAllNamespaces(csv *operatorsv1alpha1.ClusterServiceVersion) bool {
	return slices.ContainsFunc(csv.Spec.InstallModes, func(m operatorsv1alpha1.InstallMode) bool {
		return m.Type == operatorsv1alpha1.InstallModeTypeAllNamespaces && m.Supported
	})
}

// chartFiles are the chart's files by path, from the objects of config/manifests.
func chartFiles(o chartOptions, b *parts, objects []*unstructured.Unstructured) (map[string]string, error) {
	allNamespaces := supportsAllNamespaces(b.base)
	defaults, err := managerDefaults(b)
	if err != nil {
		return nil, err
	}
	files := map[string]string{
		"Chart.yaml":          chartYAML(o, b.base),
		"values.yaml":         valuesYAML(o, allNamespaces, defaults),
		"values.schema.json":  valuesSchema,
		".helmignore":         "# Nothing to ignore: the chart is generated (hack/bundle chart).\n",
		"templates/NOTES.txt": notes(o, b),
		"templates/_helpers.tpl": strings.ReplaceAll(helpers+prometheusCondition, "CHART", o.name) +
			fmt.Sprintf("\n{{- define %q -}}%t{{- end }}\n", o.name+".allNamespaces", allNamespaces),
	}
	api, err := apiServiceTemplate(o)
	if err != nil {
		return nil, err
	}
	files["templates/api/service.yaml"] = api
	if files["templates/api/network-policy.yaml"], err = apiNetworkPolicyTemplate(o); err != nil {
		return nil, err
	}
	monitoring, err := prometheusTemplates(o)
	if err != nil {
		return nil, err
	}
	maps.Copy(files, monitoring)
	for _, crd := range b.crdObjects {
		y, err := crdTemplate(crd)
		if err != nil {
			return nil, err
		}
		files["templates/crd/"+crd.GetName()+".yaml"] = y
	}
	clusterNames := map[string]bool{} // cluster-scoped objects get the release namespace in their names
	for _, u := range objects {
		if u.GetKind() == kindClusterRole || u.GetKind() == kindClusterRoleBinding {
			clusterNames[u.GetName()] = true
		}
	}
	scopes := newScopes(b.crds)
	for _, u := range objects {
		var (
			y   string
			err error
		)
		switch u.GetKind() {
		case "Namespace", "CustomResourceDefinition", "ClusterServiceVersion", "Configuration":
			continue // the release namespace; crd/; the bundle's; the scorecard's
		case "Deployment":
			y, err = deploymentTemplate(o, u)
		case kindClusterRoleBinding:
			if u.GetName() == managerBindingName(o) {
				y, err = managerRBACTemplate(o, objects, u, scopes)
				break
			}
			y, err = objectTemplate(u, clusterNames)
		case kindClusterRole:
			if u.GetName() == managerRoleName(o) {
				continue // with its binding, in manager-rbac.yaml
			}
			y, err = objectTemplate(u, clusterNames)
		case kindNetworkPolicy:
			y, err = networkPolicyTemplate(u)
		case kindService:
			if y, err = objectTemplate(u, clusterNames); err == nil {
				y = "{{- if .Values.metrics.enable }}\n" + y + "{{- end }}\n"
			}
		default:
			if samples := slices.Contains(b.samples, u); samples {
				continue
			}
			y, err = objectTemplate(u, clusterNames)
		}
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", u.GetKind(), u.GetName(), err)
		}
		files["templates/"+templateFileName(o, u)] = y
	}
	return files, nil
}

func managerRoleName(o chartOptions) string    { return o.name + "-manager-role" }
func managerBindingName(o chartOptions) string { return o.name + "-manager-rolebinding" }

// templateFileName is where an object's template goes: by kind, without the operator prefix.
func templateFileName(o chartOptions, u *unstructured.Unstructured) string {
	name := strings.TrimPrefix(u.GetName(), o.name+"-")
	if u.GetKind() == kindClusterRoleBinding && u.GetName() == managerBindingName(o) {
		return "rbac/manager-rbac.yaml"
	}
	return fmt.Sprintf("%s/%s.yaml", chartFolder(u.GetKind()), name)
}

func chartFolder(kind string) string {
	switch kind {
	case kindClusterRole, kindClusterRoleBinding, "Role", "RoleBinding", "ServiceAccount":
		return "rbac"
	case kindService:
		return "metrics"
	case kindNetworkPolicy:
		return "network-policy"
	}
	return "manager"
}

// Placeholders set into objects before they are written as YAML, then replaced by template
// expressions: a quoted scalar becomes an expression, a line becomes a block at its indent.
const (
	phNamespace = "@@NAMESPACE@@"
	phSuffix    = "@@RELEASE-NAMESPACE-SUFFIX@@"
)

// objectTemplate writes u with the release namespace, and cluster-scoped names (and
// references to them) suffixed with it, so that installs in two namespaces do not clash.
func objectTemplate(u *unstructured.Unstructured, clusterNames map[string]bool) (string, error) {
	u = u.DeepCopy()
	if u.GetNamespace() != "" {
		u.SetNamespace(phNamespace)
	}
	if clusterNames[u.GetName()] && (u.GetKind() == kindClusterRole || u.GetKind() == kindClusterRoleBinding) {
		u.SetName(u.GetName() + phSuffix)
	}
	if ref, ok, _ := unstructured.NestedString(u.Object, "roleRef", "name"); ok && clusterNames[ref] {
		if kind, _, _ := unstructured.NestedString(u.Object, "roleRef", "kind"); kind == kindClusterRole {
			_ = unstructured.SetNestedField(u.Object, ref+phSuffix, "roleRef", "name")
		}
	}
	if subjects, ok, _ := unstructured.NestedSlice(u.Object, "subjects"); ok {
		for _, s := range subjects {
			if m, ok := s.(map[string]any); ok && m["namespace"] != nil {
				m["namespace"] = phNamespace
			}
		}
		_ = unstructured.SetNestedSlice(u.Object, subjects, "subjects")
	}
	return toTemplate(u.Object, nil, nil)
}

// toTemplate writes obj as YAML and replaces its placeholders: each of scalars (a quoted
// value) by an expression, and each line holding one of blocks by the block, at its indent.
func toTemplate(obj map[string]any, scalars map[string]string, blocks map[string]func(indent string) string) (string, error) {
	data, err := yaml.Marshal(obj)
	if err != nil {
		return "", err
	}
	text := string(data)
	text = strings.ReplaceAll(text, phNamespace, "{{ .Release.Namespace }}")
	text = strings.ReplaceAll(text, phSuffix, "-{{ .Release.Namespace }}")
	for ph, expr := range scalars {
		if !strings.Contains(text, "'"+ph+"'") {
			return "", fmt.Errorf("placeholder %s not written", ph)
		}
		text = strings.ReplaceAll(text, "'"+ph+"'", expr)
	}
	for ph, block := range blocks {
		re := regexp.MustCompile(`(?m)^( *).*'` + regexp.QuoteMeta(ph) + `'$`)
		if !re.MatchString(text) {
			return "", fmt.Errorf("placeholder %s not written", ph)
		}
		text = re.ReplaceAllStringFunc(text, func(line string) string {
			return block(line[:len(line)-len(strings.TrimLeft(line, " "))])
		})
	}
	return text, nil
}

// apiServiceTemplate writes the Service of the operator's config/api (beside config/manifests)
// behind api.enable: the REST API's, which the manager serves when api.enable adds its flag.
func apiServiceTemplate(o chartOptions) (string, error) {
	u, err := apiObject(o, "service.yaml")
	if err != nil {
		return "", err
	}
	y, err := objectTemplate(u, nil)
	if err != nil {
		return "", err
	}
	return "{{- if .Values.api.enable }}\n" + y + "{{- end }}\n", nil
}

// apiObject reads an object of the operator's config/api (beside config/manifests).
func apiObject(o chartOptions, file string) (*unstructured.Unstructured, error) {
	path := filepath.Join(o.config, "..", "api", file)
	data, err := os.ReadFile(path) //nolint:gosec // the operator's config the caller names
	if err != nil {
		return nil, fmt.Errorf("the REST API's config: %w", err)
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &u.Object); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return u, nil
}

// crdTemplate writes a CRD behind crd.enable, kept on uninstall with crd.keep.
func crdTemplate(crd *unstructured.Unstructured) (string, error) {
	u := crd.DeepCopy()
	const keep = "@@KEEP@@"
	annotations := u.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[keep] = keep
	u.SetAnnotations(annotations)
	y, err := toTemplate(u.Object, nil, map[string]func(string) string{keep: func(indent string) string {
		return indent + "{{- if .Values.crd.keep }}\n" + indent + "helm.sh/resource-policy: keep\n" + indent + "{{- end }}"
	}})
	if err != nil {
		return "", err
	}
	return "{{- if .Values.crd.enable }}\n" + y + "{{- end }}\n", nil
}

// managerRBACTemplate writes the manager's role and binding. Watching all namespaces: the
// ClusterRole and ClusterRoleBinding kustomize makes. Watching a list: in each namespace a
// Role with the rules about namespaced resources and a RoleBinding, and a ClusterRole (and
// binding) with the rules about cluster-scoped ones only, as OLM does for an OperatorGroup.
func managerRBACTemplate(o chartOptions, objects []*unstructured.Unstructured, binding *unstructured.Unstructured, s scopes) (string, error) {
	var role *unstructured.Unstructured
	for _, u := range objects {
		if u.GetKind() == kindClusterRole && u.GetName() == managerRoleName(o) {
			role = u
		}
	}
	if role == nil {
		return "", fmt.Errorf("no ClusterRole %s", managerRoleName(o))
	}
	var cr rbacv1.ClusterRole
	if err := convert(role, &cr); err != nil {
		return "", err
	}
	namespaced, clusterWide, err := s.placeRules(cr.Rules)
	if err != nil {
		return "", err
	}
	names := map[string]bool{managerRoleName(o): true, managerBindingName(o): true}
	clusterRole, err := objectTemplate(role, names)
	if err != nil {
		return "", err
	}
	clusterBinding, err := objectTemplate(binding, names)
	if err != nil {
		return "", err
	}
	nsRole := role.DeepCopy()
	nsRole.SetKind("Role")
	nsRole.SetNamespace("@@NS@@")
	if err := setRules(nsRole, namespaced); err != nil {
		return "", err
	}
	nsBinding := binding.DeepCopy()
	nsBinding.SetKind("RoleBinding")
	_ = unstructured.SetNestedField(nsBinding.Object, "Role", "roleRef", "kind")
	bindingYAML, err := objectTemplate(nsBinding, nil) // its subjects: in the release namespace
	if err != nil {
		return "", err
	}
	bindingYAML = strings.Replace(bindingYAML, "metadata:\n", "metadata:\n  namespace: '@@NS@@'\n", 1)
	roleYAML, err := toTemplate(nsRole.Object, nil, nil)
	if err != nil {
		return "", err
	}
	var out strings.Builder
	fmt.Fprintf(&out, "{{- $watch := include %q . }}\n{{- if not $watch }}\n", o.name+".watchNamespaces")
	out.WriteString(clusterRole + "---\n" + clusterBinding)
	out.WriteString("{{- else }}\n{{- range $ns := splitList \",\" $watch }}\n---\n")
	out.WriteString(strings.ReplaceAll(roleYAML+"---\n"+bindingYAML, "'@@NS@@'", "{{ $ns }}"))
	out.WriteString("{{- end }}\n")
	if len(clusterWide) > 0 {
		clusterOnly := role.DeepCopy()
		if err := setRules(clusterOnly, clusterWide); err != nil {
			return "", err
		}
		y, err := objectTemplate(clusterOnly, names)
		if err != nil {
			return "", err
		}
		out.WriteString("---\n" + y + "---\n" + clusterBinding)
	}
	out.WriteString("{{- end }}\n")
	return strings.ReplaceAll(out.String(), "{{ .Release.Namespace }}", "{{ $.Release.Namespace }}"), nil
}

func setRules(u *unstructured.Unstructured, rules []rbacv1.PolicyRule) error {
	data, err := yaml.Marshal(rules)
	if err != nil {
		return err
	}
	var list []any
	if err := yaml.Unmarshal(data, &list); err != nil {
		return err
	}
	u.Object["rules"] = list
	return nil
}

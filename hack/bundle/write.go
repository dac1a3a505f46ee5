package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// annotations are the bundle's metadata/annotations.yaml, also the bundle image's labels.
func annotations(o options, r release) map[string]string {
	return map[string]string{
		"operators.operatorframework.io.bundle.mediatype.v1":       "registry+v1",
		"operators.operatorframework.io.bundle.manifests.v1":       "manifests/",
		"operators.operatorframework.io.bundle.metadata.v1":        "metadata/",
		"operators.operatorframework.io.bundle.package.v1":         o.pkg,
		"operators.operatorframework.io.bundle.channels.v1":        r.channelList(),
		"operators.operatorframework.io.bundle.channel.default.v1": r.defaultChannel,
		"operators.operatorframework.io.test.mediatype.v1":         "scorecard+v1",
		"operators.operatorframework.io.test.config.v1":            "tests/scorecard/",
	}
}

// writeBundle replaces the bundle folder with the CSV, the manifests, the metadata, the
// scorecard configuration and the Dockerfile.
func writeBundle(o options, r release, csv *operatorsv1alpha1.ClusterServiceVersion, b *parts) error {
	if err := os.RemoveAll(o.out); err != nil {
		return err
	}
	files := map[string]any{
		filepath.Join("manifests", o.pkg+".clusterserviceversion.yaml"): csv,
		filepath.Join("metadata", "annotations.yaml"):                   map[string]any{"annotations": annotations(o, r)},
		filepath.Join("tests", "scorecard", "config.yaml"):              b.scorecard.Object,
	}
	for _, crd := range b.crdObjects {
		spec := crd.Object["spec"].(map[string]any)
		group, _ := spec["group"].(string)
		plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
		files[filepath.Join("manifests", group+"_"+plural+".yaml")] = crd.Object
	}
	for _, u := range b.others {
		u = u.DeepCopy()
		u.SetNamespace("") // OLM creates them in the install namespace
		gv := strings.ReplaceAll(u.GetAPIVersion(), "/", "_")
		files[filepath.Join("manifests", fmt.Sprintf("%s_%s_%s.yaml", u.GetName(), gv, strings.ToLower(u.GetKind())))] = u.Object
	}
	for path, obj := range files {
		if err := writeYAML(filepath.Join(o.out, path), obj); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(o.out, "bundle.Dockerfile"), []byte(dockerfile(annotations(o, r))), 0o644)
}

// dockerfile builds the bundle image (`make bundle-build` assembles the same image without
// a container engine).
func dockerfile(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("FROM scratch\n\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "LABEL %s=%s\n", k, labels[k])
	}
	b.WriteString("\nCOPY manifests /manifests/\nCOPY metadata /metadata/\nCOPY tests/scorecard /tests/scorecard/\n")
	return b.String()
}

// writeYAML writes obj as YAML, without the empty creationTimestamp and status fields that
// typed objects carry.
func writeYAML(path string, obj any) error {
	data, err := yaml.Marshal(obj)
	if err != nil {
		return err
	}
	var generic any
	if err := yaml.Unmarshal(data, &generic); err != nil {
		return err
	}
	if m, ok := generic.(map[string]any); ok {
		delete(m, "status")
	}
	if data, err = yaml.Marshal(prune(generic)); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// prune drops null creationTimestamps everywhere.
func prune(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, child := range t {
			if k == "creationTimestamp" && child == nil {
				delete(t, k)
				continue
			}
			t[k] = prune(child)
		}
	case []any:
		for i := range t {
			t[i] = prune(t[i])
		}
	}
	return v
}

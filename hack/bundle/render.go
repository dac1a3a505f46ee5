package main

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// render builds a kustomization (as `kubectl kustomize` does) and returns its objects.
func render(dir string) ([]*unstructured.Unstructured, error) {
	resources, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("rendering %s: %w", dir, err)
	}
	objects := make([]*unstructured.Unstructured, 0, resources.Size())
	for _, r := range resources.Resources() {
		data, err := r.AsYAML()
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &u.Object); err != nil {
			return nil, fmt.Errorf("%s: %w", r.CurId(), err)
		}
		objects = append(objects, u)
	}
	return objects, nil
}

// byKind splits objects by kind.
func byKind(objects []*unstructured.Unstructured) map[string][]*unstructured.Unstructured {
	kinds := map[string][]*unstructured.Unstructured{}
	for _, u := range objects {
		kinds[u.GetKind()] = append(kinds[u.GetKind()], u)
	}
	return kinds
}

// convert decodes an unstructured object into a typed one.
func convert(u *unstructured.Unstructured, out any) error {
	data, err := yaml.Marshal(u.Object)
	if err != nil {
		return err
	}
	return yaml.UnmarshalStrict(data, out)
}

// Kinds, a container and a variable the generators look for.
const (
	kindClusterRole        = "ClusterRole"
	kindClusterRoleBinding = "ClusterRoleBinding"
	kindService            = "Service"
	managerContainer       = "manager"
	watchNamespaceEnv      = "WATCH_NAMESPACE"
)

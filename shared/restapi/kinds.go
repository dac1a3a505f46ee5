// Package restapi serves an operator's custom resources over a small REST API with an
// OpenAPI 3 document and Swagger UI, for applications and portals that would rather not speak
// the Kubernetes API. It acts as the caller: every request carries the caller's bearer token,
// which goes to the API server unchanged, and the manager's own credentials are never used
// for a caller's request. The API server stays the one place that authenticates, authorizes,
// validates (with strict field validation) and stores.
package restapi

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// Kind is one custom resource kind the API serves: the version the CRD stores, and its schema.
type Kind struct {
	Group    string
	Version  string
	Kind     string
	ListKind string
	Plural   string
	// Schema is the CRD's openAPIV3Schema for Version.
	Schema map[string]any
}

// APIVersion is the kind's group/version.
func (k Kind) APIVersion() string { return k.Group + "/" + k.Version }

// crd is the part of a CustomResourceDefinition the API reads.
type crd struct {
	Kind string `json:"kind"`
	Spec struct {
		Group string `json:"group"`
		Scope string `json:"scope"`
		Names struct {
			Kind     string `json:"kind"`
			ListKind string `json:"listKind"`
			Plural   string `json:"plural"`
		} `json:"names"`
		Versions []struct {
			Name    string `json:"name"`
			Served  bool   `json:"served"`
			Storage bool   `json:"storage"`
			Schema  struct {
				OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
			} `json:"schema"`
		} `json:"versions"`
	} `json:"spec"`
}

// KindsFromCRDs reads every CRD (*.yaml) in fsys, as controller-gen writes them to
// config/crd/bases, sorted by plural. Only namespaced kinds are served; their plurals must be
// distinct, since the API's paths name no group.
func KindsFromCRDs(fsys fs.FS) ([]Kind, error) {
	var kinds []Kind
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Ext(p) != ".yaml" {
			return err
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		k, err := kindFromCRD(data)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		kinds = append(kinds, k)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(kinds) == 0 {
		return nil, fmt.Errorf("no CRDs found")
	}
	slices.SortFunc(kinds, func(a, b Kind) int { return strings.Compare(a.Plural, b.Plural) })
	for i := 1; i < len(kinds); i++ {
		if kinds[i].Plural == kinds[i-1].Plural {
			return nil, fmt.Errorf("two kinds named %s (%s and %s)", kinds[i].Plural, kinds[i-1].APIVersion(), kinds[i].APIVersion())
		}
	}
	return kinds, nil
}

func kindFromCRD(data []byte) (Kind, error) {
	var c crd
	if err := yaml.Unmarshal(data, &c); err != nil {
		return Kind{}, err
	}
	if c.Kind != "CustomResourceDefinition" {
		return Kind{}, fmt.Errorf("not a CustomResourceDefinition but %q", c.Kind)
	}
	if c.Spec.Scope != "Namespaced" {
		return Kind{}, fmt.Errorf("%s is %s: the API serves namespaced kinds only", c.Spec.Names.Kind, c.Spec.Scope)
	}
	for _, v := range c.Spec.Versions {
		if v.Storage && v.Served {
			return Kind{
				Group: c.Spec.Group, Version: v.Name, Kind: c.Spec.Names.Kind, ListKind: c.Spec.Names.ListKind,
				Plural: c.Spec.Names.Plural, Schema: v.Schema.OpenAPIV3Schema,
			}, nil
		}
	}
	return Kind{}, fmt.Errorf("%s has no served storage version", c.Spec.Names.Kind)
}

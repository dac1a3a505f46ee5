package minimart

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	helmrelease "github.com/quintet-operators/quintet/operators/minimart/internal/release"
)

// objectKey names an object of a release: kind and name (a release lives in one namespace).
type objectKey struct{ Kind, Name string }

func (k objectKey) String() string { return k.Kind + "/" + k.Name }

// manifestObjects are the objects of a release's manifest, as JSON decodes them.
func manifestObjects(manifest string) (map[objectKey]map[string]any, error) {
	list, err := helmrelease.Objects(strings.NewReader(manifest))
	if err != nil {
		return nil, fmt.Errorf("reading the release's manifest: %w", err)
	}
	objects := map[objectKey]map[string]any{}
	for _, obj := range list {
		objects[objectKey{obj.GetKind(), obj.GetName()}] = asJSON(obj.Object)
	}
	return objects, nil
}

// drifted lists the objects of a release's manifest that are missing from live or whose
// fields differ from what the manifest sets; fields the manifest does not set (defaults,
// status, a node port the API server picked) are not drift.
func drifted(manifest map[objectKey]map[string]any, live map[objectKey]client.Object) []objectKey {
	var out []objectKey
	for key, want := range manifest {
		obj, ok := live[key]
		if !ok || !contains(asJSON(obj), want) {
			out = append(out, key)
		}
	}
	return out
}

// contains reports whether have holds everything want sets: maps key by key, lists item by
// item with the same length, other values equal.
func contains(have, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range w {
			if v == nil {
				continue
			}
			if !contains(h[k], v) {
				return false
			}
		}
		return true
	case []any:
		h, ok := have.([]any)
		if !ok || len(h) != len(w) {
			return false
		}
		for i := range w {
			if !contains(h[i], w[i]) {
				return false
			}
		}
		return true
	default:
		return reflect.DeepEqual(have, want)
	}
}

// asJSON is v as JSON decodes it: maps of any, lists of any, numbers as float64.
func asJSON(v any) map[string]any {
	data, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	out := map[string]any{}
	_ = json.Unmarshal(data, &out)
	return out
}

package main

import (
	"reflect"
	"testing"
)

// The files are named as kubeconform looks them up (registry.schemaPath's KindSuffix).
func TestSchemaFileIsWhereKubeconformLooks(t *testing.T) {
	for apiVersion, want := range map[string]string{
		"v1":                               "pod-v1.json",
		"apps/v1":                          "pod-apps-v1.json",
		"networking.k8s.io/v1":             "pod-networking-v1.json",
		"etcd.database.coreos.com/v1beta2": "pod-etcd-v1beta2.json",
	} {
		if got := schemaFile(apiVersion, "Pod"); got != want {
			t.Errorf("schemaFile(%q) = %q, want %q", apiVersion, got, want)
		}
	}
}

func TestStrictClosesObjectsAndKeepsWhatSchemasLeaveOpen(t *testing.T) {
	crd := schema{
		"type": "object",
		"properties": map[string]any{
			"spec": map[string]any{"type": "object", "properties": map[string]any{
				"size":   map[string]any{"type": "integer"},
				"port":   map[string]any{"x-kubernetes-int-or-string": true},
				"note":   map[string]any{"type": "string", "nullable": true},
				"values": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": map[string]any{}},
				"labels": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
			}},
		},
	}
	got := strict(crd, true).(schema)
	spec := got["properties"].(map[string]any)["spec"].(map[string]any)
	props := spec["properties"].(map[string]any)
	checks := []struct {
		name      string
		got, want any
	}{
		{"root closed", got["additionalProperties"], false},
		{"spec closed", spec["additionalProperties"], false},
		{"a CRD's integer is not nullable", props["size"].(map[string]any)["type"], "integer"},
		{"nullable allows null", props["note"].(map[string]any)["type"], []any{"string", "null"}},
		{"int-or-string", props["port"].(map[string]any)["anyOf"], []any{typeOrNull("string"), typeOrNull("integer")}},
		{"preserve-unknown-fields stays open", props["values"].(map[string]any)["additionalProperties"], nil},
		{"a map keeps its values' schema", props["labels"].(map[string]any)["additionalProperties"], map[string]any{"type": "string"}},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: %#v, want %#v", c.name, c.got, c.want)
		}
	}
	// Kubernetes' own definitions take null anywhere (the API server reads it as unset).
	builtin := strict(schema{"type": "object", "properties": map[string]any{"replicas": map[string]any{"type": "integer"}}}, false).(schema)
	if typ := builtin["properties"].(map[string]any)["replicas"].(map[string]any)["type"]; !reflect.DeepEqual(typ, []any{"integer", "null"}) {
		t.Errorf("a built-in integer: type %v, want integer or null", typ)
	}
}

func TestReachableFollowsRefsOnceEvenWhenRecursive(t *testing.T) {
	defs := map[string]schema{
		"A": {"properties": map[string]any{"b": map[string]any{"$ref": "#/definitions/B"}}},
		"B": {"properties": map[string]any{"self": map[string]any{"$ref": "#/definitions/B"}, "c": map[string]any{"items": map[string]any{"$ref": "#/definitions/C"}}}},
		"C": {"type": "string"},
		"D": {"type": "string"},
	}
	got := reachable(defs, "A")
	if len(got) != 3 || got["D"] != nil || got["C"] == nil {
		t.Errorf("reachable from A: %v, want A, B and C", got)
	}
}

package ensure

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestCopyManagedFieldsOfAnUnstructuredSpec(t *testing.T) {
	object := func(spec map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"spec": runtime.DeepCopyJSONValue(spec).(map[string]any)}}
	}
	desired := map[string]any{"selector": map[string]any{"a": "b"}, "loader": map[string]any{"name": "m"}}
	withDefault := map[string]any{"selector": map[string]any{"a": "b"}, "loader": map[string]any{"name": "m", "dir": "/opt"}}
	withSecret := map[string]any{"selector": map[string]any{"a": "b"}, "loader": map[string]any{"name": "m"}, "secret": map[string]any{"name": "s"}}
	changed := map[string]any{"selector": map[string]any{"a": "c"}, "loader": map[string]any{"name": "m"}}
	tests := []struct {
		name     string
		existing map[string]any
		want     bool
	}{
		{"the same", desired, false},
		{"a default the API server added below the top", withDefault, false},
		{"a field the spec no longer sets", withSecret, true},
		{"a changed value", changed, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			existing := object(tt.existing)
			got, err := CopyManagedFields(object(desired), existing)
			if err != nil || got != tt.want {
				t.Fatalf("CopyManagedFields = %v, %v; want %v", got, err, tt.want)
			}
			if got, _ := CopyManagedFields(object(desired), existing); got {
				t.Error("after the copy, the existing object still differs")
			}
		})
	}
}

package restapi

import "testing"

var testKind = Kind{Group: "test.quintet.dev", Version: "v1", Kind: "Widget", ListKind: "WidgetList", Plural: "widgets"}

// FuzzDecodeBody: no input makes decoding panic, and what it accepts is one JSON object of
// the kind, in the path's namespace.
func FuzzDecodeBody(f *testing.F) {
	for _, seed := range []string{
		`{"metadata":{"name":"a"},"spec":{"widget":{"replicas":1}}}`, `{"apiVersion":1}`, `{"metadata":null}`,
		`{"metadata":{"namespace":5}}`, `null`, `[]`, `{}{}`, "apiVersion: x\nkind: y", `{"a":1e400}`, "\xff",
	} {
		f.Add([]byte(seed), "application/json")
		f.Add([]byte(seed), applyPatch)
		f.Add([]byte(seed), mergePatch)
	}
	f.Fuzz(func(t *testing.T, raw []byte, contentType string) {
		out, err := decodeBody(raw, testKind, "ns", "a", contentType)
		if err != nil {
			return
		}
		object, err := decodeObject(out)
		if err != nil {
			t.Fatalf("accepted %q as %q, not a JSON object", raw, out)
		}
		if contentType == mergePatch {
			return
		}
		meta, _ := object["metadata"].(map[string]any)
		if object["kind"] != "Widget" || object["apiVersion"] != "test.quintet.dev/v1" || meta["namespace"] != "ns" || meta["name"] != "a" {
			t.Fatalf("accepted %q as %s", raw, out)
		}
	})
}

// Command values-schema writes the minimart chart's values.schema.json from the Minimart
// CRD's spec schema (`go generate` in the module runs it after controller-gen), so that the
// chart's values and a Minimart's spec are validated alike; `make verify` fails when the two
// drift apart.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

// Keywords of a CRD's OpenAPI v3 schema that mean the same in JSON Schema; the others
// (x-kubernetes-*: CEL rules, list types) have no JSON Schema equivalent and are left out.
var keywords = []string{
	"description", "type", "enum", "default", "minimum", "maximum", "minLength", "maxLength",
	"pattern", "minItems", "maxItems", "minProperties", "maxProperties", "required", "format",
}

func main() {
	crdPath := flag.String("crd", "", "The CRD file.")
	out := flag.String("out", "", "The values.schema.json to write.")
	flag.Parse()
	data, err := os.ReadFile(*crdPath)
	if err == nil {
		data, err = valuesSchema(data)
	}
	if err == nil {
		err = os.WriteFile(*out, data, 0o644) //nolint:gosec // a file of the repository
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "values-schema:", err)
		os.Exit(1)
	}
}

// valuesSchema returns the JSON Schema of the spec of the CRD's only version.
func valuesSchema(crd []byte) ([]byte, error) {
	var doc struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(crd, &doc); err != nil {
		return nil, err
	}
	if len(doc.Spec.Versions) != 1 {
		return nil, fmt.Errorf("the CRD has %d versions, want 1", len(doc.Spec.Versions))
	}
	properties, _ := doc.Spec.Versions[0].Schema.OpenAPIV3Schema["properties"].(map[string]any)
	spec, ok := properties["spec"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the CRD's schema has no spec")
	}
	schema := convert(spec)
	schema["$schema"] = "http://json-schema.org/draft-07/schema#"
	schema["title"] = "Values of the minimart chart: the spec of a Minimart (generated from its CRD; do not edit)"
	delete(schema, "default")
	data, err := json.MarshalIndent(schema, "", "  ")
	return append(data, '\n'), err
}

// convert translates one OpenAPI v3 schema node; objects refuse unknown keys, as the API
// server's strict field validation does.
func convert(node map[string]any) map[string]any {
	out := map[string]any{}
	for _, k := range keywords {
		if v, ok := node[k]; ok {
			out[k] = v
		}
	}
	if props, ok := node["properties"].(map[string]any); ok {
		converted := map[string]any{}
		for name, p := range props {
			converted[name] = convert(p.(map[string]any))
		}
		out["properties"] = converted
		out["additionalProperties"] = false
	}
	if values, ok := node["additionalProperties"].(map[string]any); ok {
		out["additionalProperties"] = convert(values) // a map's values
	}
	if items, ok := node["items"].(map[string]any); ok {
		out["items"] = convert(items)
	}
	return out
}

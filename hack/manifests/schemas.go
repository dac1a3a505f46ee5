package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

// schema is a JSON schema node.
type schema = map[string]any

// runSchemas writes a standalone, strict schema per kind into --out, named as kubeconform
// looks them up with `-schema-location DIR/{{ .ResourceKind }}{{ .KindSuffix }}.json`.

// descriptionKey is the JSON schema keyword that describes a field.
const descriptionKey = "description"

func runSchemas(args []string) error {
	flags := flag.NewFlagSet("schemas", flag.ContinueOnError)
	openapi := flags.String("openapi", "", "Kubernetes' OpenAPI v2 document (api/openapi-spec/swagger.json of k8s.io/kubernetes).")
	out := flags.String("out", "", "Directory to write the schemas into.")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if *openapi == "" || *out == "" {
		return errors.New("--openapi and --out are required")
	}
	schemas, err := builtinSchemas(*openapi)
	if err != nil {
		return err
	}
	for _, path := range flags.Args() {
		crdSchemas, err := crdSchemas(path)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		maps.Copy(schemas, crdSchemas)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	for name, s := range schemas {
		data, err := json.MarshalIndent(s, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(*out, name), data, 0o644); err != nil { //nolint:gosec // schemas, not secrets
			return err
		}
	}
	fmt.Printf("%d schemas in %s\n", len(schemas), *out)
	return nil
}

// schemaFile is the file kubeconform reads for a kind of apiVersion: the kind in lower case,
// the group's first label (none for the core group) and the version.
func schemaFile(apiVersion, kind string) string {
	group, version, found := strings.Cut(apiVersion, "/")
	if !found {
		return fmt.Sprintf("%s-%s.json", strings.ToLower(kind), group)
	}
	label, _, _ := strings.Cut(group, ".")
	return fmt.Sprintf("%s-%s-%s.json", strings.ToLower(kind), strings.ToLower(label), version)
}

// builtinSchemas are the kinds of Kubernetes' OpenAPI v2 document: each definition with a
// group-version-kind, with the definitions it refers to inlined under "definitions".
func builtinSchemas(path string) (map[string]schema, error) {
	data, err := os.ReadFile(path) //nolint:gosec // the document the caller names
	if err != nil {
		return nil, err
	}
	var doc struct {
		Definitions map[string]schema `json:"definitions"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	strictDefs := map[string]schema{}
	for name, def := range doc.Definitions {
		strictDefs[name] = strictBuiltin(name, def)
	}
	out := map[string]schema{}
	for name, def := range doc.Definitions {
		gvks, _ := def["x-kubernetes-group-version-kind"].([]any)
		for _, g := range gvks {
			gvk, _ := g.(map[string]any)
			group, _ := gvk["group"].(string)
			version, _ := gvk["version"].(string)
			kind, _ := gvk["kind"].(string)
			apiVersion := version
			if group != "" {
				apiVersion = group + "/" + version
			}
			root := maps.Clone(strictDefs[name])
			root["definitions"] = reachable(strictDefs, name)
			out[schemaFile(apiVersion, kind)] = root
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no definition with a group-version-kind", path)
	}
	return out, nil
}

// reachable are the definitions name refers to, directly or not (itself included).
func reachable(defs map[string]schema, name string) map[string]any {
	seen := map[string]any{}
	var walk func(node any)
	walk = func(node any) {
		switch n := node.(type) {
		case map[string]any:
			if ref, ok := n["$ref"].(string); ok {
				target := strings.TrimPrefix(ref, "#/definitions/")
				if _, done := seen[target]; !done {
					seen[target] = defs[target]
					walk(defs[target])
				}
			}
			for _, v := range n {
				walk(v)
			}
		case []any:
			for _, v := range n {
				walk(v)
			}
		}
	}
	seen[name] = defs[name]
	walk(defs[name])
	return seen
}

// strictBuiltin makes a definition of Kubernetes' document strict: objects with properties
// take no others, and a value may be null (the API server takes null as unset). Quantities
// and int-or-strings are numbers or strings, as manifests write them.
func strictBuiltin(name string, def schema) schema {
	switch name {
	case "io.k8s.apimachinery.pkg.api.resource.Quantity":
		return schema{descriptionKey: def[descriptionKey], "oneOf": []any{typeOrNull("string"), typeOrNull("number")}}
	case "io.k8s.apimachinery.pkg.util.intstr.IntOrString":
		return schema{descriptionKey: def[descriptionKey], "oneOf": []any{typeOrNull("string"), typeOrNull("integer")}}
	}
	return strict(def, false).(schema)
}

func typeOrNull(t string) schema { return schema{"type": []any{t, "null"}} }

// strict copies node with additionalProperties false on every object that lists its
// properties and says nothing of others, and null allowed wherever a type is (in a CRD's
// schema, where it says nullable). CRD schemas' extensions are honoured: x-kubernetes-preserve-unknown-fields keeps an object open, and
// x-kubernetes-int-or-string takes numbers and strings.
func strict(node any, crd bool) any {
	switch n := node.(type) {
	case map[string]any:
		out := make(map[string]any, len(n)+1)
		for k, v := range n {
			if k == "properties" || k == "patternProperties" || k == "definitions" {
				props := map[string]any{}
				for name, p := range v.(map[string]any) {
					props[name] = strict(p, crd)
				}
				out[k] = props
				continue
			}
			out[k] = strict(v, crd)
		}
		if _, ok := n["properties"]; ok && n["additionalProperties"] == nil && n["x-kubernetes-preserve-unknown-fields"] != true {
			out["additionalProperties"] = false
		}
		if n["x-kubernetes-int-or-string"] == true {
			delete(out, "type")
			out["anyOf"] = []any{typeOrNull("string"), typeOrNull("integer")}
		}
		if t, ok := out["type"].(string); ok && (!crd || n["nullable"] == true) {
			out["type"] = []any{t, "null"}
		}
		return out
	case []any:
		out := make([]any, len(n))
		for i, v := range n {
			out[i] = strict(v, crd)
		}
		return out
	}
	return node
}

// crdSchemas are the kinds of the CustomResourceDefinitions in a YAML file, one schema per
// served version.
func crdSchemas(path string) (map[string]schema, error) {
	data, err := os.ReadFile(path) //nolint:gosec // the file the caller names
	if err != nil {
		return nil, err
	}
	out := map[string]schema{}
	for _, doc := range bytes.Split(data, []byte("\n---")) {
		var crd struct {
			Kind string `json:"kind"`
			Spec struct {
				Group string `json:"group"`
				Names struct {
					Kind string `json:"kind"`
				} `json:"names"`
				Versions []struct {
					Name   string `json:"name"`
					Served bool   `json:"served"`
					Schema struct {
						OpenAPIV3Schema schema `json:"openAPIV3Schema"`
					} `json:"schema"`
				} `json:"versions"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(doc, &crd); err != nil {
			return nil, err
		}
		if crd.Kind != "CustomResourceDefinition" {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if !v.Served || v.Schema.OpenAPIV3Schema == nil {
				continue
			}
			out[schemaFile(crd.Spec.Group+"/"+v.Name, crd.Spec.Names.Kind)] = strict(v.Schema.OpenAPIV3Schema, true).(schema)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no CustomResourceDefinition with a served schema")
	}
	return out, nil
}

package restapi

import (
	"encoding/json"
	"fmt"
	"strings"
)

// schema is a JSON schema, as a CRD holds it.
type schema = map[string]any

// documentedSchema is a copy of the kind's schema with its CEL rules in the descriptions and
// apiVersion and kind pinned to the kind's.
func documentedSchema(k Kind) (schema, error) {
	data, err := json.Marshal(k.Schema)
	if err != nil {
		return nil, err
	}
	var out schema
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, err
	}
	describeRules(out)
	props, _ := out["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
		out["properties"] = props
	}
	props[fieldAPIVersion] = pinned(k.APIVersion())
	props[fieldKind] = pinned(k.Kind)
	return out, nil
}

// pinned is a string schema of one value, its default.
func pinned(value string) schema {
	s := enumOf(value)
	s["default"] = value
	return s
}

// enumOf is a string schema of these values only.
func enumOf(values ...any) schema { return typed("string", "enum", values) }

func arrayOf(items schema) schema { return typed("array", keyItems, items) }

// of is the schema of a JSON type.
func of(jsonType string) schema { return schema{"type": jsonType} }

// typed is the schema of a JSON type, with one more keyword.
func typed(jsonType, key string, value any) schema {
	s := of(jsonType)
	s[key] = value
	return s
}

const keyItems = "items"

// describeRules appends each node's x-kubernetes-validations to its description, throughout.
func describeRules(node map[string]any) {
	if rules, ok := node["x-kubernetes-validations"].([]any); ok && len(rules) > 0 {
		var b strings.Builder
		if d, _ := node["description"].(string); d != "" {
			b.WriteString(d + "\n\n")
		}
		b.WriteString("Validation rules (CEL):")
		for _, r := range rules {
			rule, _ := r.(map[string]any)
			fmt.Fprintf(&b, "\n- `%v`", rule["rule"])
			if msg, ok := rule["message"]; ok {
				fmt.Fprintf(&b, ": %v", msg)
			}
		}
		node["description"] = b.String()
	}
	for _, key := range []string{"properties", "patternProperties"} {
		if children, ok := node[key].(map[string]any); ok {
			for _, child := range children {
				if c, ok := child.(map[string]any); ok {
					describeRules(c)
				}
			}
		}
	}
	for _, key := range []string{keyItems, "additionalProperties", "not"} {
		if c, ok := node[key].(map[string]any); ok {
			describeRules(c)
		}
	}
	for _, key := range []string{"allOf", "anyOf", "oneOf"} {
		if list, ok := node[key].([]any); ok {
			for _, child := range list {
				if c, ok := child.(map[string]any); ok {
					describeRules(c)
				}
			}
		}
	}
}

func ref(name string) schema { return schema{"$ref": "#/components/schemas/" + name} }

var (
	str     = of("string")
	boolean = of("boolean")
)

func objectOf(properties schema) schema { return typed("object", "properties", properties) }

func listSchema(k Kind) schema {
	s := objectOf(schema{
		fieldAPIVersion: str, fieldKind: str,
		fieldMetadata: objectOf(schema{"continue": str, "resourceVersion": str}),
		keyItems:      arrayOf(ref(k.Kind)),
	})
	s["description"] = "A page of " + k.Plural + ": `metadata.continue` names the next page, if any."
	return s
}

// statusSchema is the Kubernetes API's Status: what every error (and a deletion) returns.
func statusSchema() schema {
	cause := objectOf(schema{"field": str, "message": str, "reason": str})
	s := objectOf(schema{
		fieldAPIVersion: str, fieldKind: str, "status": str, "message": str, "reason": str,
		"code":    typed("integer", "format", "int32"),
		"details": objectOf(schema{fieldName: str, "group": str, fieldKind: str, "uid": str, "causes": arrayOf(cause)}),
	})
	s["description"] = "The Kubernetes API server's Status; for invalid input (422) `details.causes[].field` names each bad field."
	return s
}

// deletedSchema is what a deletion answers: a Status (status Success, details naming the
// object) once the object is gone, or the object, its deletionTimestamp set, while finalizers
// or dependents (propagationPolicy=Foreground) hold it.
func deletedSchema(k Kind) schema {
	s := schema{"anyOf": []any{ref("Status"), ref(k.Kind)}}
	s["description"] = "A Status when the " + k.Kind + " is gone, else the " + k.Kind + " being deleted."
	return s
}

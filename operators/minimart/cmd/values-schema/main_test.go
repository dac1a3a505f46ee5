package main

import (
	"encoding/json"
	"testing"
)

const crd = `
spec:
  versions:
  - name: v1alpha1
    schema:
      openAPIV3Schema:
        properties:
          spec:
            default: {}
            type: object
            x-kubernetes-validations:
            - rule: "true"
            properties:
              products:
                type: array
                x-kubernetes-list-type: map
                maxItems: 3
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string, minLength: 1}
              replicaCount: {type: integer, minimum: 0, default: 1, format: int32}
              nodeSelector: {type: object, maxProperties: 2, additionalProperties: {type: string}}
`

func TestTheSchemaKeepsJSONSchemaKeywordsAndRefusesUnknownKeys(t *testing.T) {
	data, err := valuesSchema([]byte(crd))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	want := `{"$schema":"http://json-schema.org/draft-07/schema#","additionalProperties":false,"properties":{` +
		`"nodeSelector":{"additionalProperties":{"type":"string"},"maxProperties":2,"type":"object"},` +
		`"products":{"items":{"additionalProperties":false,"properties":{"name":{"minLength":1,"type":"string"}},"required":["name"],"type":"object"},"maxItems":3,"type":"array"},` +
		`"replicaCount":{"default":1,"format":"int32","minimum":0,"type":"integer"}},` +
		`"title":"Values of the minimart chart: the spec of a Minimart (generated from its CRD; do not edit)","type":"object"}`
	if compact, _ := json.Marshal(got); string(compact) != want {
		t.Errorf("schema\n%s\nwant\n%s", compact, want)
	}
}

func TestACRDWithoutASpecIsRefused(t *testing.T) {
	if _, err := valuesSchema([]byte("spec: {versions: [{schema: {openAPIV3Schema: {}}}]}")); err == nil {
		t.Fatal("no error")
	}
}

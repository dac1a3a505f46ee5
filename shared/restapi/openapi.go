package restapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// schema is a JSON schema, as a CRD holds it.
type schema = map[string]any

// The parts of an OpenAPI 3 document the API needs.
type (
	document struct {
		OpenAPI    string                `json:"openapi"`
		Info       info                  `json:"info"`
		Servers    []server              `json:"servers"`
		Security   []map[string][]string `json:"security"`
		Paths      map[string]pathItem   `json:"paths"`
		Components components            `json:"components"`
	}
	info struct {
		Title       string `json:"title"`
		Version     string `json:"version"`
		Description string `json:"description"`
	}
	server struct {
		URL string `json:"url"`
	}
	components struct {
		Schemas         map[string]schema         `json:"schemas"`
		SecuritySchemes map[string]securityScheme `json:"securitySchemes"`
	}
	securityScheme struct {
		Type        string `json:"type"`
		Scheme      string `json:"scheme"`
		Description string `json:"description"`
	}
	pathItem struct {
		Parameters []parameter `json:"parameters"`
		Get        *operation  `json:"get,omitempty"`
		Post       *operation  `json:"post,omitempty"`
		Put        *operation  `json:"put,omitempty"`
		Patch      *operation  `json:"patch,omitempty"`
		Delete     *operation  `json:"delete,omitempty"`
	}
	operation struct {
		OperationID string              `json:"operationId"`
		Tags        []string            `json:"tags"`
		Summary     string              `json:"summary"`
		Description string              `json:"description,omitempty"`
		Parameters  []parameter         `json:"parameters,omitempty"`
		RequestBody *requestBody        `json:"requestBody,omitempty"`
		Responses   map[string]response `json:"responses"`
	}
	parameter struct {
		Name        string `json:"name"`
		In          string `json:"in"`
		Description string `json:"description"`
		Required    bool   `json:"required"`
		Schema      schema `json:"schema"`
	}
	requestBody struct {
		Required    bool                 `json:"required"`
		Description string               `json:"description,omitempty"`
		Content     map[string]mediaType `json:"content"`
	}
	response struct {
		Description string               `json:"description"`
		Content     map[string]mediaType `json:"content,omitempty"`
	}
	mediaType struct {
		Schema schema `json:"schema"`
	}
)

// Document is the OpenAPI 3 document of the API for kinds: their paths, and each kind's
// schema as its CRD has it (every field, default, enum and validation rule), with the CEL
// rules (x-kubernetes-validations) also spelled out in the descriptions Swagger UI shows.
func Document(title, version string, kinds []Kind) (any, error) {
	schemas := map[string]schema{"Status": statusSchema()}
	paths := map[string]pathItem{}
	for _, k := range kinds {
		kindSchema, err := documentedSchema(k)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k.Kind, err)
		}
		schemas[k.Kind] = kindSchema
		schemas[k.ListKind] = listSchema(k)
		collection, item := collectionPath(k.Plural), itemPath(k.Plural)
		paths[collection] = collectionOperations(k)
		paths[item] = itemOperations(k)
	}
	return document{
		OpenAPI: "3.0.3",
		Info: info{Title: title, Version: version,
			Description: "The custom resources of this operator, acting as the caller: every request needs " +
				"`Authorization: Bearer <token>` (e.g. from `kubectl create token`), and the Kubernetes API server " +
				"decides, with that token, what the caller may do. Unknown fields are rejected; `?dryRun=All` " +
				"validates without storing."},
		Servers:  []server{{URL: "/"}},
		Security: []map[string][]string{{"bearerAuth": {}}},
		Paths:    paths,
		Components: components{
			Schemas: schemas,
			SecuritySchemes: map[string]securityScheme{"bearerAuth": {Type: "http", Scheme: "bearer",
				Description: "A Kubernetes bearer token: `kubectl create token <service account>`."}},
		},
	}, nil
}

func collectionPath(plural string) string { return apiPrefix + "/namespaces/{namespace}/" + plural }
func itemPath(plural string) string       { return collectionPath(plural) + "/{name}" }

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
	anyJSON = schema{}
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
		"details": objectOf(schema{fieldName: str, "group": str, fieldKind: str, "causes": arrayOf(cause)}),
	})
	s["description"] = "The Kubernetes API server's Status; for invalid input (422) `details.causes[].field` names each bad field."
	return s
}

func query(name, description string, s schema) parameter {
	return parameter{Name: name, In: "query", Description: description, Schema: s}
}

var (
	namespaceP = parameter{Name: fieldNamespace, In: "path", Description: "The namespace.", Required: true, Schema: str}
	nameP      = parameter{Name: fieldName, In: "path", Description: "The object's name.", Required: true, Schema: str}
	dryRunP    = query("dryRun", "`All`: validate and admit, but store nothing.", enumOf("All"))
)

// responses are the successful answers, plus a Status for each error code.
func responses(ok map[string]response, codes ...int) map[string]response {
	out := map[string]response{}
	for code, r := range ok {
		out[code] = r
	}
	for _, code := range codes {
		out[fmt.Sprint(code)] = jsonResponse(http.StatusText(code), ref("Status"))
	}
	return out
}

func jsonResponse(description string, s schema) response {
	return response{Description: description, Content: map[string]mediaType{jsonType: {Schema: s}}}
}

func jsonRequest(description string, s schema) *requestBody {
	return &requestBody{Required: true, Description: description, Content: map[string]mediaType{jsonType: {Schema: s}}}
}

func collectionOperations(k Kind) pathItem {
	tags := []string{k.Kind}
	return pathItem{
		Parameters: []parameter{namespaceP},
		Get: &operation{
			OperationID: "list" + k.Kind, Tags: tags,
			Summary: "List " + k.Plural + ", or watch them (watch=true) as Server-Sent Events",
			Description: "With `watch=true` the answer is a stream of Server-Sent Events: every current object as " +
				"`ADDED`, then a `BOOKMARK`, then `ADDED`, `MODIFIED` and `DELETED` as they happen, each with its " +
				"resourceVersion as the event id. Given a `resourceVersion` (or an EventSource's Last-Event-ID), the " +
				"stream starts after it. An `ERROR` event (a Status; code 410 when the version is too old) ends " +
				"the stream: list again.",
			Parameters: []parameter{
				query("labelSelector", "Only objects with these labels, e.g. `app=web`.", str),
				query("limit", "At most this many objects; `metadata.continue` gives the next page.", typed("integer", "minimum", 1)),
				query("continue", "The `metadata.continue` of the previous page.", str),
				query("watch", "Stream changes as Server-Sent Events.", boolean),
				query("resourceVersion", "With watch: start after this version.", str),
			},
			Responses: responses(map[string]response{"200": {
				Description: "The " + k.Plural + " (or, with watch, their events).",
				Content:     map[string]mediaType{jsonType: {Schema: ref(k.ListKind)}, "text/event-stream": {Schema: str}},
			}}, 400, 401, 403),
		},
		Post: &operation{
			OperationID: "create" + k.Kind, Tags: tags, Summary: "Create a " + k.Kind,
			Parameters:  []parameter{dryRunP},
			RequestBody: jsonRequest("The new "+k.Kind+".", ref(k.Kind)),
			Responses:   responses(map[string]response{"201": jsonResponse("Created.", ref(k.Kind))}, 400, 401, 403, 409, 413, 422),
		},
	}
}

func itemOperations(k Kind) pathItem {
	tags := []string{k.Kind}
	stored := jsonResponse("The "+k.Kind+" as stored.", ref(k.Kind))
	return pathItem{
		Parameters: []parameter{namespaceP, nameP},
		Get: &operation{
			OperationID: "read" + k.Kind, Tags: tags, Summary: "Read a " + k.Kind,
			Responses: responses(map[string]response{"200": stored}, 401, 403, 404),
		},
		Put: &operation{
			OperationID: "replace" + k.Kind, Tags: tags,
			Summary:     "Replace a " + k.Kind + " (metadata.resourceVersion guards against lost updates)",
			Parameters:  []parameter{dryRunP},
			RequestBody: jsonRequest("The whole "+k.Kind+".", ref(k.Kind)),
			Responses:   responses(map[string]response{"200": stored}, 400, 401, 403, 404, 409, 413, 422),
		},
		Patch: &operation{
			OperationID: "patch" + k.Kind, Tags: tags,
			Summary: "Change part of a " + k.Kind + ": a JSON merge patch, or a server-side apply " +
				"(application/apply-patch+yaml, with fieldManager; force=true takes fields over)",
			Parameters: []parameter{dryRunP,
				query("fieldManager", "Who applies (server-side apply); defaults to `"+defaultFieldManager+"`.", str),
				query("force", "Server-side apply: take over fields other managers own.", boolean),
			},
			RequestBody: &requestBody{Required: true, Content: map[string]mediaType{
				mergePatch: {Schema: typed("object", "description", "Fields to set; null removes a field (RFC 7386).")},
				applyPatch: {Schema: ref(k.Kind)},
			}},
			Responses: responses(map[string]response{"200": stored, "201": jsonResponse("Created by server-side apply.", ref(k.Kind))},
				400, 401, 403, 404, 409, 413, 415, 422),
		},
		Delete: &operation{
			OperationID: "delete" + k.Kind, Tags: tags, Summary: "Delete a " + k.Kind,
			Parameters: []parameter{dryRunP, query("propagationPolicy", "How owned objects go.",
				enumOf("Foreground", "Background", "Orphan"))},
			Responses: responses(map[string]response{
				"200": jsonResponse("Deleted, or (with a finalizer) being deleted: the object or a Status.", anyJSON),
				"202": jsonResponse("Deletion accepted.", anyJSON),
			}, 401, 403, 404, 409),
		},
	}
}

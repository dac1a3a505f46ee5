package restapi

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"slices"
	"strings"
)

// The parts of an OpenAPI 3 document the API needs.
type (
	document struct {
		OpenAPI    string                `json:"openapi"`
		Info       info                  `json:"info"`
		Servers    []server              `json:"servers"`
		Security   []map[string][]string `json:"security"`
		Tags       []tag                 `json:"tags"`
		Paths      map[string]pathItem   `json:"paths"`
		Components components            `json:"components"`
	}
	info struct {
		Title       string  `json:"title"`
		Version     string  `json:"version"`
		Description string  `json:"description"`
		Contact     contact `json:"contact"`
		License     license `json:"license"`
	}
	contact struct {
		Name string `json:"name"`
		URL  string `json:"url"`
	}
	license struct {
		Name string `json:"name"`
		URL  string `json:"url"`
	}
	server struct {
		URL         string `json:"url"`
		Description string `json:"description"`
	}
	tag struct {
		Name        string `json:"name"`
		Description string `json:"description"`
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
		Description string              `json:"description"`
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

// Who answers for the API, and its licence: the project's.
var (
	maintainers = contact{Name: "Quintet maintainers", URL: "https://github.com/quintet-operators/quintet"}
	apache2     = license{Name: "Apache-2.0", URL: "https://www.apache.org/licenses/LICENSE-2.0"}
)

// Document is the OpenAPI 3 document of the API for kinds: their paths, and each kind's
// schema as its CRD has it (every field, default, enum and validation rule), with the CEL
// rules (x-kubernetes-validations) also spelled out in the descriptions Swagger UI shows.
// Each kind is a tag; every operation says what it does and every answer it can give.
func Document(title, version string, kinds []Kind) (any, error) {
	schemas := map[string]schema{"Status": statusSchema()}
	paths := map[string]pathItem{}
	var tags []tag
	for _, k := range kinds {
		kindSchema, err := documentedSchema(k)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k.Kind, err)
		}
		schemas[k.Kind] = kindSchema
		schemas[k.ListKind] = listSchema(k)
		paths[collectionPath(k.Plural)] = collectionOperations(k)
		paths[itemPath(k.Plural)] = itemOperations(k)
		tags = append(tags, tag{Name: k.Kind, Description: fmt.Sprintf("%s (`%s`, the CRD's stored version): list, watch, "+
			"create, read, replace, patch and delete them in a namespace.", k.Plural, k.APIVersion())})
	}
	slices.SortFunc(tags, func(a, b tag) int { return strings.Compare(a.Name, b.Name) })
	return document{
		OpenAPI: "3.0.3",
		Info: info{Title: title, Version: version,
			Description: "The custom resources of this operator, acting as the caller: every request needs " +
				"`Authorization: Bearer <token>` (e.g. from `kubectl create token`), and the Kubernetes API server " +
				"decides, with that token, what the caller may do. Unknown fields are rejected; `?dryRun=All` " +
				"validates without storing. Every error is a Kubernetes Status.",
			Contact: maintainers, License: apache2},
		Servers:  []server{{URL: "/", Description: "The manager serving this document."}},
		Security: []map[string][]string{{"bearerAuth": {}}},
		Tags:     tags,
		Paths:    paths,
		Components: components{
			Schemas: schemas,
			SecuritySchemes: map[string]securityScheme{"bearerAuth": {Type: "http", Scheme: "bearer",
				Description: "A Kubernetes bearer token: `kubectl create token <service account>`."}},
		},
	}, nil
}

// ServedDocument is the OpenAPI document, as JSON, that a Handler for the CRDs in crds (see
// NewServer) serves at /api/v1/openapi.json with opts: what `make docs-api` commits.
func ServedDocument(crds fs.FS, opts HandlerOptions) ([]byte, error) {
	kinds, err := KindsFromCRDs(crds)
	if err != nil {
		return nil, err
	}
	return servedDocument(kinds, withDefaults(opts))
}

func servedDocument(kinds []Kind, opts HandlerOptions) ([]byte, error) {
	doc, err := Document(opts.Title, opts.Version, kinds)
	if err != nil {
		return nil, err
	}
	return json.Marshal(doc)
}

func collectionPath(plural string) string { return apiPrefix + "/namespaces/{namespace}/" + plural }
func itemPath(plural string) string       { return collectionPath(plural) + "/{name}" }

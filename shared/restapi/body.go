package restapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"sigs.k8s.io/yaml"
)

// Field names of a Kubernetes object the API reads or fills in.
const (
	fieldAPIVersion = "apiVersion"
	fieldKind       = "kind"
	fieldMetadata   = "metadata"
	fieldName       = "name"
	fieldNamespace  = "namespace"
)

// decodeBody checks a request's body and returns what goes to the API server. A merge patch
// must be a JSON object. An object (create, replace) or a server-side apply must be a JSON
// object (apply: or YAML) of the kind: apiVersion and kind are filled in when missing and
// must match when given, as must metadata.name (the path's, when it has one) and
// metadata.namespace (the path's).
func decodeBody(raw []byte, k Kind, namespace, name, contentType string) ([]byte, error) {
	if contentType == applyPatch {
		converted, err := yaml.YAMLToJSONStrict(raw)
		if err != nil {
			return nil, fmt.Errorf("the body is not valid YAML or JSON: %w", err)
		}
		raw = converted
	}
	object, err := decodeObject(raw)
	if err != nil {
		return nil, err
	}
	if contentType == mergePatch {
		return raw, nil
	}
	if err := completeObject(object, k, namespace, name); err != nil {
		return nil, err
	}
	return json.Marshal(object)
}

// decodeObject decodes one JSON object, numbers kept exact, and nothing after it.
func decodeObject(raw []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var object map[string]any
	if err := dec.Decode(&object); err != nil {
		return nil, fmt.Errorf("the body is not a JSON object: %w", err)
	}
	if object == nil {
		return nil, errors.New("the body is not a JSON object: null")
	}
	if dec.More() {
		return nil, errors.New("the body holds more than one JSON value")
	}
	return object, nil
}

func completeObject(object map[string]any, k Kind, namespace, name string) error {
	for field, want := range map[string]string{fieldAPIVersion: k.APIVersion(), fieldKind: k.Kind} {
		switch got := object[field].(type) {
		case nil:
			object[field] = want
		case string:
			if got != want {
				return fmt.Errorf("%s is %q: this path takes %q", field, got, want)
			}
		default:
			return fmt.Errorf("%s must be the string %q", field, want)
		}
	}
	metadata, ok := object[fieldMetadata].(map[string]any)
	if object[fieldMetadata] != nil && !ok {
		return errors.New("metadata must be an object")
	}
	if metadata == nil {
		metadata = map[string]any{}
		object[fieldMetadata] = metadata
	}
	for field, want := range map[string]string{fieldNamespace: namespace, fieldName: name} {
		if want == "" {
			continue
		}
		switch got := metadata[field].(type) {
		case nil:
			metadata[field] = want
		case string:
			if got != want && got != "" {
				return fmt.Errorf("metadata.%s is %q but the path says %q", field, got, want)
			}
			metadata[field] = want
		default:
			return fmt.Errorf("metadata.%s must be a string", field)
		}
	}
	return nil
}

// cause is one item of a Status's details.causes.
type cause struct {
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
	Reason  string `json:"reason,omitempty"`
}

// status is the Kubernetes API's Status, as this API writes its own errors.
type status struct {
	Kind       string         `json:"kind"`
	APIVersion string         `json:"apiVersion"`
	Metadata   struct{}       `json:"metadata"`
	Status     string         `json:"status"`
	Message    string         `json:"message"`
	Reason     string         `json:"reason"`
	Code       int            `json:"code"`
	Details    *statusDetails `json:"details,omitempty"`
}

type statusDetails struct {
	Causes []cause `json:"causes"`
}

// writeStatus answers with a Kubernetes Status, as the API server answers its errors.
func writeStatus(w http.ResponseWriter, code int, reason, message string, causes []cause) {
	s := status{Kind: "Status", APIVersion: "v1", Status: "Failure", Message: message, Reason: reason, Code: code}
	if len(causes) > 0 {
		s.Details = &statusDetails{Causes: causes}
	}
	w.Header().Set("Content-Type", jsonType)
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(s)
}

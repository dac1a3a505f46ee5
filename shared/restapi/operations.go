package restapi

import (
	"maps"
	"net/http"
	"slices"
	"strconv"
)

func query(name, description string, s schema) parameter {
	return parameter{Name: name, In: "query", Description: description, Schema: s}
}

var (
	namespaceP = parameter{Name: fieldNamespace, In: "path", Description: "The namespace.", Required: true, Schema: str}
	nameP      = parameter{Name: fieldName, In: "path", Description: "The object's name.", Required: true, Schema: str}
	dryRunP    = query("dryRun", "`All`: validate and admit, but store nothing.", enumOf("All"))
	labelsP    = query("labelSelector", "Only objects with these labels, e.g. `app=web`.", str)
	fieldsP    = query("fieldSelector", "Only objects whose fields match, e.g. `metadata.name=web`.", str)
)

// errorAnswers says, for each error code an operation documents, what it means. Every
// error is a Status: this API's own (400, 401, 404, 413, 415, 500, 502) or the API server's,
// passed on as it gave it.
var errorAnswers = map[int]string{
	http.StatusBadRequest: "Malformed: an invalid namespace or name, an unknown query parameter, a `dryRun` other than " +
		"`All`, or a body that is not a JSON object (YAML for server-side apply) of this kind, its path's name and namespace.",
	http.StatusUnauthorized: "No bearer token, or one the API server does not accept.",
	http.StatusForbidden:    "The API server refuses the caller this request (RBAC); its message says why.",
	http.StatusNotFound:     "No such object (or, for a create, no such namespace).",
	http.StatusConflict: "The object exists already, or `metadata.resourceVersion` is not the stored one: " +
		"read it again and retry.",
	http.StatusGone:                  "The `continue` token or `resourceVersion` is too old: list again from the start.",
	http.StatusRequestEntityTooLarge: "The body is larger than this API takes (1 MiB by default).",
	http.StatusUnsupportedMediaType:  "PATCH takes `" + mergePatch + "` or `" + applyPatch + "` only.",
	http.StatusUnprocessableEntity: "The API server's validation refused the object: `details.causes[].field` names " +
		"each bad field.",
	http.StatusTooManyRequests: "The API server's Priority and Fairness sheds load: retry after the `Retry-After` seconds.",
	http.StatusInternalServerError: "An internal error of this API (e.g. a connection that cannot stream a watch) " +
		"or of the API server.",
	http.StatusBadGateway: "The Kubernetes API server did not answer, or answered what this API could not read.",
}

// Errors every operation can answer: a malformed request, no or a bad token, a refusal, load
// shedding, an internal error, the API server out of reach.
var everyOperation = []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden,
	http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway}

// Errors of every write (create, replace, patch): no such object or namespace, a conflict, a
// body too large, an object the API server's validation refuses.
var writeErrors = []int{http.StatusNotFound, http.StatusConflict, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity}

// responses are the successful answers, a Status for each error code (those of every
// operation and codes), and a Status for any other answer of the API server (default).
func responses(ok map[string]response, codes ...int) map[string]response {
	out := maps.Clone(ok)
	for _, code := range slices.Concat(codes, everyOperation) {
		out[strconv.Itoa(code)] = jsonResponse(errorAnswers[code], ref("Status"))
	}
	out["default"] = jsonResponse("Any other error of the Kubernetes API server (e.g. 503 while it starts), "+
		"passed on as it gave it.", ref("Status"))
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
			Description: "Without `watch`, a page of the " + k.Plural + " in the namespace (`limit`, then `continue`). " +
				"With `watch=true` the answer is a stream of Server-Sent Events: every current object as " +
				"`ADDED`, then a `BOOKMARK`, then `ADDED`, `MODIFIED` and `DELETED` as they happen, each with its " +
				"resourceVersion as the event id. Given a `resourceVersion` (or an EventSource's Last-Event-ID), the " +
				"stream starts after it. An `ERROR` event (a Status; code 410 when the version is too old) ends " +
				"the stream: list again. A watch takes `labelSelector`, `fieldSelector` and `resourceVersion` only.",
			Parameters: []parameter{labelsP, fieldsP,
				query("limit", "At most this many objects; `metadata.continue` gives the next page.", typed("integer", "minimum", 1)),
				query("continue", "The `metadata.continue` of the previous page.", str),
				query("watch", "Stream changes as Server-Sent Events.", boolean),
				query("resourceVersion", "With watch: start after this version. Without: how recent the list must be "+
					"(see `resourceVersionMatch`).", str),
				query("resourceVersionMatch", "How `resourceVersion` applies to a list.", enumOf("NotOlderThan", "Exact")),
			},
			Responses: responses(map[string]response{"200": {
				Description: "The " + k.Plural + " (or, with watch, their events).",
				Content:     map[string]mediaType{jsonType: {Schema: ref(k.ListKind)}, "text/event-stream": {Schema: str}},
			}}, http.StatusGone),
		},
		Post: &operation{
			OperationID: "create" + k.Kind, Tags: tags, Summary: "Create a " + k.Kind,
			Description: "Creates the " + k.Kind + " in the path's namespace. `apiVersion`, `kind` and " +
				"`metadata.namespace` are filled in when missing and must match the path when given; unknown fields " +
				"are refused (strict field validation).",
			Parameters:  []parameter{dryRunP, query("fieldManager", "Who makes the change (managedFields).", str)},
			RequestBody: jsonRequest("The new "+k.Kind+".", ref(k.Kind)),
			Responses: responses(map[string]response{"201": jsonResponse("Created: the "+k.Kind+" as stored.", ref(k.Kind))},
				writeErrors...),
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
			Description: "The " + k.Kind + " as the API server stores it, its status included.",
			Responses:   responses(map[string]response{"200": stored}, http.StatusNotFound),
		},
		Put: &operation{
			OperationID: "replace" + k.Kind, Tags: tags,
			Summary: "Replace a " + k.Kind + " (metadata.resourceVersion guards against lost updates)",
			Description: "Replaces the whole " + k.Kind + " (its status is kept). With `metadata.resourceVersion` " +
				"the write fails with 409 if someone changed the object since it was read; the name and namespace " +
				"must match the path's.",
			Parameters:  []parameter{dryRunP, query("fieldManager", "Who makes the change (managedFields).", str)},
			RequestBody: jsonRequest("The whole "+k.Kind+".", ref(k.Kind)),
			Responses:   responses(map[string]response{"200": stored}, writeErrors...),
		},
		Patch: &operation{
			OperationID: "patch" + k.Kind, Tags: tags,
			Summary: "Change part of a " + k.Kind + ": a JSON merge patch, or a server-side apply " +
				"(application/apply-patch+yaml, with fieldManager; force=true takes fields over)",
			Description: "A JSON merge patch (`" + mergePatch + "`, RFC 7386) sets the fields it names and removes " +
				"those it sets to null. A server-side apply (`" + applyPatch + "`, YAML or JSON) makes the " +
				"fields `fieldManager` owns what the body says, and creates the " + k.Kind + " if there is none; " +
				"fields another manager owns conflict (409) unless `force=true`.",
			Parameters: []parameter{dryRunP,
				query("fieldManager", "Who applies (server-side apply); defaults to `"+defaultFieldManager+"`.", str),
				query("force", "Server-side apply: take over fields other managers own.", boolean),
			},
			RequestBody: &requestBody{Required: true, Description: "The change: a merge patch or the applied configuration.",
				Content: map[string]mediaType{
					mergePatch: {Schema: typed("object", "description", "Fields to set; null removes a field (RFC 7386).")},
					applyPatch: {Schema: ref(k.Kind)},
				}},
			Responses: responses(map[string]response{"200": stored, "201": jsonResponse("Created by server-side apply.", ref(k.Kind))},
				append([]int{http.StatusUnsupportedMediaType}, writeErrors...)...),
		},
		Delete: &operation{
			OperationID: "delete" + k.Kind, Tags: tags, Summary: "Delete a " + k.Kind,
			Description: "Deletes the " + k.Kind + ". While finalizers (or, with `propagationPolicy=Foreground`, its " +
				"dependents) hold it, the answer is the object with `metadata.deletionTimestamp` set; once it is gone, " +
				"a Status.",
			Parameters: []parameter{dryRunP,
				query("propagationPolicy", "How owned objects go.", enumOf("Foreground", "Background", "Orphan")),
				query("gracePeriodSeconds", "Seconds before the object is deleted; 0: at once.", typed("integer", "minimum", 0)),
			},
			Responses: responses(map[string]response{
				"200": jsonResponse("Deleted (a Status), or being deleted (the "+k.Kind+", deletionTimestamp set).", deletedSchema(k)),
				"202": jsonResponse("Accepted: the "+k.Kind+" is being deleted, its deletionTimestamp set.", ref(k.Kind)),
			}, http.StatusNotFound, http.StatusConflict),
		},
	}
}

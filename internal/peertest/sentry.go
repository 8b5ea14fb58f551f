package peertest

import (
	"encoding/json"
	"net/http"
	"strings"
)

// sentryOrigin is the API @sentry/mcp-server calls for sentry.io (its
// default host), through the global fetch.
const sentryOrigin = "https://sentry.io"

// Sentry's answer to a token it does not take, as its API sends it: 401
// with a "detail" (https://docs.sentry.io/api/auth/).
var (
	sentryInvalidToken = json.RawMessage(`{"detail":"Invalid token"}`)
	sentryNotFound     = json.RawMessage(`{"detail":"The requested resource does not exist"}`)
	sentryNoWrites     = json.RawMessage(`{"detail":"You do not have permission to perform this action."}`)
)

// NewSentry starts a stand-in of Sentry's web API that takes user auth
// tokens (the server sends SENTRY_ACCESS_TOKEN as a bearer token). As
// Sentry does, it answers 401 "Invalid token" to a token it does not take.
func NewSentry(tokens ...string) *API {
	return newAPI("Sentry", sentryOrigin, bearer, serveSentry, tokens).AnswersIdentity("sentry")
}

func serveSentry(w http.ResponseWriter, r *http.Request, v verdict) {
	path := strings.TrimPrefix(r.URL.Path, "/api/0")
	switch {
	case v != credValid:
		writeJSON(w, http.StatusUnauthorized, sentryInvalidToken)
	case r.Method != http.MethodGet:
		writeJSON(w, http.StatusForbidden, sentryNoWrites)
	case path == "/auth/":
		writeJSON(w, http.StatusOK, map[string]any{"id": "1", "name": "Octo Cat", "username": "octo", "email": "octo@example.com", "isActive": true})
	case path == "/organizations/":
		writeJSON(w, http.StatusOK, []any{map[string]any{
			"id": "2", "slug": "acme", "name": "Acme",
			"links": map[string]any{"organizationUrl": "https://acme.sentry.io", "regionUrl": sentryOrigin},
		}})
	default:
		writeJSON(w, http.StatusNotFound, sentryNotFound)
	}
}

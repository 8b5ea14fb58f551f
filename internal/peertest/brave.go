package peertest

import (
	"encoding/json"
	"net/http"
	"strings"
)

// braveOrigin is the API server-brave-search calls.
const braveOrigin = "https://api.search.brave.com"

// braveTokenInvalid is what the Brave Search API answers to a subscription
// token it does not take (wrong, revoked or empty).
var braveTokenInvalid = json.RawMessage(`{"type":"ErrorResponse","error":{"id":"8d1b5a35-6c43-4a4e-9a0d-4f6f2a1c3e77","status":422,"code":"SUBSCRIPTION_TOKEN_INVALID","detail":"The provided subscription token is invalid.","meta":{"component":"authentication"}},"time":1764590400}`)

// NewBrave starts a stand-in of the Brave Search API that takes
// subscription tokens (server-brave-search sends BRAVE_API_KEY as
// X-Subscription-Token). As Brave does, it answers 422
// SUBSCRIPTION_TOKEN_INVALID to a token it does not take.
func NewBrave(keys ...string) *API {
	return newAPI("Brave Search", braveOrigin, func(r *http.Request) string {
		return strings.TrimSpace(r.Header.Get("X-Subscription-Token"))
	}, serveBrave, keys)
}

func serveBrave(w http.ResponseWriter, r *http.Request, v verdict) {
	switch {
	case v != credValid:
		writeJSON(w, http.StatusUnprocessableEntity, braveTokenInvalid)
	case r.URL.Path == "/res/v1/web/search":
		writeJSON(w, http.StatusOK, map[string]any{
			"type":  "search",
			"query": map[string]any{"original": r.URL.Query().Get("q")},
			"web": map[string]any{"type": "search", "results": []any{map[string]any{
				"title": "Model Context Protocol", "url": "https://modelcontextprotocol.io/",
				"description": "An open protocol that connects AI applications to tools and data.",
			}}},
		})
	case strings.HasPrefix(r.URL.Path, "/res/v1/local/"):
		writeJSON(w, http.StatusOK, map[string]any{"type": "local_pois", "results": []any{}})
	default:
		writeJSON(w, http.StatusNotFound, map[string]any{"type": "ErrorResponse", "error": map[string]any{"status": 404, "code": "NOT_FOUND"}})
	}
}

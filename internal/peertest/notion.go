package peertest

import (
	"encoding/json"
	"net/http"
	"strings"
)

// notionOrigin is the API @notionhq/notion-mcp-server calls (its OpenAPI
// description's server), through axios and so Node's https.request.
const notionOrigin = "https://api.notion.com"

// Notion's error bodies, as its API reference shows them
// (https://developers.notion.com/reference/status-codes).
var (
	notionUnauthorized = json.RawMessage(`{"object":"error","status":401,"code":"unauthorized","message":"API token is invalid.","request_id":"a1b2c3d4-0000-4000-8000-000000000401"}`)
	notionNotFound     = json.RawMessage(`{"object":"error","status":404,"code":"object_not_found","message":"Could not find object. Make sure the relevant pages and databases are shared with your integration.","request_id":"a1b2c3d4-0000-4000-8000-000000000404"}`)
	notionNoWrites     = json.RawMessage(`{"object":"error","status":403,"code":"restricted_resource","message":"API token does not have access to this resource.","request_id":"a1b2c3d4-0000-4000-8000-000000000403"}`)
)

// NewNotion starts a stand-in of Notion's API that takes integration tokens
// (the server sends NOTION_TOKEN as a bearer token). As Notion does, it
// answers 401 "unauthorized" to a token it does not take, wrong, revoked or
// none. Searching and querying are POSTs that only read; any other write is
// refused and counted.
func NewNotion(tokens ...string) *API {
	a := newAPI("Notion", notionOrigin, bearer, serveNotion, tokens)
	a.writes = func(r *http.Request) bool {
		return r.Method != http.MethodGet && !notionReadPOST(r.URL.Path)
	}
	return a
}

// notionReadPOST tells the POST endpoints that only read.
func notionReadPOST(path string) bool {
	return path == "/v1/search" || strings.HasSuffix(path, "/query")
}

func serveNotion(w http.ResponseWriter, r *http.Request, v verdict) {
	switch {
	case v != credValid:
		writeJSON(w, http.StatusUnauthorized, notionUnauthorized)
	case r.Method != http.MethodGet && !notionReadPOST(r.URL.Path):
		writeJSON(w, http.StatusForbidden, notionNoWrites)
	case r.URL.Path == "/v1/users/me":
		writeJSON(w, http.StatusOK, notionBot)
	case r.URL.Path == "/v1/users":
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "results": []any{notionBot}, "next_cursor": nil, "has_more": false, "type": "user", "user": map[string]any{}})
	case r.URL.Path == "/v1/search":
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "results": []any{}, "next_cursor": nil, "has_more": false, "type": "page_or_data_source", "page_or_data_source": map[string]any{}})
	default:
		writeJSON(w, http.StatusNotFound, notionNotFound)
	}
}

// notionBot is what GET /v1/users/me answers an integration token.
var notionBot = map[string]any{
	"object": "user", "id": "16d84278-ab0e-484c-9bdd-b35da3bd8905", "name": "mcpwatch canary", "avatar_url": nil, "type": "bot",
	"bot": map[string]any{"owner": map[string]any{"type": "workspace", "workspace": true}, "workspace_name": "Acme"},
}

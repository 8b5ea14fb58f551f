package peertest

import (
	"encoding/json"
	"net/http"
	"strings"
)

// gitlabOrigin is GitLab.com, whose REST API (/api/v4) and GraphQL API
// (/api/graphql) @zereight/mcp-gitlab calls with undici's own fetch,
// which the Node preload does not reach: it reaches the stand-in through
// a Proxy, by its documented HTTPS_PROXY and GITLAB_CA_CERT_PATH.
const gitlabOrigin = "https://gitlab.com"

// GitLab's answers to a token it does not take and to what it does not
// have (https://docs.gitlab.com/api/rest/troubleshooting/#status-codes).
var (
	gitlabUnauthorized = json.RawMessage(`{"message":"401 Unauthorized"}`)
	gitlabNoProject    = json.RawMessage(`{"message":"404 Project Not Found"}`)
	gitlabNotFound     = json.RawMessage(`{"error":"404 Not Found"}`)
	gitlabNoWrites     = json.RawMessage(`{"message":"403 Forbidden"}`)
)

// NewGitLab starts a stand-in of GitLab.com's API for a user with nothing
// in it: the user itself, empty lists of issues, to-dos, namespaces,
// projects, merge requests and events, no project (404 Project Not Found)
// and no GraphQL data. It takes personal access tokens (PRIVATE-TOKEN, or
// a bearer token), and answers 401 "401 Unauthorized" to any other, as
// GitLab does.
func NewGitLab(tokens ...string) *API {
	a := newAPI("GitLab", gitlabOrigin, gitlabToken, serveGitLab, tokens).AnswersIdentity("gitlab")
	a.writes = func(r *http.Request) bool { return r.Method != http.MethodGet && !gitlabReadQuery(r) }
	return a
}

func gitlabToken(r *http.Request) string {
	if t := r.Header.Get("PRIVATE-TOKEN"); t != "" {
		return t
	}
	return bearer(r)
}

// gitlabReadQuery tells a GraphQL request that only reads (a query, not
// a mutation): a POST that writes nothing.
func gitlabReadQuery(r *http.Request) bool {
	var q struct {
		Query string `json:"query"`
	}
	return r.Method == http.MethodPost && r.URL.Path == "/api/graphql" && peekJSON(r, &q) &&
		q.Query != "" && !strings.HasPrefix(strings.TrimSpace(q.Query), "mutation")
}

func serveGitLab(w http.ResponseWriter, r *http.Request, v verdict) {
	path := strings.TrimPrefix(r.URL.Path, "/api/v4")
	switch {
	case v != credValid:
		writeJSON(w, http.StatusUnauthorized, gitlabUnauthorized)
	case r.Method != http.MethodGet && !gitlabReadQuery(r):
		writeJSON(w, http.StatusForbidden, gitlabNoWrites)
	case r.URL.Path == "/api/graphql":
		// A user with nothing: each field the query asks is empty.
		writeJSON(w, http.StatusOK, map[string]any{"data": nil, "errors": []any{map[string]any{
			"message": "The resource that you are attempting to access does not exist or you don't have permission to perform this action",
		}}})
	case path == "/user":
		writeJSON(w, http.StatusOK, gitlabUser)
	case path == "/issues", path == "/todos", path == "/namespaces", path == "/projects", path == "/merge_requests", path == "/events":
		w.Header().Set("X-Total", "0")
		writeJSON(w, http.StatusOK, []any{})
	case strings.HasPrefix(path, "/projects/"):
		writeJSON(w, http.StatusNotFound, gitlabNoProject)
	default:
		writeJSON(w, http.StatusNotFound, gitlabNotFound)
	}
}

// gitlabUser is the user GET /user answers, as GitLab's API reference
// shows it.
var gitlabUser = map[string]any{
	"id": 1337, "username": "canary", "name": "mcpwatch canary", "state": "active", "locked": false,
	"avatar_url": "https://gitlab.com/uploads/-/system/user/avatar/1337/avatar.png", "web_url": "https://gitlab.com/canary",
	"created_at": "2020-07-23T14:31:47.729Z", "bio": "", "public_email": "", "bot": false,
}

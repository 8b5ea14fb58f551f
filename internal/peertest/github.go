package peertest

import (
	"encoding/json"
	"net/http"
	"strings"
)

// githubOrigin is the API server-github calls.
const githubOrigin = "https://api.github.com"

// GitHub's answers to a credential it does not take, as its REST API sends
// them: the same 401 for a wrong and for a revoked token.
var (
	gitHubBadCredentials = json.RawMessage(`{"message":"Bad credentials","documentation_url":"https://docs.github.com/rest","status":"401"}`)
	gitHubNeedsAuth      = json.RawMessage(`{"message":"Requires authentication","documentation_url":"https://docs.github.com/rest/users/users#get-the-authenticated-user","status":"401"}`)
	gitHubNotFound       = json.RawMessage(`{"message":"Not Found","documentation_url":"https://docs.github.com/rest","status":"404"}`)
	gitHubNoWrites       = json.RawMessage(`{"message":"Resource not accessible by personal access token","documentation_url":"https://docs.github.com/rest","status":"403"}`)
)

// NewGitHub starts a stand-in of GitHub's REST API that takes tokens
// (server-github sends GITHUB_PERSONAL_ACCESS_TOKEN as a bearer token). As
// GitHub does, it answers searches without a token (public data), and 401
// "Bad credentials" to any request with a token it does not take.
func NewGitHub(tokens ...string) *API {
	return newAPI("GitHub", githubOrigin, bearer, serveGitHub, tokens).AnswersIdentity("github")
}

func serveGitHub(w http.ResponseWriter, r *http.Request, v verdict) {
	switch {
	case v == credWrong || v == credRevoked:
		writeJSON(w, http.StatusUnauthorized, gitHubBadCredentials)
	case r.Method != http.MethodGet:
		writeJSON(w, http.StatusForbidden, gitHubNoWrites)
	case r.URL.Path == "/user" && v == credNone:
		writeJSON(w, http.StatusUnauthorized, gitHubNeedsAuth)
	case r.URL.Path == "/user":
		writeJSON(w, http.StatusOK, gitHubOwner)
	case r.URL.Path == "/search/repositories":
		writeJSON(w, http.StatusOK, map[string]any{"total_count": 1, "incomplete_results": false, "items": []any{gitHubRepo}})
	case strings.HasPrefix(r.URL.Path, "/search/"):
		writeJSON(w, http.StatusOK, map[string]any{"total_count": 0, "incomplete_results": false, "items": []any{}})
	default:
		writeJSON(w, http.StatusNotFound, gitHubNotFound)
	}
}

// A repository as GitHub lists it, with the fields server-github reads.
var (
	gitHubOwner = map[string]any{
		"login": "octocat", "id": 583231, "node_id": "MDQ6VXNlcjU4MzIzMQ==",
		"avatar_url": "https://avatars.githubusercontent.com/u/583231?v=4",
		"url":        "https://api.github.com/users/octocat", "html_url": "https://github.com/octocat", "type": "User",
	}
	gitHubRepo = map[string]any{
		"id": 1296269, "node_id": "MDEwOlJlcG9zaXRvcnkxMjk2MjY5", "name": "Hello-World", "full_name": "octocat/Hello-World",
		"private": false, "owner": gitHubOwner, "html_url": "https://github.com/octocat/Hello-World",
		"description": "My first repository on GitHub!", "fork": false, "url": "https://api.github.com/repos/octocat/Hello-World",
		"created_at": "2011-01-26T19:01:12Z", "updated_at": "2026-11-30T08:00:00Z", "pushed_at": "2026-11-29T16:00:00Z",
		"git_url": "git://github.com/octocat/Hello-World.git", "ssh_url": "git@github.com:octocat/Hello-World.git",
		"clone_url": "https://github.com/octocat/Hello-World.git", "default_branch": "master",
	}
)

package peertest

import (
	"encoding/json"
	"net/http"
)

// context7Origin is the API @upstash/context7-mcp calls (its default
// CONTEXT7_API_URL is https://context7.com/api), through the global fetch.
const context7Origin = "https://context7.com"

// Context7's answer to a key it does not take: 401 with a message, which
// the server passes on as its tool's text.
var context7InvalidKey = json.RawMessage(`{"error":"unauthorized","message":"Invalid API key. Please check your API key. API keys should start with 'ctx7sk' prefix."}`)

// NewContext7 starts a stand-in of Context7's API that takes API keys (the
// server sends --api-key or CONTEXT7_API_KEY as a bearer token). As
// Context7 does, it answers without a key (at a lower rate limit) and 401
// to a key it does not take.
func NewContext7(keys ...string) *API {
	return newAPI("Context7", context7Origin, bearer, serveContext7, keys)
}

func serveContext7(w http.ResponseWriter, r *http.Request, v verdict) {
	switch {
	case v == credWrong || v == credRevoked:
		writeJSON(w, http.StatusUnauthorized, context7InvalidKey)
	case r.Method != http.MethodGet:
		writeJSON(w, http.StatusMethodNotAllowed, map[string]any{"error": "method_not_allowed", "message": "Method not allowed"})
	case r.URL.Path == "/api/v2/libs/search":
		writeJSON(w, http.StatusOK, map[string]any{"results": []any{map[string]any{
			"id": "/vercel/next.js", "title": "Next.js", "description": "The React Framework",
			"branch": "canary", "lastUpdateDate": "2026-11-30T08:00:00.000Z", "state": "finalized",
			"totalTokens": 824000, "totalSnippets": 3200, "stars": 131000, "trustScore": 10, "benchmarkScore": 92,
			"versions": []any{"v15.1.8"},
		}}})
	case r.URL.Path == "/api/v2/context":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("### Create a Next.js app\n\nSource: https://nextjs.org/docs/app/getting-started/installation\n\n```bash\nnpx create-next-app@latest\n```\n"))
	default:
		writeJSON(w, http.StatusNotFound, map[string]any{"error": "not_found", "message": "The library you are trying to access does not exist. Please try with a different library ID."})
	}
}

package peertest

import (
	"encoding/json"
	"net/http"
	"strings"
)

// slackOrigin is the API server-slack calls.
const slackOrigin = "https://slack.com"

// NewSlack starts a stand-in of Slack's Web API that takes bot tokens
// (server-slack sends SLACK_BOT_TOKEN as a bearer token). As Slack does, it
// answers every call with HTTP 200 and says in the body whether it worked:
// {"ok":false,"error":"invalid_auth"} for a token it never issued,
// "token_revoked" for a revoked one, "not_authed" for none.
func NewSlack(tokens ...string) *API {
	return newAPI("Slack", slackOrigin, bearer, serveSlack, tokens)
}

func serveSlack(w http.ResponseWriter, r *http.Request, v verdict) {
	method := strings.TrimPrefix(r.URL.Path, "/api/")
	switch {
	case v == credNone:
		writeJSON(w, http.StatusOK, slackError("not_authed"))
	case v == credWrong:
		writeJSON(w, http.StatusOK, slackError("invalid_auth"))
	case v == credRevoked:
		writeJSON(w, http.StatusOK, slackError("token_revoked"))
	case r.Method != http.MethodGet:
		// chat.postMessage, reactions.add: a stand-in writes nothing.
		writeJSON(w, http.StatusOK, slackError("restricted_action"))
	case method == "conversations.list":
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "channels": []any{slackChannel}, "response_metadata": map[string]any{"next_cursor": ""}})
	case method == "users.list":
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "members": []any{slackUser}, "response_metadata": map[string]any{"next_cursor": ""}})
	case method == "conversations.history", method == "conversations.replies":
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "messages": []any{}, "has_more": false})
	case method == "users.profile.get":
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "profile": slackUser["profile"]})
	default:
		writeJSON(w, http.StatusOK, slackError("unknown_method"))
	}
}

// slackError is Slack's error body, its members in Slack's order (the
// server passes the body on as it came).
func slackError(code string) json.RawMessage {
	return json.RawMessage(`{"ok":false,"error":"` + code + `"}`)
}

var (
	slackChannel = map[string]any{
		"id": "C0123ABCDEF", "name": "general", "is_channel": true, "is_archived": false, "is_general": true,
		"num_members": 3, "topic": map[string]any{"value": "Company-wide announcements"},
	}
	slackUser = map[string]any{
		"id": "U0123ABCDEF", "name": "octo", "real_name": "Octo Cat", "is_bot": false,
		"profile": map[string]any{"real_name": "Octo Cat", "display_name": "octo", "title": "Engineer"},
	}
)

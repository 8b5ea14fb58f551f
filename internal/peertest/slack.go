package peertest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// slackOrigin is the API server-slack calls.
const slackOrigin = "https://slack.com"

// NewSlack starts a stand-in of Slack's Web API that takes bot and user
// tokens (server-slack sends SLACK_BOT_TOKEN as a bearer token,
// slack-mcp-server's Go client a form field "token"). As Slack does, it
// answers every call with HTTP 200 and says in the body whether it worked
// (https://api.slack.com/web#responses): {"ok":false,"error":"invalid_auth"}
// for a token it never issued, "token_revoked" for a revoked one,
// "not_authed" for none. Reads may come as GET or POST (both are Slack's);
// only the methods that write count as writes.
func NewSlack(tokens ...string) *API {
	a := newAPI("Slack", slackOrigin, slackToken, serveSlack, tokens)
	a.writes = func(r *http.Request) bool { return slackWrites[slackMethod(r)] }
	return a
}

// slackWrites are the Web API methods the pinned servers can call that
// write.
var slackWrites = map[string]bool{
	"chat.postMessage": true, "chat.update": true, "chat.delete": true, "reactions.add": true, "reactions.remove": true,
	"conversations.mark": true, "usergroups.create": true, "usergroups.update": true, "usergroups.users.update": true,
}

func slackMethod(r *http.Request) string { return strings.TrimPrefix(r.URL.Path, "/api/") }

// slackToken is a request's token: a bearer token, or the form field
// "token" as Slack also takes it.
func slackToken(r *http.Request) string {
	if t := bearer(r); t != "" {
		return t
	}
	if r.Method == http.MethodPost && strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		r.Body = io.NopCloser(bytes.NewReader(body))
		if err == nil {
			if form, err := url.ParseQuery(string(body)); err == nil {
				return strings.TrimSpace(form.Get("token"))
			}
		}
	}
	return strings.TrimSpace(r.URL.Query().Get("token"))
}

func serveSlack(w http.ResponseWriter, r *http.Request, v verdict) {
	method := slackMethod(r)
	switch {
	case v == credNone:
		writeJSON(w, http.StatusOK, slackError("not_authed"))
	case v == credWrong:
		writeJSON(w, http.StatusOK, slackError("invalid_auth"))
	case v == credRevoked:
		writeJSON(w, http.StatusOK, slackError("token_revoked"))
	case slackWrites[method]:
		// chat.postMessage, reactions.add: a stand-in writes nothing.
		writeJSON(w, http.StatusOK, slackError("restricted_action"))
	case method == "auth.test":
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "url": "https://acme.slack.com/", "team": "Acme", "user": "octo",
			"team_id": "T0123ABCDEF", "user_id": "U0123ABCDEF", "bot_id": "B0123ABCDEF", "is_enterprise_install": false})
	case method == "conversations.list":
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "channels": []any{slackChannel}, "response_metadata": map[string]any{"next_cursor": ""}})
	case method == "users.list":
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "members": []any{slackUser}, "response_metadata": map[string]any{"next_cursor": ""}})
	case method == "usergroups.list":
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "usergroups": []any{}})
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

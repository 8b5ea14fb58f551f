package contracts

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/probe"
)

// "credentialAccepted" passes whatever the tool made of its input, and
// fails when the credential was rejected or the call never reached the
// tool: a generated input proves the credential is taken, nothing more.
func TestCredentialAccepted(t *testing.T) {
	t.Parallel()
	const contract = `{"input": {"id": "00000000-0000-0000-0000-000000000000"}, "expect": {"status": "credentialAccepted"}}`
	rpc400 := &probe.CallResult{Reason: probe.ReasonRPCError, HTTPStatus: 400, RPCCode: -32000, RPCMessage: "Bad Request: no valid session ID"}
	cases := []struct {
		name   string
		result *probe.CallResult
		reason probe.Reason // "" when it passes
	}{
		{"a success", text(`{"results": []}`), ""},
		{"its input refused (isError)", isError(`Invalid arguments: id: must match pattern "^[a-z]+$"`), ""},
		{"its input refused (JSON-RPC -32602)", invalidArgs, ""},
		{"not found", isError(`{"object":"error","status":404,"code":"object_not_found","message":"Could not find page."}`), ""},
		{"not found (JSON-RPC -32603)", &probe.CallResult{Reason: probe.ReasonRPCError, RPCCode: -32603, RPCMessage: "Not Found: Resource not found"}, ""},
		{"a rejected credential in the text", isError("Error: Slack API error: invalid_auth"), probe.ReasonCredentialRejected},
		{"a rejected credential by the JSON-RPC error", &probe.CallResult{Reason: probe.ReasonRPCError, RPCCode: -32603, RPCMessage: "Authentication Failed: Bad credentials"}, probe.ReasonCredentialRejected},
		{"HTTP 401 on the call", http401, probe.ReasonCredentialRejected},
		{"a timeout", timeout, probe.ReasonTimeout},
		{"a broken connection", &probe.CallResult{Reason: probe.ReasonConnection, Error: "tools/call: the server exited"}, probe.ReasonConnection},
		{"an HTTP error carrying a JSON-RPC error", rpc400, probe.ReasonRPCError},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := parse(t, contract)
			o := Run(context.Background(), &fakeCaller{results: []*probe.CallResult{tc.result}}, readOnly, []Contract{c},
				Options{Credentials: []string{"env:API_TOKEN"}})[0]
			switch {
			case tc.reason == "" && !o.Passed:
				t.Errorf("failed (%s): %s", o.Reason, o.Message)
			case tc.reason != "" && (o.Passed || o.Reason != tc.reason):
				t.Errorf("passed=%v reason %q, want a failure %q: %s", o.Passed, o.Reason, tc.reason, o.Message)
			}
		})
	}
}

func TestCredentialAcceptedParse(t *testing.T) {
	t.Parallel()
	if c := parse(t, `{"expect": {"status": "credentialAccepted"}}`); c.Expect.Status != StatusCredentialAccepted {
		t.Errorf("status %q", c.Expect.Status)
	}
	_, err := ParseFile([]byte(`{"tools": {"t": {"expect": {"status": "credentialAccepted", "errorCode": 404}}}}`))
	if err == nil || !strings.Contains(err.Error(), `"credentialAccepted" contradicts errorCode`) {
		t.Errorf("errorCode with credentialAccepted: %v", err)
	}
	_, err = ParseFile([]byte(`{"tools": {"t": {"expect": {"status": "accepted"}}}}`))
	if err == nil || !strings.Contains(err.Error(), `"credentialAccepted"`) {
		t.Errorf("an unknown status does not name the known ones: %v", err)
	}
}

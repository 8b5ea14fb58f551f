package daemon

import (
	"net/http"
	"strings"
	"testing"
)

// A stdio server that prints its token on stderr and exits fails, and the
// daemon shows why, stderr line and all, but with the token scrubbed from
// every page, API answer and log line.
func TestServerEchoingItsTokenLeaksItNowhere(t *testing.T) {
	const token = "daemon-s3cret-4b5c6d7e"
	path := writeConfig(t, t.TempDir(), map[string]any{
		"defaults": map[string]any{"schedule": "@every 1h"},
		"servers": map[string]any{
			"echo": map[string]any{
				"command": "/bin/sh",
				"args":    []string{"-c", `echo "auth failed for token $REPORT_API_TOKEN" >&2; exit 3`},
				"env":     map[string]string{"REPORT_API_TOKEN": "${MCPWATCH_TEST_TOKEN}"},
			},
		},
	})
	h := start(t, path, Options{Lookup: func(name string) (string, bool) {
		if name == "MCPWATCH_TEST_TOKEN" {
			return token, true
		}
		return "", false
	}})
	st := h.waitState("echo", StateFailed)
	const said = "auth failed for token <redacted>"
	if !strings.Contains(st.StderrTail, said) {
		t.Errorf("stderr tail %q, want the server's line with the token scrubbed: %q", st.StderrTail, said)
	}

	const jsonSaid = `auth failed for token \u003credacted\u003e` // JSON escapes < and >
	surfaces := []struct{ path, want string }{
		{"/api/v1/servers", jsonSaid},
		{"/api/v1/servers/echo", jsonSaid},
		{"/", "auth failed for token &lt;redacted&gt;"},
		{"/server/echo", "auth failed for token &lt;redacted&gt;"},
		{"/probe?server=echo&debug=true", said},
		{"/metrics", `mcpwatch_probe_success{server="echo"} 0`},
	}
	for _, s := range surfaces {
		code, body := h.get(s.path)
		if code != http.StatusOK {
			t.Errorf("GET %s = %d", s.path, code)
		}
		if strings.Contains(body, token) {
			t.Errorf("GET %s holds the token:\n%s", s.path, body)
		}
		if !strings.Contains(body, s.want) {
			t.Errorf("GET %s lacks %q", s.path, s.want)
		}
	}

	logged := false
	for _, e := range h.logs.All() {
		if strings.Contains(e.Message, token) {
			t.Errorf("a log line holds the token: %q", e.Message)
		}
		for k, v := range e.ContextMap() {
			s, _ := v.(string)
			if strings.Contains(s, token) {
				t.Errorf("log field %s of %q holds the token", k, e.Message)
			}
			logged = logged || (k == "stderr" && strings.Contains(s, said))
		}
	}
	if !logged {
		t.Errorf("no log line shows the server's stderr line, scrubbed")
	}
}

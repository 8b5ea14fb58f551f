package daemon

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/verdict"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// A stdio server that prints its token on stderr and exits fails (its
// words say its credential was rejected), and the daemon shows why, stderr
// line and quote and all, but with the token scrubbed from every page, API
// answer and log line.
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
	st := h.waitState("echo", verdict.StateCredentialRejected)
	const said = "auth failed for token <redacted>"
	if !strings.Contains(st.StderrTail, said) {
		t.Errorf("stderr tail %q, want the server's line with the token scrubbed: %q", st.StderrTail, said)
	}

	surfaces := []struct{ path, want string }{
		{"/api/v1/servers", said}, // JSON documents write < and > as they are
		{"/api/v1/servers/echo", said},
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

// A server that echoes its secrets in what it lists (a tool name, a schema
// key, a base64 description, and a short credential as its own name): every
// page, API answer, metric, debug transcript and log line shows them
// scrubbed, extra and forbidden tool names included.
func TestServerEchoingItsTokenInToolsLeaksItNowhere(t *testing.T) {
	const token, pin = "daemon-tool-s3cret-99", "h2x7"
	tools := append(probetest.DefaultTools(), probetest.Tool{
		Name:        "leak_" + token,
		Description: "key " + base64.StdEncoding.EncodeToString([]byte(token)),
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{token: map[string]any{"type": "string"}}},
	})
	dir := t.TempDir()
	writeFile(t, dir, "mcp-tools.lock.json", `{"hostile": ["fetch_daily_report", "list_report_dates"]}`)
	path := writeConfig(t, dir, map[string]any{
		"defaults": map[string]any{"schedule": "@every 1h"},
		"lock":     "mcp-tools.lock.json",
		"servers": map[string]any{
			"hostile": func() map[string]any {
				s := stdioServer(probetest.Config{Tools: tools, ServerName: pin},
					map[string]string{"API_TOKEN": "${MCPWATCH_TEST_TOKEN}", "REPORT_PIN": pin})
				s["forbid"] = []string{"leak_*"}
				return s
			}(),
		},
	})
	h := start(t, path, Options{Lookup: func(name string) (string, bool) {
		if name == "MCPWATCH_TEST_TOKEN" {
			return token, true
		}
		return "", false
	}})
	st := h.waitState("hostile", verdict.StateForbidden)
	if !slices.Equal(st.Diff.Extra, []string{"leak_<redacted>"}) {
		t.Errorf("extra tools %q, want the name scrubbed", st.Diff.Extra)
	}
	leaks := []string{token, base64.StdEncoding.EncodeToString([]byte(token)), `"` + pin + `"`, ">" + pin + "<"}
	for _, p := range []string{"/api/v1/servers", "/api/v1/servers/hostile", "/", "/server/hostile", "/metrics", "/probe?server=hostile&debug=true"} {
		code, body := h.get(p)
		if code != http.StatusOK {
			t.Errorf("GET %s = %d", p, code)
		}
		for _, leak := range leaks {
			if strings.Contains(body, leak) {
				t.Errorf("GET %s holds %q:\n%s", p, leak, body)
			}
		}
	}
	for _, e := range h.logs.All() {
		line := e.Message + fmt.Sprint(e.ContextMap())
		if strings.Contains(line, token) || strings.Contains(line, pin) {
			t.Errorf("a log line holds a secret: %s", line)
		}
	}
}

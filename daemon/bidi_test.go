package daemon

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcpwatch/mcpwatch/internal/contracts"
	"github.com/mcpwatch/mcpwatch/probe"
)

// acting returns the characters of a page that would act on how it shows
// rather than be shown: bidirectional controls (a "read_\u202egnp.exe"
// displays as "read_exe.png"), C0 and C1 controls other than the line break
// and the tab, line separators, bytes that are not UTF-8.
func acting(page string) []string {
	var out []string
	for i, r := range page {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(page[i:], "\uFFFD"),
			r < 0x20 && r != '\n' && r != '\t', r >= 0x7f && r <= 0x9f,
			r == 0x2028, r == 0x2029, r == 0x061c, r == 0x200e, r == 0x200f,
			r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			out = append(out, fmt.Sprintf("%U at %d", r, i))
		}
	}
	return out
}

// What a server chose (tool names, missing and extra ones, its stderr,
// its canary calls' messages and answers) reaches the status page, the
// server page and its calls and history tables escaped as the terminal
// shows it ("\u202e"), never as a bidirectional override or a C1 control
// that reorders or hides what the page says.
func TestPagesEscapeWhatReordersText(t *testing.T) {
	bubble(t, func(t *testing.T) {
		const rlo, csi, nel = "\u202e", "\u009b", "\u0085"
		dir := t.TempDir()
		writeFile(t, dir, "mcp-tools.lock.json", `{"hostile": ["read_\u202egnp.exe", "gone_\u202etool", "fetch_daily_report"], "dying": ["fetch_daily_report"]}`)
		fake := newFakeProber()
		fake.set("hostile", func(s *fakeServer) {
			s.tools = []string{"read_" + rlo + "gnp.exe", "list_" + nel + csi + "31m", "fetch_daily_report"}
			s.stderr = "started " + rlo + "evil\nline " + nel + "two\n"
			s.calls = map[string]contracts.Outcome{"fetch_daily_report": {Reason: contracts.ReasonIsError,
				Message:  "status: got isError: refused " + rlo + "tixe" + csi + "2J",
				Attempts: []contracts.Attempt{{Response: "isError: refused " + rlo + "tixe" + csi + "2J"}}}}
		})
		fake.set("dying", func(s *fakeServer) {
			s.fail = probe.ReasonExited
			s.stderr = "Error: token " + rlo + "dilav si\n" + csi + "31mfatal" + nel + "\n"
		})
		s := simulate(t, dir, map[string]any{
			"defaults": map[string]any{"schedule": "@every 1h", "call_schedule": "@every 150ms"},
			"lock":     "mcp-tools.lock.json",
			"servers": map[string]any{
				"hostile": fakeServerConfig(map[string]any{"calls": map[string]any{"fetch_daily_report": map[string]any{"expect": map[string]any{"status": "pass"}}}}),
				"dying":   fakeServerConfig(nil),
			},
		}, fake, Options{})
		s.ready()
		s.advance(time.Second) // the calls' first firings
		for _, path := range []string{"/", "/?q=hostile", "/server/hostile", "/server/dying"} {
			code, page := s.get(path)
			if code != 200 {
				t.Fatalf("GET %s: %d", path, code)
			}
			if bad := acting(page); len(bad) > 0 {
				t.Errorf("GET %s: %d characters that act on the page: %v", path, len(bad), bad)
			}
			if !strings.Contains(page, `\u202e`) {
				t.Errorf("GET %s: the override is not shown escaped", path)
			}
		}
		_, page := s.get("/server/hostile")
		for _, want := range []string{`<code>read_\u202egnp.exe</code>`, `<code>list_\u0085\u009b31m</code>`, `<code>gone_\u202etool</code>`,
			`refused \u202etixe\u009b2J`, "started \\u202eevil\nline \\u0085two"} {
			if !strings.Contains(page, want) {
				t.Errorf("the server page lacks %q", want)
			}
		}
	})
}

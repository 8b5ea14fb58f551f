package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// probe --call calls one tool in the probed session and prints its answer,
// as text and as JSON; only a read-only tool without opt-ins, and a refusal
// names every opt-in a tool still needs, in one message.
func TestProbeCall(t *testing.T) {
	t.Parallel()
	write := probetest.Tool{Name: "delete_report", InputSchema: map[string]any{"type": "object"}}
	harmless := probetest.Tool{Name: "touch_report", InputSchema: map[string]any{"type": "object"},
		Annotations: map[string]any{"readOnlyHint": false, "destructiveHint": false}}
	cfg := probetest.Config{Tools: []probetest.Tool{probetest.EchoTool(), write, harmless}}

	t.Run("read-only, text", func(t *testing.T) {
		t.Parallel()
		code, stdout, stderr := runCLI(t, nil, append([]string{"probe"}, serverArgs(cfg, "--call", "echo", "--input", `{"message":"hi there"}`)...)...)
		if code != exitOK {
			t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
		}
		assertContains(t, "stdout", stdout, "ok: ", `call echo {"message":"hi there"}: ok in`, "text:\n  Echo: hi there", "content:\n  [{")
	})
	t.Run("read-only, JSON", func(t *testing.T) {
		t.Parallel()
		code, stdout, stderr := runCLI(t, nil, append([]string{"probe", "--format", "json"}, serverArgs(cfg, "--call", "echo", "--input", `{"message":"hi"}`)...)...)
		if code != exitOK {
			t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
		}
		var out struct {
			OK    bool `json:"ok"`
			Tools []struct{ Name string }
			Call  struct {
				Tool     string          `json:"tool"`
				Input    json.RawMessage `json:"input"`
				Called   bool            `json:"called"`
				OK       bool            `json:"ok"`
				Text     string          `json:"text"`
				Content  json.RawMessage `json:"content"`
				Duration *float64        `json:"duration_seconds"`
			} `json:"call"`
		}
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, stdout)
		}
		c := out.Call
		if !out.OK || len(out.Tools) != 3 || c.Tool != "echo" || !c.Called || !c.OK || c.Text != "Echo: hi" || c.Duration == nil || compactJSON(c.Content) != `[{"text":"Echo: hi","type":"text"}]` {
			t.Errorf("JSON output = %+v", out)
		}
	})
	t.Run("not read-only: refused, naming every opt-in", func(t *testing.T) {
		t.Parallel()
		code, stdout, _ := runCLI(t, nil, append([]string{"probe"}, serverArgs(cfg, "--call", "delete_report")...)...)
		if code != exitFailed {
			t.Errorf("exit %d, want 1", code)
		}
		assertContains(t, "stdout", stdout, "call delete_report {}: NOT CALLED",
			"sends no annotations, so nothing says it only reads, and has no destructiveHint: false",
			"add --allow-side-effects --allow-destructive")
		code, stdout, _ = runCLI(t, nil, append([]string{"probe"}, serverArgs(cfg, "--call", "delete_report", "--allow-side-effects")...)...)
		if code != exitFailed || !strings.Contains(stdout, "add --allow-destructive\n") || strings.Contains(stdout, "add --allow-side-effects") {
			t.Errorf("with --allow-side-effects: exit %d\n%s", code, stdout)
		}
		code, stdout, _ = runCLI(t, nil, append([]string{"probe"}, serverArgs(cfg, "--call", "delete_report", "--allow-side-effects", "--allow-destructive")...)...)
		if code != exitOK || !strings.Contains(stdout, "call delete_report {}: ok") {
			t.Errorf("with both opt-ins: exit %d\n%s", code, stdout)
		}
	})
	t.Run("not read-only, not destructive: one opt-in", func(t *testing.T) {
		t.Parallel()
		code, stdout, _ := runCLI(t, nil, append([]string{"probe"}, serverArgs(cfg, "--call", "touch_report")...)...)
		if code != exitFailed || !strings.Contains(stdout, "is not annotated readOnlyHint: true; mcpwatch calls only read-only tools unless told otherwise: if calling it is harmless, add --allow-side-effects\n") {
			t.Errorf("exit %d\n%s", code, stdout)
		}
		code, stdout, _ = runCLI(t, nil, append([]string{"probe"}, serverArgs(cfg, "--call", "touch_report", "--allow-side-effects")...)...)
		if code != exitOK {
			t.Errorf("with --allow-side-effects: exit %d\n%s", code, stdout)
		}
	})
	t.Run("not listed", func(t *testing.T) {
		t.Parallel()
		code, stdout, _ := runCLI(t, nil, append([]string{"probe"}, serverArgs(cfg, "--call", "nope")...)...)
		if code != exitFailed || !strings.Contains(stdout, "the server lists no tool nope") {
			t.Errorf("exit %d\n%s", code, stdout)
		}
	})
	t.Run("a secret the tool echoes is scrubbed", func(t *testing.T) {
		t.Parallel()
		const secret = "s3cret-token-value-42"
		code, stdout, _ := runCLI(t, nil, append([]string{"probe", "--env", "REPORT_API_TOKEN=" + secret}, serverArgs(cfg, "--call", "echo", "--input", `{"message":"`+secret+`"}`)...)...)
		if code != exitOK || !strings.Contains(stdout, "Echo: <redacted>") || strings.Contains(stdout[strings.Index(stdout, "text:"):], secret) {
			t.Errorf("exit %d; the answer is not scrubbed:\n%s", code, stdout)
		}
	})
	t.Run("isError", func(t *testing.T) {
		t.Parallel()
		failing := probetest.Config{Behavior: probetest.CallIsError, Tools: cfg.Tools}
		code, stdout, _ := runCLI(t, nil, append([]string{"probe"}, serverArgs(failing, "--call", "echo", "--input", `{"message":"x"}`)...)...)
		if code != exitFailed || !strings.Contains(stdout, "isError (the tool reported a failure)") || !strings.Contains(stdout, probetest.CallFailureText) {
			t.Errorf("exit %d\n%s", code, stdout)
		}
	})
}

func TestProbeCallUsageErrors(t *testing.T) {
	t.Parallel()
	assertUsageErrors(t, t.TempDir(), nil, []usageCase{
		{args: []string{"probe", "--input", "{}", "--", "x"}, msg: "--input applies to --call only"},
		{args: []string{"probe", "--allow-side-effects", "--", "x"}, msg: "--allow-side-effects applies to --call only"},
		{args: []string{"probe", "--call", "echo", "--input", `["a"]`, "--", "x"}, msg: "--input: want a JSON object"},
		{args: []string{"probe", "--call", "echo", "--input", `{message: hi}`, "--", "x"}, msg: "--input: want a JSON object"},
	})
}

//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServerEverythingContracts calls server-everything's echo (annotated
// readOnlyHint: true) through `mcpwatch check`, over stdio, with a
// contract that passes and one that must fail: the check exits 78 naming
// the server, the tool, the assertion and what came back. The input
// carries the server's secret, which echo repeats: no output shows it.
func TestServerEverythingContracts(t *testing.T) {
	node := needEverything(t)
	dir := t.TempDir()
	const secret = "e2e-echoed-secret-4f1c"
	server := func(contract string) string {
		return `    command: ` + q(node) + `
    args: [` + q(suite.everythingBin) + `, stdio]
    env: {EVERYTHING_TOKEN: "${E2E_TOKEN}"}
    calls:
      echo: ` + contract + "\n"
	}
	writeFile(t, filepath.Join(dir, "mcpwatch.yml"), `defaults: {timeout: 20s}
lock: mcp-tools.lock.json
servers:
  everything-pass:
`+server(`{input: {message: "hello `+secret+`"}, expect: {status: pass, contains: "Echo: hello", notContains: [Traceback]}}`)+`  everything-fail:
`+server(`{input: {message: "hello `+secret+`"}, expect: {contains: "this is not in the reply"}}`))
	writeFile(t, filepath.Join(dir, "mcp-tools.lock.json"), `{"everything-pass": ["echo"], "everything-fail": ["echo"]}`+"\n")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, suite.mcpwatch, "check", "--config.file", filepath.Join(dir, "mcpwatch.yml"),
		"--receipt", filepath.Join(dir, "receipt.json"))
	cmd.Env = []string{"PATH=/usr/bin:/bin", "E2E_TOKEN=" + secret}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	t.Logf("mcpwatch check:\n%s%s", stdout.String(), stderr.String())
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 78 {
		t.Fatalf("exit %v, want 78", err)
	}
	out := stdout.String()
	for _, want := range []string{
		`  - everything-fail: call echo failed (assertion): contains: "this is not in the reply" not found in result: Echo: hello <redacted>`,
		"1 of 2 calls passed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Contains(out, "everything-pass: call echo") {
		t.Errorf("the passing contract is reported as a failure")
	}
	b, err := os.ReadFile(filepath.Join(dir, "receipt.json"))
	if err != nil {
		t.Fatal(err)
	}
	receipt := string(b)
	for name, text := range map[string]string{"stdout": out, "stderr": stderr.String(), "receipt": receipt} {
		if strings.Contains(text, secret) {
			t.Errorf("the secret echoed by the server is in the %s", name)
		}
	}
	var r struct {
		Servers []struct {
			Name  string `json:"name"`
			Calls []struct {
				Tool   string `json:"tool"`
				Passed bool   `json:"passed"`
			} `json:"calls"`
		} `json:"servers"`
	}
	if err := json.Unmarshal([]byte(receipt), &r); err != nil {
		t.Fatal(err)
	}
	for _, s := range r.Servers {
		if len(s.Calls) != 1 || s.Calls[0].Tool != "echo" || s.Calls[0].Passed != (s.Name == "everything-pass") {
			t.Errorf("receipt: %s calls %+v", s.Name, s.Calls)
		}
	}
}

func q(s string) string { b, _ := json.Marshal(s); return string(b) }

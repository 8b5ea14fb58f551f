//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// mcpwatch probe --call on server-everything (npm, pinned): its echo tool,
// annotated read-only, is called and answers; toggle-simulated-logging,
// annotated readOnlyHint: false and destructiveHint: false, is refused
// without --allow-side-effects, which the refusal names.
func TestProbeCallEverything(t *testing.T) {
	node := needEverything(t)
	call := func(args ...string) (int, string) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		argv := append([]string{"probe", "--timeout", "20s"}, args...)
		argv = append(argv, "--", node, suite.everythingBin, "stdio")
		cmd := exec.CommandContext(ctx, suite.mcpwatch, argv...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			code = ee.ExitCode()
		case err != nil:
			t.Fatalf("mcpwatch %v: %v", argv, err)
		}
		return code, out.String()
	}

	code, out := call("--format", "json", "--call", "echo", "--input", `{"message":"hello from mcpwatch"}`)
	var res struct {
		OK   bool `json:"ok"`
		Call struct {
			Called bool   `json:"called"`
			OK     bool   `json:"ok"`
			Text   string `json:"text"`
		} `json:"call"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("exit %d, not JSON: %v\n%s", code, err, out)
	}
	if code != 0 || !res.OK || !res.Call.Called || !res.Call.OK || res.Call.Text != "Echo: hello from mcpwatch" {
		t.Errorf("--call echo: exit %d, %+v\n%s", code, res, out)
	}

	code, out = call("--call", "toggle-simulated-logging")
	if code != 1 || !strings.Contains(out, "call toggle-simulated-logging {}: NOT CALLED") ||
		!strings.Contains(out, "is not annotated readOnlyHint: true") || !strings.Contains(out, "add --allow-side-effects\n") {
		t.Errorf("--call toggle-simulated-logging: exit %d, want 1 and a refusal naming --allow-side-effects:\n%s", code, out)
	}
}

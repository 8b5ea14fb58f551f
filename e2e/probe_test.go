//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// probeOutput is the part of `mcpwatch probe --format json` these tests read.
type probeOutput struct {
	OK              bool    `json:"ok"`
	Reason          string  `json:"reason"`
	Error           string  `json:"error"`
	Era             string  `json:"era"`
	ProtocolVersion string  `json:"protocol_version"`
	Transport       string  `json:"transport"`
	DurationSeconds float64 `json:"duration_seconds"`
	StderrTail      string  `json:"stderr_tail"`
	Tools           []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

func (o probeOutput) toolNames() []string {
	names := make([]string, len(o.Tools))
	for i, tool := range o.Tools {
		names[i] = tool.Name
	}
	return names
}

// runProbe runs the built `mcpwatch probe --format json ARGS...` and decodes
// what it prints. A failed probe (non-zero exit) still prints its JSON; the
// caller judges it.
func runProbe(t *testing.T, args ...string) probeOutput {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	argv := append([]string{"probe", "--format", "json"}, args...)
	cmd := exec.CommandContext(ctx, suite.mcpwatch, argv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var out probeOutput
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("mcpwatch %s: %v; output not JSON (%v)\nstdout:\n%s\nstderr:\n%s",
			strings.Join(argv, " "), runErr, err, stdout.String(), stderr.String())
	}
	if runErr != nil && out.OK {
		t.Errorf("mcpwatch %s: exit %v while the JSON says ok", strings.Join(argv, " "), runErr)
	}
	return out
}

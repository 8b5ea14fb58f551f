package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/util/shard"
)

func TestServeRefusesBadPlacement(t *testing.T) {
	t.Parallel()
	good := writeJSON(t, t.TempDir(), "mcpwatch.yml", map[string]any{"servers": map[string]any{
		"x": map[string]any{"url": "http://127.0.0.1:1/mcp"},
	}})
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"index past total", nil, []string{"--shard.total", "3", "--shard.index", "3"}, "not in [0, 3)"},
		{"zero total", nil, []string{"--shard.total", "0"}, "at least 1"},
		{"both index and pod", nil, []string{"--shard.total", "2", "--shard.index", "1", "--shard.from-pod-name", "mcpwatch-1"}, "keep one"},
		{"pod without ordinal", nil, []string{"--shard.total", "2", "--shard.from-pod-name", "mcpwatch-7d9f8-x2kq9"}, "StatefulSet ordinal"},
		{"ordinal past total", nil, []string{"--shard.total", "2", "--shard.from-pod-name", "mcpwatch-2"}, "--shard.total"},
		{"bad env", map[string]string{"MCPWATCH_SHARD_TOTAL": "three"}, nil, "$MCPWATCH_SHARD_TOTAL"},
		{"bad peer", nil, []string{"--web.peer-urls", "mcpwatch-1:9713"}, "--web.peer-urls"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"serve", "-c", good, "--web.listen-address", "127.0.0.1:0"}, tc.args...)
			code, _, stderr := runCLI(t, tc.env, args...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, want %d with %q; stderr:\n%s", code, exitUsage, tc.want, stderr)
			}
		})
	}
}

// The shard comes from the pod name's ordinal in the environment, as a
// StatefulSet's downward API gives it: the daemon probes its shard's
// servers only and says so in its metrics.
func TestServeShardFromPodNameEnv(t *testing.T) {
	t.Parallel()
	servers := map[string]any{}
	for i := range 12 {
		servers[fmt.Sprintf("s%02d", i)] = map[string]any{"url": "http://127.0.0.1:1/mcp"}
	}
	config := writeJSON(t, t.TempDir(), "mcpwatch.yml", map[string]any{
		"defaults": map[string]any{"schedule": "@every 1h"}, "servers": servers,
	})
	base := serveInProcess(t, map[string]string{
		"MCPWATCH_SHARD_FROM_POD_NAME": "mcpwatch-1",
		"MCPWATCH_SHARD_TOTAL":         "3",
	}, "-c", filepath.Clean(config))
	want := 0
	for name := range servers {
		if shard.Of(name, 3) == 1 {
			want++
		}
	}
	m := scrape(t, base+"/metrics")
	for _, line := range []string{`mcpwatch_shard_info{index="1",total="3"} 1`, fmt.Sprintf("mcpwatch_servers %d", want)} {
		if !hasSample(m, line) {
			t.Errorf("/metrics lacks %q", line)
		}
	}
	if page := scrape(t, base+"/"); !strings.Contains(page, "shard 1 of 3") || !strings.Contains(page, "replica <code>mcpwatch-1</code>") {
		t.Errorf("the status page does not say shard 1 of 3, replica mcpwatch-1")
	}
}

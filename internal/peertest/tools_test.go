package peertest_test

import (
	"context"
	"maps"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/peertest"
	"github.com/mcpwatch/mcpwatch/probe"
)

// TestRecordedTools lists the tools of each pinned server (with a good
// credential where it takes one) and compares them with the recorded list
// (or records it, with -record): the fixtures of what mcpwatch init
// proposes, with each tool's annotations as the server sends them.
func TestRecordedTools(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		pkg  string
		env  map[string]string
		args []string
	}{
		{pkg: peertest.GitHubServer, env: map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": goodGitHubToken}},
		{pkg: peertest.SlackServer, env: map[string]string{"SLACK_BOT_TOKEN": goodSlackToken, "SLACK_TEAM_ID": "T0123ABCDEF"}},
		{pkg: peertest.BraveServer, env: map[string]string{"BRAVE_API_KEY": goodBraveKey}},
		{pkg: peertest.PostgresServer, args: []string{"postgresql://mcp@127.0.0.1:9/app"}},
		{pkg: peertest.EverythingServer},
		{pkg: peertest.MemoryServer, env: map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, "memory.json")}},
		{pkg: peertest.FilesystemServer, args: []string{dir}},
	} {
		t.Run(tc.pkg, func(t *testing.T) {
			t.Parallel()
			node, script := peertest.Server(t, tc.pkg)
			env := map[string]string{}
			maps.Copy(env, tc.env)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			res := probe.Run(ctx, probe.Target{Command: node, Args: append([]string{script}, tc.args...), Env: env}, probe.Options{})
			if !res.OK {
				t.Fatalf("probe failed: %s: %s (stderr %q)", res.Reason, res.Error, res.StderrTail)
			}
			if file, _, same := golden(t, peertest.ToolsDir(), tc.pkg, res.Tools); !same {
				t.Errorf("%s lists otherwise than recorded in %s (re-record with -record if the pin changed)", tc.pkg, file)
			}
		})
	}
}

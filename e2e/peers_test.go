//go:build e2e

package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestServerEverything probes @modelcontextprotocol/server-everything, a
// real server from npm (pinned in testdata/peers), over each of its three
// transports with the built mcpwatch. Its TypeScript SDK is legacy-era: it
// answers 2025-11-25 and lists 13 tools to a client that declares no
// capabilities.
func TestServerEverything(t *testing.T) {
	node := needEverything(t)

	const (
		wantTools    = 13
		wantEra      = "legacy"
		wantProtocol = "2025-11-25"
	)
	tests := []struct {
		name      string
		mode      string // server-everything's transport argument
		path      string // where its HTTP endpoint is ("" for stdio)
		transport string // mcpwatch's --transport, and the transport its JSON names
	}{
		{name: "stdio", mode: "stdio", transport: "stdio"},
		{name: "streamable HTTP", mode: "streamableHttp", path: "/mcp", transport: "http"},
		{name: "legacy SSE", mode: "sse", path: "/sse", transport: "sse"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var args []string
			if tc.mode == "stdio" {
				// mcpwatch spawns it, in its own process group, and ends it.
				args = []string{"--timeout", "20s", "--", node, suite.everythingBin, "stdio"}
			} else {
				addr := startEverythingHTTP(t, node, tc.mode)
				args = []string{"--timeout", "20s", "--url", "http://" + addr + tc.path, "--transport", tc.transport}
			}
			out := runProbe(t, args...)
			if !out.OK {
				t.Fatalf("probe failed: reason %s: %s\nstderr tail:\n%s", out.Reason, out.Error, out.StderrTail)
			}
			names := out.toolNames()
			t.Logf("%s: %d tools, era %s, protocol %s, transport %s, %.3f s: %v",
				tc.name, len(names), out.Era, out.ProtocolVersion, out.Transport, out.DurationSeconds, names)
			if len(names) != wantTools {
				t.Errorf("tools: got %d %v, want %d", len(names), names, wantTools)
			}
			if !slices.Contains(names, "echo") {
				t.Errorf("tools %v: no echo", names)
			}
			if out.Era != wantEra {
				t.Errorf("era: got %q, want %q", out.Era, wantEra)
			}
			if out.ProtocolVersion != wantProtocol {
				t.Errorf("protocol_version: got %q, want %q", out.ProtocolVersion, wantProtocol)
			}
			if out.Transport != tc.transport {
				t.Errorf("transport: got %q, want %q", out.Transport, tc.transport)
			}
		})
	}
}

// startEverythingHTTP starts server-everything in one of its HTTP modes on a
// free loopback port and returns its address once it accepts connections.
// It binds every interface and has no host option, so bind-localhost.cjs is
// preloaded to keep it on 127.0.0.1; the test checks that it did.
func startEverythingHTTP(t *testing.T, node, mode string) string {
	t.Helper()
	h := newHarness(t)
	addr := freeAddr(t)
	port := portOf(t, addr)
	preload := filepath.Join(suite.root, "testdata", "peers", "bind-localhost.cjs")
	h.start("server-everything-"+mode,
		[]string{fmt.Sprintf("PORT=%d", port), "NODE_OPTIONS=--require=" + preload},
		node, suite.everythingBin, mode)
	waited := h.waitFor("server-everything "+mode+" to accept connections on "+addr, 30*time.Second,
		func() error { return tcpAccepts(addr) })
	t.Logf("server-everything %s accepts connections on %s after %s", mode, addr, waited.Round(time.Millisecond))

	listeners, err := listenersOnPort(port)
	if err != nil {
		t.Logf("cannot check what port %d is bound to: %v", port, err)
		return addr
	}
	want := loopbackV4 + fmt.Sprintf(":%04X", port)
	if len(listeners) == 0 || slices.ContainsFunc(listeners, func(l string) bool { return l != want }) {
		t.Fatalf("port %d listens on %v (hex, /proc/net/tcp), want only 127.0.0.1 (%s): bind-localhost.cjs did not apply", port, listeners, want)
	}
	return addr
}

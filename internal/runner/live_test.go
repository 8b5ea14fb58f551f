package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/probe"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// A server kept running between probes (probe.Live) that logged at start
// that its credential was refused, and serves on: every probe of that
// process is credential_rejected, however much the server logs after (its
// stderr tail keeps its start), and a rotated ${file:...} credential
// starts it afresh, its own stderr read then.
func TestLiveSessionKeepsItsStartsRejection(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	state, key := filepath.Join(dir, "state"), filepath.Join(dir, "key")
	write := func(path, data string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(state, probetest.StateLogAtStart+`[figma] API error (401): {"error": "Invalid token", "http_code": 401}`+"\n")
	write(key, "figd_fake-0001\n")
	path, args, env := probetest.Command(probetest.Config{StateFile: state})
	env["FIGMA_API_KEY"] = "${file:" + key + "}"
	s := normalized(config.Server{Name: "figma", Command: path, Args: args, Env: env, Transport: probe.TransportStdio})
	live := probe.NewLive(nil)
	defer live.Close()
	// A small tail: the server's own lines for each request ("probetest:
	// recv tools/list") push its start out of it within a few probes.
	req := Request{Timeout: time.Minute, Live: live, Options: probe.Options{StderrTailBytes: 256}}

	for i := range 12 {
		res := Probe(t.Context(), NewPool(1, 1), s, req).Result
		if res.Reason != probe.ReasonCredentialRejected || res.Credentials == nil || res.Credentials.Rejected == nil ||
			res.Credentials.Rejected.Credential != "env:FIGMA_API_KEY" {
			t.Fatalf("probe %d: reason %q (%s), want credential_rejected naming env:FIGMA_API_KEY", i+1, res.Reason, res.Error)
		}
		if i > 0 && (res.Session == nil || res.Session.Start != "") {
			t.Fatalf("probe %d: session %+v, want the running server", i+1, res.Session)
		}
	}

	write(state, "\n") // a new key: the server starts clean
	write(key, "figd_good-0002\n")
	res := Probe(t.Context(), NewPool(1, 1), s, req).Result
	if !res.OK || res.Session == nil || res.Session.Start != probe.StartChanged {
		t.Fatalf("after the key's rotation: OK %v (%s: %s), session %+v; want OK, started again", res.OK, res.Reason, res.Error, res.Session)
	}
	if strings.Contains(res.StderrTail, "Invalid token") {
		t.Errorf("the new process's stderr %q holds the old one's rejection", res.StderrTail)
	}
}

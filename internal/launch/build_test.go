package launch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/oauth"
)

// Build hands the probe everything read and made: the expanded values,
// the CA's bytes, the OAuth client; a missing credential is no error and
// gets no client; the deadline counts the calls.
func TestBuild(t *testing.T) {
	dir := t.TempDir()
	ca, err := os.ReadFile(filepath.Join("../config/testdata", "certs", "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "ca.pem"), string(ca))
	writeFile(t, filepath.Join(dir, "secret"), "cs-build-value\n")
	writeFile(t, filepath.Join(dir, "mcpwatch.yml"), `
servers:
  remote:
    url: https://mcp.example.com/mcp
    tls: {ca_file: ca.pem}
    headers: {X-Api-Key: "${API_KEY}"}
    auth: {type: oauth, grant: client_credentials, client_id: mcpwatch, client_secret: "${file:secret}"}
  local:
    command: npx
    args: [-y, some-server]
    env: {REGION: "${REGION:-eu}"}
    timeout: 5s
    start_timeout: 1m
    call_timeout: 2s
    calls: auto
    auto_calls: 2
`)
	cfg, err := load(filepath.Join(dir, "mcpwatch.yml"))
	if err != nil {
		t.Fatal(err)
	}
	remote, _ := cfg.Server("remote")
	cache := &oauth.Cache{}
	b, err := Build(remote, mapLookup(map[string]string{"API_KEY": "k-1"}), BuildOptions{OAuth: cache})
	if err != nil {
		t.Fatal(err)
	}
	if string(b.Target.CA) != string(ca) || b.Target.Headers["X-Api-Key"] != "k-1" || b.Client == nil || b.Target.Auth == nil || len(b.Missing) != 0 {
		t.Errorf("remote built = %+v", b)
	}
	if b.Written.URL != "https://mcp.example.com/mcp" {
		t.Errorf("written = %+v", b.Written)
	}

	// The header's variable empty: missing, not probed, so no OAuth
	// client is made; a listener makes it all the same.
	empty := mapLookup(map[string]string{"API_KEY": ""})
	b, err = Build(remote, empty, BuildOptions{OAuth: cache})
	if err != nil || len(b.Missing) != 1 || b.Missing[0].Credential != "header:X-Api-Key" || b.Client != nil || b.Target.Auth != nil {
		t.Errorf("missing: %+v, %v", b, err)
	}
	if b, err = Build(remote, empty, BuildOptions{OAuth: cache, Listen: true}); err != nil || b.Client == nil {
		t.Errorf("listen: %+v, %v", b, err)
	}

	local, _ := cfg.Server("local")
	b, err = Build(local, nil, BuildOptions{Calls: true})
	if err != nil || b.Target.Env["REGION"] != "eu" || b.Install.Installs != "npx" || b.Target.Auth != nil {
		t.Fatalf("local built = %+v, %v", b, err)
	}
	// A first start of an npx command: its start timeout, and two auto
	// calls of 2s.
	if b.Timeout != time.Minute+2*2*time.Second || !b.Calls || b.Auto != 2 {
		t.Errorf("local timeout %s, calls %v, auto %d", b.Timeout, b.Calls, b.Auto)
	}
	if b, _ = Build(local, nil, BuildOptions{Warm: true, Timeout: 3 * time.Second}); b.Timeout != 3*time.Second || b.Calls || b.Auto != 0 {
		t.Errorf("warm, no calls: timeout %s, calls %v, auto %d", b.Timeout, b.Calls, b.Auto)
	}

	// A secret file gone: a wiring fault naming the key and the file.
	if err := os.Remove(filepath.Join(dir, "secret")); err != nil {
		t.Fatal(err)
	}
	if _, err := Build(remote, mapLookup(map[string]string{"API_KEY": "k-1"}), BuildOptions{}); err == nil || !strings.Contains(err.Error(), "auth.client_secret") {
		t.Errorf("secret file gone: %v", err)
	}
}

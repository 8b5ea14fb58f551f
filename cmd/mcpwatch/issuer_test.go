package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/peertest"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

const (
	issuerGood = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
	issuerFake = "ghp_ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ"
)

// The built binary checks a credential at its issuer through the
// environment's proxy and CA (HTTPS_PROXY, SSL_CERT_FILE), with no tool
// called: a server that lists every tool is credential_rejected with a
// fake GitHub token, a token the issuer says dies in 3 days shows its
// expiry, and an unreachable issuer is never a rejection. The token never
// reaches the output.
func TestIssuerCheckThroughProxy(t *testing.T) {
	t.Parallel()
	github := peertest.NewGitHub(issuerGood)
	defer github.Close()
	proxy, err := peertest.NewProxy(github)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()

	// A server that lists its tools whatever its credential, as most do;
	// the probetest child never calls GitHub.
	path, args, env := probetest.Command(probetest.Config{})
	env["GITHUB_PERSONAL_ACCESS_TOKEN"] = "${GITHUB_PERSONAL_ACCESS_TOKEN}"
	dir := t.TempDir()
	writeJSON(t, dir, ".mcp.json", claudeCodeConfig(map[string]any{
		"github": map[string]any{"command": path, "args": args, "env": env},
	}))
	run := func(token string, args ...string) cliResult {
		r := runBin(t, dir, map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": token,
			"HTTPS_PROXY": proxy.URL(), "SSL_CERT_FILE": proxy.CAFile()}, args...)
		for _, secret := range []string{issuerGood, issuerFake} {
			if strings.Contains(r.stdout+r.stderr, secret) {
				t.Errorf("mcpwatch %v printed the token", args)
			}
		}
		return r
	}

	if r := run(issuerGood, "lock"); r.code != exitOK {
		t.Fatalf("lock with the good token: %s", r)
	}
	if r := run(issuerGood, "check"); r.code != exitOK {
		t.Errorf("check with the good token: %s", r)
	}
	r := run(issuerFake, "check")
	if r.code != exitConfig {
		t.Errorf("check with a fake token: exit %d, want %d: %s", r.code, exitConfig, r)
	}
	assertContains(t, "check with a fake token", r.stdout,
		"credential env:GITHUB_PERSONAL_ACCESS_TOKEN rejected by its issuer: api.github.com GET /rate_limit: HTTP 401: Bad credentials (renew it; found without a tool call)")
	if r := run(issuerFake, "lock"); r.code != exitConfig || !strings.Contains(r.stdout+r.stderr, "rejected by its issuer") {
		t.Errorf("lock with a fake token must refuse: %s", r)
	}
	if r := run(issuerFake, "check", "--no-issuer-check"); r.code != exitOK {
		t.Errorf("check --no-issuer-check with a fake token that no call sees: %s", r)
	}

	expiry := time.Now().Add(72 * time.Hour).UTC().Truncate(time.Second)
	github.ExpireAt(issuerGood, expiry)
	r = run(issuerGood, "check", "--format", "json")
	if r.code != exitOK {
		t.Fatalf("check of an expiring token: %s", r)
	}
	var rep struct {
		Servers []struct {
			Probe struct {
				Credentials struct {
					Expiries []struct {
						Credential string    `json:"credential"`
						Expiry     time.Time `json:"expiry"`
					} `json:"expiries"`
				} `json:"credentials"`
			} `json:"probe"`
		} `json:"servers"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if len(rep.Servers) != 1 || len(rep.Servers[0].Probe.Credentials.Expiries) != 1 ||
		!rep.Servers[0].Probe.Credentials.Expiries[0].Expiry.Equal(expiry) ||
		rep.Servers[0].Probe.Credentials.Expiries[0].Credential != "env:GITHUB_PERSONAL_ACCESS_TOKEN" {
		t.Errorf("the issuer's expiry is not in the report: %s", r.stdout)
	}

	github.Down(true)
	r = run(issuerGood, "check")
	if strings.Contains(r.stdout, "credential_rejected") || !strings.Contains(r.stdout, "upstream_unreachable") {
		t.Errorf("an unreachable issuer must be upstream_unreachable, never a rejection: %s", r)
	}
}

// config check says which credential is checked where, and what it tells.
func TestConfigCheckShowsIssuerChecks(t *testing.T) {
	t.Parallel()
	path, args, env := probetest.Command(probetest.Config{})
	env["GITHUB_PERSONAL_ACCESS_TOKEN"] = "${GITHUB_PERSONAL_ACCESS_TOKEN}"
	dir := t.TempDir()
	writeJSON(t, dir, ".mcp.json", claudeCodeConfig(map[string]any{
		"github": map[string]any{"command": path, "args": args, "env": env},
	}))
	r := runBin(t, dir, map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": issuerGood}, "config", "check")
	assertContains(t, "config check", r.stdout,
		"issuer:   env:GITHUB_PERSONAL_ACCESS_TOKEN -> api.github.com GET /rate_limit, expiry from the response header\n")
	if strings.Contains(r.stdout, issuerGood) {
		t.Errorf("config check printed the token")
	}
}

// A credential its issuer rejected is not sent again in a canary call:
// the server's contracts are not called, each outcome credential_rejected
// and quoting the issuer, and check fails for the credential alone.
func TestIssuerRejectionHoldsTheCalls(t *testing.T) {
	t.Parallel()
	github := peertest.NewGitHub(issuerGood)
	defer github.Close()
	proxy, err := peertest.NewProxy(github)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	path, args, env := probetest.Command(probetest.Config{})
	env["GITHUB_PERSONAL_ACCESS_TOKEN"] = "${GITHUB_PERSONAL_ACCESS_TOKEN}"
	dir := t.TempDir()
	writeJSON(t, dir, ".mcp.json", claudeCodeConfig(map[string]any{
		"github": map[string]any{"command": path, "args": args, "env": env},
	}))
	if err := os.Mkdir(filepath.Join(dir, "mcp-contracts"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeJSON(t, dir, "mcp-contracts/github.tools.json", map[string]any{"tools": map[string]any{
		"fetch_daily_report": map[string]any{"input": map[string]any{"date": "2026-08-01"}, "expect": map[string]any{"status": "pass"}},
	}})
	run := func(token string, args ...string) cliResult {
		return runBin(t, dir, map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": token,
			"HTTPS_PROXY": proxy.URL(), "SSL_CERT_FILE": proxy.CAFile()}, args...)
	}
	if r := run(issuerGood, "lock"); r.code != exitOK {
		t.Fatalf("lock: %s", r)
	}
	if r := run(issuerGood, "check"); r.code != exitOK || !strings.Contains(r.stdout, "1 of 1 call passed") {
		t.Errorf("check with the good token calls its contract: %s", r)
	}
	r := run(issuerFake, "check", "--format", "json")
	var rep struct {
		Servers []struct {
			Calls []struct {
				Tool     string `json:"tool"`
				Reason   string `json:"reason"`
				Message  string `json:"message"`
				Attempts []any  `json:"attempts"`
			} `json:"calls"`
		} `json:"servers"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r)
	}
	if r.code != exitConfig || len(rep.Servers) != 1 || len(rep.Servers[0].Calls) != 1 {
		t.Fatalf("check with a fake token: %s", r)
	}
	c := rep.Servers[0].Calls[0]
	if c.Reason != "credential_rejected" || len(c.Attempts) != 0 || !strings.Contains(c.Message, "not called: the issuer of env:GITHUB_PERSONAL_ACCESS_TOKEN rejected it") {
		t.Errorf("the call with a credential its issuer rejected: %+v, want not called", c)
	}
}

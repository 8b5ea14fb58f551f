package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// An authorization server that grants an access token alone, expiring in
// 120 s: login says until when mcpwatch watches and which login to run
// then, stores the token (0600); serve probes with it and exports its
// expiry as a credential it does not renew; once the stored token has
// expired (the file rewritten as the clock would leave it), serve reports
// credential_missing naming the login, without a request to the token
// endpoint.
func TestLoginAccessTokenAloneThenServe(t *testing.T) {
	t.Parallel()
	as, url := loginFixture(t, probetest.AuthConfig{Registration: true, NoRefreshTokenOnCode: true, ExpiresIn: 120})
	dir := t.TempDir()
	rtFile := filepath.Join(dir, "remote.refresh")
	config := writeJSON(t, dir, "mcpwatch.yml", map[string]any{"servers": map[string]any{
		"remote": map[string]any{"url": url, "transport": "http", "schedule": "@every 1h",
			"auth": map[string]any{"type": "oauth", "grant": "refresh_token", "refresh_token": "${file:remote.refresh}"}},
	}})
	r := runBin(t, dir, map[string]string{"BROWSER": testBrowser(t)}, "login", "-c", config, "remote")
	if r.code != exitOK {
		t.Fatalf("login: %s", r)
	}
	t.Logf("mcpwatch login -c mcpwatch.yml remote:\n%s", r.stdout)
	assertContains(t, "login's output", r.stdout, "access token   stored in "+rtFile+" (mode 0600)",
		"no refresh token: mcpwatch watches until ", ", then run 'mcpwatch login remote' again", "probe          ok: 2 tools with the new token")
	if fi, err := os.Lstat(rtFile); err != nil || fi.Mode().Perm() != 0o600 || !fi.Mode().IsRegular() {
		t.Fatalf("stored file: %v, %v; want a regular file of mode 0600", fi, err)
	}
	var stored map[string]any
	if err := json.Unmarshal([]byte(readToken(t, rtFile)), &stored); err != nil {
		t.Fatal(err)
	}
	expiry, err := time.Parse(time.RFC3339Nano, fmt.Sprint(stored["expiry"]))
	if err != nil || time.Until(expiry) > 120*time.Second || time.Until(expiry) < 60*time.Second {
		t.Fatalf("stored expiry %v (%v), want about 120 s from now", stored["expiry"], err)
	}
	if !strings.Contains(r.stdout, expiry.UTC().Format(time.RFC3339)) {
		t.Errorf("login does not name the expiry %s", expiry.UTC().Format(time.RFC3339))
	}
	exchanges := len(as.Requests())

	base, _ := serveLogged(t, nil, "-c", config)
	if st := firstProbe(t, base, "remote"); st.State != "ok" {
		t.Fatalf("remote is %s (%s: %s), want ok with the stored access token", st.State, st.Reason, st.Error)
	}
	metrics := scrape(t, base+"/metrics")
	series := `mcpwatch_credential_expiry_timestamp_seconds{credential="oauth_stored_access_token",server="remote"} `
	line := grepLines(metrics, series)
	got, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimPrefix(line, series)), 64)
	if err != nil || math.Abs(got-float64(expiry.UnixNano())/1e9) > 0.001 {
		t.Errorf("metrics: %q (%v), want %s at the stored expiry %s", line, err, series, expiry)
	}

	// The token as the clock leaves it 120 s on: expired.
	stored["expiry"] = time.Now().Add(-time.Second).UTC().Format(time.RFC3339Nano)
	b, _ := json.Marshal(stored)
	if err := os.WriteFile(rtFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	base, _ = serveLogged(t, nil, "-c", config)
	st := firstProbe(t, base, "remote")
	if st.State != "credential_missing" || !strings.Contains(st.Error, "run 'mcpwatch login remote' to sign in again") {
		t.Errorf("after the expiry remote is %s (%s: %s), want credential_missing naming the login", st.State, st.Reason, st.Error)
	}
	if n := len(as.Requests()); n != exchanges {
		t.Errorf("serve made %d token requests, want none: there is no refresh token", n-exchanges)
	}
	for _, s := range as.Issued() {
		if strings.Contains(r.stdout+r.stderr+st.Error+metrics, s) {
			t.Error("a token appears in an output")
		}
	}
}

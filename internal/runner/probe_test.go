package runner

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/contracts"
	"github.com/mcpwatch/mcpwatch/probe"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

const runnerSecret = "runner-s3cret-9f8e7d"

// lookupSecret reads TOKEN as the secret; every other variable is unset.
func lookupSecret(name string) (string, bool) {
	if name == "TOKEN" {
		return runnerSecret, true
	}
	return "", false
}

// httpServer serves a probetest server on loopback for the test.
func httpServer(t *testing.T, cfg probetest.Config) string {
	t.Helper()
	srv := probetest.NewServer(cfg)
	ts := httptest.NewServer(srv)
	t.Cleanup(func() { srv.Close(); ts.Close() })
	return ts.URL
}

// What a server says back is scrubbed of its expanded secrets in the
// Result and in Tools, which the lock is compared with and built from, so
// nothing derived from them (a diff, a report, a page, a lock) holds one.
// A tool whose name held one is named in SecretNames.
func TestProbeScrubsWhatTheServerSays(t *testing.T) {
	tools := probetest.DefaultTools()
	tools[1].Description = "List report dates (key " + runnerSecret + ")"
	echoed := append(probetest.DefaultTools(), probetest.Tool{
		Name:        "leak_" + runnerSecret,
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{runnerSecret: map[string]any{"const": "k/" + runnerSecret}}},
	})
	cases := []struct {
		name        string
		server      config.Server
		check       func(*probe.Result) string // the field that must show <redacted>
		secretNames []string
	}{
		{
			name: "stdio stderr",
			server: normalized(config.Server{
				Name: "echo", Command: "/bin/sh", Transport: probe.TransportStdio,
				Args: []string{"-c", `echo "auth failed for token $REPORT_API_TOKEN" >&2; exit 3`},
				Env:  map[string]string{"REPORT_API_TOKEN": "${TOKEN}"},
			}),
			check: func(r *probe.Result) string { return r.StderrTail },
		},
		{
			name: "http tool description",
			server: normalized(config.Server{
				Name: "remote", URL: httpServer(t, probetest.Config{Behavior: probetest.TokenGated, Token: runnerSecret, Tools: tools}),
				Transport: probe.TransportHTTP, Headers: map[string]string{"Authorization": "Bearer ${TOKEN}"},
			}),
			check: func(r *probe.Result) string { return r.Tools[1].Description },
		},
		{
			name: "http tool name and schema",
			server: normalized(config.Server{
				Name: "remote", URL: httpServer(t, probetest.Config{Behavior: probetest.TokenGated, Token: runnerSecret, Tools: echoed}),
				Transport: probe.TransportHTTP, Headers: map[string]string{"Authorization": "Bearer ${TOKEN}"},
			}),
			check:       func(r *probe.Result) string { return r.Tools[2].Name + string(r.Tools[2].InputSchema) },
			secretNames: []string{"leak_" + config.Redacted},
		},
		{
			// A hosted server's key in its URL path, in a connection error.
			name:   "url path",
			server: normalized(config.Server{Name: "hosted", URL: "http://127.0.0.1:1/${TOKEN}/mcp", Transport: probe.TransportHTTP}),
			check:  func(r *probe.Result) string { return r.Error },
		},
		{
			name: "argument echoed on stderr",
			server: normalized(config.Server{
				Name: "echo", Command: "/bin/sh", Transport: probe.TransportStdio,
				Args: []string{"-c", `echo "bad flag $0" >&2; exit 3`, "--api-key=${TOKEN}"},
			}),
			check: func(r *probe.Result) string { return r.StderrTail },
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obs := Probe(t.Context(), NewPool(1, 1), tc.server, Request{Lookup: lookupSecret, Options: probe.Options{Transcript: true}})
			if got := tc.check(obs.Result); !strings.Contains(got, config.Redacted) {
				t.Errorf("%q does not show the secret as %s: did the server say it?", got, config.Redacted)
			}
			if text := resultText(t, obs.Result); strings.Contains(text, runnerSecret) {
				t.Errorf("the result holds the secret: %s", text)
			}
			for _, tool := range obs.Tools {
				if strings.Contains(tool.Name+tool.Description+string(tool.InputSchema), runnerSecret) {
					t.Errorf("the observed tools hold the secret: %+v", tool)
				}
			}
			if !slices.Equal(obs.SecretNames, tc.secretNames) {
				t.Errorf("SecretNames = %q, want %q", obs.SecretNames, tc.secretNames)
			}
		})
	}
}

// A URL's host is where a probe went, not a secret, even when a reference
// names it: errors keep it so a person can tell which server did not answer.
func TestProbeKeepsAReferencedHost(t *testing.T) {
	lookup := func(name string) (string, bool) {
		if name == "HOST" {
			return "127.0.0.1", true
		}
		return "", false
	}
	s := normalized(config.Server{Name: "remote", URL: "http://${HOST}:1/mcp", Transport: probe.TransportHTTP})
	if r := Probe(t.Context(), NewPool(1, 1), s, Request{Lookup: lookup}).Result; !strings.Contains(r.Error, "127.0.0.1") {
		t.Errorf("error %q does not name the host", r.Error)
	}
}

// A target that cannot be built fails at once with reason config, naming
// the variable: it needs no slot, so it never waits behind other probes.
func TestProbeConfigErrorNeedsNoSlot(t *testing.T) {
	pool := NewPool(1, 1)
	defer take(t, pool, false)()
	started, ended := 0, 0
	s := normalized(config.Server{Name: "report", Command: "/bin/true", Env: map[string]string{"REPORT_HOST": "${UNSET_TOKEN}"}})
	obs := Probe(t.Context(), pool, s, Request{OnStart: func() func() {
		started++
		return func() { ended++ }
	}})
	r := obs.Result
	if r.Reason != probe.ReasonConfig || !strings.Contains(r.Error, "UNSET_TOKEN") || r.Transport != probe.TransportStdio {
		t.Errorf("result %+v, want reason config over stdio naming UNSET_TOKEN", r)
	}
	if started != 1 || ended != 1 {
		t.Errorf("OnStart called %d times, its done %d; want once each", started, ended)
	}
}

// A probe canceled while it waits for a slot never starts.
func TestProbeCanceledWhileWaiting(t *testing.T) {
	pool := NewPool(1, 1)
	defer take(t, pool, false)()
	ctx, cancel := context.WithCancel(t.Context())
	go func() { // cancel once the probe waits, not before it got there
		if !awaitWaiters(pool, 1) {
			t.Error("the probe never waited for its slot")
		}
		cancel()
	}()
	s := normalized(config.Server{Name: "remote", URL: "http://127.0.0.1:1/mcp"})
	obs := Probe(ctx, pool, s, Request{OnStart: func() func() {
		t.Error("a canceled probe started")
		return func() {}
	}})
	if r := obs.Result; r.Reason != probe.ReasonCanceled || r.Transport != probe.TransportAuto {
		t.Errorf("result %+v, want reason canceled over auto", r)
	}
}

// The deadline starts when the probe gets its slot: a probe that waited
// longer than its timeout still has all of it. In a synctest bubble, time
// moves only while every goroutine of the test waits: the wait for the slot
// takes its 1.5 timeouts at once, and the probe's own network round trips
// (real, to a server outside the bubble) take no time on that clock however
// loaded the machine, so the probe has exactly its timeout.
func TestProbeDeadlineStartsAtSlot(t *testing.T) {
	const timeout = time.Second
	url := httpServer(t, probetest.Config{})
	synctest.Test(t, func(t *testing.T) {
		pool := NewPool(1, 1)
		release, released := take(t, pool, false), make(chan struct{})
		go func() {
			defer close(released)
			time.Sleep(3 * timeout / 2)
			release()
		}()
		defer func() { <-released }()
		s := normalized(config.Server{Name: "remote", URL: url, Transport: probe.TransportHTTP, Timeout: timeout})
		began := time.Now()
		obs := Probe(t.Context(), pool, s, Request{})
		if waited := time.Since(began); waited < 3*timeout/2 {
			t.Errorf("the probe ended %s after it began, before its slot was free", waited)
		}
		if !obs.Result.OK || obs.Timeout != timeout {
			t.Errorf("after waiting %s for its slot: result %+v, timeout %s; want ok within %s", 3*timeout/2, obs.Result, obs.Timeout, timeout)
		}
	})
}

// A caller's Deadline (a scrape's) bounds the wait for a slot: a probe
// still waiting at the Deadline never starts, and says the slots were
// taken, not that the server failed.
func TestProbeDeadlineBoundsTheWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pool := NewPool(1, 1)
		defer take(t, pool, false)()
		s := normalized(config.Server{Name: "remote", URL: "http://127.0.0.1:1/mcp", Timeout: time.Hour})
		began := time.Now()
		obs := Probe(t.Context(), pool, s, Request{Deadline: began.Add(2 * time.Second), OnStart: func() func() {
			t.Error("a probe without a slot started")
			return func() {}
		}})
		r := obs.Result
		if r.Reason != probe.ReasonCanceled || !strings.Contains(r.Error, "no probe slot was free before the caller's deadline (defaults.concurrency") {
			t.Errorf("result %+v, want canceled for want of a slot", r)
		}
		if waited := time.Since(began); waited != 2*time.Second {
			t.Errorf("waited %s for a slot, want the 2s to the deadline", waited)
		}
	})
}

// A Deadline earlier than the probe's timeout ends the probe there, with
// reason timeout as its own deadline would: a server that stalls is cut
// at the caller's deadline, not an hour later.
func TestProbeDeadlineCutsTheTimeout(t *testing.T) {
	url := httpServer(t, probetest.Config{Behavior: probetest.StallToolsList})
	s := normalized(config.Server{Name: "stalls", URL: url, Transport: probe.TransportHTTP, Timeout: time.Hour})
	obs := Probe(t.Context(), NewPool(1, 1), s, Request{Deadline: time.Now().Add(300 * time.Millisecond)})
	if r := obs.Result; r.Reason != probe.ReasonTimeout || r.Timings.Total > 10*time.Minute {
		t.Errorf("result %+v after %s, want reason timeout at the caller's deadline", r, r.Timings.Total)
	}
}

// The era hint is taken unless the server pins an era.
func TestProbeEraHint(t *testing.T) {
	url := httpServer(t, probetest.Config{Era: probetest.EraDual})
	cases := []struct {
		pinned, hint, want probe.Era
	}{
		{pinned: probe.EraAuto, hint: probe.EraLegacy, want: probe.EraLegacy},
		{pinned: "", hint: probe.EraLegacy, want: probe.EraLegacy},
		{pinned: probe.EraModern, hint: probe.EraLegacy, want: probe.EraModern},
		{pinned: probe.EraLegacy, hint: probe.EraModern, want: probe.EraLegacy},
	}
	for _, tc := range cases {
		s := normalized(config.Server{Name: "dual", URL: url, Transport: probe.TransportHTTP, Era: tc.pinned})
		if r := Probe(t.Context(), NewPool(1, 1), s, Request{Era: tc.hint}).Result; !r.OK || r.Era != tc.want {
			t.Errorf("pinned %q, hint %q: ok %t era %q (%s), want era %q", tc.pinned, tc.hint, r.OK, r.Era, r.Error, tc.want)
		}
	}
}

// Fingerprints are computed within the probe's deadline: a probe whose
// context ends before they are done fails (canceled here; at the deadline,
// with reason timeout) instead of fingerprinting past it.
func TestFingerprintsWithinTheProbe(t *testing.T) {
	url := httpServer(t, probetest.Config{})
	s := normalized(config.Server{Name: "remote", URL: url, Transport: probe.TransportHTTP})
	obs := Probe(t.Context(), NewPool(1, 1), s, Request{Fingerprint: true})
	if !obs.Result.OK || len(obs.Tools) == 0 || obs.Tools[0].Fingerprint == "" {
		t.Fatalf("a probe asked for fingerprints: ok %v, tools %+v", obs.Result.OK, obs.Tools)
	}
	ended := endedEarly(obs.Result, probe.ReasonCanceled)
	if ended.OK || ended.Reason != probe.ReasonCanceled || len(ended.Tools) != 0 {
		t.Errorf("endedEarly = %+v", ended)
	}
	if ended := endedEarly(obs.Result, probe.ReasonTimeout); ended.Reason != probe.ReasonTimeout {
		t.Errorf("at the deadline: reason %s", ended.Reason)
	}
}

// A probe refused with 401 rejects the credential of a server given one
// (reason credential_rejected, naming it and quoting the server); to a
// server given none, the 401 says it needs one (reason unauthorized).
func TestProbeRejectedCredential(t *testing.T) {
	t.Parallel()
	url := httpServer(t, probetest.Config{Behavior: probetest.Unauthorized401, Token: "the-right-token"})
	lookup := func(string) (string, bool) { return "a-revoked-token", true }
	for _, tc := range []struct {
		name    string
		headers map[string]string
		reason  probe.Reason
	}{
		{"a credential given", map[string]string{"Authorization": "Bearer ${TOKEN}"}, probe.ReasonCredentialRejected},
		{"none given", nil, probe.ReasonUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := normalized(config.Server{Name: "remote", URL: url, Transport: probe.TransportHTTP, Headers: tc.headers, Timeout: 5 * time.Second})
			res := Probe(t.Context(), NewPool(1, 1), s, Request{Lookup: lookup}).Result
			if res.Reason != tc.reason || res.HTTPStatus != 401 {
				t.Fatalf("reason %q, status %d (%s), want %q", res.Reason, res.HTTPStatus, res.Error, tc.reason)
			}
			var rej *probe.CredentialRejection
			if res.Credentials != nil {
				rej = res.Credentials.Rejected
			}
			if (rej != nil) != (tc.reason == probe.ReasonCredentialRejected) {
				t.Fatalf("rejection %+v", rej)
			}
			if rej != nil && (rej.Credential != "header:Authorization" || rej.Marker != "HTTP 401" || !strings.Contains(rej.Quote, "401")) {
				t.Errorf("rejection %+v, want header:Authorization, HTTP 401 and the server's words", rej)
			}
		})
	}
}

// A credential that expands to an empty value is credential_missing, named
// and said why, and the server is not started; ${VAR:-} is meant to be
// empty, and the server is probed.
func TestProbeCredentialMissing(t *testing.T) {
	t.Parallel()
	lookup := func(name string) (string, bool) {
		if name == "EMPTY_SECRET" {
			return "", true
		}
		return "", false
	}
	for _, tc := range []struct {
		value  string
		reason probe.Reason
		spawns int
	}{
		{"${EMPTY_SECRET}", probe.ReasonCredentialMissing, 0},
		{"${EMPTY_SECRET:-}", probe.ReasonNone, 1},
	} {
		t.Run(tc.value, func(t *testing.T) {
			t.Parallel()
			cfg := probetest.Config{SpawnLog: filepath.Join(t.TempDir(), "spawns")}
			path, args, env := probetest.Command(cfg)
			for k, v := range env {
				env[k] = strings.ReplaceAll(v, "$", "$$") // values, not references
			}
			env["REPORT_API_TOKEN"] = tc.value
			s := normalized(config.Server{Name: "report", Command: path, Args: args, Env: env, Timeout: 10 * time.Second,
				Contracts: []contracts.Contract{{Tool: "list_report_dates", Input: []byte("{}"), Expect: contracts.Expect{Status: contracts.StatusPass}}}, CallTimeout: 5 * time.Second})
			obs := Probe(t.Context(), NewPool(1, 1), s, Request{Lookup: lookup, Calls: true})
			if obs.Result.Reason != tc.reason {
				t.Fatalf("reason %q (%s), want %q", obs.Result.Reason, obs.Result.Error, tc.reason)
			}
			raw, _ := os.ReadFile(cfg.SpawnLog)
			if n := strings.Count(string(raw), "\n"); n != tc.spawns {
				t.Errorf("%d processes started, want %d", n, tc.spawns)
			}
			st := obs.Result.Credentials
			if st == nil || len(st.Given) != 1 || st.Given[0].Credential != "env:REPORT_API_TOKEN" || st.Given[0].Present != (tc.spawns == 1) {
				t.Fatalf("credentials %+v", st)
			}
			if tc.reason == probe.ReasonCredentialMissing {
				if !strings.Contains(obs.Result.Error, "env:REPORT_API_TOKEN has no value (${EMPTY_SECRET} is set but empty)") || st.Given[0].Why == "" {
					t.Errorf("error %q, why %q", obs.Result.Error, st.Given[0].Why)
				}
				if len(obs.Calls) != 1 || obs.Calls[0].Reason != contracts.ReasonProbeFailed {
					t.Errorf("calls %+v, want one not made", obs.Calls)
				}
			}
		})
	}
}

// normalized is s with the built-in defaults, as config.Load leaves every
// server.
func normalized(s config.Server) config.Server { return s.Normalized(config.Defaults{}) }

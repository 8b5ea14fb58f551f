package probe_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/probe"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// End-to-end probes over streamable HTTP and legacy SSE, through Run,
// against the probetest kit's handlers.

const httpToken = "kit-token-value"

// kitServer serves a probetest server over HTTP: streamable HTTP at /mcp,
// or legacy SSE on every path when sse is set.
func kitServer(t *testing.T, cfg probetest.Config, sse bool) (*probetest.Server, string) {
	t.Helper()
	kit := probetest.NewServer(cfg)
	var h http.Handler = kit
	if sse {
		h = kit.SSE()
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	t.Cleanup(kit.Close) // runs first: releases what the kit holds open
	return kit, srv.URL + "/mcp"
}

func bearerHeader(token string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + token}
}

func TestHTTPRun(t *testing.T) {
	tests := []struct {
		name      string
		cfg       probetest.Config
		sse       bool // serve legacy HTTP+SSE
		transport probe.Transport
		era       probe.Era
		headers   map[string]string

		wantTools     int
		wantTransport probe.Transport
		wantEra       probe.Era
		wantVersion   string
		initializes   int // initialize requests the server received
	}{
		{name: "legacy, JSON responses", cfg: probetest.Config{Era: probetest.EraLegacy},
			wantTools: 2, wantTransport: probe.TransportHTTP, wantEra: probe.EraLegacy, wantVersion: "2025-11-25", initializes: 1},
		{name: "legacy, SSE responses", cfg: probetest.Config{Era: probetest.EraLegacy, SSEResponses: true},
			wantTools: 2, wantTransport: probe.TransportHTTP, wantEra: probe.EraLegacy, wantVersion: "2025-11-25", initializes: 1},
		{name: "modern only, JSON responses", cfg: probetest.Config{Era: probetest.EraModern},
			wantTools: 2, wantTransport: probe.TransportHTTP, wantEra: probe.EraModern, wantVersion: probe.VersionModern},
		{name: "modern only, SSE responses", cfg: probetest.Config{Era: probetest.EraModern, SSEResponses: true},
			wantTools: 2, wantTransport: probe.TransportHTTP, wantEra: probe.EraModern, wantVersion: probe.VersionModern},
		{name: "dual speaks modern", cfg: probetest.Config{Era: probetest.EraDual},
			wantTools: 2, wantTransport: probe.TransportHTTP, wantEra: probe.EraModern, wantVersion: probe.VersionModern},
		{name: "modern pinned", cfg: probetest.Config{Era: probetest.EraModern}, era: probe.EraModern,
			wantTools: 2, wantTransport: probe.TransportHTTP, wantEra: probe.EraModern, wantVersion: probe.VersionModern},
		{name: "legacy pinned on a dual server", cfg: probetest.Config{Era: probetest.EraDual}, era: probe.EraLegacy,
			wantTools: 2, wantTransport: probe.TransportHTTP, wantEra: probe.EraLegacy, wantVersion: "2025-11-25", initializes: 1},
		// In auto mode the first initialize is POSTed to the stream URL and
		// refused; the kit counts it.
		{name: "auto transport falls back to legacy SSE", cfg: probetest.Config{}, sse: true,
			wantTools: 2, wantTransport: probe.TransportSSE, wantEra: probe.EraLegacy, wantVersion: "2025-11-25", initializes: 2},
		{name: "SSE transport named", cfg: probetest.Config{}, sse: true, transport: probe.TransportSSE,
			wantTools: 2, wantTransport: probe.TransportSSE, wantEra: probe.EraLegacy, wantVersion: "2025-11-25", initializes: 1},
		{name: "token gated, with the token", cfg: probetest.Config{Behavior: probetest.TokenGated, Token: httpToken}, headers: bearerHeader(httpToken),
			wantTools: 2, wantTransport: probe.TransportHTTP, wantEra: probe.EraLegacy, wantVersion: "2025-11-25", initializes: 1},
		{name: "token gated, without: zero tools, and ok", cfg: probetest.Config{Behavior: probetest.TokenGated, Token: httpToken},
			wantTools: 0, wantTransport: probe.TransportHTTP, wantEra: probe.EraLegacy, wantVersion: "2025-11-25", initializes: 1},
		{name: "scoped over SSE", cfg: probetest.Config{Behavior: probetest.Scoped, Token: httpToken}, sse: true, transport: probe.TransportSSE,
			wantTools: 1, wantTransport: probe.TransportSSE, wantEra: probe.EraLegacy, wantVersion: "2025-11-25", initializes: 1},
		{name: "401 passed with the right token", cfg: probetest.Config{Behavior: probetest.Unauthorized401, Token: httpToken, Era: probetest.EraModern},
			headers: bearerHeader(httpToken), wantTools: 2, wantTransport: probe.TransportHTTP, wantEra: probe.EraModern, wantVersion: probe.VersionModern},
		{name: "ping first, legacy", cfg: probetest.Config{Behavior: probetest.PingFirst},
			wantTools: 2, wantTransport: probe.TransportHTTP, wantEra: probe.EraLegacy, wantVersion: "2025-11-25", initializes: 1},
		{name: "ping first over SSE", cfg: probetest.Config{Behavior: probetest.PingFirst}, sse: true, transport: probe.TransportSSE,
			wantTools: 2, wantTransport: probe.TransportSSE, wantEra: probe.EraLegacy, wantVersion: "2025-11-25", initializes: 1},
		{name: "1,000 tools in pages", cfg: probetest.Config{Behavior: probetest.ManyTools, Era: probetest.EraModern},
			wantTools: probetest.ManyToolsCount, wantTransport: probe.TransportHTTP, wantEra: probe.EraModern, wantVersion: probe.VersionModern},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kit, url := kitServer(t, tt.cfg, tt.sse)
			res := runProbe(t, probe.Target{URL: url, Transport: tt.transport, Era: tt.era, Headers: tt.headers}, 10*time.Second, probe.Options{})
			if !res.OK {
				t.Fatalf("probe failed: %s: %s", res.Reason, res.Error)
			}
			if len(res.Tools) != tt.wantTools || res.Transport != tt.wantTransport || res.Era != tt.wantEra || res.ProtocolVersion != tt.wantVersion {
				t.Errorf("got %d tools over %s, era %s, version %s; want %d over %s, %s, %s",
					len(res.Tools), res.Transport, res.Era, res.ProtocolVersion, tt.wantTools, tt.wantTransport, tt.wantEra, tt.wantVersion)
			}
			if got := kit.Received("initialize"); got != tt.initializes {
				t.Errorf("the server received %d initialize requests, want %d", got, tt.initializes)
			}
			// Every legacy streamable HTTP session was ended with DELETE.
			if got := kit.Sessions(); got != 0 {
				t.Errorf("%d legacy sessions left open", got)
			}
		})
	}
}

func TestHTTPRunListChanged(t *testing.T) {
	for _, sse := range []bool{false, true} {
		_, url := kitServer(t, probetest.Config{Behavior: probetest.ListChanged}, sse)
		res := runProbe(t, probe.Target{URL: url}, 10*time.Second, probe.Options{})
		if !res.OK || res.ListChanged != 1 || !res.Relisted || !res.AnnouncesChanges || res.Pages != 1 {
			t.Errorf("SSE %v: ok %v (%s), %d list_changed notifications (want 1), relisted %v, announces %v, %d pages",
				sse, res.OK, res.Error, res.ListChanged, res.Relisted, res.AnnouncesChanges, res.Pages)
		}
	}
}

func TestHTTPRunFailures(t *testing.T) {
	tests := []struct {
		name      string
		cfg       probetest.Config
		sse       bool
		transport probe.Transport
		era       probe.Era
		headers   map[string]string
		timeout   time.Duration
		opts      probe.Options

		want       probe.Reason
		wantStatus int
		wantCh     *probe.Challenge // compared without ResourceMetadata's host
		wantErr    string
	}{
		{name: "401 without a token", cfg: probetest.Config{Behavior: probetest.Unauthorized401, Token: httpToken},
			want: probe.ReasonUnauthorized, wantStatus: 401,
			wantCh: &probe.Challenge{Scheme: "Bearer", Scope: "reports:read", ResourceMetadata: "/.well-known/oauth-protected-resource"}},
		{name: "401 with a wrong token", cfg: probetest.Config{Behavior: probetest.Unauthorized401, Token: httpToken}, headers: bearerHeader("wrong-token"),
			want: probe.ReasonUnauthorized, wantStatus: 401,
			wantCh: &probe.Challenge{Scheme: "Bearer", Scope: "reports:read", ResourceMetadata: "/.well-known/oauth-protected-resource"}},
		{name: "401 over SSE", cfg: probetest.Config{Behavior: probetest.Unauthorized401, Token: httpToken}, sse: true, transport: probe.TransportSSE,
			want: probe.ReasonUnauthorized, wantStatus: 401,
			wantCh: &probe.Challenge{Scheme: "Bearer", Scope: "reports:read", ResourceMetadata: "/.well-known/oauth-protected-resource"}},
		{name: "403 insufficient scope", cfg: probetest.Config{Behavior: probetest.InsufficientScope403}, headers: bearerHeader(httpToken),
			want: probe.ReasonForbidden, wantStatus: 403, wantErr: "insufficient scope",
			wantCh: &probe.Challenge{Scheme: "Bearer", Error: "insufficient_scope", Scope: "reports:write", Description: "the token lacks the reports:write scope"}},
		{name: "500", cfg: probetest.Config{Behavior: probetest.ServerError500},
			want: probe.ReasonHTTPStatus, wantStatus: 500, wantErr: "HTTP 500"},
		{name: "500 over SSE", cfg: probetest.Config{Behavior: probetest.ServerError500}, sse: true, transport: probe.TransportSSE,
			want: probe.ReasonHTTPStatus, wantStatus: 500, wantErr: "HTTP 500"},
		{name: "stalled tools/list", cfg: probetest.Config{Behavior: probetest.StallToolsList}, timeout: time.Second,
			want: probe.ReasonTimeout},
		{name: "stalled tools/list over SSE", cfg: probetest.Config{Behavior: probetest.StallToolsList}, sse: true, timeout: time.Second,
			want: probe.ReasonTimeout},
		{name: "unresponsive", cfg: probetest.Config{Behavior: probetest.Unresponsive}, timeout: time.Second,
			want: probe.ReasonTimeout},
		{name: "connection dropped", cfg: probetest.Config{Behavior: probetest.ExitAtOnce},
			want: probe.ReasonClosed},
		{name: "stuck cursor", cfg: probetest.Config{Behavior: probetest.StuckCursor, Era: probetest.EraModern},
			want: probe.ReasonPagination},
		// 100 pages of one tool of 60 KiB against a list cap of 256 KiB
		// (the default is 16 MiB, for 4 MiB pages): the list stops on the
		// fifth page instead of growing to 6 MB.
		{name: "huge pages", cfg: probetest.Config{Behavior: probetest.HugePages, Era: probetest.EraModern, DescriptionBytes: 60 << 10},
			opts: probe.Options{MaxMessageBytes: 64 << 10, MaxListBytes: 256 << 10},
			want: probe.ReasonTooLarge, wantErr: "tools/list: the tools listed so far take more than 262144 bytes, the probe's cap on the list of one server (page 5)"},
		{name: "SSE transport against a streamable server", cfg: probetest.Config{Era: probetest.EraModern}, transport: probe.TransportSSE,
			want: probe.ReasonHTTPStatus, wantStatus: 405},
		// The SSE fallback's GET finds no event stream: the server does not
		// speak HTTP+SSE, and its refusal of initialize is the answer.
		{name: "legacy pinned on a modern-only server", cfg: probetest.Config{Era: probetest.EraModern}, era: probe.EraLegacy,
			want: probe.ReasonRPCError, wantStatus: 400, wantErr: "initialize is not supported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, url := kitServer(t, tt.cfg, tt.sse)
			timeout := tt.timeout
			if timeout == 0 {
				timeout = 10 * time.Second
			}
			res := runProbe(t, probe.Target{URL: url, Transport: tt.transport, Era: tt.era, Headers: tt.headers}, timeout, tt.opts)
			if res.OK || res.Reason != tt.want || res.HTTPStatus != tt.wantStatus {
				t.Fatalf("ok %v, reason %q, status %d (%s); want %q, %d", res.OK, res.Reason, res.HTTPStatus, res.Error, tt.want, tt.wantStatus)
			}
			if tt.wantErr != "" && !strings.Contains(res.Error, tt.wantErr) {
				t.Errorf("error %q does not contain %q", res.Error, tt.wantErr)
			}
			if strings.Contains(res.Error, httpToken) || strings.Contains(res.Error, "wrong-token") {
				t.Errorf("error leaks a header value: %q", res.Error)
			}
			ch := res.Challenge
			if ch != nil && tt.wantCh != nil && strings.HasSuffix(ch.ResourceMetadata, tt.wantCh.ResourceMetadata) {
				c := *ch
				c.ResourceMetadata = tt.wantCh.ResourceMetadata
				ch = &c
			}
			if (ch == nil) != (tt.wantCh == nil) || (ch != nil && *ch != *tt.wantCh) {
				t.Errorf("challenge = %+v, want %+v", res.Challenge, tt.wantCh)
			}
		})
	}
}

// TestHTTPRunSlowBodyEndsAtDeadline: a server that drips its bodies one
// byte at a time gets reason timeout, at the deadline and not later.
func TestHTTPRunSlowBodyEndsAtDeadline(t *testing.T) {
	for _, sse := range []bool{false, true} {
		_, url := kitServer(t, probetest.Config{Behavior: probetest.SlowBody, SSEResponses: sse}, false)
		const deadline = 1500 * time.Millisecond
		start := time.Now()
		res := runProbe(t, probe.Target{URL: url, Transport: probe.TransportHTTP}, deadline, probe.Options{})
		elapsed := time.Since(start)
		if res.Reason != probe.ReasonTimeout {
			t.Errorf("SSE responses %v: reason %q (%s), want timeout", sse, res.Reason, res.Error)
		}
		// Not before the deadline (timers never fire early); the upper
		// bound is generous and still below the 20 s the drip would take to
		// finish (a body of ~100 bytes at 200 ms a byte).
		if elapsed < deadline || elapsed > probe.ReturnedBy(deadline) {
			t.Errorf("SSE responses %v: returned after %v, the deadline was %v", sse, elapsed, deadline)
		}
	}
}

// TestHTTPRunTranscript: the transcript shows statuses and messages, and
// no header value.
func TestHTTPRunTranscript(t *testing.T) {
	_, url := kitServer(t, probetest.Config{Behavior: probetest.TokenGated, Token: httpToken}, false)
	res := runProbe(t, probe.Target{URL: url, Headers: bearerHeader(httpToken)}, 10*time.Second, probe.Options{Transcript: true})
	if !res.OK {
		t.Fatalf("probe failed: %s", res.Error)
	}
	var notes []string
	for _, e := range res.Transcript {
		if strings.Contains(string(e.Message), httpToken) || strings.Contains(e.Note, httpToken) {
			t.Errorf("transcript entry holds the token: %+v", e)
		}
		if e.Note != "" {
			notes = append(notes, e.Note)
		}
	}
	joined := strings.Join(notes, "; ")
	for _, want := range []string{"HTTP 400", "HTTP 200, JSON", "HTTP 202", "DELETE session"} {
		if !strings.Contains(joined, want) {
			t.Errorf("transcript notes %q lack %q", joined, want)
		}
	}
}

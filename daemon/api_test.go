package daemon

import (
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/mcpwatch/mcpwatch/probe"
)

// A document that cannot be encoded is answered 500 with a log line, never
// 200 with an empty or cut body.
func TestJSONEncodeErrorIs500(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	d := &Daemon{log: zap.New(core)}
	rec := httptest.NewRecorder()
	d.writeJSON(rec, httptest.NewRequest("GET", "/api/v1/servers", nil), http.StatusOK,
		map[string]any{"name": "x", "ratio": math.NaN(), "inf": math.Inf(1)})
	if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), "could not be encoded") {
		t.Errorf("a NaN = %d %q, want 500 saying so", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); strings.Contains(ct, "json") {
		t.Errorf("the error is answered as %s", ct)
	}
	if n := logs.FilterMessage("cannot encode the JSON answer").FilterField(zap.String("path", "/api/v1/servers")).Len(); n != 1 {
		t.Errorf("%d log lines about the encoding error, want 1: %v", n, logs.All())
	}

	rec = httptest.NewRecorder()
	d.writeJSON(rec, httptest.NewRequest("GET", "/api/v1/servers", nil), http.StatusNotFound, map[string]string{"error": "none"})
	if rec.Code != http.StatusNotFound || rec.Header().Get("Content-Type") != "application/json" || !strings.Contains(rec.Body.String(), `"error": "none"`) {
		t.Errorf("a good document = %d %s %q", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
}

// A credential whose expiry is past year 9999 (a JWT with exp 1e308 before
// its time is clamped) makes the API answer 500 and log why, rather than
// 200 with an empty body for every server.
func TestAPIWithAnUnencodableTimeIs500(t *testing.T) {
	bubble(t, func(t *testing.T) {
		fake := newFakeProber()
		fake.set("far", func(s *fakeServer) {
			s.credentials = &probe.CredentialStatus{Expiries: []probe.CredentialExpiry{
				{Credential: "header:Authorization", Expiry: time.Date(20000, 1, 1, 0, 0, 0, 0, time.UTC)},
			}}
		})
		s := simulate(t, t.TempDir(), map[string]any{
			"defaults": map[string]any{"schedule": "@every 1h"},
			"servers":  map[string]any{"far": fakeServerConfig(nil)},
		}, fake, Options{})
		s.ready()
		for _, path := range []string{"/api/v1/servers", "/api/v1/servers/far"} {
			code, body := s.get(path)
			if code != http.StatusInternalServerError || strings.TrimSpace(body) == "" {
				t.Errorf("GET %s = %d %q, want 500 with a reason", path, code, body)
			}
		}
		if n := s.logs.FilterMessage("cannot encode the JSON answer").Len(); n != 2 {
			t.Errorf("%d log lines about the encoding errors, want 2", n)
		}
	})
}

// The pages show the protocol version a server speaks; its era is a
// detail (a tooltip, a note on the server page), not a word in the row
// that reads like a fault.
func TestPagesShowTheProtocolVersion(t *testing.T) {
	bubble(t, func(t *testing.T) {
		fake := newFakeProber()
		fake.set("old", func(s *fakeServer) { s.era = probe.EraLegacy })
		s := simulate(t, t.TempDir(), map[string]any{
			"defaults": map[string]any{"schedule": "@every 1h"},
			"servers":  map[string]any{"old": fakeServerConfig(nil)},
		}, fake, Options{})
		s.ready()
		_, page := s.get("/")
		row := page[strings.Index(page, "<tbody>"):]
		if !strings.Contains(row, `>2025-06-18</span>`) || !strings.Contains(row, `title="spoken with the initialize handshake`) {
			t.Errorf("the status page's row lacks the protocol version with the era in its tooltip:\n%s", row)
		}
		if strings.Contains(row, ">legacy") || strings.Contains(page, "Era / version") {
			t.Errorf("the status page shows the era as a word in the row:\n%s", row)
		}
		_, page = s.get("/server/old")
		if !strings.Contains(page, "<dt>Protocol version</dt>") || !strings.Contains(page, "(spoken with the initialize handshake") {
			t.Errorf("the server page lacks the protocol version and its era's note")
		}
		if st := s.status("old"); st.ProtocolVersion != "2025-06-18" || st.Era != probe.EraLegacy {
			t.Errorf("API: protocol_version %q era %q", st.ProtocolVersion, st.Era)
		}
	})
}

package daemon

import (
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
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

// apiList is /api/v1/servers as a client reads it.
type apiList struct {
	Servers []struct {
		Name string `json:"name"`
	} `json:"servers"`
	Next string `json:"next"`
}

func getAPIList(t *testing.T, d *Daemon, query string) (int, apiList, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	d.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/servers"+query, nil))
	var l apiList
	if rec.Code == http.StatusOK {
		if err := json.Unmarshal(rec.Body.Bytes(), &l); err != nil {
			t.Fatalf("GET /api/v1/servers%s: %v", query, err)
		}
	}
	return rec.Code, l, rec.Body.String()
}

// The server list pages by name: ?limit=N gives N servers and "next", the
// cursor ?after= takes; following it walks every server once, in the
// order of the whole list, which has no "next".
func TestAPIServersPages(t *testing.T) {
	d := newFleet(t, 25)
	code, all, _ := getAPIList(t, d, "")
	if code != http.StatusOK || len(all.Servers) != 25 || all.Next != "" {
		t.Fatalf("the whole list: %d, %d servers, next %q", code, len(all.Servers), all.Next)
	}
	var walked []string
	pages := 0
	for query := "?limit=10"; ; pages++ {
		code, page, body := getAPIList(t, d, query)
		if code != http.StatusOK {
			t.Fatalf("GET %s = %d: %s", query, code, body)
		}
		for _, s := range page.Servers {
			walked = append(walked, s.Name)
		}
		if page.Next == "" {
			if len(page.Servers) != 5 {
				t.Errorf("last page has %d servers, want 5", len(page.Servers))
			}
			break
		}
		if len(page.Servers) != 10 || page.Next != page.Servers[9].Name {
			t.Fatalf("page %s: %d servers, next %q", query, len(page.Servers), page.Next)
		}
		query = "?limit=10&after=" + url.QueryEscape(page.Next)
	}
	if pages != 2 {
		t.Errorf("%d full pages, want 2", pages)
	}
	for i, s := range all.Servers {
		if i >= len(walked) || walked[i] != s.Name {
			t.Fatalf("the pages list %v, the whole list has %s at %d", walked, s.Name, i)
		}
	}
	if len(walked) != len(all.Servers) {
		t.Errorf("the pages list %d servers, the whole list %d", len(walked), len(all.Servers))
	}

	// A cursor whose server was removed since still goes on after it.
	gone := all.Servers[4].Name + "-removed"
	if _, page, _ := getAPIList(t, d, "?limit=2&after="+url.QueryEscape(gone)); len(page.Servers) != 2 || page.Servers[0].Name != all.Servers[5].Name {
		t.Errorf("after a removed name: %+v, want from %s", page, all.Servers[5].Name)
	}
	// Past the end: an empty list, no next.
	if _, page, _ := getAPIList(t, d, "?after="+url.QueryEscape(all.Servers[24].Name)); len(page.Servers) != 0 || page.Next != "" {
		t.Errorf("after the last: %+v", page)
	}

	for _, bad := range []string{"?limit=0", "?limit=-3", "?limit=ten", "?limit=10001"} {
		code, _, body := getAPIList(t, d, bad)
		if code != http.StatusBadRequest || !strings.Contains(body, "want a number of servers from 1 to 10000") {
			t.Errorf("GET /api/v1/servers%s = %d: %s", bad, code, body)
		}
	}
}

// BenchmarkAPIServers10000 answers /api/v1/servers for 10,000 servers:
// the whole list, and one page of 1,000 from the middle (what a client
// paging through 100,000 servers asks for, a hundred times).
func BenchmarkAPIServers10000(b *testing.B) {
	d := newFleet(b, 10000)
	middle := d.serverNames()[5000]
	for _, q := range []string{"", "?limit=1000&after=" + url.QueryEscape(middle)} {
		b.Run("query="+q, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				rec := httptest.NewRecorder()
				d.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/servers"+q, nil))
				if rec.Code != http.StatusOK {
					b.Fatalf("GET %s = %d", q, rec.Code)
				}
				b.SetBytes(int64(rec.Body.Len()))
			}
		})
	}
}

package issuer

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/probe"
)

// testService is a service whose base is srv, its token in the path (the
// strictest case for leaks), answering what answer says.
func testService(t *testing.T, srv *httptest.Server) *Service {
	t.Helper()
	s, err := parseService([]byte(fmt.Sprintf(`{
	  "id": "test", "service": "Test", "docs": "https://example.com/docs", "cost": "free", "chosen": "a test",
	  "credentials": [{"role": "token", "formats": ["tst_[a-z0-9]{20}"], "names": ["TEST_TOKEN"]}],
	  "base": {"url": %q},
	  "request": {"method": "GET", "path": "/tokens/{token}", "headers": {"Authorization": "Bearer {token}"}},
	  "answers": [{"status": [200], "verdict": "accepted"}, {"status": [401], "verdict": "rejected"}],
	  "message": ["message"],
	  "expiry": {"json": "expires", "layout": "rfc3339"}
	}`, srv.URL)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const testToken = "tst_0123456789abcdefghij"

func testTie(s *Service, token string) Tie {
	return Tie{Service: s, Credential: "env:TEST_TOKEN", Base: s.Base.URL, values: map[string]string{"token": token}}
}

// One credential is asked about once an interval, whatever the servers
// and probes that use it; a due check under way is waited for, not made
// twice.
func TestCheckerSharesAndSpaces(t *testing.T) {
	var requests atomic.Int64
	release := make(chan struct{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		<-release
		fmt.Fprint(w, `{"expires":"2027-01-01T00:00:00Z"}`)
	}))
	defer srv.Close()
	s := testService(t, srv)
	now := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	c := NewChecker(srv.Client(), 15*time.Minute, "test")
	c.now = func() time.Time { return now }

	var wg sync.WaitGroup
	answers := make([]probe.IssuerCheck, 5)
	for i := range answers {
		tie := testTie(s, testToken)
		tie.Credential = fmt.Sprintf("env:TOKEN_%d", i)
		wg.Go(func() { answers[i] = c.Check(context.Background(), tie) })
	}
	for requests.Load() == 0 {
		time.Sleep(time.Millisecond) // the first check reached the service; the others wait on it
	}
	close(release)
	wg.Wait()
	if n := requests.Load(); n != 1 {
		t.Fatalf("%d requests for 5 servers of one credential, want 1", n)
	}
	for i, a := range answers {
		if a.Verdict != probe.IssuerAccepted || a.Credential != fmt.Sprintf("env:TOKEN_%d", i) || a.Expiry == nil {
			t.Errorf("server %d: %+v, want accepted under its own name, with the expiry", i, a)
		}
	}
	now = now.Add(14 * time.Minute)
	c.Check(context.Background(), testTie(s, testToken))
	if n := requests.Load(); n != 1 {
		t.Errorf("asked again within the interval: %d requests", n)
	}
	now = now.Add(2 * time.Minute)
	c.Check(context.Background(), testTie(s, testToken))
	if n := requests.Load(); n != 2 {
		t.Errorf("not asked again after the interval: %d requests", n)
	}
	c.Check(context.Background(), testTie(s, "tst_otherotherotherothe"))
	if n := requests.Load(); n != 3 {
		t.Errorf("a rotated credential is another one, asked at once: %d requests", n)
	}
}

// A service that asks to slow down is not asked before it said, and its
// last word on the credential stands meanwhile; an unreachable service
// is asked again sooner than the interval, and is never a rejection.
func TestCheckerBacksOff(t *testing.T) {
	var status atomic.Int64
	status.Store(200)
	var requests atomic.Int64
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		switch st := int(status.Load()); st {
		case 429:
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(429)
		default:
			w.WriteHeader(st)
			fmt.Fprint(w, `{"message":"as it says"}`)
		}
	}))
	defer srv.Close()
	s := testService(t, srv)
	now := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	c := NewChecker(srv.Client(), 15*time.Minute, "test")
	c.now = func() time.Time { return now }
	tie := testTie(s, testToken)

	if a := c.Check(context.Background(), tie); a.Verdict != probe.IssuerAccepted {
		t.Fatalf("first: %+v", a)
	}
	status.Store(429)
	now = now.Add(16 * time.Minute)
	a := c.Check(context.Background(), tie)
	if a.Verdict != probe.IssuerAccepted || !strings.Contains(a.Note, "slow down") {
		t.Errorf("limited: %+v, want the last answer standing, with a note", a)
	}
	n := requests.Load()
	now = now.Add(59 * time.Minute)
	c.Check(context.Background(), tie)
	if requests.Load() != n {
		t.Errorf("asked again before its Retry-After of an hour")
	}
	status.Store(503)
	now = now.Add(2 * time.Minute)
	if a := c.Check(context.Background(), tie); a.Verdict != probe.IssuerUnreachable {
		t.Errorf("503: %+v, want unreachable", a)
	}
	n = requests.Load()
	now = now.Add(61 * time.Second)
	c.Check(context.Background(), tie)
	if requests.Load() != n+1 {
		t.Errorf("an unreachable service is not asked again within a minute")
	}
}

// Nothing kept of a check names the credential: not an answer that
// echoes it, not a cut of one, not the error of a request whose URL holds
// it.
func TestCheckKeepsNoSecret(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(401)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"message":"` + strings.Repeat("x", 180) + r.URL.Path + ` is not a token we know: ` + r.Header.Get("Authorization") + `"}`)) //nolint:gosec // G705: a test server echoing the credential on purpose

	}))
	s := testService(t, srv)
	tie := testTie(s, testToken)
	a := Check(context.Background(), srv.Client(), tie, "test")
	if a.Verdict != probe.IssuerRejected {
		t.Fatalf("%+v", a)
	}
	for i := 0; i+8 <= len(testToken); i++ {
		if frag := testToken[i : i+8]; strings.Contains(a.Quote, frag) {
			t.Errorf("the quote keeps %q of the token: %q", frag, a.Quote)
		}
	}
	srv.Close()
	a = Check(context.Background(), srv.Client(), tie, "test")
	if a.Verdict != probe.IssuerUnreachable || strings.Contains(a.Quote, "tst_") || strings.Contains(a.Quote, "/tokens/") {
		t.Errorf("a closed service: %+v, want unreachable without the URL", a)
	}
}

// A redirect is an answer: the credential goes nowhere it points.
func TestCheckFollowsNoRedirect(t *testing.T) {
	var elsewhere atomic.Int64
	other := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { elsewhere.Add(1) }))
	defer other.Close()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/steal", http.StatusFound)
	}))
	defer srv.Close()
	client := srv.Client()
	client.CheckRedirect = NewClient().CheckRedirect
	a := Check(context.Background(), client, testTie(testService(t, srv), testToken), "test")
	if a.Verdict != probe.IssuerUnknown || elsewhere.Load() != 0 {
		t.Errorf("%+v, %d requests elsewhere; want unknown, none", a, elsewhere.Load())
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	for h, want := range map[[2]string]time.Duration{
		{"Retry-After", "120"}: 2 * time.Minute,
		{"Retry-After", now.Add(time.Hour).UTC().Format(http.TimeFormat)}: time.Hour,
		{"X-RateLimit-Reset", "1800000600"}:                               10 * time.Minute,
		{"X-RateLimit-Reset", "30"}:                                       30 * time.Second,
	} {
		got, ok := retryAfter(http.Header{http.CanonicalHeaderKey(h[0]): {h[1]}}, now)
		if !ok || got != want {
			t.Errorf("%s: %s = %s, %v; want %s", h[0], h[1], got, ok, want)
		}
	}
}

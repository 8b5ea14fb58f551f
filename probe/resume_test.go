package probe_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/probe"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// A legacy server that drops each first response stream after its priming
// event: every request (initialize, tools/list, tools/call) is resumed
// with a GET carrying Last-Event-ID, no sooner than the server's retry:
// interval, and the probe and its call succeed, each request sent once.
func TestLegacyStreamDroppedAfterFirstEventIsResumed(t *testing.T) {
	kit, url := kitServer(t, probetest.Config{Behavior: probetest.DropStream, Tools: []probetest.Tool{probetest.EchoTool()}, RetryMS: 80}, false)
	target := probe.Target{URL: url, Transport: probe.TransportHTTP, Era: probe.EraLegacy}
	res, call, _ := callOnce(t, target, "echo", `{"message":"resumed"}`)
	if res.Era != probe.EraLegacy || len(res.Tools) != 1 {
		t.Errorf("probe: era %s, %d tools", res.Era, len(res.Tools))
	}
	if !call.Answered || call.Text() != "Echo: resumed" {
		t.Errorf("call: %+v", call)
	}
	resumes := kit.Resumes()
	if len(resumes) != 3 {
		t.Fatalf("resumes = %+v, want initialize, tools/list and tools/call resumed", resumes)
	}
	for _, r := range resumes {
		if !strings.HasSuffix(r.LastEventID, "/1") || r.After < 80*time.Millisecond {
			t.Errorf("resume %+v: want the priming event's id, after the 80 ms retry interval", r)
		}
	}
	for _, m := range []string{"initialize", "tools/list", "tools/call"} {
		if n := kit.Received(m); n != 1 {
			t.Errorf("%s sent %d times, want once (resumed, not sent again)", m, n)
		}
	}
}

// The same through the transcript path (every page through call), and the
// transcript shows the resumption.
func TestResumptionInTheTranscript(t *testing.T) {
	_, url := kitServer(t, probetest.Config{Behavior: probetest.DropStream, RetryMS: 1}, false)
	res := runProbe(t, probe.Target{URL: url, Transport: probe.TransportHTTP, Era: probe.EraLegacy}, 10*time.Second, probe.Options{Transcript: true})
	if !res.OK {
		t.Fatalf("probe failed: %s: %s", res.Reason, res.Error)
	}
	var notes []string
	for _, e := range res.Transcript {
		notes = append(notes, e.Note)
	}
	if joined := strings.Join(notes, "; "); strings.Count(joined, "GET resume after event stream") != 2 {
		t.Errorf("transcript notes %q: want two resumptions (initialize, tools/list)", joined)
	}
}

// A modern stream has no resumption: the request is sent again with a new
// id, and the probe succeeds; a tools/call is never sent twice.
func TestModernStreamDroppedIsSentAgain(t *testing.T) {
	kit, url := kitServer(t, probetest.Config{Behavior: probetest.DropStream, Era: probetest.EraModern, Tools: []probetest.Tool{probetest.EchoTool()}}, false)
	res, call, _ := callOnce(t, probe.Target{URL: url, Transport: probe.TransportHTTP}, "echo", `{"message":"once"}`)
	if res.Era != probe.EraModern || len(res.Tools) != 1 {
		t.Errorf("probe: era %s, %d tools", res.Era, len(res.Tools))
	}
	if len(kit.Resumes()) != 0 {
		t.Errorf("a modern stream was resumed: %+v", kit.Resumes())
	}
	if n := kit.Received("tools/list"); n != 2 {
		t.Errorf("tools/list sent %d times, want 2 (dropped, then sent again)", n)
	}
	if call.Answered || call.Reason != probe.ReasonClosed || kit.Received("tools/call") != 1 {
		t.Errorf("tools/call: %+v, sent %d times; want one send, failed closed", call, kit.Received("tools/call"))
	}
}

// A retry: interval longer than what is left of the deadline is not waited
// for: the probe fails at once, saying why.
func TestResumptionWithinTheDeadline(t *testing.T) {
	_, url := kitServer(t, probetest.Config{Behavior: probetest.DropStream, RetryMS: 600_000}, false)
	start := time.Now()
	res := runProbe(t, probe.Target{URL: url, Transport: probe.TransportHTTP, Era: probe.EraLegacy}, 5*time.Second, probe.Options{})
	if res.OK || res.Reason != probe.ReasonClosed || !strings.Contains(res.Error, "no time left before the deadline to wait the server's retry interval of 10m0s") {
		t.Errorf("probe: %s: %s", res.Reason, res.Error)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("returned after %v: it waited for the interval", d)
	}
}

// A server whose every stream drops is resumed a bounded number of times,
// each time from the last event id it gave, then the probe fails, saying so.
func TestResumptionIsBounded(t *testing.T) {
	var mu sync.Mutex
	var lastIDs []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Mcp-Session-Id", "session-1")
		switch r.Method {
		case http.MethodPost:
			_, _ = io.Copy(io.Discard, r.Body)
			_, _ = io.WriteString(w, "id: post\nretry: 1\ndata: \n\n")
			_ = http.NewResponseController(w).Flush()
			panic(http.ErrAbortHandler)
		case http.MethodGet:
			mu.Lock()
			lastIDs = append(lastIDs, r.Header.Get("Last-Event-ID"))
			n := len(lastIDs)
			mu.Unlock()
			_, _ = fmt.Fprintf(w, "id: get%d\ndata: \n\n", n) // and the stream ends
		}
	}))
	defer srv.Close()
	res := runProbe(t, probe.Target{URL: srv.URL + "/mcp", Transport: probe.TransportHTTP, Era: probe.EraLegacy}, 10*time.Second, probe.Options{})
	if res.OK || res.Reason != probe.ReasonClosed || !strings.Contains(res.Error, "the event stream ended before the response (resumed 5 times already)") {
		t.Errorf("probe: %s: %s", res.Reason, res.Error)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"post", "get1", "get2", "get3", "get4"}; !slices.Equal(lastIDs, want) {
		t.Errorf("Last-Event-ID of the resuming GETs = %q, want %q", lastIDs, want)
	}
}

package metrics_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/status"
	"github.com/mcpwatch/mcpwatch/lockstore"
	"github.com/mcpwatch/mcpwatch/metrics"
	"github.com/mcpwatch/mcpwatch/probe"
)

// fleet is n servers of k locked tools each: most OK, one in 20 missing two
// tools, one in 20 failing with a timeout.
func fleet(n, k int) []status.Server {
	statuses := make([]status.Server, n)
	for i := range statuses {
		names := make([]string, k)
		for j := range names {
			names[j] = fmt.Sprintf("tool_%02d", j)
		}
		ok := &probe.Result{
			OK: true, Transport: probe.TransportStdio, Era: probe.EraLegacy,
			ProtocolVersion: "2025-06-18", ServerName: fmt.Sprintf("server-%04d", i), ServerVersion: "1.2.3",
			Tools: tools(names...), Pages: 1, Started: base,
			Timings: probe.Timings{Connect: ms(30), Handshake: ms(20), Pages: []time.Duration{ms(10)}, Total: ms(60)},
		}
		st := status.Server{
			Name: fmt.Sprintf("server-%04d", i), Transport: probe.TransportStdio, Interval: 30 * time.Second,
			Last: ok, LastOK: ok, LastSuccess: base,
			Diff:   lockstore.Diff{Locked: true, Expected: names},
			Probes: 1000, Failures: map[probe.Reason]uint64{probe.ReasonTimeout: 3},
		}
		switch i % 20 {
		case 1:
			st.Diff.Missing = names[:2]
			st.Last = &probe.Result{OK: true, Tools: ok.Tools[2:], Started: base, Timings: ok.Timings}
		case 2:
			st.Last = &probe.Result{OK: false, Reason: probe.ReasonTimeout, Started: base, Timings: probe.Timings{Total: 10 * time.Second}}
		}
		statuses[i] = st
	}
	return statuses
}

// BenchmarkScrape1000x25 is one /metrics scrape of 1,000 servers with 25
// locked tools each, through the Handler the daemon serves: the statuses
// taken from the status.Source, written as text, then mcpwatch's own registry.
func BenchmarkScrape1000x25(b *testing.B) {
	benchmarkScrape(b, "")
}

// BenchmarkScrape1000x25Gzip is the same scrape as Prometheus asks for it.
func BenchmarkScrape1000x25Gzip(b *testing.B) {
	benchmarkScrape(b, "gzip")
}

func benchmarkScrape(b *testing.B, acceptEncoding string) {
	h, _, _ := newHandler(newSource(fleet(1000, 25)...))
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	var body int
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("scrape: %d %s", rec.Code, rec.Body.String())
		}
		body = rec.Body.Len()
	}
	b.ReportMetric(float64(body), "body-bytes/op")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	b.ReportMetric(float64(strings.Count(rec.Body.String(), "\nmcpwatch_")), "series/op")
	b.ReportAllocs()
}

// BenchmarkWriteText1000x25 is the writer alone, reused as the Handler
// reuses it.
func BenchmarkWriteText1000x25(b *testing.B) {
	statuses := fleet(1000, 25)
	tw := metrics.NewTextWriter()
	for b.Loop() {
		if err := tw.WriteStatuses(io.Discard, statuses); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
}

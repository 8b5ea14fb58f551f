package daemon

import (
	"compress/gzip"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/mcpwatch/mcpwatch/internal/verdict"
	"github.com/mcpwatch/mcpwatch/metrics"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// rawGet fetches path without the transport's transparent gzip, sending
// acceptEncoding as given, and returns the response with its body
// gunzipped when the response says gzip.
func (h *harness) rawGet(path, acceptEncoding string) (*http.Response, string) {
	h.t.Helper()
	req, err := http.NewRequest(http.MethodGet, h.http.URL+path, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		h.t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	var body io.Reader = resp.Body
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			h.t.Fatalf("GET %s: gzip: %v", path, err)
		}
		body = zr
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		h.t.Fatalf("GET %s: %v", path, err)
	}
	return resp, string(raw)
}

// parseExposition parses a scrape as Prometheus does, and fails the test
// unless every family is announced exactly once and passes the naming lint
// of promtool check metrics.
func parseExposition(t *testing.T, body string) map[string]*dto.MetricFamily {
	t.Helper()
	types := map[string]int{}
	for line := range strings.SplitSeq(body, "\n") {
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name, _, _ := strings.Cut(rest, " ")
			types[name]++
		}
	}
	for name, n := range types {
		if n != 1 {
			t.Errorf("family %s announced %d times", name, n)
		}
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parse the scrape: %v", err)
	}
	list := make([]*dto.MetricFamily, 0, len(mfs))
	for _, mf := range mfs {
		list = append(list, mf)
	}
	problems, err := promlint.NewWithMetricFamilies(list).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
	return mfs
}

// checkFleetOperations checks the fleet's histogram of requests, /metrics'
// default: the servers' tools/list requests counted over stdio, by method,
// outcome and transport only.
func checkFleetOperations(t *testing.T, mf *dto.MetricFamily) {
	t.Helper()
	if mf == nil || mf.GetType() != dto.MetricType_HISTOGRAM {
		t.Fatalf("%s missing, or not a histogram: %v", metrics.OperationDurationName, mf)
	}
	var lists uint64
	for _, m := range mf.GetMetric() {
		labels := map[string]string{}
		for _, lp := range m.GetLabel() {
			labels[lp.GetName()] = lp.GetValue()
		}
		for _, name := range []string{"server", "gen_ai_tool_name", "mcp_protocol_version"} {
			if _, ok := labels[name]; ok {
				t.Errorf("a series of the fleet's histogram labelled %s: %v", name, labels)
			}
		}
		if labels["network_transport"] != "pipe" {
			t.Errorf("a series labelled %v: want network_transport pipe", labels)
		}
		if labels["mcp_method_name"] == "tools/list" && labels["error_type"] == "" {
			lists += m.GetHistogram().GetSampleCount()
		}
	}
	if lists < 2 {
		t.Errorf("%d answered tools/list counted, want at least one a server", lists)
	}
}

// checkOperations checks the histogram of requests of a scrape: each
// server probed over stdio has its tools/list requests counted, answered,
// with OpenTelemetry's buckets, and no series is of another server.
func checkOperations(t *testing.T, mf *dto.MetricFamily, servers ...string) {
	t.Helper()
	if mf == nil || mf.GetType() != dto.MetricType_HISTOGRAM {
		t.Fatalf("%s missing, or not a histogram: %v", metrics.OperationDurationName, mf)
	}
	lists := map[string]uint64{}
	for _, m := range mf.GetMetric() {
		labels := map[string]string{}
		for _, lp := range m.GetLabel() {
			labels[lp.GetName()] = lp.GetValue()
		}
		if !slices.Contains(servers, labels["server"]) {
			t.Errorf("a series of server %q", labels["server"])
		}
		h := m.GetHistogram()
		var bounds []float64
		for _, b := range h.GetBucket() {
			bounds = append(bounds, b.GetUpperBound())
		}
		if want := append(slices.Clone(metrics.OperationBuckets), math.Inf(1)); !slices.Equal(bounds, want) {
			t.Errorf("%v: buckets %v, want %v", labels, bounds, want)
		}
		if labels["network_transport"] != "pipe" || labels["mcp_protocol_version"] == "" {
			t.Errorf("a series labelled %v: want network_transport pipe and the protocol version", labels)
		}
		if labels["mcp_method_name"] == "tools/list" && labels["error_type"] == "" && h.GetSampleSum() > 0 {
			lists[labels["server"]] += h.GetSampleCount()
		}
	}
	for _, s := range servers {
		if lists[s] == 0 {
			t.Errorf("no answered tools/list of %q counted: %v", s, lists)
		}
	}
}

func serverLabels(mf *dto.MetricFamily) []string {
	var out []string
	for _, m := range mf.GetMetric() {
		for _, lp := range m.GetLabel() {
			if lp.GetName() == "server" {
				out = append(out, lp.GetValue())
			}
		}
	}
	return out
}

// /metrics is one exposition: every server's families, then mcpwatch's own,
// each once, gzipped when asked; /probe has one server's, and no others.
func TestMetricsEndpoint(t *testing.T) {
	const quoted = `report "two" \ b`
	dir := t.TempDir()
	writeFile(t, dir, "mcp-tools.lock.json", reportLock)
	writeFile(t, dir, "token", "example-token\n")
	server := stdioServer(probetest.Config{Behavior: probetest.TokenGated}, map[string]string{"REPORT_API_TOKEN": "${file:token}"})
	path := writeConfig(t, dir, map[string]any{
		"defaults": map[string]any{"schedule": "@every 1h"},
		"servers":  map[string]any{"report": server, quoted: server},
	})
	h := start(t, path, Options{})
	h.waitState("report", verdict.StateOK)
	waitFor(t, "readiness after the first round", h.d.Ready)

	for _, encoding := range []string{"gzip", ""} {
		t.Run("accept "+encoding, func(t *testing.T) {
			resp, body := h.rawGet("/metrics", encoding)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("/metrics = %d: %s", resp.StatusCode, body)
			}
			if got := resp.Header.Get("Content-Encoding"); got != encoding {
				t.Errorf("Content-Encoding %q, want %q", got, encoding)
			}
			if got := resp.Header.Get("Content-Type"); !strings.HasPrefix(got, "text/plain; version=0.0.4; charset=utf-8") {
				t.Errorf("Content-Type %q", got)
			}
			mfs := parseExposition(t, body)
			for _, name := range []string{
				"mcpwatch_servers", "mcpwatch_probe_success", "mcpwatch_tool_missing", "mcpwatch_probes_total",
				"mcpwatch_build_info", "mcpwatch_config_last_reload_successful", "mcpwatch_probes_in_flight",
				"mcpwatch_schedule_lag_seconds", "go_goroutines", "process_cpu_seconds_total",
			} {
				if mfs[name] == nil {
					t.Errorf("/metrics lacks %s", name)
				}
			}
			// Both servers' probes passed: no failure reason has a series yet.
			if mf := mfs["mcpwatch_probe_failures_total"]; mf != nil {
				t.Errorf("/metrics has %d mcpwatch_probe_failures_total series before any probe failed", len(mf.GetMetric()))
			}
			if got := mfs["mcpwatch_servers"].GetMetric()[0].GetGauge().GetValue(); got != 2 {
				t.Errorf("mcpwatch_servers %v, want 2", got)
			}
			if got := strings.Join(serverLabels(mfs["mcpwatch_probe_success"]), "|"); got != "report|"+quoted {
				t.Errorf("probe_success for servers %q, want both, the quoted name intact", got)
			}
			checkFleetOperations(t, mfs[metrics.OperationDurationName])
		})
	}

	t.Run("probe", func(t *testing.T) {
		resp, body := h.rawGet("/probe?server=report", "gzip")
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Encoding") != "gzip" {
			t.Fatalf("/probe = %d, Content-Encoding %q: %s", resp.StatusCode, resp.Header.Get("Content-Encoding"), body)
		}
		mfs := parseExposition(t, body)
		for name, mf := range mfs {
			if !strings.HasPrefix(name, "mcpwatch_") && name != metrics.OperationDurationName || name == "mcpwatch_servers" {
				t.Errorf("/probe serves %s: only the server's own series belong", name)
			}
			got := serverLabels(mf)
			if len(got) != len(mf.GetMetric()) || slices.ContainsFunc(got, func(s string) bool { return s != "report" }) {
				t.Errorf("%s: series of servers %q, want only report", name, got)
			}
		}
		if mfs["mcpwatch_tool_missing"] == nil {
			t.Error("/probe lacks mcpwatch_tool_missing")
		}
		checkOperations(t, mfs[metrics.OperationDurationName], "report")
	})
}

// With PerServerHistograms, /metrics has the request histogram per server,
// as /probe has it, and no fleet's histogram beside it.
func TestMetricsPerServerHistograms(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "mcp-tools.lock.json", reportLock)
	writeFile(t, dir, "token", "example-token\n")
	server := stdioServer(probetest.Config{Behavior: probetest.TokenGated}, map[string]string{"REPORT_API_TOKEN": "${file:token}"})
	path := writeConfig(t, dir, map[string]any{
		"defaults": map[string]any{"schedule": "@every 1h"},
		"servers":  map[string]any{"report": server},
	})
	h := start(t, path, Options{PerServerHistograms: true})
	h.waitState("report", verdict.StateOK)
	waitFor(t, "readiness after the first round", h.d.Ready)
	resp, body := h.rawGet("/metrics", "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics = %d: %s", resp.StatusCode, body)
	}
	checkOperations(t, parseExposition(t, body)[metrics.OperationDurationName], "report")
	if n := strings.Count(body, "# TYPE "+metrics.OperationDurationName+" "); n != 1 {
		t.Errorf("%d families %s, want 1", n, metrics.OperationDurationName)
	}
}

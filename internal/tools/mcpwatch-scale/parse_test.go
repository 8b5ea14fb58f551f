package main

import (
	"math"
	"os"
	"strings"
	"testing"
	"time"
)

func TestParseProcStat(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		want    procStat
		wantErr bool
	}{
		{
			name: "plain command",
			line: "42 (mcpwatch) S 1 42 42 0 -1 4194560 100 0 0 0 250 130 40 7 20 0 12 0 100 0 0",
			want: procStat{state: 'S', ppid: 1, pgrp: 42, cpu: 3800 * time.Millisecond, childCPU: 470 * time.Millisecond},
		},
		{
			name: "command with spaces and parentheses",
			line: "7 (a (b) c) Z 3 7 7 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 1 0 0",
			want: procStat{state: 'Z', ppid: 3, pgrp: 7, cpu: 30 * time.Millisecond},
		},
		{name: "no command", line: "7 Z 3", wantErr: true},
		{name: "cut short", line: "7 (x) S 1 2 3", wantErr: true},
		{name: "no children's times", line: "7 (x) S 1 7 7 0 -1 0 0 0 0 0 1 2", wantErr: true},
		{name: "not a number", line: "7 (x) S one 7 7 0 -1 0 0 0 0 0 1 2 0 0", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseProcStat([]byte(tt.line))
			if (err != nil) != tt.wantErr {
				t.Fatalf("error = %v, want error %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestReadOwnProcess(t *testing.T) {
	st, err := readProcStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if st.ppid != os.Getppid() {
		t.Errorf("ppid %d, want %d", st.ppid, os.Getppid())
	}
	mem, err := readMemStatus(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if mem.rss <= 0 || mem.peakRSS < mem.rss {
		t.Errorf("rss %d, peak %d: want 0 < rss <= peak", mem.rss, mem.peakRSS)
	}
	table := readProcessTable()
	if _, ok := table[os.Getpid()]; !ok {
		t.Errorf("the process table lacks this process")
	}
}

func TestParseMemStatus(t *testing.T) {
	got, err := parseMemStatus([]byte("Name:\tx\nVmHWM:\t  2048 kB\nVmRSS:\t  1024 kB\nThreads:\t3\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got.rss != 1<<20 || got.peakRSS != 2<<20 {
		t.Errorf("got %+v, want rss 1 MiB, peak 2 MiB", got)
	}
	if _, err := parseMemStatus([]byte("Name:\tx\nVmRSS:\t1 kB\n")); err == nil {
		t.Error("a status without VmHWM parsed")
	}
}

func TestDescendants(t *testing.T) {
	table := processTable{
		1:  {ppid: 0, state: 'S'},
		10: {ppid: 1, state: 'S'}, // mcpwatch
		11: {ppid: 10, state: 'S'},
		12: {ppid: 10, state: 'Z'},
		13: {ppid: 11, state: 'S'}, // a grandchild
		20: {ppid: 1, state: 'S'},
	}
	all, zombies := table.descendants(10)
	if all != 3 || zombies != 1 {
		t.Errorf("descendants(10) = %d, %d zombies; want 3, 1", all, zombies)
	}
}

const sampleExposition = `# HELP mcpwatch_probes_total Probes.
# TYPE mcpwatch_probes_total counter
mcpwatch_probes_total{server="a"} 10
mcpwatch_probes_total{server="b"} 0
mcpwatch_probes_total{server="c"} 5
# HELP mcpwatch_probe_failures_total Failures.
# TYPE mcpwatch_probe_failures_total counter
mcpwatch_probe_failures_total{reason="timeout",server="a"} 2
mcpwatch_probe_failures_total{reason="timeout",server="c"} 1
mcpwatch_probe_failures_total{reason="unauthorized",server="c"} 4
# HELP mcpwatch_probes_skipped_total Skipped.
# TYPE mcpwatch_probes_skipped_total counter
mcpwatch_probes_skipped_total{reason="late"} 0
mcpwatch_probes_skipped_total{reason="still_queued"} 7
# HELP mcpwatch_schedule_lag_seconds Lag.
# TYPE mcpwatch_schedule_lag_seconds histogram
mcpwatch_schedule_lag_seconds_bucket{le="0.01"} 50
mcpwatch_schedule_lag_seconds_bucket{le="0.1"} 90
mcpwatch_schedule_lag_seconds_bucket{le="1"} 100
mcpwatch_schedule_lag_seconds_bucket{le="+Inf"} 100
mcpwatch_schedule_lag_seconds_sum 3
mcpwatch_schedule_lag_seconds_count 100
# HELP go_goroutines Goroutines.
# TYPE go_goroutines gauge
go_goroutines 17
`

func TestParseExposition(t *testing.T) {
	e, err := parseExposition(strings.NewReader(sampleExposition))
	if err != nil {
		t.Fatal(err)
	}
	if e.probes != 15 || e.servers != 3 || e.probedServers != 2 {
		t.Errorf("probes %v over %d servers (%d probed), want 15 over 3 (2)", e.probes, e.servers, e.probedServers)
	}
	if e.failures["timeout"] != 3 || e.failures["unauthorized"] != 4 {
		t.Errorf("failures %v", e.failures)
	}
	if e.skipped["still_queued"] != 7 || len(e.skipped) != 2 {
		t.Errorf("skipped %v", e.skipped)
	}
	if e.goroutines != 17 || e.lag.count != 100 || len(e.lag.bounds) != 4 {
		t.Errorf("goroutines %v, lag %+v", e.goroutines, e.lag)
	}
	if _, err := parseExposition(strings.NewReader("go_goroutines 3\n")); err == nil {
		t.Error("an exposition without the lag histogram parsed")
	}
}

func TestHistogramQuantile(t *testing.T) {
	h := histogram{
		bounds: []float64{0.01, 0.1, 1, math.Inf(1)},
		counts: []float64{50, 90, 100, 100},
		count:  100,
	}
	tests := []struct {
		q        float64
		want     float64
		overflow bool
	}{
		{0.5, 0.01, false},
		{0.25, 0.005, false},
		{0.7, 0.01 + 0.09*0.5, false},
		{0.99, 0.1 + 0.9*0.9, false},
	}
	for _, tt := range tests {
		got, overflow := h.quantile(tt.q)
		if math.Abs(got-tt.want) > 1e-9 || overflow != tt.overflow {
			t.Errorf("quantile(%v) = %v, %v; want %v, %v", tt.q, got, overflow, tt.want, tt.overflow)
		}
	}
	if got := h.maxBound(); got != 1 {
		t.Errorf("maxBound = %v, want 1", got)
	}

	later := histogram{bounds: h.bounds, counts: []float64{50, 90, 100, 110}, count: 110}
	d := later.minus(h)
	if d.count != 10 {
		t.Fatalf("difference has %v observations, want 10", d.count)
	}
	if got, overflow := d.quantile(0.5); !overflow || got != 1 {
		t.Errorf("all new observations over the last bound: quantile = %v, %v; want 1, overflow", got, overflow)
	}
	if got, _ := (histogram{bounds: h.bounds, counts: make([]float64, 4)}).quantile(0.5); !math.IsNaN(got) {
		t.Errorf("empty histogram quantile = %v, want NaN", got)
	}
}

func TestPhaseShift(t *testing.T) {
	tests := []struct {
		between, interval, want time.Duration
	}{
		{60 * time.Second, 15 * time.Second, 0},
		{61 * time.Second, 15 * time.Second, time.Second},
		{59 * time.Second, 15 * time.Second, -time.Second},
		{1500 * time.Millisecond, time.Second, 500 * time.Millisecond},
	}
	for _, tt := range tests {
		if got := phaseShift(tt.between, tt.interval); got != tt.want && -got != tt.want {
			t.Errorf("phaseShift(%s, %s) = %s, want ±%s", tt.between, tt.interval, got, tt.want)
		}
	}
}

func TestPercentileAndSlope(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3}
	if got := percentile(xs, 50); got != 3 {
		t.Errorf("median = %v, want 3", got)
	}
	if got := percentile(xs, 99); got != 5 {
		t.Errorf("p99 of 5 = %v, want the largest, 5", got)
	}
	if got := slope([]float64{1, 2, 3}, []float64{2, 4, 6}); math.Abs(got-2) > 1e-12 {
		t.Errorf("slope = %v, want 2", got)
	}
	if got := slope([]float64{1}, []float64{1}); !math.IsNaN(got) {
		t.Errorf("slope of one point = %v, want NaN", got)
	}
}

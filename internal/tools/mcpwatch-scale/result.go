package main

import (
	"fmt"
	"io"
	"math"
	"runtime"
	"sort"
	"strings"
	"time"
)

// result is what one run measured. It is printed for people and appended
// as one JSON line to -json, from which -summary judges the targets.
type result struct {
	Label            string  `json:"label"`
	Mode             string  `json:"mode"`
	N                int     `json:"n"`
	IntervalS        float64 `json:"interval_s"`
	Concurrency      int     `json:"concurrency,omitempty"`
	StdioConcurrency int     `json:"stdio_concurrency,omitempty"`
	Cores            int     `json:"cores"`
	Fingerprints     bool    `json:"fingerprints,omitempty"`
	GoMemLimit       string  `json:"gomemlimit,omitempty"`
	Watch            bool    `json:"watch,omitempty"`
	// OpenFDs are mcpwatch's open file descriptors at the end of the
	// window; ListenersUp its listening streams up then (-watch).
	OpenFDs     int `json:"open_fds"`
	ListenersUp int `json:"listeners_up,omitempty"`

	Rounds        int     `json:"rounds"`
	WindowS       float64 `json:"window_s"`
	Probes        float64 `json:"probes"`
	ScheduledPerS float64 `json:"scheduled_per_s"`
	AchievedPerS  float64 `json:"achieved_per_s"`
	FailedShare   float64 `json:"failed_share"`

	// Per server over the window: probes each finished, firings skipped
	// because the previous probe still ran, and how far the time of its
	// last probe moved against its schedule (its phase).
	PerServerMin uint64 `json:"per_server_min"`
	PerServerMax uint64 `json:"per_server_max"`
	Skipped      uint64 `json:"skipped"`
	// SkippedByReason is mcpwatch_probes_skipped_total's increase over the
	// window, by reason (absent for an mcpwatch without it).
	SkippedByReason map[string]float64 `json:"skipped_by_reason,omitempty"`
	PhaseShiftP99S  float64            `json:"phase_shift_p99_s"`
	PhaseShiftMaxS  float64            `json:"phase_shift_max_s"`

	LagP50S       float64 `json:"lag_p50_s"`
	LagP99S       float64 `json:"lag_p99_s"`
	LagOverflow   bool    `json:"lag_overflow,omitempty"` // p99 beyond the last finite bucket
	LagMaxBucketS float64 `json:"lag_max_bucket_s"`

	// The floor (-floor): the CPU of a minimal client sending the same
	// requests over the same window, what it sent, and mcpwatch's CPU per
	// probe over the floor's per server's requests.
	FloorCPUS     float64 `json:"floor_cpu_s,omitempty"`
	FloorBatches  int     `json:"floor_probes,omitempty"`
	FloorRequests int     `json:"floor_requests,omitempty"`
	FloorErrors   int     `json:"floor_errors,omitempty"`
	FloorRatio    float64 `json:"floor_ratio,omitempty"`
	// FloorHandshakes are the TLS handshakes of the floor's window.
	FloorHandshakes int64 `json:"floor_handshakes,omitempty"`

	// The HTTPS fleet (-tls): the protocol it offered besides HTTP/1.1,
	// the TLS handshakes completed before the window (the first round's
	// and the warm-up's) and in it, a minute on average, and the share
	// of the window's that resumed a session.
	TLS              string  `json:"tls,omitempty"` // "HTTP/1.1" or "HTTP/2"; "" for plain HTTP
	Origins          int     `json:"origins"`
	HandshakesBefore int64   `json:"handshakes_before,omitempty"`
	Handshakes       int64   `json:"handshakes,omitempty"`
	HandshakesPerMin float64 `json:"handshakes_per_min,omitempty"`
	ResumedShare     float64 `json:"resumed_share,omitempty"`

	CPUS          float64 `json:"cpu_s"`
	CPUPercent    float64 `json:"cpu_percent_of_one_core"`
	CPUPer1000S   float64 `json:"cpu_s_per_1000_probes"`
	ProbesPerCPUS float64 `json:"probes_per_cpu_s"`
	RSSPeakMB     float64 `json:"rss_peak_mb"`
	RSSEndMB      float64 `json:"rss_end_mb"`
	Goroutines    float64 `json:"goroutines"`

	PromScrapes     int     `json:"prom_scrapes"`
	PromScrapeMaxMS float64 `json:"prom_scrape_max_ms"`
	Scrapes         int     `json:"scrapes"`
	ScrapeP50MS     float64 `json:"scrape_p50_ms"`
	ScrapeP99MS     float64 `json:"scrape_p99_ms"`
	ScrapeBytes     int     `json:"scrape_bytes"`
	ScrapeCPUMS     float64 `json:"scrape_cpu_ms"`
	// The last scrape's families, largest first.
	ScrapeFamilies  []familySize `json:"scrape_families,omitempty"`
	APIPageMS       float64      `json:"api_page_ms,omitempty"` // GET /api/v1/servers?limit=1000, the slowest of three
	APIPageBytes    int          `json:"api_page_bytes,omitempty"`
	StatusPageMS    float64      `json:"status_page_ms,omitempty"` // GET /, the slowest of three
	StatusPageBytes int          `json:"status_page_bytes,omitempty"`
	APIServersMS    float64      `json:"api_servers_ms,omitempty"` // GET /api/v1/servers, the whole list, once
	APIServersBytes int          `json:"api_servers_bytes,omitempty"`
	RSSPeakPagesMB  float64      `json:"rss_peak_pages_mb,omitempty"` // peak RSS after the pages, the whole list included

	MaxChildren       int `json:"max_children,omitempty"`
	MaxZombies        int `json:"max_zombies,omitempty"`
	MaxMarked         int `json:"max_marked,omitempty"`
	MarkedAfterStop   int `json:"marked_after_stop"`
	SystemProcsBefore int `json:"system_procs_before"`
	SystemProcsAfter  int `json:"system_procs_after"`

	// Canary calls (-contracts).
	Contracts         int     `json:"contracts,omitempty"`
	AutoCalls         int     `json:"auto_calls,omitempty"`
	CallIntervalS     float64 `json:"call_interval_s,omitempty"`
	CallsMade         uint64  `json:"calls_made,omitempty"`
	CallsScheduled    float64 `json:"calls_scheduled,omitempty"`
	CallsFailingShare float64 `json:"calls_failing_share,omitempty"`

	StopS       float64  `json:"stop_s"`
	LogWarnings int      `json:"log_warnings"`
	HarnessCPUS float64  `json:"harness_cpu_s"`
	LoadStart   string   `json:"load_start"`
	LoadEnd     string   `json:"load_end"`
	Notes       []string `json:"notes,omitempty"`
}

// perServer fills the per-server figures from two /api/v1/servers reads.
func (r *result) perServer(before, after map[string]apiServer, interval time.Duration) {
	r.PerServerMin = math.MaxUint64
	var shifts []float64
	for name, a := range after {
		b, ok := before[name]
		if !ok {
			continue
		}
		n := a.Probes - b.Probes
		r.PerServerMin = min(r.PerServerMin, n)
		r.PerServerMax = max(r.PerServerMax, n)
		r.Skipped += a.Skipped - b.Skipped
		if a.LastProbe != nil && b.LastProbe != nil {
			shifts = append(shifts, math.Abs(phaseShift(a.LastProbe.Sub(*b.LastProbe), interval).Seconds()))
		}
	}
	if r.PerServerMin == math.MaxUint64 {
		r.PerServerMin = 0
	}
	if len(shifts) > 0 {
		r.PhaseShiftP99S = percentile(shifts, 99)
		r.PhaseShiftMaxS = percentile(shifts, 100)
	}
}

// phaseShift is how far apart two probe times of one server are from a
// whole number of intervals: zero for a server on its schedule.
func phaseShift(between, interval time.Duration) time.Duration {
	k := math.Round(float64(between) / float64(interval))
	return between - time.Duration(k*float64(interval))
}

func numCores() int { return runtime.NumCPU() }

func (r *result) print(w io.Writer) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	extra := ""
	if r.Fingerprints {
		extra += ", lock with fingerprints"
	}
	if r.GoMemLimit != "" {
		extra += ", GOMEMLIMIT=" + r.GoMemLimit
	}
	if r.AutoCalls > 0 {
		extra += fmt.Sprintf(", calls: auto every %gs", r.CallIntervalS)
	}
	if r.Contracts > 0 {
		extra += fmt.Sprintf(", %d contracts each every %gs", r.Contracts, r.CallIntervalS)
	}
	if r.TLS != "" {
		extra += fmt.Sprintf(", HTTPS (%s offered) on %d origins", r.TLS, r.Origins)
	}
	p("== %s: %d %s servers every %gs, concurrency %s (stdio %s), %d cores%s", r.Label, r.N, r.Mode, r.IntervalS, orDefault(r.Concurrency), orDefault(r.StdioConcurrency), r.Cores, extra)
	p("  probes:      %.0f in %.1fs (%d rounds): %.1f/s achieved, %.1f/s scheduled (%.1f%%); %.1f%% failed (by design)",
		r.Probes, r.WindowS, r.Rounds, r.AchievedPerS, r.ScheduledPerS, 100*r.AchievedPerS/r.ScheduledPerS, 100*r.FailedShare)
	p("  per server:  %d..%d probes each, %d skipped%s; phase shift p99 %.3fs, max %.3fs",
		r.PerServerMin, r.PerServerMax, r.Skipped, r.skipReasons(), r.PhaseShiftP99S, r.PhaseShiftMaxS)
	over := ""
	if r.LagOverflow {
		over = " (beyond the last bucket)"
	}
	p("  lag:         p50 %s, p99 %s%s, worst bucket <= %gs", fmtSeconds(r.LagP50S), fmtSeconds(r.LagP99S), over, r.LagMaxBucketS)
	p("  cpu:         %.2fs = %.1f%% of one core; %.3fs per 1,000 probes; %.0f probes per CPU-second", r.CPUS, r.CPUPercent, r.CPUPer1000S, r.ProbesPerCPUS)
	if r.FloorBatches > 0 {
		p("  floor:       %.2fs for %d servers' requests (%d HTTP requests, %d unanswered): %.3fs per 1,000; mcpwatch %.2fx that",
			r.FloorCPUS, r.FloorBatches, r.FloorRequests, r.FloorErrors, 1000*r.FloorCPUS/float64(r.FloorBatches), r.FloorRatio)
	}
	if r.TLS != "" {
		p("  tls:         %d handshakes before the window (first round, warm-up); %d in it: %.1f a minute, %.0f%% resumed; the floor's window %d",
			r.HandshakesBefore, r.Handshakes, r.HandshakesPerMin, 100*r.ResumedShare, r.FloorHandshakes)
	}
	p("  memory:      peak RSS %.1f MB, at end %.1f MB; %.0f goroutines; %d open files", r.RSSPeakMB, r.RSSEndMB, r.Goroutines, r.OpenFDs)
	if r.Watch {
		p("  listeners:   %d of %d up", r.ListenersUp, r.N)
	}
	p("  /metrics:    %d scrapes at 1/s: p50 %.1f ms, p99 %.1f ms, %s, %.1f ms CPU each; %d during the window, slowest %.1f ms",
		r.Scrapes, r.ScrapeP50MS, r.ScrapeP99MS, fmtBytes(r.ScrapeBytes), r.ScrapeCPUMS, r.PromScrapes, r.PromScrapeMaxMS)
	if len(r.ScrapeFamilies) > 0 {
		top := r.ScrapeFamilies[:min(len(r.ScrapeFamilies), 6)]
		parts := make([]string, len(top))
		for i, f := range top {
			parts[i] = fmt.Sprintf("%s %s (%d lines, %.0f B a server)", f.Name, fmtBytes(f.Bytes), f.Series, float64(f.Bytes)/float64(r.N))
		}
		p("  families:    %s", strings.Join(parts, "; "))
	}
	if r.APIServersMS > 0 {
		p("  pages:       /api/v1/servers?limit=1000 %.0f ms, %s; status page %.0f ms, %s (slowest of 3); the whole /api/v1/servers %.0f ms, %s; peak RSS after them %.1f MB",
			r.APIPageMS, fmtBytes(r.APIPageBytes), r.StatusPageMS, fmtBytes(r.StatusPageBytes), r.APIServersMS, fmtBytes(r.APIServersBytes), r.RSSPeakPagesMB)
	}
	r.printCalls(p)
	if r.Mode == "stdio" {
		p("  processes:   at most %d below mcpwatch (%d zombies), %d marked; after stop %d marked; system %d before, %d after",
			r.MaxChildren, r.MaxZombies, r.MaxMarked, r.MarkedAfterStop, r.SystemProcsBefore, r.SystemProcsAfter)
	}
	p("  stop:        %.2fs after SIGTERM; %d warn/error log lines; harness CPU %.1fs; load %s -> %s",
		r.StopS, r.LogWarnings, r.HarnessCPUS, r.LoadStart, r.LoadEnd)
	for _, n := range r.Notes {
		p("  note:        %s", n)
	}
}

// skipReasons is the window's mcpwatch_probes_skipped_total by reason, for
// the report: " (still_queued 3, late 0, ...)", or "" without it.
func (r *result) skipReasons() string {
	if r.SkippedByReason == nil {
		return ""
	}
	reasons := make([]string, 0, len(r.SkippedByReason))
	for reason := range r.SkippedByReason {
		reasons = append(reasons, reason)
	}
	sort.Strings(reasons)
	parts := make([]string, len(reasons))
	for i, reason := range reasons {
		parts[i] = fmt.Sprintf("%s %.0f", reason, r.SkippedByReason[reason])
	}
	return " (mcpwatch_probes_skipped_total: " + strings.Join(parts, ", ") + ")"
}

func fmtSeconds(s float64) string {
	switch {
	case math.IsNaN(s):
		return "n/a"
	case s < 1:
		return fmt.Sprintf("%.1f ms", s*1000)
	}
	return fmt.Sprintf("%.2f s", s)
}

func fmtBytes(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f kB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// indent is for multi-line errors in the summary.
func indent(s string) string { return "  " + strings.ReplaceAll(s, "\n", "\n  ") }

func orDefault(n int) string {
	if n <= 0 {
		return "default"
	}
	return fmt.Sprint(n)
}

// setHandshakes records the TLS handshakes of the window.
func (r *result) setHandshakes(handshakes, resumed int64) {
	r.Handshakes = handshakes
	if r.WindowS > 0 {
		r.HandshakesPerMin = 60 * float64(handshakes) / r.WindowS
	}
	if handshakes > 0 {
		r.ResumedShare = float64(resumed) / float64(handshakes)
	}
}

// setFloor records the floor client's figures and the ratio of mcpwatch's
// CPU per probe to the floor's CPU per server's requests.
func (r *result) setFloor(cpuS float64, fr floorResult) {
	r.FloorCPUS, r.FloorBatches, r.FloorRequests, r.FloorErrors = cpuS, fr.Batches, fr.Requests, fr.Errors
	if fr.Batches > 0 && cpuS > 0 && r.Probes > 0 {
		r.FloorRatio = (r.CPUS / r.Probes) / (cpuS / float64(fr.Batches))
	}
}

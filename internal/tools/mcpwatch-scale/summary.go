package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
)

// Labels of the runs `make bench-scale` makes; the summary judges the
// performance targets from them.
const (
	labelThroughput = "throughput"
	labelHTTP100    = "http-100"
	labelHTTP1000   = "http-1000"
	labelHTTP10000  = "http-10000"
	labelStdio      = "stdio-100"
	labelCheckJSON  = "check-mcp.json"
	labelCheckYML   = "check-mcpwatch.yml"
	labelCheckDelay = "check-mcp.json-delay100ms"
	labelHTTP10k15  = "http-10000-15s"
	labelPreflight1 = "preflight-1"
	labelPreflight5 = "preflight-5"
	labelProbeEra   = "probe-era-auto"
)

// results are the lines of a -json file, by label (the last run of a label
// wins).
type results struct {
	scale     map[string]*result
	check     map[string]*checkResult
	preflight map[string]*preflightResult
}

func readResults(path string) (*results, error) {
	f, err := os.Open(path) //nolint:gosec // G304: the results file the operator named with -summary
	if err != nil {
		return nil, fmt.Errorf("read results: %w", err)
	}
	defer func() { _ = f.Close() }()
	rs := &results{scale: map[string]*result{}, check: map[string]*checkResult{}, preflight: map[string]*preflightResult{}}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		var head struct{ Mode, Label string }
		if err := json.Unmarshal(sc.Bytes(), &head); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		if head.Mode == "preflight" {
			var p preflightResult
			if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", path, line, err)
			}
			rs.preflight[head.Label] = &p
			continue
		}
		if head.Mode == "check" {
			var c checkResult
			if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", path, line, err)
			}
			rs.check[head.Label] = &c
			continue
		}
		var r result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		rs.scale[head.Label] = &r
	}
	return rs, sc.Err()
}

// netCPUPer1000 is the CPU of 1,000 probes without the scrapes made during
// the window (one every -prom-interval), which cost more the bigger the
// fleet and are not probing.
func (r *result) netCPUPer1000() float64 {
	if r.Probes <= 0 {
		return math.NaN()
	}
	net := r.CPUS - float64(r.PromScrapes)*r.ScrapeCPUMS/1000
	return 1000 * net / r.Probes
}

// onSchedule: no firing skipped, and every server finished one probe per
// round of the window (one more when the reads around the window caught
// an extra).
func (r *result) onSchedule() bool {
	return r.Skipped == 0 && r.PerServerMin >= uint64(r.Rounds) && r.PerServerMax <= uint64(r.Rounds)+1 //nolint:gosec // G115: Rounds counts rounds, never negative
}

// verdict is one line of the targets table.
type verdict struct {
	target, measured string
	met              bool
	missing          bool
}

func judge(rs *results) []verdict {
	var out []verdict
	add := func(target string, met bool, format string, args ...any) {
		out = append(out, verdict{target: target, met: met, measured: fmt.Sprintf(format, args...)})
	}
	absent := func(target, label string) {
		out = append(out, verdict{target: target, missing: true, measured: "not run (label " + label + ")"})
	}

	if r := rs.scale[labelThroughput]; r != nil {
		add("HTTP probing >= 1,000 probes/s per core", r.ProbesPerCPUS >= 1000 && r.AchievedPerS >= 0.99*r.ScheduledPerS,
			"%.0f probes per mcpwatch CPU-second (%.0f/s achieved of %.0f/s scheduled, mcpwatch using %.2f cores; %.0f/s per core of the whole %d-core machine, simulators included)",
			r.ProbesPerCPUS, r.AchievedPerS, r.ScheduledPerS, r.CPUPercent/100, r.AchievedPerS/float64(r.Cores), r.Cores)
	} else {
		absent("HTTP probing >= 1,000 probes/s per core", labelThroughput)
	}

	if c := rs.check[labelCheckJSON]; c != nil {
		add("check of 5 stdio servers <= 1.5x of 1", c.Ratio <= 1.5, "%.2fx (median %.0f ms vs %.0f ms, %s)", c.Ratio, 1000*c.ManyMd, 1000*c.OneMed, c.Config)
	} else {
		absent("check of 5 stdio servers <= 1.5x of 1", labelCheckJSON)
	}
	if c := rs.check[labelCheckYML]; c != nil {
		add("  the same from mcpwatch.yml defaults", c.Ratio <= 1.5, "%.2fx (median %.0f ms vs %.0f ms; stdio_concurrency 8 by default)", c.Ratio, 1000*c.ManyMd, 1000*c.OneMed)
	}
	if c := rs.check[labelCheckDelay]; c != nil {
		add("  servers that wait 100 ms at start", c.Ratio <= 1.5, "%.2fx (median %.0f ms vs %.0f ms)", c.Ratio, 1000*c.ManyMd, 1000*c.OneMed)
	}

	if r := rs.scale[labelHTTP1000]; r != nil {
		add("1,000 servers/15 s: CPU <= 15% of a core", r.CPUPercent <= 15, "%.1f%% (%.1f%% without the 15 s scrapes)", r.CPUPercent, 100*(r.CPUS-float64(r.PromScrapes)*r.ScrapeCPUMS/1000)/r.WindowS)
		add("1,000 servers/15 s: RSS <= 150 MB", r.RSSPeakMB <= 150, "peak %.1f MB", r.RSSPeakMB)
		add("1,000 servers/15 s: scrape p99 <= 100 ms", r.ScrapeP99MS <= 100, "p99 %.1f ms (p50 %.1f ms, %s)", r.ScrapeP99MS, r.ScrapeP50MS, fmtBytes(r.ScrapeBytes))
		add("1,000 servers/15 s: lag p99 <= 1 s", r.LagP99S <= 1 && !r.LagOverflow, "p99 %s (p50 %s)", fmtSeconds(r.LagP99S), fmtSeconds(r.LagP50S))
	} else {
		absent("1,000 servers every 15 s", labelHTTP1000)
	}

	if r := rs.scale[labelHTTP10000]; r != nil {
		add("10,000 servers/60 s: every probe on schedule", r.onSchedule() && r.LagP99S <= 1 && !r.LagOverflow,
			"%.0f of %.0f scheduled probes, %d skipped, %d..%d per server over %d rounds, lag p99 %s (p50 %s)",
			r.Probes, r.ScheduledPerS*r.WindowS, r.Skipped, r.PerServerMin, r.PerServerMax, r.Rounds, fmtSeconds(r.LagP99S), fmtSeconds(r.LagP50S))
		add("10,000 servers/60 s: RSS <= 1 GB", r.RSSPeakMB <= 1024, "peak %.1f MB", r.RSSPeakMB)
	} else {
		absent("10,000 servers every 60 s", labelHTTP10000)
	}
	if v, ok := costSlope(rs); ok {
		out = append(out, v)
	}

	if r := rs.scale[labelHTTP10k15]; r != nil {
		add("10,000 servers/15 s: <= 1 core", r.CPUPercent <= 100 && r.onSchedule(),
			"%.1f%% of a core (%.1f%% without the 15 s scrapes); %d skipped, lag p99 %s",
			r.CPUPercent, 100*(r.CPUS-float64(r.PromScrapes)*r.ScrapeCPUMS/1000)/r.WindowS, r.Skipped, fmtSeconds(r.LagP99S))
		add("10,000 servers/15 s: RSS <= 500 MB", r.RSSPeakMB <= 500, "peak %.1f MB", r.RSSPeakMB)
	} else {
		absent("10,000 servers every 15 s", labelHTTP10k15)
	}

	for _, p := range []struct {
		label, target string
		wall, cpu     float64
	}{
		{labelPreflight1, "check, 1 legacy stdio server: wall, CPU <= Python", 1, 1},
		{labelPreflight5, "check, 5 legacy stdio servers: wall <= 0.5x, CPU <= 1x", 0.5, 1},
		{labelProbeEra, "probe --era auto <= 1.1x --era legacy", 1.1, 1.1},
	} {
		r := rs.preflight[p.label]
		if r == nil {
			absent(p.target, p.label)
			continue
		}
		add(p.target, r.WallRatio <= p.wall && r.CPURatio <= p.cpu, "wall %.2fx, CPU %.2fx (medians %.0f vs %.0f ms wall, %.0f vs %.0f ms CPU, %d runs, load %s)",
			r.WallRatio, r.CPURatio, 1000*r.AWallMed, 1000*r.BWallMed, 1000*r.ACPUMed, 1000*r.BCPUMed, r.Runs, r.Load)
	}

	if r := rs.scale[labelStdio]; r != nil {
		leaked := r.MarkedAfterStop
		add("100 stdio servers: no drift", r.onSchedule() && r.PhaseShiftMaxS < r.IntervalS/4,
			"%d rounds every %gs: %d skipped, %d..%d probes per server, phase shift max %.3f s, lag p99 %s",
			r.Rounds, r.IntervalS, r.Skipped, r.PerServerMin, r.PerServerMax, r.PhaseShiftMaxS, fmtSeconds(r.LagP99S))
		add("100 stdio servers: no leaked process", leaked == 0,
			"%d of the run's processes left after stop (at most %d alive at once, %d below mcpwatch); system processes %d before, %d after",
			leaked, r.MaxMarked, r.MaxChildren, r.SystemProcsBefore, r.SystemProcsAfter)
	} else {
		absent("100 stdio servers every 30 s, run fast", labelStdio)
	}
	return out
}

// costSlope judges "cost per probe flat from 1,000 to 10,000": the CPU per
// probe without scrapes at each size, and the least-squares slope over
// the sizes run.
func costSlope(rs *results) (verdict, bool) {
	var xs, ys []float64
	var parts []string
	for _, label := range []string{labelHTTP100, labelHTTP1000, labelHTTP10000} {
		r := rs.scale[label]
		if r == nil {
			continue
		}
		xs = append(xs, float64(r.N)/1000)
		ys = append(ys, 1000*r.netCPUPer1000()/1000) // ms per probe
		parts = append(parts, fmt.Sprintf("%d: %.3f ms", r.N, ys[len(ys)-1]))
	}
	r1, r10 := rs.scale[labelHTTP1000], rs.scale[labelHTTP10000]
	if r1 == nil || r10 == nil {
		return verdict{}, false
	}
	ratio := r10.netCPUPer1000() / r1.netCPUPer1000()
	return verdict{
		target: "cost per probe flat 1,000 -> 10,000",
		met:    ratio <= 1.25,
		measured: fmt.Sprintf("CPU per probe %s; 10,000/1,000 = %.2fx; slope %+.4f ms per probe per 1,000 servers",
			strings.Join(parts, ", "), ratio, slope(xs, ys)),
	}, true
}

func printSummary(w io.Writer, rs *results) (allMet bool) {
	allMet = true
	fmt.Fprintln(w, "== targets")
	for _, v := range judge(rs) {
		mark := "MET "
		switch {
		case v.missing:
			mark = "----"
			allMet = false
		case !v.met:
			mark = "MISS"
			allMet = false
		}
		fmt.Fprintf(w, "  [%s] %-44s %s\n", mark, v.target, v.measured)
	}
	return allMet
}

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/peertest"
)

// The npx mode (-mode npx): what watching stdio servers costs where the
// cost arises, in starting them. N servers of the pinned npm packages
// (server-memory, -filesystem, -everything and -github against a stand-in
// of GitHub's API, in turn), each run as its README says, `npx -y
// NAME@VERSION`, offline from testdata/peers, under `mcpwatch serve` at
// its defaults (only the flags given are written). mcpwatch runs in a
// control group of the harness's own (cgroup.go), so the window's CPU is
// mcpwatch's own plus that of every process it started, those killed with
// their group included; the servers' memory is summed over the group's
// processes at the window's end.

// npxPackages are the servers of an npx fleet, in turn.
var npxPackages = []struct {
	name, spec string
	args       []string
	github     bool
}{
	{name: "memory", spec: "@modelcontextprotocol/server-memory@2026.8.31"},
	{name: "filesystem", spec: "@modelcontextprotocol/server-filesystem@2026.8.31", args: []string{"."}},
	{name: "everything", spec: "@modelcontextprotocol/server-everything@2026.8.31"},
	{name: "github", spec: "@modelcontextprotocol/server-github@2025.4.8", github: true},
}

// npxResult is one run of an npx fleet.
type npxResult struct {
	Label        string  `json:"label"`
	Mode         string  `json:"mode"`
	N            int     `json:"n"`
	Settings     string  `json:"settings"` // what the configuration sets beside the servers
	WarmupS      float64 `json:"warmup_s"`
	WindowS      float64 `json:"window_s"`
	LoadStart    string  `json:"load_start"`
	LoadEnd      string  `json:"load_end"`
	AllPercent   float64 `json:"all_cpu_percent"`     // mcpwatch and every process it started, % of a core
	OwnPercent   float64 `json:"own_cpu_percent"`     // mcpwatch alone
	ServerPct    float64 `json:"servers_cpu_percent"` // the processes it started
	PerServerPct float64 `json:"per_server_percent"`  // all / N
	Probes       float64 `json:"probes"`              // in the window
	Failed       float64 `json:"failed"`              // of which failed
	Missing      float64 `json:"tools_missing"`       // locked tools missing at the window's end, all servers
	ServersRSSMB float64 `json:"servers_rss_mb"`      // the processes it started, at the window's end
	ServersPSSMB float64 `json:"servers_pss_mb"`
	Processes    int     `json:"server_processes"`
	OwnRSSMB     float64 `json:"mcpwatch_rss_mb"`
}

func (r *npxResult) print(w io.Writer) {
	fmt.Fprintf(w, "%s: %d npx servers, %s; warm-up %.0f s, window %.0f s; load %s -> %s\n", r.Label, r.N, r.Settings, r.WarmupS, r.WindowS, r.LoadStart, r.LoadEnd)
	fmt.Fprintf(w, "| process | CPU |\n|---|---|\n")
	fmt.Fprintf(w, "| mcpwatch itself | %.2f%% of a core |\n| the servers it started | %.2f%% |\n| in all, per server | %.2f%% |\n", r.OwnPercent, r.ServerPct, r.PerServerPct)
	fmt.Fprintf(w, "probes %.0f (%.0f failed), locked tools missing at the end %.0f; servers' memory %.1f MB RSS (%.1f MB PSS) in %d processes; mcpwatch %.1f MB RSS\n",
		r.Probes, r.Failed, r.Missing, r.ServersRSSMB, r.ServersPSSMB, r.Processes, r.OwnRSSMB)
}

// runNpx runs an npx fleet of o.n servers under mcpwatch serve; settings
// are the lines written under defaults: (none: mcpwatch's defaults).
func runNpx(ctx context.Context, o scaleOptions, settings []string) (*npxResult, error) {
	peers, err := filepath.Abs(o.peers)
	if err != nil {
		return nil, err
	}
	dir, cleanup, err := npxFolder(peers)
	if err != nil {
		return nil, err
	}
	if o.keep {
		fmt.Fprintf(o.out, "work directory kept: %s\n", dir)
	} else {
		defer cleanup()
	}
	gh := peertest.NewGitHub("ghp_scale00000000000000000000000000000")
	defer gh.Close()
	if err := os.WriteFile(filepath.Join(dir, "github-token"), []byte("ghp_scale00000000000000000000000000000\n"), 0o600); err != nil {
		return nil, err
	}
	configPath, err := writeNpxConfig(dir, o.n, settings, peertest.NodeEnv(gh))
	if err != nil {
		return nil, err
	}
	g, err := newCPUGroup(fmt.Sprintf("mcpwatch-npx-%d-%d", os.Getpid(), time.Now().UnixNano()))
	if err != nil {
		return nil, err
	}
	defer g.remove()

	res := &npxResult{Label: o.label, Mode: "npx", N: o.n, Settings: "the defaults", LoadStart: loadAverage(), WarmupS: o.warmup.Seconds()}
	if len(settings) > 0 {
		res.Settings = strings.Join(settings, ", ")
	}
	d, err := startDaemon(ctx, o.mcpwatch, configPath, dir, false, minimalEnv(), g.wrap)
	if err != nil {
		return nil, err
	}
	defer func() { _, _ = d.stop() }()
	fmt.Fprintf(o.out, "%s: mcpwatch (pid %d) watching %d npx servers; warming up %s; load %s\n", o.label, d.pid(), o.n, o.warmup, loadAverage())
	if err := d.waitFor(ctx, "/-/ready", 10*time.Minute); err != nil {
		return nil, fmt.Errorf("waiting for the first round: %w\n%s", err, d.logTail())
	}
	if err := sleepCtx(ctx, o.warmup); err != nil {
		return nil, err
	}

	all0, err := g.usage()
	if err != nil {
		return nil, err
	}
	s0, err := d.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(o.out, "%s: measuring %s; load %s\n", o.label, o.duration, loadAverage())
	if err := sleepCtx(ctx, o.duration); err != nil {
		return nil, err
	}
	all1, _ := g.usage()
	s1, err := d.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	window := s1.at.Sub(s0.at)
	res.WindowS = window.Seconds()
	pct := func(d time.Duration) float64 { return 100 * d.Seconds() / window.Seconds() }
	res.AllPercent = pct(all1 - all0)
	res.OwnPercent = pct(s1.cpu - s0.cpu)
	res.ServerPct = res.AllPercent - res.OwnPercent
	res.PerServerPct = res.AllPercent / float64(o.n)
	res.Probes = s1.expo.probes - s0.expo.probes
	for reason, v := range s1.expo.failures {
		res.Failed += v - s0.expo.failures[reason]
	}
	rss, pss, n := g.memory(d.pid())
	res.ServersRSSMB, res.ServersPSSMB, res.Processes = mb(rss), mb(pss), n
	res.OwnRSSMB = mb(s1.mem.rss)
	if body, _, err := d.get(ctx, "/metrics"); err == nil {
		res.Missing = sumSeries(string(body), "mcpwatch_tools_missing{")
	}
	res.LoadEnd = loadAverage()
	return res, nil
}

// writeNpxConfig writes mcpwatch.yml and the lock for n servers in dir:
// the packages of npxPackages in turn, server-github's token read from a
// file, and env (the preload that sends its requests to the stand-in).
func writeNpxConfig(dir string, n int, settings []string, env map[string]string) (string, error) {
	var b strings.Builder
	b.WriteString("# written by mcpwatch-scale -mode npx\n")
	if len(settings) > 0 {
		b.WriteString("defaults:\n")
		for _, s := range settings {
			fmt.Fprintf(&b, "  %s\n", s)
		}
	}
	b.WriteString("lock: mcp-tools.lock.json\nservers:\n")
	lock := map[string][]string{}
	for i := range n {
		p := npxPackages[i%len(npxPackages)]
		name := fmt.Sprintf("%s-%d", p.name, i)
		args := append([]string{"-y", p.spec}, p.args...)
		fmt.Fprintf(&b, "  %s:\n    command: npx\n    args: [%s]\n    env:\n", name, quoteAll(args))
		vars := map[string]string{}
		for _, kv := range npxOffline {
			k, v, _ := strings.Cut(kv, "=")
			vars[k] = v
		}
		if p.github {
			vars["GITHUB_PERSONAL_ACCESS_TOKEN"] = "${file:github-token}"
			for k, v := range env {
				vars[k] = strings.ReplaceAll(v, "$", "$$")
			}
		}
		for _, k := range sortedKeys(vars) {
			fmt.Fprintf(&b, "      %s: %q\n", k, vars[k])
		}
		tools, err := peertest.LoadTools("server-" + p.name)
		if err != nil {
			return "", err
		}
		for _, t := range tools {
			lock[name] = append(lock[name], t.Name)
		}
	}
	return writeConfigAndLock(dir, b.String(), lock)
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// sumSeries sums the values of the lines of a scrape that start with prefix.
func sumSeries(text, prefix string) float64 {
	var sum float64
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		if i := strings.LastIndexByte(line, ' '); i > 0 {
			if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
				sum += v
			}
		}
	}
	return sum
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

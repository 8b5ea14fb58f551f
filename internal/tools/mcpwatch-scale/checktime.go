package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// checkResult compares `mcpwatch check` of many stdio servers with one.
type checkResult struct {
	Label  string    `json:"label"`
	Mode   string    `json:"mode"` // "check"
	Config string    `json:"config"`
	Era    string    `json:"era"`
	DelayS float64   `json:"delay_s,omitempty"`
	Many   int       `json:"many"`
	Runs   int       `json:"runs"`
	OneS   []float64 `json:"one_s"`
	ManyS  []float64 `json:"many_s"`
	OneMed float64   `json:"one_median_s"`
	ManyMd float64   `json:"many_median_s"`
	Ratio  float64   `json:"ratio"`
	Load   string    `json:"load"`
}

// runCheckTiming times `mcpwatch check` of one stdio server and of many,
// runs times each (timeInTurn), and compares the medians. kind is "mcp.json" (a Claude Code
// client config: every server started at once, as the client does) or
// "mcpwatch.yml" (its defaults: at most 8 stdio processes at once).
func runCheckTiming(ctx context.Context, mcpwatch, testserver, kind, era string, delay time.Duration, many, runs int) (*checkResult, error) {
	dir, err := os.MkdirTemp("", "mcpwatch-check-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	testserver, err = filepath.Abs(testserver)
	if err != nil {
		return nil, err
	}
	one, err := writeCheckConfig(filepath.Join(dir, "one"), testserver, kind, era, delay, 1)
	if err != nil {
		return nil, err
	}
	all, err := writeCheckConfig(filepath.Join(dir, "many"), testserver, kind, era, delay, many)
	if err != nil {
		return nil, err
	}
	label := "check-" + kind
	if era != "mixed" {
		label += "-" + era
	}
	if delay > 0 {
		label += "-delay" + delay.String()
	}
	r := &checkResult{Label: label, Mode: "check", Config: kind, Era: era, DelayS: delay.Seconds(), Many: many, Runs: runs, Load: loadAverage()}
	bin, err := filepath.Abs(mcpwatch)
	if err != nil {
		return nil, err
	}
	t1, tn, err := timeInTurn(ctx, checkCommand(bin, one), checkCommand(bin, all), runs)
	if err != nil {
		return nil, err
	}
	r.OneS, r.ManyS = t1.wall, tn.wall
	r.OneMed, r.ManyMd = median(r.OneS), median(r.ManyS)
	r.Ratio = r.ManyMd / r.OneMed
	return r, nil
}

// writeCheckConfig writes, in dir, a configuration of n healthy stdio test
// servers and its lock, and returns the configuration's path. era "mixed"
// alternates legacy and modern servers, legacy first. A delay makes each
// server wait that long before it starts, as one that fetches a credential
// or warms a cache does: time spent waiting, not computing.

func writeCheckConfig(dir, testserver, kind, era string, delay time.Duration, n int) (string, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return "", err
	}
	var eras []probetest.Era
	switch era {
	case "mixed":
		eras = []probetest.Era{probetest.EraLegacy, probetest.EraModern}
	case "legacy", "modern":
		eras = []probetest.Era{probetest.Era(era)}
	default:
		return "", fmt.Errorf("unknown check era %q (want mixed, legacy or modern)", era)
	}
	lock := map[string][]string{}
	var path string
	switch kind {
	case "mcp.json":
		type entry struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		}
		cfg := map[string]map[string]entry{"mcpServers": {}}
		for i := range n {
			name := fmt.Sprintf("server%d", i)
			command, args := serverCommand(testserver, eras[i%len(eras)], delay)
			cfg["mcpServers"][name] = entry{Command: command, Args: args}
			lock[name] = toolNames(probetest.DefaultTools())
		}
		raw, err := json.MarshalIndent(cfg, "", "  ")
		if err != nil {
			return "", err
		}
		path = filepath.Join(dir, ".mcp.json")
		if err := os.WriteFile(path, raw, 0o600); err != nil {
			return "", err
		}
	case "mcpwatch.yml":
		yml := "lock: mcp-tools.lock.json\nservers:\n"
		for i := range n {
			name := fmt.Sprintf("server%d", i)
			command, args := serverCommand(testserver, eras[i%len(eras)], delay)
			quoted, err := json.Marshal(args) // a JSON array is a YAML flow sequence
			if err != nil {
				return "", err
			}
			yml += fmt.Sprintf("  %s: {command: %q, args: %s}\n", name, command, quoted)
			lock[name] = toolNames(probetest.DefaultTools())
		}
		path = filepath.Join(dir, "mcpwatch.yml")
		if err := os.WriteFile(path, []byte(yml), 0o600); err != nil {
			return "", err
		}
	default:
		return "", fmt.Errorf("unknown check config kind %q (want mcp.json or mcpwatch.yml)", kind)
	}
	raw, err := json.MarshalIndent(lock, "", "  ")
	if err != nil {
		return "", err
	}
	return path, os.WriteFile(filepath.Join(dir, "mcp-tools.lock.json"), raw, 0o600)
}

// checkCommand is `mcpwatch check` of the configuration, run in its
// directory.
func checkCommand(bin, config string) command {
	dir := filepath.Dir(config)
	return command{name: "mcpwatch check --config.file " + config, dir: dir, env: minimalEnv(),
		argv: []string{bin, "check", "--config.file", config, "--lock.file", filepath.Join(dir, "mcp-tools.lock.json")}}
}

func (r *checkResult) print(w io.Writer) {
	fmt.Fprintf(w, "== %s: mcpwatch check of %d stdio servers vs 1 (%s, %s era, start delay %gs), %d runs each, load %s\n",
		r.Label, r.Many, r.Config, r.Era, r.DelayS, r.Runs, r.Load)
	fmt.Fprintf(w, "  1 server:   median %.0f ms  %v\n", 1000*r.OneMed, msList(r.OneS))
	fmt.Fprintf(w, "  %d servers:  median %.0f ms  %v\n", r.Many, 1000*r.ManyMd, msList(r.ManyS))
	fmt.Fprintf(w, "  ratio:      %.2fx\n", r.Ratio)
}

func msList(xs []float64) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = fmt.Sprintf("%.0f", 1000*x)
	}
	return out
}

// serverCommand is how to start one test server: directly, or after a
// sleep through /bin/sh.
func serverCommand(testserver string, era probetest.Era, delay time.Duration) (string, []string) {
	if delay <= 0 {
		return testserver, []string{"--era", string(era)}
	}
	script := fmt.Sprintf("sleep %.3f; exec \"$0\" --era %s", delay.Seconds(), era)
	return "/bin/sh", []string{"-c", script, testserver}
}

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// The runners mode (-mode runners): what a stdio server costs to start
// with each common runner (a plain binary, node, npx, python3, or any
// -runner), and what a probe costs on a server that stays up. For each
// runner, in a control group of its own (cgroup.go): -runner-starts times
// a fresh start (spawn, initialize, tools/list, the group killed), its CPU
// and the memory of its processes once it answered; then one start kept
// up, -runner-probes tools/list on it one after the other, and 20 s of it
// idle.

// runnerSpec is one way of starting a server.
type runnerSpec struct {
	Label string
	Argv  []string
	Env   []string
	Dir   string
}

// runnerResult is what a runner costs.
type runnerResult struct {
	Label       string  `json:"label"`
	Starts      int     `json:"starts"`
	StartCPUMS  float64 `json:"start_cpu_ms"`    // mean CPU of one start: spawn, initialize, tools/list
	StartWallMS float64 `json:"start_wall_ms"`   // median wall time to the tools/list answer
	RSSMB       float64 `json:"rss_mb"`          // its processes' resident set, summed, once it answered
	PSSMB       float64 `json:"pss_mb"`          // ... proportional set (shared pages split)
	Processes   int     `json:"processes"`       // how many processes one start is
	Probes      int     `json:"probes"`          // tools/list on the session kept up
	ProbeCPUMS  float64 `json:"probe_cpu_ms"`    // mean CPU of one tools/list on it
	ProbeWallMS float64 `json:"probe_wall_ms"`   // median round trip
	IdlePercent float64 `json:"idle_percent"`    // CPU of the kept session while idle, % of a core
	Load        string  `json:"load"`            // the load average when it ran
	Error       string  `json:"error,omitempty"` // why it could not be measured
}

type runnerReport struct{ Runners []runnerResult }

func (r runnerReport) print(w io.Writer) {
	fmt.Fprintf(w, "| runner | one start: CPU | wall | RSS (PSS) | processes | a tools/list on a live session: CPU | wall | idle | load |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, x := range r.Runners {
		if x.Error != "" {
			fmt.Fprintf(w, "| %s | not measured: %s |||||||\n", x.Label, x.Error)
			continue
		}
		fmt.Fprintf(w, "| %s | %.0f ms | %.0f ms | %.1f MB (%.1f) | %d | %.2f ms | %.2f ms | %.3f%% | %s |\n",
			x.Label, x.StartCPUMS, x.StartWallMS, x.RSSMB, x.PSSMB, x.Processes, x.ProbeCPUMS, x.ProbeWallMS, x.IdlePercent, x.Load)
	}
}

// measureRunners measures each runner in turn.
func measureRunners(ctx context.Context, runners []runnerSpec, starts, probes int, idle time.Duration, out io.Writer) runnerReport {
	var rep runnerReport
	for _, r := range runners {
		fmt.Fprintf(out, "runner %s: %d starts, %d probes on a live session; load %s\n", r.Label, starts, probes, loadAverage())
		res, err := measureRunner(ctx, r, starts, probes, idle)
		if err != nil {
			res.Error = err.Error()
		}
		rep.Runners = append(rep.Runners, res)
	}
	return rep
}

func measureRunner(ctx context.Context, r runnerSpec, starts, probes int, idle time.Duration) (runnerResult, error) {
	res := runnerResult{Label: r.Label, Starts: starts, Probes: probes, Load: loadAverage()}
	g, err := newCPUGroup(fmt.Sprintf("mcpwatch-runner-%d-%d", os.Getpid(), time.Now().UnixNano()))
	if err != nil {
		return res, err
	}
	defer g.remove()
	var walls []float64
	u0, err := g.usage()
	if err != nil {
		return res, err
	}
	for i := range starts {
		s, err := startRunner(ctx, g, r)
		if err != nil {
			return res, err
		}
		_, err = s.handshake(ctx)
		if err == nil {
			_, err = s.call(ctx, "tools/list", nil)
		}
		if err != nil {
			s.kill()
			return res, fmt.Errorf("start %d: %w", i+1, err)
		}
		walls = append(walls, float64(time.Since(s.started).Milliseconds()))
		if i == 0 {
			rss, pss, n := g.memory(0)
			res.RSSMB, res.PSSMB, res.Processes = mb(rss), mb(pss), n
		}
		s.kill()
	}
	u1, _ := g.usage()
	res.StartCPUMS = float64((u1 - u0).Microseconds()) / 1000 / float64(starts)
	res.StartWallMS = median(walls)

	s, err := startRunner(ctx, g, r)
	if err != nil {
		return res, err
	}
	defer s.kill()
	if _, err := s.handshake(ctx); err != nil {
		return res, err
	}
	if _, err := s.call(ctx, "tools/list", nil); err != nil {
		return res, err
	}
	var rtts []float64
	u0, _ = g.usage()
	for range probes {
		t0 := time.Now()
		if _, err := s.call(ctx, "tools/list", nil); err != nil {
			return res, err
		}
		rtts = append(rtts, float64(time.Since(t0).Microseconds())/1000)
	}
	u1, _ = g.usage()
	res.ProbeCPUMS = float64((u1 - u0).Microseconds()) / 1000 / float64(probes)
	res.ProbeWallMS = median(rtts)
	u0, _ = g.usage()
	select {
	case <-time.After(idle):
	case <-ctx.Done():
		return res, ctx.Err()
	}
	u1, _ = g.usage()
	res.IdlePercent = 100 * (u1 - u0).Seconds() / idle.Seconds()
	return res, nil
}

// runnerProc is one started server, spoken to over its pipes.
type runnerProc struct {
	cmd     *exec.Cmd
	in      io.WriteCloser
	out     *bufio.Reader
	started time.Time
	id      int
}

func startRunner(ctx context.Context, g *cpuGroup, r runnerSpec) (*runnerProc, error) {
	argv := g.wrap(r.Argv)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...) //nolint:gosec // G204: the runner under measurement
	cmd.Env, cmd.Dir = r.Env, r.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stderr = io.Discard
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p := &runnerProc{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20), started: time.Now()}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", strings.Join(r.Argv, " "), err)
	}
	return p, nil
}

func (p *runnerProc) handshake(ctx context.Context) (time.Duration, error) {
	t0 := time.Now()
	if _, err := p.call(ctx, "initialize", map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]string{"name": "mcpwatch-scale", "version": "runners"},
	}); err != nil {
		return 0, err
	}
	_, err := fmt.Fprintln(p.in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return time.Since(t0), err
}

// call sends a request and reads lines until its answer, within a minute.
func (p *runnerProc) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	p.id++
	msg := map[string]any{"jsonrpc": "2.0", "id": p.id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	data, _ := json.Marshal(msg)
	if _, err := p.in.Write(append(data, '\n')); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	done := make(chan struct{})
	defer close(done)
	timer := time.AfterFunc(time.Minute, p.kill)
	defer timer.Stop()
	go func() {
		select {
		case <-ctx.Done():
			p.kill()
		case <-done:
		}
	}()
	for {
		line, err := p.out.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("%s: the server ended: %w", method, err)
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(line, &m) != nil || string(m.ID) != fmt.Sprint(p.id) {
			continue
		}
		if m.Error != nil {
			return nil, fmt.Errorf("%s: %s", method, m.Error)
		}
		return m.Result, nil
	}
}

// kill ends the process group and reaps the leader.
func (p *runnerProc) kill() {
	if p.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	_ = p.in.Close()
	_ = p.cmd.Wait()
}

// defaultRunners are the runners measured when no -runner is given: the
// test server binary, and the pinned server-memory through node and npx
// (offline, from testdata/peers), and the Python test server.
func defaultRunners(testserver, peers, python string) ([]runnerSpec, func(), error) {
	env := minimalEnv()
	ts, err := filepath.Abs(testserver)
	if err != nil {
		return nil, nil, err
	}
	peersAbs, err := filepath.Abs(peers)
	if err != nil {
		return nil, nil, err
	}
	memory := filepath.Join(peersAbs, "node_modules", "@modelcontextprotocol", "server-memory", "dist", "index.js")
	if _, err := os.Stat(memory); err != nil {
		return nil, nil, fmt.Errorf("server-memory is not installed in %s: run scripts/e2e-deps.sh", peers)
	}
	project, cleanup, err := npxFolder(peersAbs)
	if err != nil {
		return nil, nil, err
	}
	npxEnv := append(append([]string(nil), env...), npxOffline...)
	pyServer, _ := filepath.Abs("testdata/python/stdio_server.py")
	return []runnerSpec{
		{Label: "plain binary (Go test server)", Argv: []string{ts, "--era", "legacy"}, Env: env},
		{Label: "node (server-memory)", Argv: []string{"node", memory}, Env: env},
		{Label: "npx -y (server-memory)", Argv: []string{"npx", "-y", npmMemory}, Env: npxEnv, Dir: project},
		{Label: "python3 (test server)", Argv: []string{python, pyServer}, Env: append(append([]string(nil), env...), "REPORT_API_TOKEN=x")},
	}, cleanup, nil
}

// npmMemory is the pinned server-memory, as npx takes it.
const npmMemory = "@modelcontextprotocol/server-memory@2026.8.31"

// npxOffline keeps npx from the registry: a package missing from
// testdata/peers fails at once instead of being downloaded.
var npxOffline = []string{"npm_config_offline=true", "npm_config_update_notifier=false"}

// npxFolder makes an empty folder inside testdata/peers, where npx finds
// the pinned packages in the node_modules above it.
func npxFolder(peers string) (string, func(), error) {
	dir, err := os.MkdirTemp(peers, ".run-scale-")
	if err != nil {
		return "", nil, fmt.Errorf("a folder for npx in %s: %w", peers, err)
	}
	return dir, func() { _ = os.RemoveAll(dir) }, nil
}

// parseRunner reads -runner "LABEL=COMMAND ARG...".
func parseRunner(v string) (runnerSpec, error) {
	label, cmd, ok := strings.Cut(v, "=")
	argv := strings.Fields(cmd)
	if !ok || label == "" || len(argv) == 0 {
		return runnerSpec{}, errors.New(`-runner: want "LABEL=COMMAND ARG..."`)
	}
	return runnerSpec{Label: label, Argv: argv, Env: minimalEnv()}, nil
}

// runnerList is the runners -runner names, or the default ones.
func runnerList(flags []string, testserver, peers, python string) ([]runnerSpec, func(), error) {
	if len(flags) == 0 {
		return defaultRunners(testserver, peers, python)
	}
	var out []runnerSpec
	for _, f := range flags {
		r, err := parseRunner(f)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, r)
	}
	return out, func() {}, nil
}

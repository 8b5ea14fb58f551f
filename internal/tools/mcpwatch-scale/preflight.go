package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The preflight side by side: `mcpwatch check` against a reference Python
// preflight (testdata/python/preflight_reference.py: initialize once per
// server, one server after the other) on the same .mcp.json and lock, over
// the repository's Python test server (testdata/python/stdio_server.py, a
// legacy server as the Python SDK's are). And `mcpwatch probe` of that
// server with --era auto against --era legacy: what era detection costs.
// Wall time and CPU (user + system of the command and every process it
// waited for, the servers included: wait4's rusage) of each run; the runs of
// a comparison alternate, so a change in the machine's load hits both alike.
// Both run the Python executable itself, never a version manager's shim
// (realInterpreter), so the servers' share is the same for both.

// preflightResult is one comparison.
type preflightResult struct {
	Label   string `json:"label"`
	Mode    string `json:"mode"` // "preflight"
	Servers int    `json:"servers"`
	Runs    int    `json:"runs"`
	// A and B name the two commands compared: A is mcpwatch's.
	A         string    `json:"a"`
	B         string    `json:"b"`
	AWallS    []float64 `json:"a_wall_s"`
	BWallS    []float64 `json:"b_wall_s"`
	ACPUS     []float64 `json:"a_cpu_s"`
	BCPUS     []float64 `json:"b_cpu_s"`
	AWallMed  float64   `json:"a_wall_median_s"`
	BWallMed  float64   `json:"b_wall_median_s"`
	ACPUMed   float64   `json:"a_cpu_median_s"`
	BCPUMed   float64   `json:"b_cpu_median_s"`
	WallRatio float64   `json:"wall_ratio"` // A / B
	CPURatio  float64   `json:"cpu_ratio"`
	// The means of the CPU split: the command's own and its children's
	// (the servers), in clock ticks (see timeCommand).
	AOwnCPUMean      float64 `json:"a_own_cpu_mean_s"`
	AChildrenCPUMean float64 `json:"a_children_cpu_mean_s"`
	BOwnCPUMean      float64 `json:"b_own_cpu_mean_s"`
	BChildrenCPUMean float64 `json:"b_children_cpu_mean_s"`
	Load             string  `json:"load"`
	ServerNote       string  `json:"server"`
	// Python is the interpreter both the reference and the servers ran.
	Python string `json:"python,omitempty"`
}

// preflightOptions say where the programs are.
type preflightOptions struct {
	mcpwatch, python, server, reference string
	runs                                int
}

// command is one timed program run in dir.
type command struct {
	name string
	dir  string
	argv []string
	env  []string
}

// runPreflightComparisons measures check against the reference preflight
// for each count of servers, then probe --era auto against --era legacy.
func runPreflightComparisons(ctx context.Context, o preflightOptions, counts []int) ([]*preflightResult, error) {
	for _, p := range []*string{&o.mcpwatch, &o.server, &o.reference} {
		abs, err := filepath.Abs(*p)
		if err != nil {
			return nil, err
		}
		*p = abs
	}
	python, err := realInterpreter(ctx, o.python)
	if err != nil {
		return nil, err
	}
	o.python = python
	dir, err := os.MkdirTemp("", "mcpwatch-preflight-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(dir) }()

	env := append(minimalEnv(), "REPORT_API_TOKEN=bench-token")
	var out []*preflightResult
	for _, n := range counts {
		sub := filepath.Join(dir, fmt.Sprintf("servers-%d", n))
		if err := writePythonServers(sub, o.python, o.server, n); err != nil {
			return nil, err
		}
		a := command{name: "mcpwatch check", dir: sub, argv: []string{o.mcpwatch, "check"}, env: env}
		b := command{name: "reference Python preflight", dir: sub, argv: []string{o.python, o.reference}, env: env}
		r, err := compare(ctx, a, b, o.runs)
		if err != nil {
			return nil, err
		}
		r.Label, r.Servers, r.Python = fmt.Sprintf("preflight-%d", n), n, o.python
		out = append(out, r)
	}

	server := []string{"--", o.python, o.server}
	a := command{name: "mcpwatch probe --era auto", dir: dir, argv: append([]string{o.mcpwatch, "probe", "--era", "auto"}, server...), env: env}
	b := command{name: "mcpwatch probe --era legacy", dir: dir, argv: append([]string{o.mcpwatch, "probe", "--era", "legacy"}, server...), env: env}
	r, err := compare(ctx, a, b, o.runs)
	if err != nil {
		return nil, err
	}
	r.Label, r.Servers, r.Python = "probe-era-auto", 1, o.python
	out = append(out, r)
	return out, nil
}

// realInterpreter is the Python executable that python names, behind any
// version manager's shim: what sys.executable says. A shim (pyenv's, asdf's)
// is a shell script that runs a dozen more processes at every start, and
// exports variables (PYENV_VERSION) that the reference preflight passes on
// to its servers, whose shims then skip the version lookup, while mcpwatch's
// minimal environment drops them: the same server would cost one tool more
// CPU than the other. With the interpreter itself, both start the same
// processes and only the two preflights' own costs differ.
func realInterpreter(ctx context.Context, python string) (string, error) {
	path, err := exec.LookPath(python)
	if err != nil {
		return "", fmt.Errorf("the Python interpreter %q: %w", python, err)
	}
	out, err := exec.CommandContext(ctx, path, "-c", "import sys; print(sys.executable)").Output() //nolint:gosec // G204: the interpreter the harness was told to use
	if err != nil {
		return "", fmt.Errorf("the Python interpreter %s: where is its executable: %w", path, err)
	}
	real := strings.TrimSpace(string(out))
	if real == "" {
		return "", fmt.Errorf("the Python interpreter %s does not name its executable (sys.executable is empty)", path)
	}
	return real, nil
}

// writePythonServers writes a .mcp.json of n Python test servers, each
// with its credential from the environment, and their lock.
func writePythonServers(dir, python, server string, n int) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	type entry struct {
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env"`
	}
	cfg := map[string]map[string]entry{"mcpServers": {}}
	lock := map[string][]string{}
	for i := range n {
		name := fmt.Sprintf("report%d", i+1)
		cfg["mcpServers"][name] = entry{Command: python, Args: []string{server}, Env: map[string]string{"REPORT_API_TOKEN": "${REPORT_API_TOKEN}"}} //nolint:gosec // G101: a reference to a variable, not a credential
		lock[name] = []string{"fetch_daily_report", "list_report_dates"}
	}
	for file, v := range map[string]any{".mcp.json": cfg, "mcp-tools.lock.json": lock} {
		raw, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, file), raw, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// compare times a against b (timeInTurn) and compares the medians.
func compare(ctx context.Context, a, b command, runs int) (*preflightResult, error) {
	r := &preflightResult{Mode: "preflight", Runs: runs, A: a.name, B: b.name, Load: loadAverage(),
		ServerNote: "testdata/python/stdio_server.py (legacy, -32602 before initialize)"}
	ta, tb, err := timeInTurn(ctx, a, b, runs)
	if err != nil {
		return nil, err
	}
	r.AWallS, r.ACPUS, r.BWallS, r.BCPUS = ta.wall, ta.cpu, tb.wall, tb.cpu
	r.AWallMed, r.BWallMed = median(r.AWallS), median(r.BWallS)
	r.ACPUMed, r.BCPUMed = median(r.ACPUS), median(r.BCPUS)
	r.WallRatio, r.CPURatio = r.AWallMed/r.BWallMed, r.ACPUMed/r.BCPUMed
	r.AOwnCPUMean, r.AChildrenCPUMean = mean(ta.own), mean(ta.children)
	r.BOwnCPUMean, r.BChildrenCPUMean = mean(tb.own), mean(tb.children)
	return r, nil
}

// timings are the wall times and CPU, in seconds, of a command's runs.
type timings struct{ wall, cpu, own, children []float64 }

func (ts *timings) add(t runTiming) {
	ts.wall, ts.cpu = append(ts.wall, t.wall), append(ts.cpu, t.cpu)
	ts.own, ts.children = append(ts.own, t.own), append(ts.children, t.children)
}

// timeInTurn runs a and b in turn, runs times each, after one untimed run
// of each (which fills the page cache and leaves mcpwatch's era cache as
// every later run of a CI job finds it). Alternating, a change in the
// machine's load hits both alike.
func timeInTurn(ctx context.Context, a, b command, runs int) (ta, tb timings, err error) {
	for _, c := range []command{a, b} {
		if _, err := timeCommand(ctx, c); err != nil {
			return ta, tb, err
		}
	}
	for range runs {
		for _, x := range []struct {
			c command
			t *timings
		}{{a, &ta}, {b, &tb}} {
			t, err := timeCommand(ctx, x.c)
			if err != nil {
				return ta, tb, err
			}
			x.t.add(t)
		}
	}
	return ta, tb, nil
}

// runTiming is one timed run: wall time and CPU in seconds, the CPU split
// into the command's own and its children's (the servers it started and
// waited for).
type runTiming struct{ wall, cpu, own, children float64 }

// timeCommand runs c in c.dir and times it. Anything but exit 0 is an
// error: a failing run measures the wrong thing. The CPU is wait4's (user
// + system, microseconds); the split is read of the exited process before
// it is reaped (its /proc stat as a zombie: its own time and its reaped
// children's, in clock ticks of 10 ms), so it is coarser than the total.
func timeCommand(ctx context.Context, c command) (runTiming, error) {
	cmd := exec.CommandContext(ctx, c.argv[0], c.argv[1:]...) //nolint:gosec // G204: the programs the harness compares, built from its own flags
	cmd.Dir, cmd.Env = c.dir, c.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return runTiming{}, fmt.Errorf("%s in %s: %w", c.name, c.dir, err)
	}
	var t runTiming
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil); err == nil {
		if st, err := readProcStat(cmd.Process.Pid); err == nil {
			t.own, t.children = st.cpu.Seconds(), st.childCPU.Seconds()
		}
	}
	err := cmd.Wait()
	t.wall = time.Since(start).Seconds()
	if err != nil {
		return runTiming{}, fmt.Errorf("%s in %s: %w\n%s", c.name, c.dir, err, out.Bytes())
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		t.cpu = tvSeconds(ru.Utime) + tvSeconds(ru.Stime)
	}
	return t, nil
}

func tvSeconds(tv syscall.Timeval) float64 {
	return float64(tv.Sec) + float64(tv.Usec)/1e6
}

func (r *preflightResult) print(w io.Writer) {
	fmt.Fprintf(w, "== %s: %s vs %s, %d server(s), %d runs each, load %s\n", r.Label, r.A, r.B, r.Servers, r.Runs, r.Load)
	if r.Python != "" {
		fmt.Fprintf(w, "  Python: %s\n", r.Python)
	}
	fmt.Fprintf(w, "  %-30s wall median %4.0f ms  CPU median %4.0f ms  wall %v\n", r.A+":", 1000*r.AWallMed, 1000*r.ACPUMed, msList(r.AWallS))
	fmt.Fprintf(w, "  %-30s wall median %4.0f ms  CPU median %4.0f ms  wall %v\n", r.B+":", 1000*r.BWallMed, 1000*r.BCPUMed, msList(r.BWallS))
	fmt.Fprintf(w, "  ratio: wall %.2fx, CPU %.2fx\n", r.WallRatio, r.CPURatio)
	fmt.Fprintf(w, "  CPU means, own + servers: %s %.0f + %.0f ms, %s %.0f + %.0f ms\n",
		r.A, 1000*r.AOwnCPUMean, 1000*r.AChildrenCPUMean, r.B, 1000*r.BOwnCPUMean, 1000*r.BChildrenCPUMean)
}

// preflightReports prints and keeps several results as one report.
type preflightReports []*preflightResult

func (rs preflightReports) print(w io.Writer) {
	for _, r := range rs {
		r.print(w)
	}
}

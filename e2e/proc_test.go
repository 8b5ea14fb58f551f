//go:build e2e

package e2e

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// stopGrace is how long a process gets between SIGTERM and SIGKILL. mcpwatch
// promises to stop within 5 s; Prometheus flushes its head block.
const stopGrace = 10 * time.Second

// harness starts the processes of one test, each in its own process group
// with its output in a log file, and ends all of them when the test ends,
// passed or failed. On failure it prints every log.
type harness struct {
	t   *testing.T
	dir string // the test's working directory: configs, data dirs, logs
	// mcpwatchEnv is added to mcpwatch serve's environment by
	// startPagePath (a proxy and a CA for its issuer checks).
	mcpwatchEnv []string

	mu    sync.Mutex
	procs []*proc
}

func newHarness(t *testing.T) *harness {
	h := &harness{t: t, dir: t.TempDir()}
	// Registered after TempDir, so it runs first: processes end before their
	// directory is removed.
	t.Cleanup(h.stopAll)
	return h
}

// proc is one started process.
type proc struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	log     *os.File
	exited  chan struct{} // closed once Wait returned
	waitErr error         // valid after exited is closed
	stopped bool          // we asked it to stop; its exit is expected
}

// start runs argv with env added to this process's environment, in the
// harness directory, in a new process group.
// startPrometheus starts Prometheus on addr with the prometheus.yml of the
// harness's directory, its lifecycle API on (the tests reload rules).
func (h *harness) startPrometheus(addr string) *proc {
	h.t.Helper()
	return h.start("prometheus", nil, "prometheus",
		"--config.file="+filepath.Join(h.dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(h.dir, "prometheus-data"),
		"--web.listen-address="+addr, "--web.enable-lifecycle")
}

// startAlertmanager starts one Alertmanager on addr with the
// alertmanager.yml of the harness's directory, clustering off.
func (h *harness) startAlertmanager(addr string) *proc {
	h.t.Helper()
	return h.start("alertmanager", nil, "prometheus-alertmanager",
		"--config.file="+filepath.Join(h.dir, "alertmanager.yml"),
		"--storage.path="+filepath.Join(h.dir, "alertmanager-data"),
		"--web.listen-address="+addr, "--cluster.listen-address=")
}

func (h *harness) start(name string, env []string, argv ...string) *proc {
	h.t.Helper()
	logPath := filepath.Join(h.dir, name+".log")
	log, err := os.Create(logPath)
	if err != nil {
		h.t.Fatalf("start %s: %v", name, err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = h.dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = log, log
	// Setpgid: stopping the group also ends children (node workers, probed
	// servers) that did not leave it. Pdeathsig is the last resort should the
	// test binary itself be killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		h.t.Fatalf("start %s (%s): %v", name, argv[0], err)
	}
	p := &proc{name: name, cmd: cmd, logPath: logPath, log: log, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	h.mu.Lock()
	h.procs = append(h.procs, p)
	h.mu.Unlock()
	h.t.Logf("started %s (pid %d): %s", name, cmd.Process.Pid, strings.Join(argv, " "))
	return p
}

// stop ends p's process group: SIGTERM, then SIGKILL after stopGrace. It
// returns how the process exited (nil for exit status 0).
func (p *proc) stop() error {
	p.stopped = true
	pgid := p.cmd.Process.Pid
	select {
	case <-p.exited:
	default:
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(stopGrace):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-p.exited
			p.log.Close()
			return fmt.Errorf("%s did not stop within %s of SIGTERM; killed", p.name, stopGrace)
		}
	}
	// Whatever is left in the group (a child that outlived its parent).
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	p.log.Close()
	return p.waitErr
}

// running reports an error when p has exited without being asked to.
func (p *proc) running() error {
	select {
	case <-p.exited:
		if p.stopped {
			return nil
		}
		if p.waitErr == nil {
			return fmt.Errorf("%s exited unexpectedly (status 0); see its log %s", p.name, p.logPath)
		}
		return fmt.Errorf("%s exited unexpectedly (%w); see its log %s", p.name, p.waitErr, p.logPath)
	default:
		return nil
	}
}

// stopAll ends every process, newest first, and prints their logs when the
// test failed.
func (h *harness) stopAll() {
	h.mu.Lock()
	procs := h.procs
	h.mu.Unlock()
	for i := len(procs) - 1; i >= 0; i-- {
		p := procs[i]
		if !p.stopped {
			if err := p.stop(); err != nil {
				var exit *exec.ExitError
				if !errors.As(err, &exit) { // a signal exit is how most of them end
					h.t.Errorf("stopping %s: %v", p.name, err)
				}
			}
		}
	}
	if !h.t.Failed() {
		return
	}
	for _, p := range procs {
		h.t.Logf("---- log of %s (%s) ----\n%s", p.name, p.logPath, tailOfFile(p.logPath, 64<<10))
	}
}

// checkRunning fails the test at once when a started process has died, so
// a wait does not sit out its timeout for a process that is gone.
func (h *harness) checkRunning() {
	h.t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, p := range h.procs {
		if err := p.running(); err != nil {
			h.t.Fatal(err)
		}
	}
}

// tailOfFile returns the last max bytes of a file.
func tailOfFile(path string, max int64) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(cannot read: %v)", err)
	}
	defer f.Close()
	if info, err := f.Stat(); err == nil && info.Size() > max {
		if _, err := f.Seek(-max, io.SeekEnd); err == nil {
			b, _ := io.ReadAll(f)
			return "(...)\n" + string(b)
		}
	}
	b, _ := io.ReadAll(f)
	return string(b)
}

// kill ends p's process group with SIGKILL, as a crash or an evicted pod
// would: no shutdown, no last scrape. Its exit is expected from then on.
func (p *proc) kill() {
	p.stopped = true
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.exited
	p.log.Close()
}

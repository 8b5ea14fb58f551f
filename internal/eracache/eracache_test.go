package eracache

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/testtool"
	"github.com/mcpwatch/mcpwatch/probe"
)

func TestPathFor(t *testing.T) {
	if got, want := PathFor("ci/mcp-tools.lock.json"), filepath.Join("ci", ".mcp-tools.lock.json.era"); got != want {
		t.Errorf("PathFor = %q, want %q", got, want)
	}
}

func TestLearnSaveLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".lock.era")
	report := config.Server{Name: "report", Command: "./bin/reportserver", Args: []string{"--token", "${TOKEN}"}}
	remote := config.Server{Name: "remote", URL: "https://mcp.example.com/mcp"}

	c := Load(path)
	if c.Hint(report) != "" {
		t.Fatal("a missing file gave a hint")
	}
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("an unchanged cache was written: %v", err)
	}
	c.Learn(report, &probe.Result{OK: true, Era: probe.EraLegacy})
	c.Learn(remote, &probe.Result{OK: true, Era: probe.EraModern})
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}

	c = Load(path)
	if c.Hint(report) != probe.EraLegacy || c.Hint(remote) != probe.EraModern {
		t.Errorf("hints %q %q after a reload", c.Hint(report), c.Hint(remote))
	}
	moved := report
	moved.Command = "./bin/other"
	if c.Hint(moved) != "" {
		t.Error("a server whose command changed got the old server's hint")
	}
	// A canceled probe says nothing; a failed one forgets.
	c.Learn(report, &probe.Result{Reason: probe.ReasonCanceled})
	if c.Hint(report) != probe.EraLegacy {
		t.Error("a canceled probe dropped the hint")
	}
	// A timeout says nothing of the era (the daemon kept it, check dropped
	// it); a protocol error does.
	c.Learn(report, &probe.Result{Reason: probe.ReasonTimeout})
	if c.Hint(report) != probe.EraLegacy {
		t.Error("a timeout dropped the hint")
	}
	c.Learn(report, &probe.Result{Reason: probe.ReasonProtocol})
	if c.Hint(report) != "" {
		t.Error("a probe failed by a change of era kept the hint")
	}
	c.Keep([]string{"report"})
	if c.Hint(remote) != "" {
		t.Error("Keep kept a server not named")
	}
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	if raw, _ := os.ReadFile(path); string(raw) != "{\n  \"kind\": \"mcpwatch-era-cache\",\n  \"servers\": {}\n}\n" {
		t.Errorf("file after forgetting everything:\n%s", raw)
	}
}

func TestLoadUnusable(t *testing.T) {
	s := config.Server{Name: "report", Command: "x"}
	for name, content := range map[string]string{
		"corrupt":    `{"kind": "mcpwatch-era-cache", "servers": {"report": `,
		"a lock":     `{"report": ["fetch_daily_report"]}`,
		"wrong era":  `{"kind": "mcpwatch-era-cache", "servers": {"report": {"era": "2025-06-18", "target": "x"}}}`,
		"not json":   "\x00\x01",
		"wrong type": `{"kind": "mcpwatch-era-cache", "servers": []}`,
	} {
		path := filepath.Join(t.TempDir(), ".era")
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if hint := Load(path).Hint(s); hint != "" {
			t.Errorf("%s: hint %q", name, hint)
		}
	}
}

// A write killed at its rename (kill -9) leaves a temp file beside the
// cache; the next run sweeps it even when it has nothing to write.
func TestSaveSweepsTempsWithNothingToWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".lock.era")
	stale := filepath.Join(dir, "..lock.era.tmp-1234") // as atomicfile names it
	if err := os.WriteFile(stale, []byte(`{"kind":`), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	c := Load(path)
	if err := c.Save(); err != nil { // nothing learned: nothing to write
		t.Fatal(err)
	}
	if _, err := os.Lstat(stale); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the temp file of the killed write is still there: %v", err)
	}
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Save wrote a cache with nothing in it: %v", err)
	}
}

// A cache path that names a named pipe gives an empty cache at once, as a
// corrupt file does: it is a hint, never a reason to wait.
func TestLoadNeverBlocks(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), ".lock.era")
	testtool.Mkfifo(t, fifo)
	loaded := make(chan *Cache, 1)
	go func() { loaded <- Load(fifo) }()
	select {
	case c := <-loaded:
		if c.Hint(config.Server{Name: "report", Command: "x"}) != "" {
			t.Error("a hint from a named pipe")
		}
	case <-time.After(time.Minute):
		t.Fatal("Load of a named pipe has not returned after a minute: it blocks")
	}
}

// The one rule of a server's identity for its era: a rotated credential
// keeps it (the daemon dropped it, check kept it), a new command, URL or
// pinned era does not. The daemon and this cache both ask SameTarget and
// ForgetsEra.
func TestSameTarget(t *testing.T) {
	a := config.Server{Name: "s", URL: "https://mcp.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer old"}}
	rotated := a
	rotated.Headers = map[string]string{"Authorization": "Bearer new"}
	rotated.Env = map[string]string{"TOKEN": "x"}
	if !SameTarget(a, rotated) {
		t.Error("a rotated header is another target")
	}
	for name, change := range map[string]func(*config.Server){
		"url":       func(s *config.Server) { s.URL = "https://other.example.com/mcp" },
		"transport": func(s *config.Server) { s.Transport = probe.TransportSSE },
		"era":       func(s *config.Server) { s.Era = probe.EraLegacy },
		"args":      func(s *config.Server) { s.Args = []string{"x"} },
	} {
		b := a
		change(&b)
		if SameTarget(a, b) {
			t.Errorf("a new %s is the same target", name)
		}
	}
	for _, r := range []probe.Reason{probe.ReasonTimeout, probe.ReasonCanceled, probe.ReasonConnection} {
		if ForgetsEra(r) {
			t.Errorf("ForgetsEra(%s)", r)
		}
	}
}

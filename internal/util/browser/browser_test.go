package browser

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestCommands(t *testing.T) {
	const u = "https://as.example/authorize?a=1&b=2"
	for _, tc := range []struct {
		browser, goos string
		want          [][]string
	}{
		{"", "linux", [][]string{{"xdg-open", u}, {"wslview", u}}},
		{"", "darwin", [][]string{{"open", u}}},
		{"", "windows", [][]string{{"rundll32", "url.dll,FileProtocolHandler", u}}},
		{"firefox", "linux", [][]string{{"firefox", u}}},
		{"w3m -o x %s:lynx", "linux", [][]string{{"w3m", "-o", "x", u}, {"lynx", u}}},
		{":  :", "darwin", [][]string{{"open", u}}},
	} {
		got := commands(u, tc.browser, tc.goos)
		if !slices.EqualFunc(got, tc.want, slices.Equal[[]string]) {
			t.Errorf("BROWSER=%q on %s: %q, want %q", tc.browser, tc.goos, got, tc.want)
		}
	}
}

// $BROWSER's first command that exists is started with the URL, and Open
// returns without waiting for it: the fake browser writes the URL it got
// into a FIFO the test reads, its ready signal.
func TestOpenStartsBrowser(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "opened")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	script := filepath.Join(dir, "fake-browser")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nprintf '%s' \"$1\" > "+fifo+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"BROWSER": "/nonexistent/browser:" + script}
	if err := Open("http://127.0.0.1:1/x?y=1", func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	got := make(chan []byte, 1)
	go func() {
		b, _ := os.ReadFile(fifo) // blocks until the browser writes
		got <- b
	}()
	select {
	case b := <-got:
		if string(b) != "http://127.0.0.1:1/x?y=1" {
			t.Errorf("the browser got %q", b)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the browser was not started")
	}
}

func TestOpenWithoutBrowser(t *testing.T) {
	env := map[string]string{"BROWSER": "/nonexistent/one:/nonexistent/two"}
	err := Open("http://x", func(k string) string { return env[k] })
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/one (not found), /nonexistent/two (not found)") {
		t.Errorf("Open = %v", err)
	}
}

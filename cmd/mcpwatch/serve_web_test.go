package main

import (
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Behind a proxy: every path under the prefix of --web.external-url, the
// root redirected to it, and the status page's links relative.
func TestServeUnderRoutePrefix(t *testing.T) {
	t.Parallel()
	config := writeJSON(t, t.TempDir(), "mcpwatch.yml", map[string]any{"servers": map[string]any{
		"report": tokenGatedServer("example-token"),
	}})
	base := serveInProcess(t, nil, "-c", config, "--web.external-url", "https://example.org/watch/")
	if !strings.HasSuffix(base, "/watch") {
		t.Fatalf("serving at %s, want the prefix /watch", base)
	}
	if st := firstProbe(t, base, "report"); st.State != "ok" {
		t.Errorf("report is %s under the prefix", st.State)
	}
	page := scrape(t, base+"/")
	for _, want := range []string{`href="server/report"`, `href="metrics"`, `href="api/v1/servers"`} {
		if !strings.Contains(page, want) {
			t.Errorf("status page lacks the relative link %s", want)
		}
	}
	if strings.Contains(page, `href="/`) {
		t.Errorf("status page holds an absolute link")
	}
	server := scrape(t, base+"/server/report")
	if !strings.Contains(server, `href="../"`) || !strings.Contains(server, `href="../api/v1/servers/report"`) {
		t.Errorf("server page lacks its relative links")
	}

	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	root := strings.TrimSuffix(base, "/watch")
	resp, err := client.Get(root + "/")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusFound || loc != "/watch/" {
		t.Errorf("GET / = %d Location %q, want 302 to /watch/", resp.StatusCode, loc)
	}
	if code := get(t, root+"/metrics"); code != http.StatusNotFound {
		t.Errorf("GET /metrics outside the prefix = %d, want 404", code)
	}
}

func get(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode
}

// Socket activation: the built binary serves on the socket systemd passes
// as fd 3, with LISTEN_PID its own pid (set by the shell it execs from).
func TestServeSystemdSocket(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	config := writeJSON(t, dir, "mcpwatch.yml", map[string]any{"servers": map[string]any{
		"report": tokenGatedServer("example-token"),
	}})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f, err := l.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close() // the duplicate in f stays open and listening
	defer func() { _ = f.Close() }()

	cmd := exec.Command("/bin/sh", "-c", `LISTEN_PID=$$ LISTEN_FDS=1 exec "$0" "$@"`,
		mcpwatchBin, "serve", "-c", config, "--web.systemd-socket", "--log.format", "json")
	cmd.ExtraFiles = []*os.File{f}
	logs, logW, _ := readLogs(t)
	cmd.Stderr = logW
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}()
	if got := logs.metricsURL(t); got != "http://"+addr+"/metrics" {
		t.Errorf("serving at %s, want the passed socket %s", got, addr)
	}
	if st := firstProbe(t, "http://"+addr, "report"); st.State != "ok" {
		t.Errorf("report is %s over the passed socket", st.State)
	}
}

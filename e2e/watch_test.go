//go:build e2e

package e2e

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestWatchChangesEverything: server-everything over streamable HTTP
// announces a change of its tools (notifications/tools/list_changed) as a
// session's client finishes initializing, on the session's stream. With an
// hourly schedule, mcpwatch holds a listening stream to it and re-probes
// at once; without the listener the next probe would come an hour later.
// The time from the notification showing in /metrics to the probe it
// caused showing there is logged (the acceptance is within 2 s).
func TestWatchChangesEverything(t *testing.T) {
	node := needEverything(t)
	everything := startEverythingHTTP(t, node, "streamableHttp")
	h := newHarness(t)
	addr := freeAddr(t)
	writeFile(t, filepath.Join(h.dir, "mcpwatch.yml"), fmt.Sprintf(`
defaults:
  schedule: "@every 1h"
servers:
  everything:
    url: http://%s/mcp
`, everything))
	h.start("mcpwatch", nil, suite.mcpwatch, "serve",
		"--config.file", filepath.Join(h.dir, "mcpwatch.yml"),
		"--web.listen-address", addr, "--log.level", "debug")

	sel := `{server="everything"}`
	var notified, reprobed time.Time
	h.waitFor("a change announced and re-probed", 60*time.Second, func() error {
		text, err := scrapeText("http://" + addr + "/metrics")
		if err != nil {
			return err
		}
		now := time.Now()
		if notified.IsZero() && series(text, "mcpwatch_change_notifications_total"+sel) >= 1 {
			notified = now
		}
		if !notified.IsZero() && series(text, "mcpwatch_probes_total"+sel) >= 2 {
			reprobed = now
			return nil
		}
		return fmt.Errorf("listener up %v, notifications %v, probes %v", series(text, "mcpwatch_change_listener_up"+sel),
			series(text, "mcpwatch_change_notifications_total"+sel), series(text, "mcpwatch_probes_total"+sel))
	})
	t.Logf("the change probe showed in /metrics %s after the notification (polled every %s)", reprobed.Sub(notified), pollEvery)
	text, _ := scrapeText("http://" + addr + "/metrics")
	if up := series(text, "mcpwatch_change_listener_up"+sel); up != 1 {
		t.Errorf("mcpwatch_change_listener_up %v, want 1", up)
	}
	if tools := series(text, "mcpwatch_tools"+sel); tools != 13 {
		t.Errorf("mcpwatch_tools %v, want 13", tools)
	}
}

func scrapeText(url string) (string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// series is the value of one series of a scrape; -1 when absent.
func series(text, name string) float64 {
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err == nil {
				return f
			}
		}
	}
	return -1
}

package probe_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/probe"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// A response that holds its result twice is refused on every transport,
// with the same reason and the same words: read by one JSON parser it
// lists the first result's tools, by another the second's, so no answer
// read from it could be trusted.
func TestDuplicateResultRefusedOnEveryTransport(t *testing.T) {
	t.Parallel()
	cfg := probetest.Config{Behavior: probetest.DuplicateResult}
	modern := probetest.Config{Behavior: probetest.DuplicateResult, Era: probetest.EraModern}
	sseAnswers := probetest.Config{Behavior: probetest.DuplicateResult, Era: probetest.EraModern, SSEResponses: true}
	remote := func(cfg probetest.Config, sse bool) func(t *testing.T) probe.Target {
		return func(t *testing.T) probe.Target {
			_, url := kitServer(t, cfg, sse)
			transport := probe.TransportHTTP
			if sse {
				transport = probe.TransportSSE
			}
			return probe.Target{URL: url, Transport: transport}
		}
	}
	targets := map[string]func(t *testing.T) probe.Target{
		"stdio":                              func(*testing.T) probe.Target { return stdioTarget(cfg, nil) },
		"streamable http, legacy":            remote(cfg, false),
		"streamable http, modern":            remote(modern, false),
		"streamable http, answers as events": remote(sseAnswers, false),
		"legacy sse":                         remote(cfg, true),
	}
	for name, target := range targets {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			res := runProbe(t, target(t), time.Minute, probe.Options{})
			if res.OK || res.Reason != probe.ReasonProtocol {
				t.Fatalf("ok %v, reason %q, tools %q: want a protocol failure", res.OK, res.Reason, res.ToolNames())
			}
			if !strings.Contains(res.Error, `duplicate member "result"`) {
				t.Errorf("error %q does not name the member sent twice", res.Error)
			}
			if len(res.Tools) != 0 {
				t.Errorf("a refused answer reports tools %q", res.ToolNames())
			}
		})
	}
}

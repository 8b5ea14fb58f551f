package runner

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/contracts"
	"github.com/mcpwatch/mcpwatch/probe"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

func mustContracts(t *testing.T, src string) []contracts.Contract {
	t.Helper()
	f, err := contracts.ParseFile([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return f.Sorted()
}

func callServer(url string, cs []contracts.Contract) config.Server {
	return normalized(config.Server{
		Name: "remote", URL: url, Transport: probe.TransportHTTP,
		Headers: map[string]string{"Authorization": "Bearer ${TOKEN}"},
		Timeout: 5 * time.Second, CallTimeout: 5 * time.Second,
		Contracts: cs,
	})
}

// Calls run after the list, in the same probe; what they send and what
// comes back is scrubbed of the server's secrets, echoed ones included.
func TestProbeCallsScrubbed(t *testing.T) {
	tools := append(probetest.DefaultTools(), probetest.EchoTool())
	url := httpServer(t, probetest.Config{Tools: tools, Token: runnerSecret})
	s := callServer(url, mustContracts(t, `{"tools":{
		"echo":{"input":{"message":"my token is `+runnerSecret+`"},"expect":{"contains":"the weather"}},
		"list_report_dates":{"expect":{"contains":"2026-08-01"}}}}`))

	obs := Probe(t.Context(), NewPool(1, 1), s, Request{Lookup: lookupSecret, Calls: true})
	if !obs.Result.OK || len(obs.Calls) != 2 {
		t.Fatalf("probe %v, %d calls", obs.Result.OK, len(obs.Calls))
	}
	echo, dates := obs.Calls[0], obs.Calls[1]
	if !dates.Passed || echo.Passed || echo.Reason != contracts.ReasonAssertion {
		t.Fatalf("echo %+v, dates %+v", echo, dates)
	}
	if obs.Timeout != 15*time.Second {
		t.Errorf("deadline %s, want the probe's and one call timeout per contract", obs.Timeout)
	}
	b, _ := json.Marshal(obs.Calls)
	if strings.Contains(string(b), runnerSecret) || strings.Contains(echo.Message, runnerSecret) {
		t.Fatalf("a secret in the outcomes: %s", b)
	}
	if !strings.Contains(echo.Message, config.Redacted) || !strings.Contains(string(echo.Input), config.Redacted) ||
		!strings.Contains(echo.Last().Response, "Echo: my token is "+config.Redacted) {
		t.Errorf("echo: message %q, input %s, response %q", echo.Message, echo.Input, echo.Last().Response)
	}
	// Without Calls, the same server is only listed.
	obs = Probe(t.Context(), NewPool(1, 1), s, Request{Lookup: lookupSecret})
	if obs.Calls != nil || obs.Timeout != 5*time.Second {
		t.Errorf("no calls asked: %d outcomes, deadline %s", len(obs.Calls), obs.Timeout)
	}
}

// The advertise-then-fail server: both tools listed, every call failing,
// each with the reason it fails for. The kit's revoked token ("401
// Unauthorized (the token was revoked)", HTTP 401 on the call) is a
// rejected credential, naming the one the server is given.
func TestProbeCallsAdvertiseThenFail(t *testing.T) {
	cs := `{"tools":{"fetch_daily_report":{"input":{"date":"2026-08-01"}},"list_report_dates":{}}}`
	for behavior, reason := range map[probetest.Behavior]probe.Reason{
		probetest.CallIsError:         probe.ReasonCredentialRejected,
		probetest.CallRPCError:        probe.ReasonCredentialRejected,
		probetest.CallUnauthorized401: probe.ReasonCredentialRejected,
		probetest.CallErrorText:       contracts.ReasonErrorText,
		probetest.Healthy:             probe.ReasonNone,
	} {
		url := httpServer(t, probetest.Config{Behavior: behavior})
		obs := Probe(t.Context(), NewPool(1, 1), callServer(url, mustContracts(t, cs)), Request{Lookup: lookupSecret, Calls: true})
		if !obs.Result.OK || len(obs.Result.Tools) != 2 {
			t.Fatalf("%s: the list should succeed: %+v", behavior, obs.Result)
		}
		for _, o := range obs.Calls {
			if o.Passed != (reason == "") || o.Reason != reason {
				t.Errorf("%s: %s passed=%v reason=%s (%s), want %q", behavior, o.Tool, o.Passed, o.Reason, o.Message, reason)
			}
			rejected := reason == probe.ReasonCredentialRejected
			if rejected != (o.Rejection != nil) || rejected && (o.Rejection.Credential != "header:Authorization" || o.Rejection.Quote == "") {
				t.Errorf("%s: %s rejection %+v, want one naming header:Authorization and quoting the server", behavior, o.Tool, o.Rejection)
			}
		}
	}
}

func TestProbeCallsProbeFailed(t *testing.T) {
	url := httpServer(t, probetest.Config{Behavior: probetest.ServerError500})
	obs := Probe(t.Context(), NewPool(1, 1), callServer(url, mustContracts(t, `{"tools":{"list_report_dates":{}}}`)), Request{Lookup: lookupSecret, Calls: true})
	if obs.Result.OK || len(obs.Calls) != 1 || obs.Calls[0].Reason != contracts.ReasonProbeFailed || len(obs.Calls[0].Attempts) != 0 {
		t.Fatalf("calls after a failed probe: %+v", obs.Calls)
	}
}

// AutoCalls makes the calls contracts.Auto chooses, after the server's own
// contracts and never twice for a tool: the read-only tools that need no
// input. A tool that is not annotated read-only is never chosen.
func TestProbeAutoCalls(t *testing.T) {
	write := probetest.Tool{Name: "reset_cache", InputSchema: map[string]any{"type": "object"}}
	tools := append(probetest.DefaultTools(), probetest.EchoTool(), write)
	url := httpServer(t, probetest.Config{Tools: tools, Token: runnerSecret})

	s := callServer(url, nil)
	obs := Probe(t.Context(), NewPool(1, 1), s, Request{Lookup: lookupSecret, AutoCalls: 5})
	if !obs.Result.OK || len(obs.Calls) != 1 {
		t.Fatalf("probe %v, calls %+v: want list_report_dates alone", obs.Result.OK, obs.Calls)
	}
	if c := obs.Calls[0]; c.Tool != "list_report_dates" || !c.Passed || !c.Auto || string(c.Input) != "{}" {
		t.Errorf("auto call %+v", c)
	}
	if obs.Timeout != 5*time.Second+5*5*time.Second {
		t.Errorf("deadline %s, want the probe's and a call timeout per auto call", obs.Timeout)
	}

	// With a contract of its own for the tool, Auto leaves it to the
	// contract; without Calls, the contracts are not made, the auto calls are.
	s = callServer(url, mustContracts(t, `{"tools":{"list_report_dates":{"expect":{"contains":"2026-08-01"}}}}`))
	obs = Probe(t.Context(), NewPool(1, 1), s, Request{Lookup: lookupSecret, Calls: true, AutoCalls: 5})
	if len(obs.Calls) != 1 || obs.Calls[0].Auto || !obs.Calls[0].Passed {
		t.Errorf("calls %+v: want the contract alone", obs.Calls)
	}
	obs = Probe(t.Context(), NewPool(1, 1), s, Request{Lookup: lookupSecret, AutoCalls: 5})
	if len(obs.Calls) != 1 || !obs.Calls[0].Auto {
		t.Errorf("calls %+v: want the auto call alone", obs.Calls)
	}
}

// calls: auto in the configuration makes the probes that make the calls
// call one read-only tool that needs no input, and asserts it answers, and
// not with a rejected credential; a probe without Calls calls nothing.
func TestProbeConfiguredAutoCalls(t *testing.T) {
	write := probetest.Tool{Name: "reset_cache", InputSchema: map[string]any{"type": "object"}}
	tools := append(probetest.DefaultTools(), write)
	s := callServer(httpServer(t, probetest.Config{Tools: tools, Token: runnerSecret}), nil)
	s = s.Normalized(config.Defaults{AutoCalls: 1})
	if s.AutoCalls != 1 || !s.HasCalls() {
		t.Fatalf("defaults.calls: auto left the server with %d auto calls", s.AutoCalls)
	}
	obs := Probe(t.Context(), NewPool(1, 1), s, Request{Lookup: lookupSecret, Calls: true})
	if len(obs.Calls) != 1 || obs.Calls[0].Tool != "list_report_dates" || !obs.Calls[0].Auto || !obs.Calls[0].Passed {
		t.Fatalf("calls %+v: want list_report_dates, passed", obs.Calls)
	}
	if obs := Probe(t.Context(), NewPool(1, 1), s, Request{Lookup: lookupSecret}); obs.Calls != nil {
		t.Errorf("a probe without Calls made %+v", obs.Calls)
	}

	rejecting := callServer(httpServer(t, probetest.Config{Behavior: probetest.CallUnauthorized401, Tools: tools, Token: runnerSecret}), nil)
	rejecting = rejecting.Normalized(config.Defaults{AutoCalls: 1})
	obs = Probe(t.Context(), NewPool(1, 1), rejecting, Request{Lookup: lookupSecret, Calls: true})
	if len(obs.Calls) != 1 || obs.Calls[0].Passed || obs.Calls[0].Reason != probe.ReasonCredentialRejected {
		t.Errorf("calls %+v: want the auto call failed, credential_rejected", obs.Calls)
	}
}

// clockCaller records when each call starts, on a fake clock.
type clockCaller struct {
	now    *time.Time
	starts []time.Duration
	t0     time.Time
}

func (c *clockCaller) Call(_ context.Context, tool string, _ json.RawMessage) *probe.CallResult {
	c.starts = append(c.starts, c.now.Sub(c.t0))
	*c.now = c.now.Add(200 * time.Millisecond) // each call takes 200ms
	return &probe.CallResult{Tool: tool, Answered: true}
}

// One server's calls start at least a second apart, retries included, so
// that a limit of one request a second is never hit; a call after a pause
// longer than that does not wait, and a call whose deadline passes while
// it waits is still made (and fails as its deadline says).
func TestSpacedCalls(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	now := t0
	var slept []time.Duration
	sleepErr := error(nil)
	fake := &clockCaller{now: &now, t0: t0}
	s := newSpaced(fake, time.Second, func() time.Time { return now }, func(_ context.Context, d time.Duration) error {
		slept = append(slept, d)
		if sleepErr == nil {
			now = now.Add(d)
		}
		return sleepErr
	})
	for range 3 {
		s.Call(t.Context(), "t", nil)
	}
	now = now.Add(5 * time.Second)
	s.Call(t.Context(), "t", nil)
	sleepErr = context.DeadlineExceeded
	s.Call(t.Context(), "t", nil)
	want := []time.Duration{0, time.Second, 2 * time.Second, 7200 * time.Millisecond, 7400 * time.Millisecond}
	if !slices.Equal(fake.starts, want) {
		t.Errorf("calls started at %v, want %v", fake.starts, want)
	}
	if w := []time.Duration{800 * time.Millisecond, 800 * time.Millisecond, 800 * time.Millisecond}; !slices.Equal(slept, w) {
		t.Errorf("slept %v, want %v", slept, w)
	}
	for i := 1; i < 4; i++ {
		if gap := fake.starts[i] - fake.starts[i-1]; gap < time.Second {
			t.Errorf("calls %d and %d %s apart", i-1, i, gap)
		}
	}
}

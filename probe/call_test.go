package probe_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcpwatch/mcpwatch/probe"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// callOnce probes target with a hook that calls tool once and returns the
// call's result and the probe's.
func callOnce(t *testing.T, target probe.Target, tool string, args string) (*probe.Result, *probe.CallResult, []probe.Tool) {
	t.Helper()
	var got *probe.CallResult
	var listed []probe.Tool
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res := probe.Run(ctx, target, probe.Options{AfterList: func(ctx context.Context, tools []probe.Tool, c probe.Caller) {
		listed = tools
		got = c.Call(ctx, tool, json.RawMessage(args))
	}})
	if !res.OK {
		t.Fatalf("probe failed: %s: %s", res.Reason, res.Error)
	}
	if got == nil {
		t.Fatal("the AfterList hook was not called")
	}
	return res, got, listed
}

func TestCallEveryTransportAndEra(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  probetest.Config
		sse  bool
	}{
		{"legacy http", probetest.Config{Era: probetest.EraLegacy}, false},
		{"modern http", probetest.Config{Era: probetest.EraModern}, false},
		{"modern http, SSE responses", probetest.Config{Era: probetest.EraModern, SSEResponses: true}, false},
		{"legacy sse", probetest.Config{Era: probetest.EraLegacy}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kit, url := kitServer(t, tc.cfg, tc.sse)
			transport := probe.TransportAuto
			if tc.sse {
				transport = probe.TransportSSE
			}
			_, call, tools := callOnce(t, probe.Target{URL: url, Transport: transport}, "fetch_daily_report", `{"date":"2026-08-01"}`)
			if !call.Answered || call.IsError || !strings.Contains(call.Text(), "Daily sales report for 2026-08-01") {
				t.Fatalf("call = %+v, text %q", call, call.Text())
			}
			if kit.Received("tools/call") != 1 {
				t.Errorf("server received %d tools/call, want 1", kit.Received("tools/call"))
			}
			if h, err := tools[0].Hints(); err != nil || h.ReadOnlyHint == nil || !*h.ReadOnlyHint {
				t.Errorf("annotations of %s not kept: %s", tools[0].Name, tools[0].Annotations)
			}
		})
	}
}

func TestCallStdio(t *testing.T) {
	for _, era := range []probetest.Era{probetest.EraLegacy, probetest.EraModern} {
		t.Run(string(era), func(t *testing.T) {
			_, call, _ := callOnce(t, stdioTarget(probetest.Config{Era: era}, nil), "list_report_dates", "")
			if !call.Answered || call.IsError || !strings.Contains(call.Text(), "2026-08-01") {
				t.Fatalf("call = %+v", call)
			}
		})
	}
}

func TestCallFailures(t *testing.T) {
	for _, tc := range []struct {
		behavior            probetest.Behavior
		answered, isError   bool
		reason              probe.Reason
		httpStatus, rpcCode int
		text                string
	}{
		{behavior: probetest.CallIsError, answered: true, isError: true, text: probetest.CallFailureText},
		{behavior: probetest.CallErrorText, answered: true, text: probetest.CallErrorTextBody},
		{behavior: probetest.CallRPCError, reason: probe.ReasonRPCError, rpcCode: -32603},
		{behavior: probetest.CallUnauthorized401, reason: probe.ReasonUnauthorized, httpStatus: http.StatusUnauthorized},
	} {
		for _, era := range []probetest.Era{probetest.EraLegacy, probetest.EraModern} {
			t.Run(string(tc.behavior)+"/"+string(era), func(t *testing.T) {
				_, url := kitServer(t, probetest.Config{Era: era, Behavior: tc.behavior}, false)
				res, call, _ := callOnce(t, probe.Target{URL: url}, "list_report_dates", "{}")
				if len(res.Tools) != 2 {
					t.Errorf("listed %d tools, want both: the server advertises, then fails", len(res.Tools))
				}
				if call.Answered != tc.answered || call.IsError != tc.isError || call.Reason != tc.reason ||
					call.HTTPStatus != tc.httpStatus || call.RPCCode != tc.rpcCode {
					t.Fatalf("call = %+v", call)
				}
				if tc.text != "" && call.Text() != tc.text {
					t.Errorf("text = %q, want %q", call.Text(), tc.text)
				}
				if tc.rpcCode != 0 && call.RPCMessage != probetest.CallFailureText {
					t.Errorf("rpc message = %q", call.RPCMessage)
				}
			})
		}
	}
}

func TestCallUnknownToolAndDeadline(t *testing.T) {
	_, url := kitServer(t, probetest.Config{}, false)
	_, call, _ := callOnce(t, probe.Target{URL: url}, "no_such_tool", "{}")
	if call.Answered || call.RPCCode != -32602 || call.Reason != probe.ReasonRPCError {
		t.Fatalf("unknown tool: %+v", call)
	}

	// A call whose own deadline has passed returns at once as a timeout.
	var got *probe.CallResult
	res := probe.Run(context.Background(), probe.Target{URL: url}, probe.Options{AfterList: func(ctx context.Context, _ []probe.Tool, c probe.Caller) {
		sub, cancel := context.WithDeadline(ctx, time.Now().Add(-time.Second))
		defer cancel()
		got = c.Call(sub, "list_report_dates", nil)
	}})
	if !res.OK || got.Answered || got.Reason != probe.ReasonTimeout {
		t.Fatalf("expired call: probe %v, call %+v", res.OK, got)
	}
}

// A long JSON-RPC error message is cut between two runes, never through
// one: the error goes to logs, reports and pages as UTF-8.
func TestRPCErrorCutsBetweenRunes(t *testing.T) {
	msg := (&probe.RPCError{Code: -32000, Message: "a" + strings.Repeat("é", 150), Method: "tools/call"}).Error()
	if !utf8.ValidString(msg) || !strings.HasSuffix(msg, "é…") {
		t.Errorf("error %q: want valid UTF-8 cut after a whole é", msg)
	}
}

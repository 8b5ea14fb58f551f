package config

import (
	"reflect"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/probe"
)

// Normalize is the one place defaults are applied: the built-in ones to the
// configuration's, the configuration's to each server's, and only to what
// is unset.
func TestNormalize(t *testing.T) {
	cfg := &Config{
		Defaults: Defaults{Timeout: 4 * time.Second, InheritEnv: true, CallTimeout: 7 * time.Second},
		Servers: []Server{
			{Name: "bare", Command: "x"},
			{Name: "own", URL: "https://x.example/mcp", Timeout: time.Second, Schedule: "@every 1m", Era: probe.EraLegacy,
				Transport: probe.TransportSSE, CallSchedule: "@hourly", CallTimeout: 2 * time.Second},
			{Name: "remote", URL: "https://x.example/mcp"},
			{Name: "kept", Command: "x", inheritEnvSet: true},
		},
		Ignored: []Server{{Name: "ignored", Command: "x"}},
	}
	cfg.Normalize()
	b := BuiltinDefaults()
	wantDefaults := Defaults{Timeout: 4 * time.Second, Schedule: b.Schedule, Concurrency: b.Concurrency, StdioConcurrency: b.StdioConcurrency,
		Era: probe.EraAuto, InheritEnv: true, MaxMessageBytes: b.MaxMessageBytes, CallSchedule: DefaultCallSchedule, CallTimeout: 7 * time.Second}
	if cfg.Defaults != wantDefaults {
		t.Errorf("defaults %+v\nwant     %+v", cfg.Defaults, wantDefaults)
	}
	want := []Server{
		{Name: "bare", Command: "x", Transport: probe.TransportStdio, InheritEnv: true, Timeout: 4 * time.Second, Schedule: b.Schedule,
			Era: probe.EraAuto, CallSchedule: DefaultCallSchedule, CallTimeout: 7 * time.Second},
		{Name: "own", URL: "https://x.example/mcp", Timeout: time.Second, Schedule: "@every 1m", Era: probe.EraLegacy,
			Transport: probe.TransportSSE, CallSchedule: "@hourly", CallTimeout: 2 * time.Second},
		{Name: "remote", URL: "https://x.example/mcp", Transport: probe.TransportAuto, Timeout: 4 * time.Second, Schedule: b.Schedule,
			Era: probe.EraAuto, CallSchedule: DefaultCallSchedule, CallTimeout: 7 * time.Second},
		{Name: "kept", Command: "x", inheritEnvSet: true, Transport: probe.TransportStdio, Timeout: 4 * time.Second, Schedule: b.Schedule,
			Era: probe.EraAuto, CallSchedule: DefaultCallSchedule, CallTimeout: 7 * time.Second},
	}
	if !reflect.DeepEqual(cfg.Servers, want) {
		t.Errorf("servers\n%+v\nwant\n%+v", cfg.Servers, want)
	}
	if ig := cfg.Ignored[0]; ig.Timeout != 4*time.Second || !ig.InheritEnv {
		t.Errorf("an ignored server is not normalized: %+v", ig)
	}
	again := *cfg
	again.Servers = append([]Server(nil), cfg.Servers...)
	again.Normalize()
	if !reflect.DeepEqual(again.Servers, cfg.Servers) || again.Defaults != cfg.Defaults {
		t.Error("normalizing twice changed the configuration")
	}

	// Without a call timeout anywhere, a call gets the server's timeout.
	if s := (Server{Command: "x", Timeout: 3 * time.Second}).Normalized(Defaults{}); s.CallTimeout != 3*time.Second {
		t.Errorf("CallTimeout = %s, want the server's 3s", s.CallTimeout)
	}
}

func TestProbeTimeout(t *testing.T) {
	s := Server{Timeout: 5 * time.Second}
	if got := s.ProbeTimeout(2 * time.Second); got != 2*time.Second {
		t.Errorf("with --timeout 2s: %s", got)
	}
	if got := s.ProbeTimeout(0); got != 5*time.Second {
		t.Errorf("without: %s", got)
	}
}

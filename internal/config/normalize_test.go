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
			{Name: "own", URL: "https://x.example/mcp", Timeout: time.Second, StartTimeout: time.Minute, Schedule: "@every 1m", Era: probe.EraLegacy,
				Transport: probe.TransportSSE, CallSchedule: "@hourly", CallTimeout: 2 * time.Second},
			{Name: "remote", URL: "https://x.example/mcp"},
			{Name: "kept", Command: "x", inheritEnvSet: true},
		},
		Ignored: []Server{{Name: "ignored", Command: "x"}},
	}
	cfg.Normalize()
	b := BuiltinDefaults()
	wantDefaults := Defaults{Timeout: 4 * time.Second, StartTimeout: DefaultStartTimeout, Schedule: b.Schedule, Concurrency: b.Concurrency, StdioConcurrency: b.StdioConcurrency,
		Era: probe.EraAuto, InheritEnv: true, MaxMessageBytes: b.MaxMessageBytes, CallSchedule: DefaultCallSchedule, CallTimeout: 7 * time.Second,
		StdioMode: StdioLive, LiveSessions: b.LiveSessions, IssuerInterval: b.IssuerInterval}
	if cfg.Defaults != wantDefaults {
		t.Errorf("defaults %+v\nwant     %+v", cfg.Defaults, wantDefaults)
	}
	want := []Server{
		{Name: "bare", Command: "x", Transport: probe.TransportStdio, InheritEnv: true, Timeout: 4 * time.Second, StartTimeout: DefaultStartTimeout, Schedule: b.Schedule,
			Era: probe.EraAuto, CallSchedule: DefaultCallSchedule, CallTimeout: 7 * time.Second, StdioMode: StdioLive},
		{Name: "own", URL: "https://x.example/mcp", Timeout: time.Second, StartTimeout: time.Minute, Schedule: "@every 1m", Era: probe.EraLegacy,
			Transport: probe.TransportSSE, CallSchedule: "@hourly", CallTimeout: 2 * time.Second},
		{Name: "remote", URL: "https://x.example/mcp", Transport: probe.TransportAuto, Timeout: 4 * time.Second, StartTimeout: DefaultStartTimeout, Schedule: b.Schedule,
			Era: probe.EraAuto, CallSchedule: DefaultCallSchedule, CallTimeout: 7 * time.Second},
		{Name: "kept", Command: "x", inheritEnvSet: true, Transport: probe.TransportStdio, Timeout: 4 * time.Second, StartTimeout: DefaultStartTimeout, Schedule: b.Schedule,
			Era: probe.EraAuto, CallSchedule: DefaultCallSchedule, CallTimeout: 7 * time.Second, StdioMode: StdioLive},
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
	s := Server{Command: "node", Timeout: 5 * time.Second, StartTimeout: time.Minute}
	if got := s.ProbeTimeout(2*time.Second, true); got != 2*time.Second {
		t.Errorf("with --timeout 2s: %s", got)
	}
	if got := s.ProbeTimeout(0, true); got != 5*time.Second {
		t.Errorf("without: %s", got)
	}
	// npx gets start_timeout while it starts, and its timeout once warm;
	// a --timeout longer than start_timeout wins.
	s.Command = "npx"
	for _, tc := range []struct {
		override time.Duration
		starting bool
		want     time.Duration
	}{
		{0, true, time.Minute}, {0, false, 5 * time.Second},
		{2 * time.Second, true, time.Minute}, {2 * time.Second, false, 2 * time.Second},
		{5 * time.Minute, true, 5 * time.Minute},
	} {
		if got := s.ProbeTimeout(tc.override, tc.starting); got != tc.want {
			t.Errorf("npx, --timeout %s, starting %v: %s, want %s", tc.override, tc.starting, got, tc.want)
		}
	}
}

// Commands that install what they run get start_timeout while they start;
// the rule reads the command's base name and, where it matters, its first
// arguments.
func TestInstalls(t *testing.T) {
	for _, tc := range []struct {
		command string
		args    []string
		want    string
	}{
		{"npx", []string{"-y", "@modelcontextprotocol/server-memory@2025.9.25"}, "npx"},
		{"/usr/local/bin/npx", nil, "npx"},
		{`C:\Program Files\nodejs\npx.cmd`, []string{"-y", "x"}, "npx"},
		{"cmd", []string{"/c", "npx", "-y", "x"}, "npx"},
		{"uvx", []string{"mcp-server-fetch"}, "uvx"},
		{"pipx", []string{"run", "x"}, "pipx run"},
		{"pipx", []string{"install", "x"}, ""},
		{"bunx", nil, "bunx"},
		{"pnpm", []string{"dlx", "x"}, "pnpm dlx"},
		{"docker", []string{"run", "-i", "--rm", "ghcr.io/github/github-mcp-server"}, "docker run"},
		{"docker", []string{"exec", "-i", "c", "srv"}, ""},
		{"node", []string{"server.js"}, ""},
		{"./bin/npx-like", nil, ""},
	} {
		if got := (Server{Command: tc.command, Args: tc.args}).Installs(); got != tc.want {
			t.Errorf("%s %v: Installs() = %q, want %q", tc.command, tc.args, got, tc.want)
		}
	}
	if got := (Server{URL: "https://x.example/mcp"}).Installs(); got != "" {
		t.Errorf("a url server installs %q", got)
	}
}

// A live stdio server is started afresh every fifteen probes unless
// restart_every says otherwise; a cron schedule has no interval to count.
func TestRestartAfter(t *testing.T) {
	for _, tc := range []struct {
		set, interval, want time.Duration
	}{
		{0, 30 * time.Second, 7*time.Minute + 30*time.Second},
		{0, 2 * time.Second, 30 * time.Second},
		{0, 0, DefaultRestartEvery},
		{time.Hour, 30 * time.Second, time.Hour},
	} {
		if got := (Server{RestartEvery: tc.set}).RestartAfter(tc.interval); got != tc.want {
			t.Errorf("restart_every %s, interval %s: %s, want %s", tc.set, tc.interval, got, tc.want)
		}
	}
}

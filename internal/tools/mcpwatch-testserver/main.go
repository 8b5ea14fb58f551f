// Command mcpwatch-testserver is an MCP server that behaves well or badly on
// purpose, for manual acceptance runs and end-to-end tests of mcpwatch. It
// wraps the probe/probetest kit: over stdio by default, or over HTTP with
// streamable HTTP at /mcp and the legacy HTTP+SSE transport at /sse.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

func main() {
	// The Unresponsive behavior re-executes this binary as its grandchild.
	probetest.RunIfChild()
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

const usageText = `Usage: mcpwatch-testserver [flags]

An MCP test server that misbehaves on purpose. Over stdio by default; with
--http it serves streamable HTTP at /mcp and legacy HTTP+SSE at /sse.

Examples:
  mcpwatch probe -- mcpwatch-testserver --behavior stall-tools-list
  REPORT_API_TOKEN=t mcpwatch probe -- mcpwatch-testserver --behavior token-gated --token t
  mcpwatch-testserver --http 127.0.0.1:8931 --era modern &
  mcpwatch probe --url http://127.0.0.1:8931/mcp

Flags:
`

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mcpwatch-testserver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		cfg      probetest.Config
		behavior = fs.String("behavior", string(probetest.Healthy), "how to behave: "+behaviorList())
		era      = fs.String("era", string(probetest.EraLegacy), "protocol era: modern (2026-07-28, stateless), legacy (initialize) or dual")
		addr     = fs.String("http", "", "serve HTTP on this address (e.g. 127.0.0.1:8931; port 0 picks one) instead of stdio")
	)
	fs.StringVar(&cfg.Token, "token", "", "the expected credential (stdio: the --token-env variable; HTTP: Authorization: Bearer); empty accepts any non-empty one")
	fs.StringVar(&cfg.TokenEnv, "token-env", "REPORT_API_TOKEN", "the variable a stdio server reads its credential from")
	fs.StringVar(&cfg.PIDFile, "pid-file", "", "unresponsive: where the grandchild writes its pid")
	fs.StringVar(&cfg.ServerName, "name", "probetest", "the serverInfo name")
	fs.BoolVar(&cfg.SSEResponses, "sse-responses", false, "HTTP: answer POSTs with text/event-stream instead of JSON")
	var extraTools stringList
	fs.Var(&extraTools, "tool", "also list this tool, as NAME or NAME:HINT where HINT is read-only, destructive, write (not read-only, destructiveHint false) or none (no annotations); repeatable")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usageText)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdout)
			fs.Usage()
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "mcpwatch-testserver: unexpected argument %q (see --help)\n", fs.Arg(0))
		return 2
	}
	cfg.Behavior, cfg.Era = probetest.Behavior(*behavior), probetest.Era(*era)
	if len(extraTools) > 0 {
		cfg.Tools = probetest.DefaultTools()
		for _, spec := range extraTools {
			t, err := toolSpec(spec)
			if err != nil {
				fmt.Fprintf(stderr, "mcpwatch-testserver: --tool %s\n", err)
				return 2
			}
			cfg.Tools = append(cfg.Tools, t)
		}
	}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintf(stderr, "mcpwatch-testserver: %v\n", err)
		return 2
	}

	if *addr == "" {
		err := probetest.ServeStdio(context.Background(), cfg, stdin, stdout, stderr)
		switch {
		case err == nil:
			return 0
		case errors.Is(err, probetest.ErrExitAtOnce), errors.Is(err, probetest.ErrUnknownFirst):
			return 1
		default:
			fmt.Fprintf(stderr, "mcpwatch-testserver: %v\n", err)
			return 1
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serveHTTP(ctx, cfg, *addr, stderr); err != nil {
		fmt.Fprintf(stderr, "mcpwatch-testserver: %v\n", err)
		return 1
	}
	return 0
}

type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// toolSpec reads NAME[:HINT] into a tool that answers "ok: NAME" (echo
// answers its message).
func toolSpec(spec string) (probetest.Tool, error) {
	name, hint, _ := strings.Cut(spec, ":")
	if name == "echo" {
		t := probetest.EchoTool()
		if hint != "" && hint != "read-only" {
			return t, fmt.Errorf("%q: echo is read-only", spec)
		}
		return t, nil
	}
	t := probetest.Tool{Name: name, Description: "Test tool " + name, InputSchema: map[string]any{"type": "object"}}
	switch hint {
	case "", "read-only":
		t.Annotations = probetest.ReadOnly()
	case "destructive":
		t.Annotations = map[string]any{"readOnlyHint": false, "destructiveHint": true}
	case "write":
		t.Annotations = map[string]any{"readOnlyHint": false, "destructiveHint": false}
	case "none":
	default:
		return t, fmt.Errorf("%q: unknown hint %q (want read-only, destructive, write or none)", spec, hint)
	}
	if name == "" {
		return t, fmt.Errorf("%q: no tool name", spec)
	}
	return t, nil
}

func behaviorList() string {
	var names []string
	for _, b := range probetest.Behaviors() {
		names = append(names, string(b))
	}
	return strings.Join(names, ", ")
}

// serveHTTP serves until ctx ends.
func serveHTTP(ctx context.Context, cfg probetest.Config, addr string, stderr io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	srv := probetest.NewServer(cfg)
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv)
	mux.Handle("/sse", srv.SSE())
	mux.Handle("/.well-known/", srv) // Unauthorized401's protected-resource metadata
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}

	base := "http://" + ln.Addr().String()
	fmt.Fprintf(stderr, "mcpwatch-testserver: behavior %s, era %s: streamable HTTP at %s/mcp, legacy SSE at %s/sse\n",
		cfg.Behavior, cfg.Era, base, base)

	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("serve HTTP on %s: %w", addr, err)
	case <-ctx.Done():
	}
	srv.Close() // release stalled and streaming requests first
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shut down HTTP server: %w", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve HTTP on %s: %w", addr, err)
	}
	return nil
}

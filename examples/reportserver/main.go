// Command reportserver is the small Python report server of the preflight's
// tests (cmd/mcpwatch/testdata/seed) made real with the official Go MCP SDK: an MCP server whose tools depend on a credential.
//
// Tools: fetch_daily_report (input {date}) and list_report_dates. Over stdio
// (the default) the credential is REPORT_API_TOKEN: without it (or empty)
// the server lists zero tools and says nothing else, the silent failure
// mcpwatch exists to catch; REPORT_SCOPE=read leaves list_report_dates only.
// With --http it serves streamable HTTP at /mcp and checks the bearer token
// against REPORT_API_TOKEN (see httpAuth). --era picks the protocol
// generations served. --api-key-file is the server's own key for the API
// behind it, read at every call: revoked (the file emptied), both tools are
// still listed and every call fails.
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
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Getenv, stdio{os.Stdin, os.Stdout}, os.Stderr)
	stop()
	os.Exit(code)
}

// stdio is where a stdio server reads and writes, so tests can run it
// in-process.
type stdio struct {
	in  io.ReadCloser
	out io.WriteCloser
}

const usageText = `Usage: reportserver [--era modern|legacy|dual] [--http 127.0.0.1:PORT]

An example MCP server with two tools, fetch_daily_report and list_report_dates.

Environment:
  REPORT_API_TOKEN  the credential; stdio: without it the server lists zero tools;
                    HTTP: clients send it as "Authorization: Bearer <token>"
                    (no header: zero tools; a wrong token: 401)
  REPORT_SCOPE      "read" leaves list_report_dates only

--api-key-file is the credential on the server's side: empty it and the
server still lists both tools, but every call fails (isError), the way
real servers behind an expired API key degrade.

Flags:
`

func run(ctx context.Context, args []string, getenv func(string) string, std stdio, stderr io.Writer) int {
	fs := flag.NewFlagSet("reportserver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	eraFlag := fs.String("era", string(eraDual), "protocol era: modern (2026-07-28, stateless), legacy (initialize) or dual")
	addr := fs.String("http", "", "serve streamable HTTP at /mcp on this address (e.g. 127.0.0.1:8931) instead of stdio")
	keyPath := fs.String("api-key-file", "", "the server's own key for the report API behind it, read at every tool call: when the file is empty or gone (the key revoked), both tools are still listed and every call fails with isError")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usageText)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	e, err := parseEra(*eraFlag)
	if err != nil || fs.NArg() > 0 {
		if err == nil {
			err = fmt.Errorf("unexpected argument %q", fs.Arg(0))
		}
		fmt.Fprintf(stderr, "reportserver: %v (see --help)\n", err)
		return 2
	}
	token, scope := getenv("REPORT_API_TOKEN"), getenv("REPORT_SCOPE")
	var up upstream
	if *keyPath != "" {
		up = keyFile(*keyPath)
	}

	if *addr == "" {
		a := accessNone
		if token != "" {
			a = scopeAccess(scope)
		}
		err := newReportServer(e, a, up).Run(ctx, &mcp.IOTransport{Reader: std.in, Writer: std.out})
		if err != nil && ctx.Err() == nil && !errors.Is(err, mcp.ErrConnectionClosed) {
			fmt.Fprintf(stderr, "reportserver: %v\n", err)
			return 1
		}
		return 0
	}
	if err := serveHTTP(ctx, *addr, newHTTPHandler(e, httpAuth{token: token, scope: scope}, up), stderr); err != nil {
		fmt.Fprintf(stderr, "reportserver: %v\n", err)
		return 1
	}
	return 0
}

// serveHTTP serves h at /mcp until ctx ends.
func serveHTTP(ctx context.Context, addr string, h http.Handler, stderr io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stderr, "reportserver: serving streamable HTTP at http://%s/mcp\n", ln.Addr())

	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("serve HTTP on %s: %w", addr, err)
	case <-ctx.Done():
	}
	// Standalone SSE streams never end by themselves: give requests a
	// moment, then cut what is left.
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutdownCtx); err != nil {
		_ = hs.Close() // cuts the streams that outlived the grace period
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve HTTP: %w", err)
	}
	return nil
}

package probe_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwatch/mcpwatch/probe"
)

func sdkTool(name string) (*mcp.Tool, mcp.ToolHandler) {
	return &mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		}
}

// A listener hears a tool added to a running go-sdk server (an
// implementation we did not write), over each transport and era.
func TestListenHearsAChange(t *testing.T) {
	cases := []struct {
		name      string
		handler   func(*mcp.Server) http.Handler
		transport probe.Transport
		era       probe.Era
		version   string
	}{
		{"legacy streamable HTTP", func(s *mcp.Server) http.Handler {
			return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{SessionTimeout: time.Minute})
		}, probe.TransportHTTP, probe.EraLegacy, ""},
		{"legacy HTTP+SSE", func(s *mcp.Server) http.Handler {
			return mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil)
		}, probe.TransportSSE, probe.EraLegacy, ""},
		{"modern subscriptions/listen", func(s *mcp.Server) http.Handler {
			return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
		}, probe.TransportHTTP, probe.EraModern, "2026-07-28"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			server := mcp.NewServer(&mcp.Implementation{Name: "listen-test", Version: "1"}, nil)
			server.AddTool(sdkTool("first"))
			ts := httptest.NewServer(tc.handler(server))
			defer ts.Close()
			defer func() { // a listener ended by its caller sends no DELETE
				for ss := range server.Sessions() {
					_ = ss.Close()
				}
			}()

			ctx, cancel := context.WithCancel(context.Background())
			up := make(chan struct{}, 1)
			changed := make(chan struct{}, 10)
			done := make(chan error, 1)
			go func() {
				done <- probe.Listen(ctx, probe.Target{URL: ts.URL, Transport: tc.transport},
					probe.ListenOptions{Era: tc.era, ProtocolVersion: tc.version, Up: func() { up <- struct{}{} }},
					func() { changed <- struct{}{} })
			}()
			select {
			case <-up:
			case err := <-done:
				t.Fatalf("Listen ended before listening: %v", err)
			case <-time.After(30 * time.Second):
				t.Fatal("not listening after 30 s")
			}
			server.AddTool(sdkTool("second"))
			select {
			case <-changed:
			case err := <-done:
				t.Fatalf("Listen ended without hearing the change: %v", err)
			case <-time.After(30 * time.Second):
				t.Fatal("the change was not heard within 30 s")
			}
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Listen after cancel: %v", err)
			}
		})
	}
}

// A server that ends the stream makes Listen return why; one with no
// stream to offer returns ErrNoStream.
func TestListenEnds(t *testing.T) {
	server := mcp.NewServer(&mcp.Implementation{Name: "listen-test", Version: "1"}, nil)
	server.AddTool(sdkTool("first"))
	stateless := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Stateless: true}))
	defer stateless.Close()
	// A stateless server answers GET with 405: a legacy listener has no
	// stream.
	err := probe.Listen(context.Background(), probe.Target{URL: stateless.URL, Transport: probe.TransportHTTP},
		probe.ListenOptions{Era: probe.EraLegacy}, func() {})
	if !errors.Is(err, probe.ErrNoStream) {
		t.Errorf("GET answered 405: %v, want ErrNoStream", err)
	}

	stateful := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{SessionTimeout: time.Minute}))
	up := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- probe.Listen(context.Background(), probe.Target{URL: stateful.URL, Transport: probe.TransportHTTP},
			probe.ListenOptions{Era: probe.EraLegacy, Up: func() { close(up) }}, func() {})
	}()
	<-up
	stateful.CloseClientConnections()
	stateful.Close()
	if err := <-done; err == nil {
		t.Error("Listen returned nil when the server went away")
	}
	// The cut connection sent no DELETE: end the server's session here.
	for ss := range server.Sessions() {
		_ = ss.Close()
	}
}

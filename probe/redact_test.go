package probe_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/probe"
)

// An error names the URL the probe went to as the configuration's redactor
// prints it: a key in the path, a query value or userinfo never shows,
// over streamable HTTP and over legacy SSE.
func TestErrorsRedactTheURL(t *testing.T) {
	const key = "a1b2c3d4e5f6a7b8c9d0e1f2a3b4" // a generated key in the path, as some hosted servers use
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "gone", http.StatusGone)
	}))
	defer srv.Close()
	// A port nothing listens on: the dial fails at once.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	for _, tc := range []struct {
		name      string
		url       string
		transport probe.Transport
	}{
		{"http, refused", "http://user:pw-hunter22@" + closed + "/s/" + key + "/mcp?api_key=hunter22", probe.TransportHTTP},
		{"sse, refused", "http://" + closed + "/s/" + key + "/sse?api_key=hunter22", probe.TransportSSE},
		{"http, status", srv.URL + "/s/" + key + "/mcp?api_key=hunter22", probe.TransportHTTP},
		{"sse, status", srv.URL + "/s/" + key + "/sse?api_key=hunter22", probe.TransportSSE},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res := probe.Run(ctx, probe.Target{URL: tc.url, Transport: tc.transport}, probe.Options{})
			if res.OK {
				t.Fatal("the probe passed")
			}
			for _, s := range []string{key, "hunter22"} {
				if strings.Contains(res.Error, s) {
					t.Errorf("the error shows %q: %s", s, res.Error)
				}
			}
			if !strings.Contains(res.Error, "/s/<redacted>/") {
				t.Errorf("the error does not name the redacted URL: %s", res.Error)
			}
		})
	}
}

package probe

import (
	"bufio"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// overHTTPAndTLS runs a test of the lean exchange's framing over plain
// HTTP and over TLS, which it frames alike.
func overHTTPAndTLS(t *testing.T, test func(t *testing.T, secure bool)) {
	for _, secure := range []bool{false, true} {
		t.Run(map[bool]string{false: "http", true: "https"}[secure], func(t *testing.T) {
			t.Parallel()
			test(t, secure)
		})
	}
}

// testCert is the certificate every httptest TLS server presents (for
// 127.0.0.1), and a pool that trusts it.
var testCert = sync.OnceValues(func() (tls.Certificate, *x509.CertPool) {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	return srv.TLS.Certificates[0], pool
})

// leanServer starts handler on loopback, over TLS when secure, and counts
// the TCP connections it accepted.
func leanServer(t *testing.T, secure bool, handler http.Handler) (*url.URL, *atomic.Int64) {
	t.Helper()
	srv := httptest.NewUnstartedServer(handler)
	accepted := &atomic.Int64{}
	srv.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			accepted.Add(1)
		}
	}
	if secure {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	return u, accepted
}

// newLeanForTest is the lean transport a pool makes for u, trusting the
// test servers' certificate.
func newLeanForTest(t *testing.T, u *url.URL) *leanTransport {
	t.Helper()
	_, roots := testCert()
	lean := newLeanTransport(u, newTransport(&tls.Config{MinVersion: tls.VersionTLS12, RootCAs: roots}), poolIdlePerOrigin, poolIdleTimeout)
	if lean == nil {
		t.Fatalf("no lean transport for %s", u)
	}
	t.Cleanup(lean.CloseIdleConnections)
	return lean
}

func leanPost(ctx context.Context, t *testing.T, rt http.RoundTripper, u *url.URL, body string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	return rt.RoundTrip(req)
}

func readAllClose(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the body: %v", err)
	}
	return string(b)
}

// Requests in a row, with bodies of a known length, chunked and gzipped,
// go over one connection; the request arrives as sent.
func TestLeanTransportKeepsConnectionAlive(t *testing.T) {
	t.Parallel()
	overHTTPAndTLS(t, func(t *testing.T, secure bool) {
		u, accepted := leanServer(t, secure, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got, _ := io.ReadAll(r.Body)
			switch string(got) {
			case "chunked":
				_, _ = w.Write([]byte("one,"))
				w.(http.Flusher).Flush() // no length known: chunked
				_, _ = w.Write([]byte("two"))
			case "gzip":
				if r.Header.Get("Accept-Encoding") != "gzip" {
					http.Error(w, "no gzip asked for", http.StatusBadRequest)
					return
				}
				w.Header().Set("Content-Encoding", "gzip")
				zw := gzip.NewWriter(w)
				_, _ = zw.Write([]byte("unzipped"))
				zw.Close()
			case "empty":
				w.WriteHeader(http.StatusAccepted)
			default:
				w.Header().Set("Content-Type", "text/plain")
				_, _ = fmt.Fprintf(w, "%s %s %s %s", r.Method, r.URL.Path, r.Header.Get("Content-Type"), got) //nolint:gosec // a test server echoing its own client
			}
		}))
		lean := newLeanForTest(t, u)
		for i, tc := range []struct{ send, want string }{
			{"hello", "POST /mcp application/json hello"},
			{"chunked", "one,two"},
			{"gzip", "unzipped"},
			{"empty", ""},
			{"again", "POST /mcp application/json again"},
		} {
			resp, err := leanPost(context.Background(), t, lean, u, tc.send)
			if err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
			if got := readAllClose(t, resp); got != tc.want {
				t.Errorf("request %d: body %q, want %q", i, got, tc.want)
			}
		}
		if n := accepted.Load(); n != 1 {
			t.Errorf("%d TCP connections for 5 requests, want 1", n)
		}
	})
}

// A body closed before its end closes its connection (what is left of it
// would be read as the next response); the next request dials anew.
func TestLeanTransportBodyClosedEarly(t *testing.T) {
	t.Parallel()
	overHTTPAndTLS(t, func(t *testing.T, secure bool) {
		u, accepted := leanServer(t, secure, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(strings.Repeat("x", 64<<10)))
		}))
		lean := newLeanForTest(t, u)
		for i := range 2 {
			resp, err := leanPost(context.Background(), t, lean, u, "{}")
			if err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
			var buf [10]byte
			if _, err := io.ReadFull(resp.Body, buf[:]); err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if _, err := resp.Body.Read(buf[:]); err == nil {
				t.Errorf("request %d: a read after Close succeeded", i)
			}
		}
		if n := accepted.Load(); n != 2 {
			t.Errorf("%d TCP connections, want 2", n)
		}
	})
}

// rawServer answers each connection (over TLS when secure) with the
// script: it reads one request and writes the answer, as many times as
// there are answers, then closes.
func rawServer(t *testing.T, secure bool, answers ...string) (*url.URL, *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	scheme := "http://"
	if secure {
		cert, _ := testCert()
		l = tls.NewListener(l, &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}})
		scheme = "https://"
	}
	t.Cleanup(func() { l.Close() })
	accepted := &atomic.Int64{}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for _, a := range answers {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					_, _ = io.Copy(io.Discard, req.Body)
					if _, err := io.WriteString(c, a); err != nil {
						return
					}
				}
			}()
		}
	}()
	u, _ := url.Parse(scheme + l.Addr().String() + "/mcp")
	return u, accepted
}

// A server that closes the connection in the middle of an event stream:
// the read fails as a closed connection, and the next request is sent on
// a new one.
func TestLeanTransportServerClosesMidStream(t *testing.T) {
	t.Parallel()
	overHTTPAndTLS(t, func(t *testing.T, secure bool) {
		u, accepted := rawServer(t, secure, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"+
			"40\r\nevent: message\ndata: ") // part of a chunk, then the connection ends
		lean := newLeanForTest(t, u)
		for i := range 2 {
			resp, err := leanPost(context.Background(), t, lean, u, "{}")
			if err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("request %d: reading the stream: %v, want an unexpected EOF", i, err)
			}
			var f *Failure
			if !errors.As(httpTransportError(context.Background(), err, "tools/list"), &f) || f.Reason != ReasonClosed {
				t.Errorf("request %d: %v, want a closed failure", i, f)
			}
		}
		if n := accepted.Load(); n != 2 {
			t.Errorf("%d TCP connections, want 2", n)
		}
	})
}

// A server that closes an idle connection between two requests (its own
// idle timeout): the second request notices before it writes, and dials.
func TestLeanTransportServerClosedIdleConnection(t *testing.T) {
	t.Parallel()
	overHTTPAndTLS(t, func(t *testing.T, secure bool) {
		u, accepted := rawServer(t, secure, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok") // one answer, then close
		lean := newLeanForTest(t, u)
		for i := range 3 {
			resp, err := leanPost(context.Background(), t, lean, u, "{}")
			if err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
			if got := readAllClose(t, resp); got != "ok" {
				t.Fatalf("request %d: %q", i, got)
			}
			// The server's close has arrived once the idle connection reads
			// as closed: wait for that, not for a time.
			waitIdleClosed(t, lean)
		}
		if n := accepted.Load(); n != 3 {
			t.Errorf("%d TCP connections, want 3", n)
		}
	})
}

func waitIdleClosed(t *testing.T, lean *leanTransport) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		lean.mu.Lock()
		closed := len(lean.idle) == 1 && !idleConnUsable(lean.idle[0].raw)
		lean.mu.Unlock()
		if closed {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the server's close never arrived")
		}
	}
}

// Cancelling the request's context ends a wait for the response header
// and a body read under way, with the context's error; the connection is
// not reused.
func TestLeanTransportCancelled(t *testing.T) {
	t.Parallel()
	overHTTPAndTLS(t, func(t *testing.T, secure bool) {
		release := make(chan struct{})
		started := make(chan struct{}, 2)
		u, accepted := leanServer(t, secure, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Query().Get("stream") != "" {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = w.Write([]byte(": open\n\n"))
				w.(http.Flusher).Flush()
			}
			started <- struct{}{}
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}))
		defer close(release)
		lean := newLeanForTest(t, u)

		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-started; cancel() }()
		if _, err := leanPost(ctx, t, lean, u, "{}"); !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled while waiting for the header: %v, want context.Canceled", err)
		}

		stream := *u
		stream.RawQuery = "stream=1"
		ctx, cancel = context.WithCancel(context.Background())
		resp, err := leanPost(ctx, t, lean, &stream, "{}")
		if err != nil {
			t.Fatal(err)
		}
		<-started
		cancel()
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled while reading the stream: %v, want context.Canceled", err)
		}
		if n := accepted.Load(); n != 2 {
			t.Errorf("%d TCP connections, want 2 (a cancelled one is never reused)", n)
		}
		lean.mu.Lock()
		idle := len(lean.idle)
		lean.mu.Unlock()
		if idle != 0 {
			t.Errorf("%d idle connections after two cancelled requests, want 0", idle)
		}
	})
}

// A response header over the bound fails as net/http's does.
func TestLeanTransportHeaderBound(t *testing.T) {
	t.Parallel()
	overHTTPAndTLS(t, func(t *testing.T, secure bool) {
		u, _ := rawServer(t, secure, "HTTP/1.1 200 OK\r\nX-Big: "+strings.Repeat("a", maxResponseHeaderBytes+10)+"\r\nContent-Length: 0\r\n\r\n")
		lean := newLeanForTest(t, u)
		_, err := leanPost(context.Background(), t, lean, u, "{}")
		if err == nil || !strings.Contains(err.Error(), "response headers exceeded") {
			t.Errorf("err %v, want the header bound", err)
		}
	})
}

// Informational responses before the final one are skipped.
func TestLeanTransportInformational(t *testing.T) {
	t.Parallel()
	overHTTPAndTLS(t, func(t *testing.T, secure bool) {
		u, _ := rawServer(t, secure, "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\ndone")
		lean := newLeanForTest(t, u)
		resp, err := leanPost(context.Background(), t, lean, u, "{}")
		if err != nil {
			t.Fatal(err)
		}
		if got := readAllClose(t, resp); resp.StatusCode != 200 || got != "done" {
			t.Errorf("HTTP %d %q, want 200 done", resp.StatusCode, got)
		}
	})
}

// An https origin's exchanges are the lean transport's too, over
// HTTP/1.1 even where the server offers HTTP/2 (a target with its CA,
// through the pool); what it does not serve goes to net/http's: another
// origin.
func TestLeanTransportFallsBack(t *testing.T) {
	t.Parallel()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("tls")) }))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	pool := NewConnPool()
	defer pool.Close()
	client, err := newHTTPClient(Target{URL: srv.URL, CA: ca, CAFile: "ca.pem"}, Options{Conns: pool})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if got := readAllClose(t, resp); got != "tls" || resp.TLS == nil || resp.TLS.NegotiatedProtocol == "h2" || resp.Proto != "HTTP/1.1" {
		t.Errorf("body %q, TLS %v, %s: want tls over HTTP/1.1", got, resp.TLS != nil, resp.Proto)
	}
	pool.mu.Lock()
	for k, pt := range pool.byKey {
		if _, lean := pt.t.(*leanTransport); !lean {
			t.Errorf("the pool's transport of %s is %T, not the lean one", k.origin, pt.t)
		}
	}
	pool.mu.Unlock()

	plain, _ := leanServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("other")) }))
	lean := newLeanForTest(t, &url.URL{Scheme: "http", Host: "127.0.0.1:1", Path: "/"})
	if lean.serves(&http.Request{Method: http.MethodGet, URL: plain}) {
		t.Error("the lean transport of one origin serves another")
	}
	resp, err = leanPost(context.Background(), t, lean, plain, "{}")
	if err != nil {
		t.Fatal(err)
	}
	if got := readAllClose(t, resp); got != "other" {
		t.Errorf("another origin's body %q", got)
	}
}

// BenchmarkPooledExchange is one POST and its small JSON answer over a
// kept-alive loopback connection, through the lean transport and through
// net/http's (what the pool used before), with the server in the process:
// what the lean transport saves a probe's request.
func BenchmarkPooledExchange(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`))
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL + "/mcp")
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	fallback := newTransport(nil)
	for _, tc := range []struct {
		name string
		rt   http.RoundTripper
	}{
		{"lean", newLeanTransport(u, fallback, poolIdlePerOrigin, poolIdleTimeout)},
		{"net-http", fallback},
	} {
		b.Run(tc.name, func(b *testing.B) {
			client := &http.Client{Transport: tc.rt}
			b.ReportAllocs()
			for b.Loop() {
				req, _ := http.NewRequest(http.MethodPost, u.String(), strings.NewReader(string(body)))
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
}

// A response that says Connection: close, or an HTTP/1.0 one without
// keep-alive, leaves its connection closed, never idle.
func TestLeanTransportConnectionClose(t *testing.T) {
	t.Parallel()
	overHTTPAndTLS(t, func(t *testing.T, secure bool) {
		for _, answer := range []string{
			"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok",
			"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok",
		} {
			u, accepted := rawServer(t, secure, answer, answer)
			lean := newLeanForTest(t, u)
			for i := range 2 {
				resp, err := leanPost(context.Background(), t, lean, u, "{}")
				if err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				if got := readAllClose(t, resp); got != "ok" {
					t.Fatalf("request %d: %q", i, got)
				}
				lean.mu.Lock()
				idle := len(lean.idle)
				lean.mu.Unlock()
				if idle != 0 {
					t.Errorf("%q: %d idle connections, want 0", answer[:8], idle)
				}
			}
			if n := accepted.Load(); n != 2 {
				t.Errorf("%q: %d TCP connections for 2 requests, want 2", answer[:8], n)
			}
		}
	})
}

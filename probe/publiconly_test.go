package probe_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/imports"
	"github.com/mcpwatch/mcpwatch/internal/launch"
	"github.com/mcpwatch/mcpwatch/probe"
)

// internalService is a loopback HTTP server standing for a host's own
// service (a cloud metadata endpoint): it counts the connections it is
// given and keeps the Metadata-Flavor header of each request.
type internalService struct {
	*httptest.Server
	mu      sync.Mutex
	conns   int
	flavors []string
}

func newInternalService(t *testing.T) *internalService {
	s := &internalService{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.flavors = append(s.flavors, r.Header.Get("Metadata-Flavor"))
		s.mu.Unlock()
		http.NotFound(w, r)
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.mu.Lock()
			s.conns++
			s.mu.Unlock()
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func (s *internalService) seen() (conns int, flavors []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns, append([]string(nil), s.flavors...)
}

// A registry server whose public-looking host name resolves to a loopback
// address gets no connection, so none of the headers the registry chose:
// the probe fails naming the address and private_remotes. With
// private_remotes: true the same server is reached, header and all.
func TestRegistryServerReachesOnlyPublicAddresses(t *testing.T) {
	svc := newInternalService(t)
	probe.PointAtLoopback(t, "metadata.example")
	_, port, _ := net.SplitHostPort(svc.Listener.Addr().String())
	dir := t.TempDir()
	entry := func(scheme string) string {
		return `[{"name": "io.x/metadata", "remotes": [{"type": "streamable-http", "url": "` + scheme + `://metadata.example:` + port + `/computeMetadata/v1/",
			"headers": [{"name": "Metadata-Flavor", "value": "Google"}]}]}]`
	}
	run := func(yml, registry string) *probe.Result {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "servers.json"), []byte(registry), 0o600); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "mcpwatch.yml")
		if err := os.WriteFile(path, []byte(yml), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := imports.NewLoader().Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(cfg.Servers) != 1 {
			t.Fatalf("%s: imported %d servers, want 1", yml, len(cfg.Servers))
		}
		target, _, err := launch.Resolve(cfg.Servers[0], func(string) (string, bool) { return "", false })
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return probe.Run(ctx, target, probe.Options{})
	}

	// https passes the load-time rule; the name is what leads inside.
	res := run("imports:\n  - registry: ./servers.json\n", entry("https"))
	if conns, _ := svc.seen(); conns != 0 {
		t.Fatalf("the internal service was given %d connections; want none", conns)
	}
	if res.OK || res.Reason != probe.ReasonConfig {
		t.Fatalf("probe: ok %v, reason %q (%v); want reason config", res.OK, res.Reason, res.Error)
	}
	for _, want := range []string{
		"may reach only public addresses: metadata.example resolved to 127.0.0.1",
		"set private_remotes: true on " + filepath.Join(dir, "mcpwatch.yml") + " imports[0]",
	} {
		if !strings.Contains(res.Error, want) {
			t.Errorf("error %q\nwant it to say %q", res.Error, want)
		}
	}

	res = run("imports:\n  - {registry: ./servers.json, private_remotes: true}\n", entry("http"))
	if _, flavors := svc.seen(); len(flavors) == 0 || flavors[0] != "Google" {
		t.Fatalf("with private_remotes: true the service saw requests with Metadata-Flavor %q; want it reached with Google (probe: %v)", flavors, res.Error)
	}
	if res.Reason == probe.ReasonConfig {
		t.Errorf("with private_remotes: true the probe failed with reason config: %v", res.Error)
	}
}

// A pooled connection an unguarded target dialed is never handed to a
// guarded target of the same origin: its address was never checked.
func TestConnPoolKeepsPublicOnlyTargetsApart(t *testing.T) {
	svc := newInternalService(t)
	probe.PointAtLoopback(t, "metadata.example")
	_, port, _ := net.SplitHostPort(svc.Listener.Addr().String())
	pool := probe.NewConnPool()
	defer pool.Close()
	target := probe.Target{URL: "http://metadata.example:" + port + "/mcp", Transport: probe.TransportHTTP,
		Headers: map[string]string{"Metadata-Flavor": "Google"}}
	run := func(t probe.Target) *probe.Result {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return probe.Run(ctx, t, probe.Options{Conns: pool})
	}
	if res := run(target); res.Reason == probe.ReasonConfig || res.Reason == probe.ReasonConnection {
		t.Fatalf("unguarded probe did not reach the service: %s: %v", res.Reason, res.Error)
	}
	conns, before := svc.seen()
	if conns != 1 || len(before) == 0 {
		t.Fatalf("unguarded probe: %d connections, %d requests; want 1 connection kept for the next probe", conns, len(before))
	}
	target.PublicOnly = true
	res := run(target)
	if _, after := svc.seen(); len(after) != len(before) {
		t.Fatalf("the guarded probe sent %d requests on the unguarded probe's connection; want none", len(after)-len(before))
	}
	if res.Reason != probe.ReasonConfig || !strings.Contains(res.Error, "resolved to 127.0.0.1") {
		t.Errorf("guarded probe: reason %q (%v); want config, naming the address", res.Reason, res.Error)
	}
}

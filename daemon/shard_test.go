package daemon

import (
	"context"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/util/shard"
)

// fleetConfig is n HTTP servers that are never probed in these tests (the
// daemons are not started).
func fleetConfig(n int) map[string]any {
	servers := map[string]any{}
	for i := range n {
		servers[fmt.Sprintf("server-%02d", i)] = map[string]any{"url": "http://127.0.0.1:1/mcp"}
	}
	return map[string]any{"defaults": map[string]any{"schedule": "@every 1h"}, "servers": servers}
}

// newShardDaemon is a daemon, not started, on the config at path as shard s.
func newShardDaemon(t *testing.T, path string, s shard.Shard, peers []string) (*Daemon, *httptest.Server) {
	t.Helper()
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(cfg, Options{Shard: s, Replica: fmt.Sprintf("mcpwatch-%d", s.Index), PeerURLs: peers})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(d.Handler())
	t.Cleanup(func() {
		srv.Close()
		if err := d.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return d, srv
}

// Three shards over 30 servers: each server is in exactly one shard's
// statuses, mcpwatch_servers counts the shard's servers, mcpwatch_shard_info
// names it, and a reload keeps the split (an added server lands in one
// shard only).
func TestShardsSplitTheFleet(t *testing.T) {
	const n, total = 30, 3
	dir := t.TempDir()
	path := writeConfig(t, dir, fleetConfig(n))
	owner := map[string]int{}
	daemons := make([]*Daemon, total)
	for i := range total {
		d, srv := newShardDaemon(t, path, shard.Shard{Index: i, Total: total}, nil)
		daemons[i] = d
		names := d.serverNames()
		if len(names) == 0 || len(names) == n {
			t.Errorf("shard %d has %d of %d servers", i, len(names), n)
		}
		for _, name := range names {
			if prev, ok := owner[name]; ok {
				t.Errorf("%s is in shard %d and shard %d", name, prev, i)
			}
			owner[name] = i
			if shard.Of(name, total) != i {
				t.Errorf("%s is in shard %d, its hash says %d", name, i, shard.Of(name, total))
			}
		}
		h := &harness{t: t, d: d, http: srv}
		m := h.metricsText()
		if want := fmt.Sprintf("mcpwatch_servers %d", len(names)); !hasSample(m, want) {
			t.Errorf("shard %d: no %q in /metrics", i, want)
		}
		if want := fmt.Sprintf(`mcpwatch_shard_info{index="%d",total="%d"} 1`, i, total); !hasSample(m, want) {
			t.Errorf("shard %d: no %q in /metrics", i, want)
		}
	}
	if len(owner) != n {
		t.Errorf("%d of %d servers are in a shard", len(owner), n)
	}

	doc := fleetConfig(n)
	doc["servers"].(map[string]any)["added"] = map[string]any{"url": "http://127.0.0.1:1/mcp"}
	writeConfig(t, dir, doc)
	in := 0
	for i, d := range daemons {
		if err := d.Reload(); err != nil {
			t.Fatal(err)
		}
		if slices.Contains(d.serverNames(), "added") {
			in++
			if shard.Of("added", total) != i {
				t.Errorf("added server in shard %d, its hash says %d", i, shard.Of("added", total))
			}
		}
		if got := len(d.serverNames()); got < 1 {
			t.Errorf("shard %d has no server after the reload", i)
		}
	}
	if in != 1 {
		t.Errorf("the added server is in %d shards", in)
	}
}

// An unsharded daemon exports shard 0 of 1 and has every server.
func TestUnshardedIsShardZeroOfOne(t *testing.T) {
	path := writeConfig(t, t.TempDir(), fleetConfig(5))
	d, srv := newShardDaemon(t, path, shard.Shard{}, nil)
	if got := len(d.serverNames()); got != 5 {
		t.Errorf("%d servers, want 5", got)
	}
	h := &harness{t: t, d: d, http: srv}
	if m := h.metricsText(); !hasSample(m, `mcpwatch_shard_info{index="0",total="1"} 1`) || !hasSample(m, "mcpwatch_servers 5") {
		t.Errorf("/metrics lacks shard 0 of 1 or 5 servers")
	}
	if _, body := h.get("/"); strings.Contains(body, "shard 0 of 1") {
		t.Errorf("the status page of an unsharded daemon talks about shards")
	}
}

// A shard that cannot exist is refused.
func TestBadShardIsRefused(t *testing.T) {
	cfg := &config.Config{}
	for _, s := range []shard.Shard{{Index: 3, Total: 3}, {Index: -1, Total: 2}} {
		if _, err := New(cfg, Options{Shard: s}); err == nil {
			t.Errorf("shard %+v: no error", s)
		}
	}
}

// The status page of a shard says which shard it is and links the others.
func TestStatusPageNamesShardAndPeers(t *testing.T) {
	path := writeConfig(t, t.TempDir(), fleetConfig(6))
	peers := []string{"http://mcpwatch-0.mcpwatch-shards:9713/", "http://mcpwatch-2.mcpwatch-shards:9713/?a=1&b=<x>"}
	d, srv := newShardDaemon(t, path, shard.Shard{Index: 1, Total: 3}, peers)
	h := &harness{t: t, d: d, http: srv}
	_, body := h.get("/")
	for _, want := range []string{
		"shard 1 of 3",
		"replica <code>mcpwatch-1</code>",
		`<a href="http://mcpwatch-0.mcpwatch-shards:9713/">`,
		`href="http://mcpwatch-2.mcpwatch-shards:9713/?a=1&amp;b=%3cx%3e"`,
		fmt.Sprintf("%d servers", len(d.serverNames())),
	} {
		if !strings.Contains(body, want) {
			t.Errorf("status page lacks %q", want)
		}
	}
	if strings.Contains(body, "<x>") {
		t.Error("a peer URL reached the page unescaped")
	}
}

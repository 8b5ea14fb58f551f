// Package eracache remembers, between runs of `mcpwatch check` and
// `mcpwatch lock`, the protocol era each server answered in, as the daemon
// remembers it between probes: a legacy server then gets initialize at
// once, with no server/discover first (which costs a round trip, or the
// whole discover sub-deadline for a server that ignores unknown methods).
//
// The cache is a small JSON file beside the lock (never in the lock, whose
// plain form other tools read too). It is a hint and nothing more: a
// missing, unreadable or corrupt file is an empty cache, an entry is
// dropped when its server's target changed (SameTarget), a probe that
// follows a wrong hint detects the era afresh (package probe), and a probe
// that fails in a way a change of era explains forgets its server's entry
// (ForgetsEra). The daemon remembers by the same two rules.
package eracache

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/util/atomicfile"
	"github.com/mcpwatch/mcpwatch/internal/util/readfile"
	"github.com/mcpwatch/mcpwatch/probe"
)

// kind marks the file, so that it is never mistaken for a lock.
const kind = "mcpwatch-era-cache"

// maxFileBytes bounds what Load reads: a cache of a few hundred servers is
// a few tens of kB.
const maxFileBytes = 4 << 20

// PathFor is the cache file of a lock: a dot file beside it, named after
// it (mcp-tools.lock.json -> .mcp-tools.lock.json.era).
func PathFor(lockPath string) string {
	return filepath.Join(filepath.Dir(lockPath), "."+filepath.Base(lockPath)+".era")
}

// Cache is the eras of one lock's servers. It is safe for concurrent use.
type Cache struct {
	path string

	mu      sync.Mutex
	entries map[string]entry
	changed bool
}

type entry struct {
	Era probe.Era `json:"era"`
	// Target is a hash of how the server is reached (command, arguments,
	// directory, URL, transport, as configured, before any ${...}
	// expansion): an entry for another server of the same name is no hint.
	Target string `json:"target"`
}

type file struct {
	Kind    string           `json:"kind"`
	Servers map[string]entry `json:"servers"`
}

// Load reads the cache at path. Whatever stops it from reading (no file,
// a corrupt one) gives an empty cache: it is a hint, never a reason to fail.
func Load(path string) *Cache {
	c := &Cache{path: path, entries: map[string]entry{}}
	data, err := readfile.Read(path, maxFileBytes)
	if err != nil {
		return c
	}
	var v file
	if json.Unmarshal(data, &v) != nil || v.Kind != kind {
		return c
	}
	for name, e := range v.Servers {
		if e.Era == probe.EraModern || e.Era == probe.EraLegacy {
			c.entries[name] = e
		}
	}
	return c
}

// Path is the file the cache is read from and saved to.
func (c *Cache) Path() string { return c.path }

// Hint is the era s answered in last time, or "" when there is none (or
// the server's target changed since).
func (c *Cache) Hint(s config.Server) probe.Era {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[s.Name]
	if !ok || e.Target != targetKey(s) {
		return ""
	}
	return e.Era
}

// Learn records the era a probe of s found; a probe that failed in a way
// a change of era explains (ForgetsEra) forgets it, so that the next run
// detects it.
func (c *Cache) Learn(s config.Server, res *probe.Result) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old, had := c.entries[s.Name]
	switch {
	case res.OK && (res.Era == probe.EraModern || res.Era == probe.EraLegacy):
		e := entry{Era: res.Era, Target: targetKey(s)}
		if !had || old != e {
			c.entries[s.Name] = e
			c.changed = true
		}
	case !res.OK && had && ForgetsEra(res.Reason):
		delete(c.entries, s.Name)
		c.changed = true
	}
}

// Keep drops the entries of servers not named, so the cache does not grow
// with servers long gone.
func (c *Cache) Keep(names []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name := range c.entries {
		if !slices.Contains(names, name) {
			delete(c.entries, name)
			c.changed = true
		}
	}
}

// Save writes the cache atomically, if anything changed since Load. Every
// run calls it, so a run with nothing to write still sweeps the temp file a
// write killed half-way (kill -9 at the rename) left beside the cache.
func (c *Cache) Save() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.changed {
		atomicfile.SweepTemps(c.path)
		return nil
	}
	data, err := json.MarshalIndent(file{Kind: kind, Servers: c.entries}, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(c.path, append(data, '\n')); err != nil {
		return err
	}
	c.changed = false
	return nil
}

// SameTarget is the one rule of a server's identity for the era
// remembered of it, the daemon's between probes and this cache's between
// runs: the same command, arguments, directory, URL, transport and pinned
// era. A rotated credential (an env value, a header, an auth: block) is the
// same server, and keeps its era.
func SameTarget(a, b config.Server) bool { return targetKey(a) == targetKey(b) }

// ForgetsEra is the one rule of which failed probes forget the era: those
// that suggest the server was replaced or upgraded (a protocol error, an
// error answer, an HTTP status, a closed connection, an exit). A timeout
// or a refused connection says nothing of the era a server speaks, and
// keeps it.
func ForgetsEra(reason probe.Reason) bool {
	switch reason {
	case probe.ReasonProtocol, probe.ReasonRPCError, probe.ReasonHTTPStatus, probe.ReasonClosed, probe.ReasonExited:
		return true
	}
	return false
}

// targetKey hashes what reaches a server, as configured (SameTarget). Only
// the hash is stored: an argument could hold a literal credential.
func targetKey(s config.Server) string {
	var b bytes.Buffer
	for _, part := range append([]string{s.Command, s.Dir, s.URL, string(s.Transport), string(s.Era)}, s.Args...) {
		b.WriteString(strings.ReplaceAll(part, "\x00", ""))
		b.WriteByte(0)
	}
	sum := sha256.Sum256(b.Bytes())
	return hex.EncodeToString(sum[:8])
}

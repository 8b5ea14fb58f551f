package runner

import (
	"context"
	"crypto/sha256"
	"unique"

	"github.com/mcpwatch/mcpwatch/lockstore"
)

// FingerprintCache holds the schema fingerprints of one server's tools as of
// its last probe. A schema's canonical form costs tens of microseconds per
// tool, and a server's tools seldom change between probes: a tool whose
// schema bytes hash as before reuses its fingerprint. It holds the tools of
// the last probe only, so it is bounded by the server's tool count. It
// keeps a hash of the bytes, not the bytes: the schemas belong to the
// latest result alone. The zero value is empty and ready; a nil cache
// computes every fingerprint and keeps none. It is not safe for concurrent
// use: one server's probes, one at a time.
//
// The tools are kept in the order the server listed them, which seldom
// changes either, so a probe like the last one finds each tool where it
// was and rewrites the entries in place: a steady server costs the cache
// no allocation. A fingerprint computed afresh is interned (unique), so
// servers that list the same schemas (replicas of one server, a fleet of
// the same package) hold one copy of each fingerprint between them; names
// too.
type FingerprintCache struct {
	tools    []cachedFingerprint
	computed uint64 // fingerprints computed rather than reused
}

type cachedFingerprint struct {
	name        string
	schema      [sha256.Size]byte // of the schema's bytes as the probe kept them
	fingerprint string
}

// Fill sets the Fingerprint of each observed tool that has none, from the
// cache where the schema's bytes are unchanged, and keeps those of observed
// for next time. It stops with ctx's error when ctx ends between two tools
// (a fingerprint's cost is linear in its schema, which the message cap
// bounds); observed is then partly filled and the cache unchanged.
func (c *FingerprintCache) Fill(ctx context.Context, observed []lockstore.Observed) error {
	if c == nil {
		for i := range observed {
			if err := ctx.Err(); err != nil {
				return err
			}
			if o := &observed[i]; o.Fingerprint == "" {
				o.Fingerprint = lockstore.Fingerprint(o.InputSchema)
			}
		}
		return nil
	}
	old := c.tools
	next := old[:0] // each tool where it was: rewritten in place
	var byName map[string]int
	if !sameNames(old, observed) {
		next = make([]cachedFingerprint, 0, len(observed))
		byName = make(map[string]int, len(old))
		for i, t := range old {
			byName[t.name] = i
		}
	}
	for i := range observed {
		if err := ctx.Err(); err != nil {
			return err // the entries rewritten so far are right for their tools
		}
		o := &observed[i]
		sum := sha256.Sum256(o.InputSchema)
		if o.Fingerprint == "" {
			j, ok := i, byName == nil
			if byName != nil {
				j, ok = byName[o.Name]
			}
			if ok && old[j].schema == sum {
				o.Fingerprint = old[j].fingerprint
			} else {
				o.Fingerprint = unique.Make(lockstore.Fingerprint(o.InputSchema)).Value()
				c.computed++
			}
		}
		name := o.Name
		if byName == nil {
			name = old[i].name // the same, and maybe shared with other servers
		} else {
			name = unique.Make(name).Value()
		}
		next = append(next, cachedFingerprint{name: name, schema: sum, fingerprint: o.Fingerprint})
	}
	c.tools = next
	return nil
}

// sameNames reports whether observed lists the tools of the cache in the
// same order.
func sameNames(cached []cachedFingerprint, observed []lockstore.Observed) bool {
	if len(cached) != len(observed) {
		return false
	}
	for i := range cached {
		if cached[i].name != observed[i].Name {
			return false
		}
	}
	return true
}

// Computed counts the fingerprints computed rather than reused.
func (c *FingerprintCache) Computed() uint64 { return c.computed }

// Len is how many tools' fingerprints the cache holds.
func (c *FingerprintCache) Len() int { return len(c.tools) }

package runner

import (
	"context"
	"hash/maphash"
	"unique"

	"github.com/mcpwatch/mcpwatch/internal/util/intern"
	"github.com/mcpwatch/mcpwatch/lockstore"
)

// FingerprintCache holds the schema fingerprints and description hashes
// of one server's tools as of its last probe. A schema's canonical form
// costs tens of microseconds per tool, and a server's tools seldom change
// between probes: a tool whose schema and description bytes are as before
// reuses its fingerprint and hash. It holds the tools of the last probe
// only, so it is bounded by the server's tool count. It keeps a hash of the
// bytes, not the bytes: the schemas belong to the latest result alone. The
// zero value is empty and ready; a nil cache computes everything and keeps
// nothing. It is not safe for concurrent use: one server's probes, one at
// a time.
//
// "As before" is judged by a 64-bit maphash of the bytes with a seed drawn
// at start, which the server cannot know: it cannot make a changed schema
// pass for the old one, and by chance it happens once in 2^64 comparisons.
// The fingerprint and the hash themselves are SHA-256, as the lock keeps
// them.
//
// The tools are kept in the order the server listed them, which seldom
// changes either, so a probe like the last one finds each tool where it
// was, as it was: a steady server costs the cache no allocation and no
// write. A fingerprint or hash computed afresh is interned (unique), and
// so is the cache's whole list (internal/util/intern), so servers that
// list the same tools (replicas of one server, a fleet of the same
// package) hold one copy of it between them.
type FingerprintCache struct {
	tools    []cachedFingerprint
	computed uint64 // fingerprints computed rather than reused
}

type cachedFingerprint struct {
	name              string
	schema, desc      uint64 // maphash of the schema's and the description's bytes
	fingerprint, hash string
}

// changeSeed seeds the hashes that tell a tool unchanged.
var changeSeed = maphash.MakeSeed()

// Fill sets the Fingerprint and the DescriptionHash of each observed tool
// that has none, from the cache where the schema's (the description's)
// bytes are unchanged, and keeps those of observed for next time. It stops
// with ctx's error when ctx ends between two tools (a fingerprint's cost is
// linear in its schema, which the message cap bounds); observed is then
// partly filled and the cache's entries so far right for their tools.
func (c *FingerprintCache) Fill(ctx context.Context, observed []lockstore.Observed) error {
	if c == nil {
		for i := range observed {
			if err := ctx.Err(); err != nil {
				return err
			}
			o := &observed[i]
			if o.Fingerprint == "" {
				o.Fingerprint = lockstore.Fingerprint(o.InputSchema)
			}
			if o.DescriptionHash == "" {
				o.DescriptionHash = lockstore.DescriptionHash(o.Description)
			}
		}
		return nil
	}
	old := c.tools
	var next []cachedFingerprint // nil while each tool is as old has it
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
			return err // the cache is as it was: right for the tools it holds
		}
		o := &observed[i]
		var was cachedFingerprint
		if byName == nil {
			was = old[i]
		} else if j, ok := byName[o.Name]; ok {
			was = old[j]
		}
		now := cachedFingerprint{
			name:   was.name,
			schema: maphash.Bytes(changeSeed, o.InputSchema),
			desc:   maphash.String(changeSeed, o.Description),
		}
		if now.name != o.Name {
			now.name = unique.Make(o.Name).Value()
		}
		o.Fingerprint = cached(o.Fingerprint, was.fingerprint, was.schema == now.schema, func() string {
			c.computed++
			return lockstore.Fingerprint(o.InputSchema)
		})
		o.DescriptionHash = cached(o.DescriptionHash, was.hash, was.desc == now.desc, func() string {
			return lockstore.DescriptionHash(o.Description)
		})
		now.fingerprint, now.hash = o.Fingerprint, o.DescriptionHash
		if next == nil {
			if now == old[i] {
				continue
			}
			next = make([]cachedFingerprint, i, len(observed))
			copy(next, old[:i])
		}
		next = append(next, now)
	}
	if next != nil {
		c.tools = shareFingerprints(next)
	}
	return nil
}

// cacheLists interns the caches' lists: the servers of a fleet list the
// same tools, so their caches hold the same entries (1.4 kB a server of 21
// tools when each kept its own). A list is never written once kept (Fill
// makes a new one for a change), so that servers may share it.
var cacheLists intern.Slices[cachedFingerprint]

func shareFingerprints(list []cachedFingerprint) []cachedFingerprint {
	var k intern.Key
	for _, t := range list {
		k.String(t.name)
		k.Uint64(t.schema)
		k.Uint64(t.desc)
		k.String(t.fingerprint)
		k.String(t.hash)
	}
	return cacheLists.Share(list, &k)
}

// cached is one of a tool's values: the one it came with, else the
// cache's while its bytes are unchanged, else compute's, interned.
func cached(given, kept string, unchanged bool, compute func() string) string {
	switch {
	case given != "":
		return given
	case kept != "" && unchanged:
		return kept
	}
	return unique.Make(compute()).Value()
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

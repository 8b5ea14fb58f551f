package runner

import (
	"context"
	"crypto/sha256"

	"github.com/mcpwatch/mcpwatch/lockstore"
)

// FingerprintCache holds the schema fingerprints of one server's tools as of
// its last probe, by tool name. A schema's canonical form costs tens of
// microseconds per tool, and a server's tools seldom change between probes:
// a tool whose schema bytes hash as before reuses its fingerprint. It holds
// the tools of the last probe only, so it is bounded by the server's tool
// count. It keeps a hash of the bytes, not the bytes: the schemas belong to
// the latest result alone. The zero value is empty and ready; a nil cache
// computes every fingerprint and keeps none. It is not safe for concurrent
// use: one server's probes, one at a time.
type FingerprintCache struct {
	byName   map[string]cachedFingerprint
	computed uint64 // fingerprints computed rather than reused
}

type cachedFingerprint struct {
	schema      [sha256.Size]byte // of the schema's bytes as the probe kept them
	fingerprint string
}

// Fill sets the Fingerprint of each observed tool that has none, from the
// cache where the schema's bytes are unchanged, and keeps those of observed
// for next time. It stops with ctx's error when ctx ends between two tools
// (a fingerprint's cost is linear in its schema, which the message cap
// bounds); observed is then partly filled and the cache unchanged.
func (c *FingerprintCache) Fill(ctx context.Context, observed []lockstore.Observed) error {
	next := make(map[string]cachedFingerprint, len(observed))
	for i := range observed {
		if err := ctx.Err(); err != nil {
			return err
		}
		o := &observed[i]
		if c == nil {
			if o.Fingerprint == "" {
				o.Fingerprint = lockstore.Fingerprint(o.InputSchema)
			}
			continue
		}
		sum := sha256.Sum256(o.InputSchema)
		if o.Fingerprint == "" {
			if hit, ok := c.byName[o.Name]; ok && hit.schema == sum {
				o.Fingerprint = hit.fingerprint
			} else {
				o.Fingerprint = lockstore.Fingerprint(o.InputSchema)
				c.computed++
			}
		}
		next[o.Name] = cachedFingerprint{schema: sum, fingerprint: o.Fingerprint}
	}
	if c != nil {
		c.byName = next
	}
	return nil
}

// Computed counts the fingerprints computed rather than reused.
func (c *FingerprintCache) Computed() uint64 { return c.computed }

// Len is how many tools' fingerprints the cache holds.
func (c *FingerprintCache) Len() int { return len(c.byName) }

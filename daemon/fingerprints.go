package daemon

import (
	"crypto/sha256"

	"github.com/mcpwatch/mcpwatch/lockstore"
)

// fingerprintCache holds the schema fingerprints of a server's tools as of
// its last comparison with a fingerprinted lock, by tool name. A schema's
// canonical form costs tens of microseconds per tool, and a server's tools
// seldom change between probes: a tool whose schema bytes hash as before
// reuses its fingerprint. The cache holds the tools of the last comparison
// only, so it is bounded by the server's tool count and goes with the
// server. It keeps a hash of the bytes, not the bytes: the schemas belong
// to the latest result alone.
type fingerprintCache struct {
	byName   map[string]cachedFingerprint
	computed uint64 // fingerprints computed rather than reused, for tests
}

type cachedFingerprint struct {
	schema      [sha256.Size]byte // of the schema's bytes as the server sent them
	fingerprint string
}

// fill sets the Fingerprint of each observed tool, from the cache where the
// schema's bytes are unchanged, and keeps those of observed for next time.
func (c *fingerprintCache) fill(observed []lockstore.Observed) {
	next := make(map[string]cachedFingerprint, len(observed))
	for i := range observed {
		o := &observed[i]
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
	c.byName = next
}

// needsFingerprints reports whether comparing with entry checks any schema
// fingerprint; a names-only lock needs none, and none are computed for it.
func needsFingerprints(entry lockstore.Entry) bool {
	for _, t := range entry.Tools {
		if t.Schema != "" {
			return true
		}
	}
	return false
}

package intern

import (
	"sync"
	"unsafe"
)

// Strings keeps one copy of each string it was asked for, by content, up
// to a bound: a probe decodes every tool of a server at every probe, and a
// steady server lists the same names, descriptions and schemas each time,
// so handing back the copy from the last probe spares an allocation (and
// the collector's work for it) per string. The zero value is ready, with
// the default bounds, and safe for concurrent use.
//
// Unlike Slices it holds its strings strongly (a string read at every probe
// and dropped right after by its reader would be forgotten at every
// collection), so it is bounded instead: a string longer than maxString is
// never kept, and once the kept strings would pass maxBytes the table starts
// afresh. A server that lists new text at every probe costs what it cost
// without the table, plus a map lookup.
type Strings struct {
	mu    sync.Mutex
	m     map[string]string
	bytes int // the bytes of the strings in m
}

// Bounds of a Strings table.
const (
	stringsMaxBytes  = 4 << 20  // all of a large fleet's tool sets, at a few kB a tool
	stringsMaxString = 16 << 10 // a schema of a few hundred properties; longer ones are rare and not kept
)

// Of returns the string of b's bytes: the kept one when the table has it,
// or a new one (kept when within the bounds). It does not allocate when
// the table has it.
func (t *Strings) Of(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > stringsMaxString {
		return string(b)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if s, ok := t.m[string(b)]; ok { // the conversion in a lookup does not allocate
		return s
	}
	s := string(b)
	if t.m == nil || t.bytes+len(s) > stringsMaxBytes {
		// Start afresh rather than pick what to drop: the strings the
		// fleet still lists are back after one probe of each server.
		t.m = make(map[string]string, len(t.m))
		t.bytes = 0
	}
	t.m[s] = s
	t.bytes += len(s)
	return s
}

// Bytes is Of for a value read as bytes (a JSON schema kept as
// json.RawMessage): the bytes of the kept string, which its holders must
// never write, with no capacity beyond its length, so an append copies. An
// empty b comes back as a copy of its own.
func (t *Strings) Bytes(b []byte) []byte {
	if len(b) == 0 || len(b) > stringsMaxString {
		return append([]byte(nil), b...)
	}
	s := t.Of(b)
	return unsafe.Slice(unsafe.StringData(s), len(s)) //nolint:gosec // G103: read-only bytes of a kept string, see above
}

// Len is the number of strings kept.
func (t *Strings) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}

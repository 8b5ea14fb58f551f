// Package intern keeps one copy of equal lists for everything that holds
// one: the servers of a fleet list the same tools, and a list kept per
// server (tool names, fingerprints) multiplies a few kilobytes by the
// fleet's size. A list is held weakly: the table forgets it when nothing
// else keeps it.
package intern

import (
	"encoding/binary"
	"sync"
	"unsafe"
	"weak"
)

// Slices interns lists of T by their content. The zero value is ready and
// safe for concurrent use.
//
// A list Share hands out may be shared: its holders must never write it
// (replace a list, never change one), and its capacity is its length, so
// an append copies.
type Slices[T any] struct {
	mu sync.Mutex
	m  map[string]weakSlice[T] // by the list's content (a Key)
	// live is the entries left by the last sweep: the table sweeps the
	// forgotten ones when it has grown to twice that, so a sweep's cost
	// is paid by as many additions.
	live int
}

type weakSlice[T any] struct {
	first weak.Pointer[T] // the list's first element: its allocation's start
	n     int
}

// Share returns the list equal to s (key is its content, see Key) that the
// table keeps, or keeps s and returns it. An empty s is returned as it is.
// A list the table has costs no copy of its key: at every probe of a
// steady server, the list is one it has.
func (t *Slices[T]) Share(s []T, key *Key) []T {
	if len(s) == 0 {
		return s
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if w, ok := t.m[string(key.b)]; ok { // the conversion in a lookup does not allocate
		if p := w.first.Value(); p != nil {
			// p is the start of a list of w.n elements Share kept whole.
			return unsafe.Slice(p, w.n) //nolint:gosec // G103: a weak pointer holds an element, not a slice
		}
	}
	if t.m == nil {
		t.m = make(map[string]weakSlice[T])
	}
	s = s[:len(s):len(s)]
	t.m[string(key.b)] = weakSlice[T]{weak.Make(&s[0]), len(s)}
	if len(t.m) >= 2*t.live+1024 {
		for k, w := range t.m {
			if w.first.Value() == nil {
				delete(t.m, k)
			}
		}
		t.live = len(t.m)
	}
	return s
}

// Len is the number of lists the table has an entry for, forgotten ones
// not swept yet included.
func (t *Slices[T]) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}

// Key is a list's content written as one string: each string with its
// length before it, so that no two different lists make the same key
// whatever their strings hold.
type Key struct{ b []byte }

// String adds a string to the key.
func (k *Key) String(s string) {
	k.b = binary.AppendUvarint(k.b, uint64(len(s)))
	k.b = append(k.b, s...)
}

// Uint64 adds a number to the key.
func (k *Key) Uint64(v uint64) { k.b = binary.LittleEndian.AppendUint64(k.b, v) }

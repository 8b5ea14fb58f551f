package registry

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// hostile serves pages as page(n) writes them; n counts from 1.
func hostile(t *testing.T, page func(w http.ResponseWriter, n int)) *httptest.Server {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		page(w, int(n.Add(1)))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A registry that lists more entries than the bound, or more bytes, is
// refused with an error naming the bound; the entries of the last good
// sync stay (a reload over the bound keeps what runs).
func TestMirrorBounds(t *testing.T) {
	const maxEntries = 500 // the bound, lowered: the rule is the same at MaxEntries
	var grow atomic.Bool
	srv := hostile(t, func(w http.ResponseWriter, n int) {
		if !grow.Load() {
			fmt.Fprint(w, `{"servers": [{"server": {"name": "io.x/kept"}}]}`)
			return
		}
		// One page of maxEntries+1 small entries.
		var b strings.Builder
		b.WriteString(`{"servers": [`)
		for i := range maxEntries + 1 {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"server": {"name": "io.x/s%d"}}`, i)
		}
		b.WriteString(`]}`)
		fmt.Fprint(w, b.String())
	})
	m, err := NewMirror(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	m.maxEntries = maxEntries
	if _, err := m.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	grow.Store(true)
	m2, _ := NewMirror(srv.URL, nil)
	m2.maxEntries = maxEntries
	for _, mm := range []*Mirror{m, m2} {
		_, err = mm.Sync(context.Background())
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than %d entries", maxEntries)) {
			t.Errorf("a page of %d entries: %v", maxEntries+1, err)
		}
	}
	if got := m.Entries(); len(got) != 1 || got[0].Name != "io.x/kept" {
		t.Errorf("after a sync over the bound, entries %v; want the last good sync's", got)
	}

	// Pages of padding that never end in entries: stopped at MaxBytes.
	const pageBytes = 64 << 10
	pad := strings.Repeat(" ", pageBytes-100)
	var pages atomic.Int64
	srv = hostile(t, func(w http.ResponseWriter, n int) {
		pages.Add(1)
		fmt.Fprintf(w, `{"servers": [], "metadata": {"nextCursor": "c%d"}%s}`, n, pad)
	})
	m, _ = NewMirror(srv.URL, nil)
	m.maxBytes = 1 << 20
	_, err = m.Sync(context.Background())
	if err == nil || !strings.Contains(err.Error(), "more than 1 MiB") {
		t.Errorf("endless padded pages: %v", err)
	}
	if got, most := pages.Load(), int64(m.maxBytes/(pageBytes-100))+1; got > most {
		t.Errorf("read %d pages, want at most %d", got, most)
	}
}

func TestReadFileBounds(t *testing.T) {
	var b strings.Builder
	b.WriteString("[")
	for i := range MaxEntries + 1 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name": "io.x/s%d"}`, i)
	}
	b.WriteString("]")
	path := filepath.Join(t.TempDir(), "servers.json")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(path); err == nil || !strings.Contains(err.Error(), "entries") {
		t.Errorf("a file of %d entries: %v", MaxEntries+1, err)
	}
}

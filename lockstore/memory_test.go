package lockstore

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"
)

// A parsed lock of a fleet whose servers lock the same tools keeps one
// entry and one copy of its bytes between them: 1.8 kB a server of 21
// fingerprinted tools when each kept its own, which a daemon of 100,000
// servers holds for as long as it runs.
func TestParsedLockSharesEqualEntries(t *testing.T) {
	const servers, tools = 2000, 21
	l := New()
	for i := range servers {
		var obs []Observed
		for j := range tools + i%3 { // three tool sets
			obs = append(obs, Observed{Name: fmt.Sprintf("tool_%02d", j), Description: "Reads records.", InputSchema: []byte(`{"type":"object"}`)})
		}
		l.Set(fmt.Sprintf("server-%05d", i), NewEntry(obs, true))
	}
	data := l.Marshal()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	parsed, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := float64(after.HeapAlloc-before.HeapAlloc) / servers
	t.Logf("a parsed lock of %d servers of %d tools (%d bytes of JSON) retains %.0f B a server", servers, tools, len(data), per)
	if per > 300 {
		t.Errorf("a parsed lock retains %.0f B a server of the same %d tools; want at most 300 (one entry for all)", per, tools)
	}
	if !bytes.Equal(parsed.Marshal(), data) {
		t.Error("the parsed lock is not written back byte for byte")
	}
	for _, name := range []string{"server-00000", "server-00001", "server-01999"} {
		e, _ := parsed.Entry(name)
		want, _ := l.Entry(name)
		if !e.Equal(want) {
			t.Errorf("%s: parsed %v, want %v", name, e, want)
		}
	}
	runtime.KeepAlive(parsed)
}

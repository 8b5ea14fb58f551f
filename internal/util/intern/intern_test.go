package intern

import (
	"fmt"
	"runtime"
	"testing"
	"unsafe"
)

func key(s []string) *Key {
	var k Key
	for _, v := range s {
		k.String(v)
	}
	return &k
}

func TestSharesEqualLists(t *testing.T) {
	var tab Slices[string]
	a := tab.Share([]string{"x", "y"}, key([]string{"x", "y"}))
	b := tab.Share([]string{"x", "y"}, key([]string{"x", "y"}))
	if &a[0] != &b[0] {
		t.Error("two equal lists are kept twice")
	}
	if cap(a) != len(a) {
		t.Errorf("a shared list has capacity %d beyond its length %d: an append would write into it", cap(a), len(a))
	}
	// Lengths in the key: ["ab"] and ["a", "b"] are different lists.
	c := tab.Share([]string{"ab"}, key([]string{"ab"}))
	d := tab.Share([]string{"a", "b"}, key([]string{"a", "b"}))
	if len(c) != 1 || len(d) != 2 || c[0] != "ab" || d[0] != "a" {
		t.Errorf("different lists shared one entry: %q, %q", c, d)
	}
	if got := tab.Share(nil, &Key{}); got != nil {
		t.Errorf("an empty list came back as %q", got)
	}
	// A list the table has costs no allocation, its key included.
	again, k := []string{"x", "y"}, key([]string{"x", "y"})
	if n := testing.AllocsPerRun(100, func() { _ = tab.Share(again, k) }); n != 0 {
		t.Errorf("sharing a list the table has cost %v allocations; want 0", n)
	}
	runtime.KeepAlive(a)
	runtime.KeepAlive(b)
}

// A list no one keeps is forgotten: the next equal list is kept afresh,
// and the table's entries for forgotten lists are swept as it grows.
func TestForgetsListsNoOneKeeps(t *testing.T) {
	var tab Slices[string]
	for i := range 5000 {
		s := []string{fmt.Sprint(i)}
		tab.Share(s, key(s))
		if i%1000 == 0 {
			runtime.GC()
		}
	}
	runtime.GC()
	fresh := []string{"0"}
	if got := tab.Share(fresh, key(fresh)); &got[0] != &fresh[0] {
		t.Error("a list no one kept any more was handed out again")
	}
	if n := tab.Len(); n >= 5000 {
		t.Errorf("the table has %d entries for 5,000 lists no one keeps; want them swept", n)
	}
}

// Equal bytes come back as one string, and a kept string costs no
// allocation: what a probe's decoding of a steady server's tools relies on.
func TestStringsKeepsOneCopy(t *testing.T) {
	var tab Strings
	b := []byte(`{"type":"object","properties":{"from":{"type":"string"}}}`)
	a := tab.Of(b)
	c := tab.Of(append([]byte(nil), b...))
	if unsafe.StringData(a) != unsafe.StringData(c) { //nolint:gosec // G103: which copy, compared
		t.Error("equal bytes made two strings")
	}
	if n := testing.AllocsPerRun(100, func() { _ = tab.Of(b) }); n != 0 {
		t.Errorf("a kept string cost %v allocations; want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() { _ = tab.Bytes(b) }); n != 0 {
		t.Errorf("a kept string's bytes cost %v allocations; want 0", n)
	}
	if got := tab.Bytes(b); string(got) != string(b) || cap(got) != len(got) {
		t.Errorf("Bytes = %q with capacity %d; want the bytes, capacity their length", got, cap(got))
	}
	if tab.Of(nil) != "" || len(tab.Bytes(nil)) != 0 {
		t.Error("empty bytes came back as something")
	}
}

// The table is bounded: a long string is never kept, and strings past the
// byte bound start it afresh rather than grow it.
func TestStringsBounded(t *testing.T) {
	var tab Strings
	long := make([]byte, stringsMaxString+1)
	tab.Of(long)
	if tab.Len() != 0 {
		t.Error("a string over the bound was kept")
	}
	chunk := make([]byte, 1<<10)
	for i := range 2 * stringsMaxBytes / len(chunk) {
		copy(chunk, fmt.Sprintf("%08d", i))
		tab.Of(chunk)
	}
	if kept := tab.Len() * len(chunk); kept > stringsMaxBytes {
		t.Errorf("the table keeps %d bytes; want at most %d", kept, stringsMaxBytes)
	}
}

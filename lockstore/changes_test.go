package lockstore

import (
	"reflect"
	"strings"
	"testing"
)

func TestChanges(t *testing.T) {
	h1, h2 := DescriptionHash("one"), DescriptionHash("two")
	old := New()
	old.Set("kept", Entry{Tools: []ToolLock{{Name: "a"}, {Name: "b"}}})
	old.Set("shrunk", Entry{Tools: []ToolLock{{Name: "read"}, {Name: "write"}}})
	old.Set("gone", Entry{Tools: []ToolLock{{Name: "x"}}})
	old.Set("fp", Entry{Tools: []ToolLock{{Name: "q", Description: h1}, {Name: "r", Description: h1}, {Name: "s"}}})

	next := New()
	next.Set("kept", Entry{Tools: []ToolLock{{Name: "b"}, {Name: "a"}}})
	next.Set("shrunk", Entry{Tools: []ToolLock{{Name: "read"}, {Name: "search"}}})
	next.Set("new", Entry{Tools: []ToolLock{{Name: "n2"}, {Name: "n1"}}})
	// q reworded, r unchanged, s gains a hash: only q counts as changed.
	next.Set("fp", Entry{Tools: []ToolLock{{Name: "q", Description: h2}, {Name: "r", Description: h1}, {Name: "s", Description: h2}}})

	want := []Change{
		{Server: "fp", Changed: []string{"q"}},
		{Server: "gone", Removed: []string{"x"}},
		{Server: "new", Added: []string{"n1", "n2"}},
		{Server: "shrunk", Added: []string{"search"}, Removed: []string{"write"}},
	}
	if got := Changes(old, next); !reflect.DeepEqual(got, want) {
		t.Errorf("Changes:\n got %+v\nwant %+v", got, want)
	}
	if got := Changes(next, next); got != nil {
		t.Errorf("Changes(l, l) = %+v, want none", got)
	}
	if got := Changes(nil, next); len(got) != 4 || got[0].Server != "fp" || len(got[0].Added) != 3 {
		t.Errorf("Changes(nil, l) = %+v, want every server added", got)
	}
}

func TestChangeString(t *testing.T) {
	c := Change{Server: "report", Added: []string{"a", "b"}, Removed: []string{"c"}, Changed: []string{"d"}}
	if got, want := c.String(), "report: + a, b; - c; ~ d"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

// A 3 MB tool name is cut in the line `mcpwatch lock` prints; the change
// itself keeps it whole.
func TestChangeStringCutsNames(t *testing.T) {
	long := strings.Repeat("n", 3<<20)
	c := Change{Server: "hostile", Added: []string{long}}
	if got := c.String(); len(got) > 200 || !strings.HasSuffix(got, "…") {
		t.Errorf("String() of %d bytes", len(got))
	}
	if c.Added[0] != long {
		t.Error("the change lost the name")
	}
}

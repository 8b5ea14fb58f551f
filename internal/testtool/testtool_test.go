package testtool

import (
	"strings"
	"testing"
)

// fakeT records what Need does with a test instead of doing it.
type fakeT struct {
	testing.TB
	skipped, failed string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Skipf(format string, args ...any) {
	f.skipped = format
	panic(f)
}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.failed = format
	panic(f)
}

func need(name string) (path string, f *fakeT) {
	f = &fakeT{}
	defer func() {
		if r := recover(); r != nil && r != f {
			panic(r)
		}
	}()
	return Need(f, name, "no-such-package"), f
}

func TestNeed(t *testing.T) {
	missing := "mcpwatch-no-such-tool"
	t.Setenv("CI", "")
	if _, f := need(missing); !strings.Contains(f.skipped, "SKIPPED") || f.failed != "" {
		t.Errorf("outside CI a missing tool must skip: %+v", f)
	}
	t.Setenv("CI", "true")
	if _, f := need(missing); f.failed == "" || f.skipped != "" {
		t.Errorf("under CI a missing tool must fail: %+v", f)
	}
	if path, f := need("go"); path == "" || f.failed != "" || f.skipped != "" {
		t.Errorf("a present tool: path %q, %+v", path, f)
	}
}

func TestInCI(t *testing.T) {
	for v, want := range map[string]bool{"": false, "false": false, "0": false, "true": true, "1": true, "yes": true} {
		t.Setenv("CI", v)
		if InCI() != want {
			t.Errorf("CI=%q: InCI() = %v", v, !want)
		}
	}
}

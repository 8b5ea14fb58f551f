package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// A Python behind a shim (a script that execs the interpreter, as pyenv's
// and asdf's do) is resolved to the interpreter itself, so that neither
// preflight pays the shim nor inherits what it exports.
func TestRealInterpreterSeesThroughShim(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 on PATH")
	}
	want, err := realInterpreter(t.Context(), python)
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(want) {
		t.Fatalf("realInterpreter(%s) = %q, want an absolute path", python, want)
	}
	shim := filepath.Join(t.TempDir(), "python3")
	script := "#!/bin/sh\nexec " + want + " \"$@\"\n"
	if err := os.WriteFile(shim, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	got, err := realInterpreter(t.Context(), shim)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("realInterpreter(shim) = %q, want the interpreter %q", got, want)
	}

	if _, err := realInterpreter(t.Context(), filepath.Join(t.TempDir(), "no-python")); err == nil {
		t.Error("realInterpreter of a missing program: no error")
	}
}

// A run's CPU is split into the command's own and its children's: a shell
// that waits for a child shell counting to 300,000 has nearly all of its CPU
// in the child. (The split is in ticks of 10 ms; the count takes ~100 ms
// or more of CPU.)
func TestTimeCommandSplitsOwnAndChildren(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	loop := `i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done`
	c := command{name: "sh", dir: t.TempDir(), argv: []string{sh, "-c", sh + " -c '" + loop + "'; true"}}
	got, err := timeCommand(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	if got.children < 0.05 || got.own > got.children/4 {
		t.Errorf("own %.3f s, children %.3f s (total %.3f s): want the child's count in children", got.own, got.children, got.cpu)
	}
	if got.cpu < got.children-0.02 {
		t.Errorf("total CPU %.3f s below the children's %.3f s", got.cpu, got.children)
	}
}

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

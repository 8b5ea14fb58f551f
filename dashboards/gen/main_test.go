package main

import (
	"bytes"
	"os"
	"testing"
)

// TestCommittedDashboardIsCurrent fails when the mixin's panels.json was
// edited by hand or not regenerated after a change here.
func TestCommittedDashboardIsCurrent(t *testing.T) {
	want, err := render()
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	got, err := os.ReadFile("../../mixin/dashboards/panels.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("mixin/dashboards/panels.json is out of date with dashboards/gen; run: cd dashboards && go generate ./... (then cd mixin && go generate ./...)")
	}
}

func TestRunWrites(t *testing.T) {
	out := t.TempDir() + "/d.json"
	if err := run(out); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(out); err != nil || !bytes.Contains(b, []byte(`"schemaVersion"`)) {
		t.Fatalf("run wrote %q, %v", b, err)
	}
}

package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestCommittedManifestIsCurrent fails when prometheusrule.yaml was not
// regenerated after the rules file changed (or was edited by hand).
func TestCommittedManifestIsCurrent(t *testing.T) {
	rules, err := os.ReadFile("../../../mixin/prometheus-alerts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want, err := render(rules)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	got, err := os.ReadFile("../common/prometheusrule.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("deploy/kubernetes/common/prometheusrule.yaml is out of date with mixin/prometheus-alerts.yaml; run: cd deploy/kubernetes && go generate ./...")
	}
}

func TestRunWritesManifest(t *testing.T) {
	out := t.TempDir() + "/rule.yaml"
	if err := run("../../../mixin/prometheus-alerts.yaml", out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte("kind: PrometheusRule")) || !bytes.Contains(b, []byte("alert: McpToolsMissing")) {
		t.Fatalf("written manifest lacks the kind or the rules:\n%s", b)
	}
}

func TestRenderRejects(t *testing.T) {
	tests := []struct {
		name, rules, wantErr string
	}{
		{"not yaml", "groups: [", "not valid YAML"},
		{"a list", "- a\n- b\n", "expected a mapping with `groups`"},
		{"extra key", "groups: [{name: g, rules: []}]\nother: 1\n", `top-level key "other"`},
		{"no groups", "groups: []\n", "no rule groups"},
		{"empty file", "", "expected a mapping"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := render([]byte(tt.rules))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("render(%q) error = %v, want one containing %q", tt.rules, err, tt.wantErr)
			}
		})
	}
}

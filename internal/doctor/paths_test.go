package doctor

import (
	"strings"
	"testing"
	"time"
)

func TestUploadCovers(t *testing.T) {
	for _, tc := range []struct {
		patterns string
		file     string
		want     bool
	}{
		{"mcp-receipt.json", "mcp-receipt.json", true},
		{"./mcp-receipt.json", "mcp-receipt.json", true},
		{"mcp-receipt.json", "out/mcp-receipt.json", false},
		{"out/", "out/mcp-receipt.json", true},
		{"out", "out/sub/mcp-receipt.json", true},
		{"*.json", "mcp-receipt.json", true},
		{"*.json", "out/mcp-receipt.json", false},
		{"**/*.json", "out/sub/mcp-receipt.json", true},
		{"**/*.json", "mcp-receipt.json", true},
		{"out/**\n!out/mcp-receipt.json", "out/mcp-receipt.json", false},
		{"reports/\nmcp-*.json", "mcp-receipt.json", true},
		{"${{ runner.temp }}/r.json", "${{ runner.temp }}/r.json", true},
		{"${{ runner.temp }}/*.json", "${{ runner.temp }}/r.json", true},
		{".", "anything/at/all.json", true},
		{"", "mcp-receipt.json", false},
	} {
		if got := uploadCovers(strings.Split(tc.patterns, "\n"), tc.file); got != tc.want {
			t.Errorf("upload %q takes %q: got %v, want %v", tc.patterns, tc.file, got, tc.want)
		}
	}
}

func TestFilterMatches(t *testing.T) {
	for _, tc := range []struct {
		patterns string
		file     string
		want     bool
	}{
		{"**", ".mcp.json", true},
		{"src/**", ".mcp.json", false},
		{"*.json", ".mcp.json", true},
		{"*.json", "ci/.mcp.json", false},
		{"**.json", "ci/.mcp.json", true},
		{"**/*.json\n!mcp-tools.lock.json", "mcp-tools.lock.json", false},
		{"**/*.json\n!mcp-tools.lock.json\nmcp-*", "mcp-tools.lock.json", true},
		{"docs/**", "docs/a/b.md", true},
		{".mcp.jsonc?", ".mcp.json", true},
	} {
		if got := filterMatches(strings.Split(tc.patterns, "\n"), tc.file); got != tc.want {
			t.Errorf("filter %q matches %q: got %v, want %v", tc.patterns, tc.file, got, tc.want)
		}
	}
}

func TestParseJobTimeout(t *testing.T) {
	for _, tc := range []struct {
		system, v string
		want      time.Duration
		ok        bool
	}{
		{systemGitHub, "10", 10 * time.Minute, true},
		{systemGitHub, "2.5", 150 * time.Second, true},
		{systemGitHub, "${{ inputs.minutes }}", 0, false},
		{systemGitLab, "1h 30m", 90 * time.Minute, true},
		{systemGitLab, "10 minutes", 10 * time.Minute, true},
		{systemGitLab, "3 hours 5 minutes", 185 * time.Minute, true},
		{systemGitLab, "3600", time.Hour, true},
		{systemGitLab, "soon", 0, false},
	} {
		got, ok := parseJobTimeout(tc.system, tc.v)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s %q: got %v %v, want %v %v", tc.system, tc.v, got, ok, tc.want, tc.ok)
		}
	}
}

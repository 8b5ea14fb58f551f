package main

import (
	"runtime/debug"
	"strings"
	"testing"
)

// A plain go build in a clone records the commit and its time: they are
// the revision and the date, not "unknown" and nothing.
func TestVCSStamp(t *testing.T) {
	bi := &debug.BuildInfo{Settings: []debug.BuildSetting{
		{Key: "-trimpath", Value: "true"},
		{Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "ebadd4a8c0ffee0000000000000000000000000"},
		{Key: "vcs.time", Value: "2026-12-02T02:31:04Z"},
		{Key: "vcs.modified", Value: "false"},
	}}
	rev, date := vcsStamp(bi)
	if rev != "ebadd4a8c0ffee0000000000000000000000000" || date != "2026-12-02T02:31:04Z" {
		t.Errorf("vcsStamp = %q, %q; want the recorded revision and time", rev, date)
	}
	bi.Settings[4].Value = "true"
	if rev, _ := vcsStamp(bi); rev != "ebadd4a8c0ffee0000000000000000000000000-modified" {
		t.Errorf("a build of a modified tree: revision %q, want it marked -modified", rev)
	}
	if rev, date := vcsStamp(&debug.BuildInfo{}); rev != "" || date != "" {
		t.Errorf("a build without VCS information: %q, %q; want nothing, so that version says so", rev, date)
	}
	if rev, date := vcsStamp(nil); rev != "" || date != "" {
		t.Errorf("no build information: %q, %q", rev, date)
	}
}

// mcpwatch help COMMAND prints that command's help, as COMMAND --help does;
// help of no command, the list; of an unknown one, a usage error.
func TestHelpCommand(t *testing.T) {
	for _, args := range [][]string{{"check"}, {"doctor"}, {"config", "check"}} {
		code, stdout, stderr := runCLI(t, nil, append([]string{"help"}, args...)...)
		_, want, _ := runCLI(t, nil, append(args, "--help")...)
		if code != exitOK || stdout != want || !strings.HasPrefix(stdout, "Usage:\n  mcpwatch "+strings.Join(args, " ")) {
			t.Errorf("mcpwatch help %s: exit %d, stdout %.80q, stderr %q; want %s --help's %.80q", strings.Join(args, " "), code, stdout, stderr, strings.Join(args, " "), want)
		}
	}
	if code, stdout, _ := runCLI(t, nil, "help"); code != exitOK || !strings.Contains(stdout, "Commands:") {
		t.Errorf("mcpwatch help: exit %d, %q", code, stdout)
	}
	if code, _, stderr := runCLI(t, nil, "help", "chek"); code != exitUsage || !strings.Contains(stderr, "did you mean check?") {
		t.Errorf("mcpwatch help chek: exit %d, %q", code, stderr)
	}
}

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/preflight"
)

// Each command's formats are its table: --help offers the table's keys,
// an unknown --format is refused naming them, and check writes each of
// them. A format added to a table is offered, accepted and written with
// no other change.
func TestOutputFormatsAreTheTable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		command []string
		names   []string
		extra   []string // what makes the command line whole
	}{
		{[]string{"check"}, formatNames(checkFormats), nil},
		{[]string{"lock"}, formatNames(lockFormats), nil},
		{[]string{"probe"}, formatNames(probeFormats), []string{"--", "x"}},
		{[]string{"config", "check"}, formatNames(configFormats), nil},
		{[]string{"doctor"}, formatNames(doctorFormats), nil},
		{[]string{"discover"}, formatNames(discoverFormats), nil},
	} {
		t.Run(strings.Join(tc.command, " "), func(t *testing.T) {
			t.Parallel()
			if tc.names[0] != preflight.FormatText {
				t.Errorf("formats %q: text, the default, must come first", tc.names)
			}
			_, help, _ := runCLI(t, nil, append(tc.command, "--help")...)
			if want := "output format: " + orList(tc.names); !strings.Contains(help, want) {
				t.Errorf("--help lacks %q:\n%s", want, help)
			}
			code, _, stderr := runCLI(t, nil, append(append(tc.command, "--format", "nope"), tc.extra...)...)
			if want := `--format "nope": want one of ` + strings.Join(tc.names, ", "); code != exitUsage || !strings.Contains(stderr, want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, exitUsage, want)
			}
		})
	}
	if got := strings.Join(formatNames(checkFormats), " "); got != "text github json junit" {
		t.Errorf("check's formats %q", got)
	}

	// Every format of check writes the report to --output, and all but
	// text write to stdout besides.
	r := preflight.Failed(os.ErrNotExist, "mcpwatch.yml", "mcp-tools.lock.json", "test", time.Now())
	for _, name := range formatNames(checkFormats) {
		out := filepath.Join(t.TempDir(), "out")
		var stdout bytes.Buffer
		c := testCLI(&stdout, &bytes.Buffer{}, nil)
		f := &checkFlags{}
		f.out.format, f.out.output = name, out
		if err := writeCheckOutputs(c, f, r); err != nil {
			t.Errorf("--format %s: %v", name, err)
		}
		if b, _ := os.ReadFile(out); len(b) == 0 || (stdout.Len() == 0) != (name == preflight.FormatText) {
			t.Errorf("--format %s wrote %d bytes to --output and %d to stdout", name, len(b), stdout.Len())
		}
	}
}

// serve's log formats are a table too.
func TestLogFormatsAreTheTable(t *testing.T) {
	t.Parallel()
	if got := logFormatNames(); strings.Join(got, " ") != "logfmt json" {
		t.Errorf("log formats %q: want logfmt, the default, first", got)
	}
	for _, name := range logFormatNames() {
		if _, err := newLogger(&bytes.Buffer{}, "info", name); err != nil {
			t.Errorf("--log.format %s: %v", name, err)
		}
	}
	_, err := newLogger(&bytes.Buffer{}, "info", "xml")
	if err == nil || !strings.Contains(err.Error(), "use logfmt or json") {
		t.Errorf("--log.format xml: %v", err)
	}
}

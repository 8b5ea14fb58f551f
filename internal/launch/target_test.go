package launch

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/expand"
)

func TestTargetErrorNamesServerAndKey(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "mcpwatch.yml"), `
servers:
  report:
    command: /bin/sh
    env: {REPORT_API_TOKEN: "${file:./secrets/token}", SCOPE: "${REPORT_SCOPE}"}
  remote:
    url: https://mcp.example.com/mcp
    headers: {X-Region: "${REPORT_REGION}"}
`)
	cfg, err := load(filepath.Join(dir, "mcpwatch.yml"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "mcpwatch.yml")
	tokenPath := filepath.Join(dir, "secrets", "token")
	lookup := mapLookup(map[string]string{"REPORT_SCOPE": "read"})

	report, _ := cfg.Server("report")
	_, _, err = Resolve(report, lookup)
	var ee *expand.Error
	if !errors.As(err, &ee) {
		t.Fatalf("got %T %v", err, err)
	}
	if !errors.Is(err, expand.ErrSecretFile) || !errors.Is(err, fs.ErrNotExist) || errors.Is(err, expand.ErrUnsetVariable) {
		t.Errorf("kind of %v", err)
	}
	if ee.Server != "report" || ee.Key != "env.REPORT_API_TOKEN" || ee.File != tokenPath || ee.Source != file {
		t.Errorf("fields %+v", ee)
	}
	want := `server "report" (` + file + `) env.REPORT_API_TOKEN: cannot read secret file ` + tokenPath + `: no such file or directory; create it or fix the ${file:...} path`
	if err.Error() != want {
		t.Errorf("message\n got: %s\nwant: %s", err, want)
	}

	// The file appears, empty: an empty credential, not an error (the daemon
	// must then see the server's shorter tool list). Then it is rotated.
	writeFile(t, tokenPath, "")
	for _, content := range []string{"", "tok-1\n", "tok-2\n"} {
		writeFile(t, tokenPath, content)
		target, _, err := Resolve(report, lookup)
		if err != nil {
			t.Fatal(err)
		}
		if want := strings.TrimSuffix(content, "\n"); target.Env["REPORT_API_TOKEN"] != want || target.Env["SCOPE"] != "read" {
			t.Errorf("after writing %q: env %q", content, target.Env)
		}
	}

	remote, _ := cfg.Server("remote")
	_, _, err = Resolve(remote, lookup)
	want = `server "remote" (` + file + `) headers.X-Region: variable REPORT_REGION is not set: set REPORT_REGION or use ${REPORT_REGION:-} for an empty default`
	if err == nil || err.Error() != want || !errors.Is(err, expand.ErrUnsetVariable) {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "bin", "server"), "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(dir, "bin", "server"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "bin", "not-executable"), "")
	writeFile(t, filepath.Join(dir, "secrets", "token"), "tok\n")
	writeFile(t, filepath.Join(dir, "mcpwatch.yml"), `
servers:
  ok:
    command: ./bin/server
    env: {TOKEN: "${file:secrets/token}", MODE: "${MODE:-full}"}
  many:
    command: ./bin/server
    args: ["--user=${USER_NAME}"]
    env: {A: "${UNSET_A}", B: "${file:secrets/missing}", C: "hunter2"}
  spawn:
    command: no-such-binary-mcpwatch
    cwd: ./nowhere
  perms:
    command: ./bin/not-executable
  remote:
    url: "${REMOTE_URL}"
    headers: {Authorization: "Bearer ${TOKEN}"}
    tls: {ca_file: ./ca.pem}
  remote-ok:
    url: https://mcp.example.com/mcp
    headers: {Authorization: "Bearer ${TOKEN}"}
`)
	cfg, err := load(filepath.Join(dir, "mcpwatch.yml"))
	if err != nil {
		t.Fatal(err)
	}
	binDir := filepath.Dir(os.Args[0]) // a PATH that exists but lacks the binary
	errs := Check(cfg, mapLookup(map[string]string{"TOKEN": "hunter2-token", "PATH": binDir}))
	var got []string
	for _, err := range errs {
		got = append(got, strings.ReplaceAll(err.Error(), dir, "DIR"))
	}
	f := `(DIR/mcpwatch.yml)`
	want := []string{
		`server "many" ` + f + ` args[0]: variable USER_NAME is not set: set USER_NAME or use ${USER_NAME:-} for an empty default`,
		`server "many" ` + f + ` env.A: variable UNSET_A is not set: set UNSET_A or use ${UNSET_A:-} for an empty default`,
		`server "many" ` + f + ` env.B: cannot read secret file DIR/secrets/missing: no such file or directory; create it or fix the ${file:...} path`,
		`server "perms" ` + f + ` command: DIR/bin/not-executable is not an executable file (not executable); fix the path or build it`,
		`server "remote" ` + f + ` url: variable REMOTE_URL is not set: set REMOTE_URL or use ${REMOTE_URL:-} for an empty default`,
		`server "remote" ` + f + ` tls.ca_file: DIR/ca.pem: no such file or directory; fix the path or the file`,
		`server "spawn" ` + f + ` command: no-such-binary-mcpwatch is not found in PATH; install it or give its full path`,
		`server "spawn" ` + f + ` cwd: DIR/nowhere is not a directory; create it or fix cwd`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Check\n got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, line := range got {
		if strings.Contains(line, "hunter2") {
			t.Errorf("error carries a value: %s", line)
		}
	}
}

// BenchmarkTarget is the cost the daemon pays before every probe.
func BenchmarkTarget(b *testing.B) {
	cfg, err := load("../config/testdata/full.yml")
	if err != nil {
		b.Fatal(err)
	}
	s, _ := cfg.Server("report")
	for b.Loop() {
		if _, _, err := Resolve(s, os.LookupEnv); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLoad(b *testing.B) {
	for b.Loop() {
		if _, err := load("../config/testdata/full.yml"); err != nil {
			b.Fatal(err)
		}
	}
}

// A server's CA file is read once, as the target is built, by the bounded
// reader, and tested as the probe tests it: a file without PEM fails
// config check (it passed, and failed every probe), and a FIFO is refused
// at once (a probe hung on one past SIGTERM). The probe gets the bytes.
func TestCAFileReadWithTheTarget(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "nopem.pem"), "not a certificate\n")
	fifo := filepath.Join(dir, "fifo.pem")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	ca, err := os.ReadFile(filepath.Join("../config/testdata", "certs", "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "ca.pem"), string(ca))
	for file, want := range map[string]string{
		"nopem.pem": "tls.ca_file: " + filepath.Join(dir, "nopem.pem") + ": holds no PEM certificate",
		"fifo.pem":  "tls.ca_file: " + fifo + ": a named pipe (FIFO), not a regular file",
		"ca.pem":    "",
	} {
		cfg := &config.Config{Servers: []config.Server{{Name: "remote", Source: "f.yml", URL: "https://x.example.com/mcp", CAFile: filepath.Join(dir, file)}}}
		errs := Check(cfg, mapLookup(nil))
		switch {
		case want == "" && len(errs) > 0:
			t.Errorf("%s: %v", file, errs)
		case want != "" && (len(errs) != 1 || !strings.Contains(errs[0].Error(), want)):
			t.Errorf("%s: %v, want %q", file, errs, want)
		}
		if target, _, err := Resolve(cfg.Servers[0], mapLookup(nil)); want == "" && (err != nil || string(target.CA) != string(ca)) {
			t.Errorf("%s: target CA %d bytes, %v", file, len(target.CA), err)
		}
	}
}

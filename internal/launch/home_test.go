package launch

import (
	"errors"
	"os/user"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/expand"
	"github.com/mcpwatch/mcpwatch/internal/util/readfile"
)

// With HOME unset, "~/" had four answers: the lock stayed literal, a CA
// file became CONFIGDIR/~/ca.pem, ${file:~/token} was an error. Now every
// "~/" path is the account's home directory, and with none at all, the
// path as written (never under the config's directory) or an error saying
// so.
func TestHomeWithHOMEUnset(t *testing.T) {
	home := t.TempDir()
	writeFile(t, filepath.Join(home, "token"), "tok-from-home\n")
	ca := string(readTestdata(t, "certs/ca.pem"))
	writeFile(t, filepath.Join(home, "ca.pem"), ca)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "mcpwatch.yml"), `
lock: ~/team.lock.json
servers:
  remote:
    url: https://x.example.com/mcp
    headers: {Authorization: "Bearer ${file:~/token}"}
    tls: {ca_file: ~/ca.pem}
`)
	t.Setenv("HOME", "")
	real := expand.CurrentUser
	t.Cleanup(func() { expand.CurrentUser = real })
	noHOME := mapLookup(map[string]string{})

	expand.CurrentUser = func() (*user.User, error) { return &user.User{HomeDir: home}, nil }
	cfg, err := load(filepath.Join(dir, "mcpwatch.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Lock != filepath.Join(home, "team.lock.json") {
		t.Errorf("lock %q, want it in the account's home", cfg.Lock)
	}
	s, _ := cfg.Server("remote")
	target, _, err := Resolve(s, noHOME)
	if err != nil {
		t.Fatal(err)
	}
	if target.CAFile != filepath.Join(home, "ca.pem") || target.Headers["Authorization"] != "Bearer tok-from-home" {
		t.Errorf("CA file %q, Authorization %q: want both from the account's home", target.CAFile, target.Headers["Authorization"])
	}

	expand.CurrentUser = func() (*user.User, error) { return nil, errors.New("no account") }
	cfg, err = load(filepath.Join(dir, "mcpwatch.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Lock != "~/team.lock.json" {
		t.Errorf("lock %q, want it as written", cfg.Lock)
	}
	errs := Check(cfg, noHOME)
	joined := ""
	for _, e := range errs {
		joined += e.Error() + "\n"
	}
	if !strings.Contains(joined, "starts with ~/ but HOME is not set") || strings.Contains(joined, filepath.Join(dir, "~")) {
		t.Errorf("with no home at all: %s", joined)
	}
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := readfile.Read(filepath.Join("../config/testdata", name), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

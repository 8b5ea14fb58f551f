package oauth_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/oauth"
	"github.com/mcpwatch/mcpwatch/probe"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// The client kept beside a refresh token is read as ssh reads its keys:
// one that others may write (planted, mode 0644, in a shared directory)
// is refused rather than used to send the refresh token, and a FIFO in
// its place fails at once instead of hanging every later probe.
func TestRegistrationFileRefusedUnlessPrivate(t *testing.T) {
	_, url := loginServer(t, probetest.AuthConfig{Registration: true})
	file := filepath.Join(t.TempDir(), "remote.refresh")
	if lr := login(t, url, oauth.Config{RefreshTokenFile: file}, newBrowser(), 20*time.Second); !lr.res.OK {
		t.Fatalf("login: %s", lr.res.Error)
	}
	reg := oauth.RegistrationFile(file)
	if res := refreshProbe(t, url, file, ""); !res.OK {
		t.Fatalf("probe as the registered client: %s", res.Error)
	}
	if err := os.Chmod(reg, 0o666); err != nil {
		t.Fatal(err)
	}
	res := refreshProbe(t, url, file, "")
	if res.OK || res.Reason != probe.ReasonConfig || !strings.Contains(res.Error, "writable by others (mode 0666)") {
		t.Errorf("a registration others may write: %s %q, want config naming the mode", res.Reason, res.Error)
	}
	if err := os.Remove(reg); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(reg, 0o600); err != nil {
		t.Skip(err)
	}
	res = refreshProbe(t, url, file, "")
	if res.OK || !strings.Contains(res.Error, "not a regular file") {
		t.Errorf("a FIFO in its place: %s %q, want refused as not a regular file", res.Reason, res.Error)
	}
}

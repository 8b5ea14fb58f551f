package discover

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Where the file system compares names regardless of case (macOS's and
// Windows' usual ones), a refusal recorded as "…/Src/Clone" holds for the
// project named "…/src/clone". The comparison is the file system's: a
// Stat that looks every path up in lower case stands for such a file
// system on one that is not (Linux's ext4); and where the test's own
// temporary folder is one (probed as Go's tests do: a name looked up in
// another case), the real os.Stat is tried too.
func TestFindConsentCaseInsensitive(t *testing.T) {
	root := t.TempDir()
	real := filepath.Join(root, "src", "clone")
	upper := filepath.Join(root, "Src", "Clone")
	if err := os.MkdirAll(real, 0o755); err != nil {
		t.Fatal(err)
	}
	lower := func(p string) (fs.FileInfo, error) {
		if rel, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(rel, "..") {
			p = filepath.Join(root, strings.ToLower(rel))
		}
		return os.Stat(p)
	}
	stats := map[string]func(string) (fs.FileInfo, error){"a stat that ignores case": lower}
	if caseInsensitive(t, root) {
		stats["this file system's own"] = os.Stat
	} else {
		t.Logf("%s compares names with their case: only the stand-in is tried", root)
		// And on it, the two spellings are two folders: nothing is refused
		// for the other's record.
		home := t.TempDir()
		refusingHome(t, home, upper, real)
		if got := names(Find(Host{OS: "linux", Home: home, Projects: []string{real}, Clients: []Client{ClaudeCode}})); !slices.Equal(got, []string{"also", "evil"}) {
			t.Errorf("case-sensitive: found %v, want both: %s is another folder", got, upper)
		}
	}
	for name, stat := range stats {
		t.Run(name, func(t *testing.T) {
			home := t.TempDir()
			refusingHome(t, home, upper, real)
			res := Find(Host{OS: "linux", Home: home, Projects: []string{real}, Stat: stat})
			if got := names(res); !slices.Equal(got, []string{"evil-cursor", "evil-vscode"}) {
				t.Errorf("found %v, want only the clients that record nothing", got)
			}
			if got := leftOut(res); !strings.Contains(got["evil"], "disabledMcpjsonServers") || !strings.Contains(got["evil-codex"], "untrusted") || !strings.Contains(got["evil-gemini"], "DO_NOT_TRUST") {
				t.Errorf("left out: %v", got)
			}
		})
	}
	// The comparison itself.
	f := newFolders(lower)
	if !f.same(upper, real) || !f.same(real+"/", upper) || f.same(filepath.Join(root, "src"), real) {
		t.Error("folders.same: spellings that differ by case are one folder where names ignore case, and a parent is not its child")
	}
	if !f.within(filepath.Join(real, "sub"), filepath.Join(root, "SRC")) || f.within(filepath.Join(root, "src"), upper) {
		t.Error("folders.within: a folder is within its parent under any case, and a parent not within its child")
	}
}

// caseInsensitive probes whether dir's file system finds a name under
// another case, as Go's own tests do: it makes a file and looks it up in
// upper case.
func caseInsensitive(t *testing.T, dir string) bool {
	t.Helper()
	p := filepath.Join(dir, "probe-case")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(p)
	_, err := os.Stat(filepath.Join(dir, "PROBE-CASE"))
	return err == nil
}

// Gemini CLI's trust of a folder above (TRUST_FOLDER, TRUST_PARENT) holds
// for a project reached through a symlink, as its DO_NOT_TRUST does.
func TestGeminiTrustThroughSymlinks(t *testing.T) {
	root := t.TempDir()
	real := filepath.Join(root, "work", "app")
	if err := os.MkdirAll(real, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(filepath.Join(root, "work"), link); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	c := consent{folders: newFolders(os.Stat), gemini: map[string]string{filepath.Join(root, "work"): "TRUST_FOLDER", real: "DO_NOT_TRUST"}}
	if got := c.geminiTrust(filepath.Join(link, "app")); got != "TRUST_FOLDER" {
		t.Errorf("a folder within a trusted one, through a symlink: %q", got)
	}
	c.gemini = map[string]string{filepath.Join(link, "app"): "DO_NOT_TRUST"}
	if got := c.geminiTrust(real); got != "DO_NOT_TRUST" {
		t.Errorf("refused through a symlink, named by its real path: %q", got)
	}
}

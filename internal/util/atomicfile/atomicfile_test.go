package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var sample = []byte("{\n  \"report\": [\n    \"fetch_daily_report\",\n    \"list_report_dates\"\n  ]\n}\n")

func TestWriteCreatesAndReplaces(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp-tools.lock.json")
	if err := Write(path, sample); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o644 {
		t.Errorf("new lock mode = %v, want 0644", info.Mode().Perm())
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	next := []byte("{\"other\": [\"x\"]}\n")
	if err := Write(path, next); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != string(next) {
		t.Errorf("read back %q, wrote %q", got, next)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o600 {
		t.Errorf("replaced lock mode = %v, want the old 0600 kept", info.Mode().Perm())
	}
	assertNoTempFiles(t, filepath.Dir(path))
}

func TestWriteThroughSymlinkKeepsTheLink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.lock.json")
	link := filepath.Join(dir, "mcp-tools.lock.json")
	if err := os.WriteFile(real, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real.lock.json", link); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	if err := Write(link, sample); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Lstat(link); err != nil || info.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("the symlink was replaced: %v, %v", info, err)
	}
	if data, _ := os.ReadFile(real); string(data) != string(sample) {
		t.Errorf("target holds %q", data)
	}
}

// Write is the same atomic write for any file mcpwatch writes (a
// receipt, a report): it replaces the old content, keeps its mode and
// names the file when it cannot write it.
func TestWriteFileReplacesAnyFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mcp-receipt.json")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte(`{"ok": true}`)); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != `{"ok": true}` {
		t.Errorf("file holds %q", got)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want the old 0600 kept", info.Mode().Perm())
	}
	assertNoTempFiles(t, dir)

	missing := filepath.Join(dir, "missing", "report.xml")
	if err := Write(missing, []byte("<x/>")); err == nil || !strings.Contains(err.Error(), "write "+missing+": ") {
		t.Errorf("Write into a missing directory = %v, want an error naming %s", err, missing)
	}
}

// faultyFS fails one step of the write on purpose.
type faultyFS struct {
	osFS
	syncErr    error
	renameTo   string // rename into this path instead: a real OS failure when its dir is missing
	syncDirErr error
}

func (f faultyFS) syncFile(file *os.File) error {
	if f.syncErr != nil {
		return f.syncErr
	}
	return f.osFS.syncFile(file)
}

func (f faultyFS) rename(from, to string) error {
	if f.renameTo != "" {
		to = f.renameTo
	}
	return f.osFS.rename(from, to)
}

func (f faultyFS) syncDir(dir string) error {
	if f.syncDirErr != nil {
		return f.syncDirErr
	}
	return f.osFS.syncDir(dir)
}

func TestFailedWriteLeavesTheOldLockAndNoTempFile(t *testing.T) {
	errDisk := errors.New("input/output error")
	cases := []struct {
		name    string
		fsys    func(dir string) faultyFS
		wantErr string
	}{
		{"fsync fails", func(string) faultyFS { return faultyFS{syncErr: errDisk} }, "fsync: input/output error"},
		{"rename into a missing dir", func(dir string) faultyFS {
			return faultyFS{renameTo: filepath.Join(dir, "missing", "mcp-tools.lock.json")}
		}, "rename into place:"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "mcp-tools.lock.json")
			old := []byte("{\n  \"report\": [\n    \"fetch_daily_report\"\n  ]\n}")
			if err := os.WriteFile(path, old, 0o644); err != nil {
				t.Fatal(err)
			}
			err := writeAtomic(path, path, sample, tc.fsys(dir))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), path) {
				t.Errorf("writeAtomic error = %v, want one naming %s and containing %q", err, path, tc.wantErr)
			}
			if got, _ := os.ReadFile(path); string(got) != string(old) {
				t.Errorf("old lock changed to %q", got)
			}
			assertNoTempFiles(t, dir)
		})
	}
}

func TestFailedDirectorySyncIsReportedAfterTheRename(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mcp-tools.lock.json")
	err := writeAtomic(path, path, sample, faultyFS{syncDirErr: errors.New("boom")})
	if err == nil || !strings.Contains(err.Error(), "could not fsync its directory") {
		t.Errorf("error = %v, want the directory fsync failure", err)
	}
	if got, _ := os.ReadFile(path); string(got) != string(sample) {
		t.Errorf("lock = %q; the rename had happened, so the new lock is in place", got)
	}
	assertNoTempFiles(t, dir)
}

func TestWriteIntoReadOnlyDirectoryLeavesTheOldLock(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root ignores directory permissions; the injected failures above cover this path")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "mcp-tools.lock.json")
	if err := os.WriteFile(path, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Error(err)
		}
	})
	if err := Write(path, sample); err == nil || !errors.Is(err, fs.ErrPermission) {
		t.Errorf("Write into a read-only dir = %v, want a permission error", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "{}" {
		t.Errorf("old lock changed to %q", got)
	}
	assertNoTempFiles(t, dir)
}

func TestWriteRefusesADirectory(t *testing.T) {
	dir := t.TempDir()
	err := Write(dir, sample)
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Write(a directory) = %v, want a not-a-regular-file error", err)
	}
}

func assertNoTempFiles(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temp file left behind: %s", e.Name())
		}
	}
}

// A write sweeps the temp files that writes killed mid-way (kill -9) left
// next to the file: only ours (named as a write names them, regular files)
// and only stale ones (a write running now in another process keeps its
// file).
func TestWriteSweepsStaleTempFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mcp-tools.lock.json")
	old := time.Now().Add(-staleTempAge - time.Minute)
	files := map[string]bool{ // name -> swept
		".mcp-tools.lock.json.tmp-123456": true,
		".mcp-tools.lock.json.tmp-987":    false, // fresh: a write in progress
		".mcp-tools.lock.json.tmp-abc":    false, // not a name we make
		".other.json.tmp-123456":          false, // another file's
		"mcp-tools.lock.json.tmp-123456":  false, // not ours: no leading dot
		".mcp-tools.lock.json.tmp-":       false,
	}
	for name, swept := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
		if swept || name != ".mcp-tools.lock.json.tmp-987" {
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	staleDir := filepath.Join(dir, ".mcp-tools.lock.json.tmp-555")
	if err := os.Mkdir(staleDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(staleDir, old, old); err != nil {
		t.Fatal(err)
	}
	files[".mcp-tools.lock.json.tmp-555"] = false // a directory is never ours

	if err := Write(path, sample); err != nil {
		t.Fatal(err)
	}
	for name, swept := range files {
		_, err := os.Lstat(filepath.Join(dir, name))
		if gone := errors.Is(err, fs.ErrNotExist); gone != swept {
			t.Errorf("%s: removed %v, want %v", name, gone, swept)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != len(files) { // the lock itself, and no temp file of this write
		names := []string{}
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %q", names)
	}
}

// SweepTemps sweeps without writing.
func TestSweepTempsWithoutAWrite(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, ".mcp-tools.lock.json.tmp-42")
	if err := os.WriteFile(stale, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-staleTempAge - time.Second)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	SweepTemps(filepath.Join(dir, "mcp-tools.lock.json")) // no lock yet: its directory is swept all the same
	if _, err := os.Lstat(stale); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the stale temp file is still there: %v", err)
	}
}

// A secret is never written through a symlink: the rotated refresh token
// a server chose must not land in whatever file the link points at (with
// that file's mode changed to 0600). The link itself is replaced by the
// secret file, and the file it pointed at keeps its content and mode.
func TestWriteSecretReplacesASymlinkNotItsTarget(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "bashrc")
	link := filepath.Join(dir, "remote.refresh")
	if err := os.WriteFile(target, []byte("export PATH=/usr/bin\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	if err := WriteSecret(link, []byte("rt-new\n")); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(target); string(got) != "export PATH=/usr/bin\n" {
		t.Errorf("the link's target was overwritten: %q", got)
	}
	if info, _ := os.Stat(target); info.Mode().Perm() != 0o644 {
		t.Errorf("the link's target mode = %v, want its own 0644", info.Mode().Perm())
	}
	info, err := os.Lstat(link)
	if err != nil || !info.Mode().IsRegular() || info.Mode().Perm() != 0o600 {
		t.Fatalf("the secret path is %v (%v), want a regular file of mode 0600", info, err)
	}
	if got, _ := os.ReadFile(link); string(got) != "rt-new\n" {
		t.Errorf("the secret file holds %q", got)
	}
	assertNoTempFiles(t, dir)
}

// A dangling link is replaced too, and never followed to create its target.
func TestWriteSecretDoesNotCreateADanglingLinksTarget(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "elsewhere")
	link := filepath.Join(dir, "remote.refresh")
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	if err := WriteSecret(link, []byte("rt-new\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(target); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the dangling link's target was created: %v", err)
	}
	if info, err := os.Lstat(link); err != nil || !info.Mode().IsRegular() {
		t.Errorf("the secret path is %v (%v), want a regular file", info, err)
	}
}

func TestWriteSecretRefusesADirectory(t *testing.T) {
	dir := t.TempDir()
	if err := WriteSecret(dir, []byte("x")); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("WriteSecret(a directory) = %v, want a refusal", err)
	}
}

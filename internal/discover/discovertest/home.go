// Package discovertest gives tests a home folder laid out as the host
// discovery fixture describes: each MCP client's config files, and decoys.
package discovertest

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Home copies internal/discover/testdata/home into a temporary folder, with
// @HOME@ in its files replaced by that folder's path, and returns the path.
// The fixture is found from this source file, so any package's test can use
// it whatever its working directory.
func Home(t testing.TB) string {
	t.Helper()
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("discovertest: cannot find the fixture: no caller information")
	}
	fixture := os.DirFS(filepath.Join(filepath.Dir(self), "..", "testdata", "home"))
	home := t.TempDir()
	root, err := os.OpenRoot(home)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = root.Close() }()
	err = fs.WalkDir(fixture, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return root.MkdirAll(path, 0o750)
		}
		data, err := fs.ReadFile(fixture, path)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return root.WriteFile(path, []byte(strings.ReplaceAll(string(data), "@HOME@", home)), info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
	return home
}

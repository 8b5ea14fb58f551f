package repotext

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every Go package of the repository (nested modules included) is named in
// the package map of docs/development.md, so a package added or moved
// cannot leave the map behind: a maintainer finds each one there, with its
// job.
func TestEveryPackageIsOnTheMap(t *testing.T) {
	root, section := packageMap(t)
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("[A-Za-z0-9_./-]+").FindAllString(section, -1) {
		named[strings.Trim(m, "`.,")] = true
	}
	packages := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "bin", ".cache", "testdata", "templates":
				return filepath.SkipDir
			}
			return nil
		}
		if filepath.Ext(path) == ".go" && !strings.HasSuffix(path, "_test.go") {
			rel, _ := filepath.Rel(root, filepath.Dir(path))
			packages[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(packages) < 20 {
		t.Fatalf("found %d packages under %s: is this the repository?", len(packages), root)
	}
	for pkg := range packages {
		if !named[pkg] {
			t.Errorf("package %s is not on the map of docs/development.md (The packages): add it, with its job", pkg)
		}
	}
}

// packageMap is the repository's root and the section "The packages" of
// docs/development.md.
func packageMap(t *testing.T) (root, section string) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "development.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ = strings.Cut(string(doc), "\n## The packages\n")
	section, _, _ = strings.Cut(section, "\n## ")
	return root, section
}

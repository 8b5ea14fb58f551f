package repotext

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/mcpwatch/mcpwatch/"

// TestMapIsTheImportOrder holds the package map of docs/development.md
// (The packages) to the code: every package on it imports only packages
// listed below it, the leaf helpers of internal/util import nothing of
// mcpwatch's, and the public packages probe and lockstore import nothing
// of internal/ but those helpers. A new import that runs back up fails
// here, naming both ends; the fix is to move the code, or the map with a
// reason.
func TestMapIsTheImportOrder(t *testing.T) {
	root, section := packageMap(t)
	// The map's packages, in order: the first word of each line of its
	// code blocks.
	order := map[string]int{}
	inBlock := false
	for line := range strings.Lines(section) {
		if strings.HasPrefix(line, "```") {
			inBlock = !inBlock
			continue
		}
		if f := strings.Fields(line); inBlock && len(f) > 0 {
			if _, dup := order[f[0]]; dup {
				t.Errorf("the map lists %s twice", f[0])
			}
			order[f[0]] = len(order)
		}
	}
	if len(order) < 20 {
		t.Fatalf("the map lists %d packages: has its format changed?", len(order))
	}
	for pkg, at := range order {
		for _, imp := range imports(t, filepath.Join(root, filepath.FromSlash(pkg))) {
			below, listed := order[imp]
			switch {
			case !listed:
				t.Errorf("%s imports %s, which the map does not list", pkg, imp)
			case below <= at:
				t.Errorf("%s imports %s, listed above it on the map: an import that runs back up", pkg, imp)
			}
			if strings.HasPrefix(pkg, "internal/util/") {
				t.Errorf("the leaf helper %s imports %s: a leaf imports nothing of mcpwatch's", pkg, imp)
			}
			if (pkg == "probe" || pkg == "lockstore") && !strings.HasPrefix(imp, "internal/util/") {
				t.Errorf("the public package %s imports %s: it may import only the leaf helpers of internal/util", pkg, imp)
			}
		}
	}
}

var goFile = regexp.MustCompile(`\.go$`)

// imports lists the packages of this module that the non-test Go files of
// dir import, as paths from the module's root.
func imports(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("a package on the map has no folder: %v", err)
	}
	seen := map[string]bool{}
	var out []string
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !goFile.MatchString(name) || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range f.Imports {
			path, _ := strconv.Unquote(s.Path.Value)
			if rel, ok := strings.CutPrefix(path, module); ok && !seen[rel] {
				seen[rel] = true
				out = append(out, rel)
			}
		}
	}
	return out
}

package repotext

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// outside are the ways text has named material a reader of the repository
// cannot see: notes kept beside the repository, the article the lock
// format comes from by a private name, or a tracker's numbering. Say what
// is meant in the project's own words (probe/CLIENT.md, lockstore/FORMAT.md)
// or link a public URL.
var outside = []*regexp.Regexp{
	regexp.MustCompile(`\.\./shared\b|/work/shared\b`),
	regexp.MustCompile(`\b(SDK-NOTES|MCP-PROTOCOL|PROMETHEUS|ARCHITECTURE|PEERS|STYLE)\.md\b|MCP-PROTOCOL §`),
	regexp.MustCompile(`(?i)\bthe seed\b|\bseed's\b|\bseed (article|preflight|script|server|layout|variables|lock)\b|\b0{3}_\*`),
	regexp.MustCompile(`(?i)\bthe issue\b|\bissue #?\d+\b`),
}

// textFile reports whether a file is text the repository shows people.
func textFile(path string) bool {
	switch filepath.Ext(path) {
	case ".go", ".md", ".yml", ".yaml", ".sh", ".py", ".json", ".txt", ".tmpl", ".html":
		return true
	}
	switch filepath.Base(path) {
	case "Makefile", "Dockerfile", ".dockerignore", ".gitignore", "run":
		return true
	}
	return false
}

func TestNoOutsideMaterial(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	self, _ := filepath.Abs("outside_test.go")
	scanned := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "bin", ".cache":
				return filepath.SkipDir
			}
			return nil
		}
		if path == self || !textFile(path) {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			for _, re := range outside {
				if m := re.FindString(line); m != "" {
					t.Errorf("%s:%d names %q, which a reader of the repository cannot see; say it in the project's words:\n\t%s", rel, n, m, strings.TrimSpace(line))
				}
			}
		}
		scanned++
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if scanned < 100 {
		t.Fatalf("scanned %d files from %s: is this the repository?", scanned, root)
	}
}

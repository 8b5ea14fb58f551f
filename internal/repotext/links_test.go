package repotext

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// A Markdown link: [text](target), the target up to a space or the closing
// parenthesis (a title after a space is left out).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s[^)]*)?\)`)

// fencedBlock matches a fenced code block, whose text is not Markdown.
var fencedBlock = regexp.MustCompile("(?ms)^\\s*```.*?^\\s*```")

// anchors returns the anchors GitHub gives the headings of a Markdown file:
// lower case, punctuation dropped but hyphens and underscores, spaces as
// hyphens, and -1, -2, ... after a repeated one.
func anchors(md string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, line := range strings.Split(fencedBlock.ReplaceAllString(md, ""), "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// Every relative link of the repository's Markdown (README, docs/, the
// deploy and package READMEs) leads to a file that exists, and a #fragment
// to a heading of that file: pages move, and a link left behind is a dead
// end for the reader who follows it.
func TestMarkdownLinks(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "bin", ".cache", "testdata":
				return filepath.SkipDir
			}
			return nil
		}
		if filepath.Ext(path) != ".md" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		text := fencedBlock.ReplaceAllString(string(data), "")
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			dest := path
			if file != "" {
				dest = filepath.Join(filepath.Dir(path), file)
				if !strings.HasPrefix(dest, root) {
					t.Errorf("%s: link %q leaves the repository", rel, target)
					continue
				}
			}
			info, err := os.Stat(dest)
			if err != nil {
				t.Errorf("%s: link %q: no such file or directory", rel, target)
				continue
			}
			checked++
			if frag == "" || info.IsDir() || filepath.Ext(dest) != ".md" {
				continue
			}
			md, err := os.ReadFile(dest)
			if err != nil {
				return err
			}
			if !anchors(string(md))[frag] {
				t.Errorf("%s: link %q: %s has no heading with the anchor #%s", rel, target, filepath.Base(dest), frag)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("checked %d links under %s: is this the repository?", checked, root)
	}
}

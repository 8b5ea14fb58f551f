package doctor

import (
	"path"
	"regexp"
	"strings"
)

// The two kinds of path pattern a CI file holds: those that say which
// files an artifact upload takes (actions/upload-artifact's path:, GitLab's
// artifacts: paths:), and GitHub's filters of the files a pull request
// changes (on.pull_request.paths and paths-ignore).

// cleanPath returns p relative to the workspace, cleaned: "./a/../r.json"
// is "r.json". An absolute path stays absolute.
func cleanPath(p string) string {
	p = strings.TrimSpace(p)
	if p == "" {
		return ""
	}
	return path.Clean(p)
}

// uploadCovers reports whether an upload of patterns (one per entry, "!"
// before one that excludes) takes file: a pattern matches it as a glob
// ("*", "?", "[...]" within a path segment, "**" across them) or names a
// directory it is in. Excludes win over includes.
func uploadCovers(patterns []string, file string) bool {
	file = cleanPath(file)
	included := false
	for _, raw := range patterns {
		p := strings.TrimSpace(raw)
		exclude := strings.HasPrefix(p, "!")
		p = cleanPath(strings.TrimPrefix(p, "!"))
		if p == "" || strings.HasPrefix(p, "#") {
			continue
		}
		if !uploadMatches(p, file) {
			continue
		}
		if exclude {
			return false
		}
		included = true
	}
	return included
}

// uploadMatches: the glob matches file, or one of the directories file is in.
func uploadMatches(pattern, file string) bool {
	re := uploadGlob(pattern)
	for f := file; ; {
		if re.MatchString(f) {
			return true
		}
		parent := path.Dir(f)
		if parent == f || parent == "." || parent == "/" {
			return pattern == "." || pattern == "./"
		}
		f = parent
	}
}

// uploadGlob compiles an upload pattern: "**" matches any run of path
// segments, "*" and "?" do not cross a "/". A ${{ }} expression is matched
// as written.
func uploadGlob(pattern string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch {
		case strings.HasPrefix(pattern[i:], "${{"):
			end := strings.Index(pattern[i:], "}}")
			if end < 0 {
				end = len(pattern) - i - 2
			}
			b.WriteString(regexp.QuoteMeta(pattern[i : i+end+2]))
			i += end + 1
		case strings.HasPrefix(pattern[i:], "**/"):
			b.WriteString("(?:.*/)?")
			i += 2
		case strings.HasPrefix(pattern[i:], "**"):
			b.WriteString(".*")
			i++
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		case c == '[':
			i += writeClass(&b, pattern[i:], true)
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	return compileGlob(&b, pattern)
}

// filterMatches applies GitHub's path filters (on.<event>.paths) to file,
// in order: a pattern that matches includes it, one that starts with "!"
// and matches excludes it again; the last that matches decides. GitHub's
// filter syntax: "*" any characters but "/", "**" any characters, "?" zero
// or one of the character before it, "+" one or more of it, "[...]" one
// character of a class.
func filterMatches(patterns []string, file string) bool {
	matched := false
	for _, raw := range patterns {
		p := strings.TrimSpace(raw)
		negate := strings.HasPrefix(p, "!")
		p = strings.TrimPrefix(p, "!")
		if filterGlob(p).MatchString(file) {
			matched = !negate
		}
	}
	return matched
}

func filterGlob(pattern string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch {
		case strings.HasPrefix(pattern[i:], "**"):
			b.WriteString(".*")
			i++
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("?")
		case c == '+':
			b.WriteString("+")
		case c == '[':
			i += writeClass(&b, pattern[i:], false)
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	return compileGlob(&b, pattern)
}

// writeClass writes the character class "[...]" that rest starts with as
// a regular expression's, "[!...]" negated where bang says the dialect has
// it, and returns how many bytes past its "[" it took; a "[" that no "]"
// closes is a literal one.
func writeClass(b *strings.Builder, rest string, bang bool) int {
	end := strings.IndexByte(rest, ']')
	if end <= 1 {
		b.WriteString(`\[`)
		return 0
	}
	class := rest[1:end]
	if bang && strings.HasPrefix(class, "!") {
		class = "^" + class[1:]
	}
	b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
	return end
}

// compileGlob ends the expression b holds and compiles it; a pattern the
// conversion made invalid matches only itself, as written.
func compileGlob(b *strings.Builder, pattern string) *regexp.Regexp {
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return regexp.MustCompile("^" + regexp.QuoteMeta(pattern) + "$")
	}
	return re
}

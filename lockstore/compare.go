package lockstore

import (
	"encoding/json"
	"github.com/mcpwatch/mcpwatch/internal/util/glob"
	"regexp"
	"slices"
	"strings"
)

// Observed is one tool as a probe saw it: what the lock is built from and
// compared with.
type Observed struct {
	Name        string
	Description string
	InputSchema json.RawMessage
	// Fingerprint, when not empty, is Fingerprint(InputSchema) computed
	// already: a caller that probes the same server again and again reuses
	// it while the schema's bytes stay the same, instead of paying for the
	// canonical form at every comparison.
	Fingerprint string
	// DescriptionHash, when not empty, is DescriptionHash(Description)
	// computed already: with it and Fingerprint, a caller may drop the
	// description and the schema and still compare (the daemon keeps no
	// tool text between probes).
	DescriptionHash string
}

// fingerprint is the tool's schema fingerprint, the one given if any.
func (o Observed) fingerprint() string {
	if o.Fingerprint != "" {
		return o.Fingerprint
	}
	return Fingerprint(o.InputSchema)
}

// descriptionHash is the hash of the tool's description, the one given if
// any.
func (o Observed) descriptionHash() string {
	if o.DescriptionHash != "" {
		return o.DescriptionHash
	}
	return DescriptionHash(o.Description)
}

// NewEntry builds a server's lock entry from what a probe observed: names
// only (the names-only form), or with each tool's schema fingerprint and
// description hash. A name observed twice is locked once, with its first
// observation.
func NewEntry(tools []Observed, fingerprints bool) Entry {
	locks := make([]ToolLock, len(tools))
	for i, t := range tools {
		locks[i] = ToolLock{Name: t.Name}
		if fingerprints {
			locks[i].Schema = t.fingerprint()
			locks[i].Description = t.descriptionHash()
		}
	}
	return Entry{Tools: locks}.normalized()
}

// Compare diffs an observed tool surface against a server's lock entry;
// locked says whether the lock has an entry at all. Without one, nothing is
// expected and every observed tool is Extra. A fingerprint or description
// hash is checked only where the entry records one. forbid holds globs on
// tool names (see glob.Check: "*" matches "/" too), checked whatever the lock
// says; a malformed pattern (which configuration loading should already have
// rejected) matches only the name spelled exactly like it.
func Compare(e Entry, locked bool, observed []Observed, forbid []string) Diff {
	if !locked {
		e = Entry{}
	}
	want := e.Tools
	if !e.isNormalized() {
		want = e.normalized().Tools
	}
	d := Diff{Locked: locked, Expected: make([]string, 0, len(want))}

	firstSeen := make(map[string]int, len(observed))
	seen := make([]string, 0, len(observed))
	for i, t := range observed {
		if _, dup := firstSeen[t.Name]; !dup {
			firstSeen[t.Name] = i
			seen = append(seen, t.Name)
		} else if !slices.Contains(d.Duplicate, t.Name) {
			d.Duplicate = append(d.Duplicate, t.Name)
		}
	}
	slices.Sort(seen)
	slices.Sort(d.Duplicate)

	for _, t := range want {
		d.Expected = append(d.Expected, t.Name)
		i, ok := firstSeen[t.Name]
		if !ok {
			d.Missing = append(d.Missing, t.Name)
			continue
		}
		if t.Schema != "" && observed[i].fingerprint() != t.Schema {
			d.SchemaChanged = append(d.SchemaChanged, t.Name)
		}
		if t.Description != "" && observed[i].descriptionHash() != t.Description {
			d.DescriptionChanged = append(d.DescriptionChanged, t.Name)
		}
	}
	// Both lists are sorted: one merge walk finds the unlocked names.
	patterns := compileForbid(forbid)
	w := 0
	for _, name := range seen {
		for w < len(want) && want[w].Name < name {
			w++
		}
		if w == len(want) || want[w].Name != name {
			d.Extra = append(d.Extra, name)
		}
		for _, f := range patterns {
			if f.matches(name) {
				d.Forbidden = append(d.Forbidden, name)
				break
			}
		}
	}
	return d
}

// forbidPattern is a glob (see internal/util/glob) with the literal text it must start
// and end with, so that most names are rejected without running the matcher.
type forbidPattern struct {
	pattern, prefix, suffix string
	re                      *regexp.Regexp // nil for a malformed pattern
}

func compileForbid(patterns []string) []forbidPattern {
	compiled := make([]forbidPattern, len(patterns))
	for i, p := range patterns {
		compiled[i] = forbidPattern{pattern: p}
		re, err := glob.Compile(p)
		if err != nil {
			compiled[i].prefix = p // malformed: matches only the name spelled like it
			continue
		}
		compiled[i].re = re
		if strings.ContainsAny(p, `\[`) {
			continue // escapes and classes: no shortcut
		}
		first := strings.IndexAny(p, "*?")
		if first < 0 {
			compiled[i].prefix = p // a plain name: equality
			continue
		}
		compiled[i].prefix = p[:first]
		compiled[i].suffix = p[strings.LastIndexAny(p, "*?")+1:]
	}
	return compiled
}

func (f forbidPattern) matches(name string) bool {
	if !strings.HasPrefix(name, f.prefix) || !strings.HasSuffix(name, f.suffix) {
		return false
	}
	if f.re == nil {
		return name == f.pattern
	}
	return f.re.MatchString(name)
}

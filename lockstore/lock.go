package lockstore

import (
	"slices"
	"strings"
)

// Lock is the expected tool surface of every locked server. It remembers the
// bytes each server's entry was read from, so that rewriting the file after
// changing one server leaves every other server's lines exactly as they were
// (hand formatting included) and a review diff shows only what changed.
//
// The zero value is an empty lock that is written with a trailing newline.
// A Lock is not safe for concurrent mutation.
type Lock struct {
	servers map[string]*lockedServer
	// noTrailingNewline is set when the lock was parsed from a file without a
	// final newline (as Python's json.dump writes it), so that an unchanged
	// seed-written lock is rewritten byte for byte.
	noTrailingNewline bool
}

type lockedServer struct {
	entry Entry
	// raw is the JSON value the entry was parsed from; "" once Set replaces
	// the entry with a different one, and then Marshal renders entry. Parse
	// shares one raw and one entry between the servers whose values are
	// the same bytes: neither is ever written, only replaced.
	raw string
}

// Entry is one server's locked tools, sorted by name, without duplicates.
type Entry struct {
	Tools []ToolLock
}

// ToolLock is one locked tool. Schema and Description are empty in the plain
// (seed) form, which locks names only.
type ToolLock struct {
	Name        string
	Schema      string // Fingerprint of the input schema, "sha256:<hex>", or ""
	Description string // DescriptionHash of the description, "sha256:<hex>", or ""
}

// New returns an empty lock.
func New() *Lock { return &Lock{} }

// Servers returns the locked server names, sorted.
func (l *Lock) Servers() []string {
	if l == nil {
		return nil
	}
	names := make([]string, 0, len(l.servers))
	for name := range l.servers {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Entry returns the server's entry and whether the lock has one. The entry is
// a copy: changing it does not change the lock (use Set).
func (l *Lock) Entry(server string) (Entry, bool) {
	if l == nil {
		return Entry{}, false
	}
	s, ok := l.servers[server]
	if !ok {
		return Entry{}, false
	}
	return Entry{Tools: slices.Clone(s.entry.Tools)}, true
}

// Set replaces one server's entry. Every other server keeps its bytes; so does
// this one when e equals what the lock already holds, so that relocking an
// unchanged surface rewrites an identical file.
func (l *Lock) Set(server string, e Entry) {
	e = e.normalized()
	if old, ok := l.servers[server]; ok && slices.Equal(old.entry.Tools, e.Tools) {
		return
	}
	if l.servers == nil {
		l.servers = make(map[string]*lockedServer)
	}
	l.servers[server] = &lockedServer{entry: e}
}

// Remove drops a server from the lock; removing an absent server does nothing.
func (l *Lock) Remove(server string) {
	delete(l.servers, server)
}

// Names returns the locked tool names, sorted.
func (e Entry) Names() []string {
	names := make([]string, len(e.Tools))
	for i, t := range e.Tools {
		names[i] = t.Name
	}
	return names
}

// Equal reports whether two entries lock the same tools with the same
// fingerprints. Both are compared in their normalized (sorted) order.
func (e Entry) Equal(other Entry) bool {
	return slices.Equal(e.normalized().Tools, other.normalized().Tools)
}

// rich reports whether any tool carries a fingerprint, which decides the
// form the entry is written in.
func (e Entry) rich() bool {
	for _, t := range e.Tools {
		if t.Schema != "" || t.Description != "" {
			return true
		}
	}
	return false
}

// isNormalized reports whether the tools are sorted by name without
// duplicates, as every Entry this package returns is.
func (e Entry) isNormalized() bool {
	for i := 1; i < len(e.Tools); i++ {
		if e.Tools[i-1].Name >= e.Tools[i].Name {
			return false
		}
	}
	return true
}

// normalized returns a copy sorted by name with duplicate names dropped (the
// first of each name, in the caller's order, wins). It never aliases e.Tools.
func (e Entry) normalized() Entry {
	tools := slices.Clone(e.Tools)
	slices.SortStableFunc(tools, func(a, b ToolLock) int { return strings.Compare(a.Name, b.Name) })
	tools = slices.CompactFunc(tools, func(a, b ToolLock) bool { return a.Name == b.Name })
	return Entry{Tools: tools}
}

package main

import (
	"bytes"
	"cmp"
	"slices"
)

// familySize is the bytes one metric family takes in a text scrape: its
// HELP and TYPE lines and every sample line, newlines included.
type familySize struct {
	Name   string `json:"name"`
	Bytes  int    `json:"bytes"`
	Series int    `json:"lines"` // sample lines (a histogram's buckets, sum and count each count)
}

// familySizes splits a text-format scrape (0.0.4 or OpenMetrics) by
// family, largest first. The formats keep a family's lines together after
// its TYPE line, so a sample belongs to the family last declared; a sample
// before any TYPE line is counted under its own name.
func familySizes(body []byte) []familySize {
	byName := map[string]*familySize{}
	var order []string
	current := ""
	for line := range bytes.Lines(body) {
		name, sample := current, false
		switch {
		case bytes.HasPrefix(line, []byte("# TYPE ")), bytes.HasPrefix(line, []byte("# HELP ")), bytes.HasPrefix(line, []byte("# UNIT ")):
			f := bytes.Fields(line)
			if len(f) >= 3 {
				name = string(f[2])
				if bytes.HasPrefix(line, []byte("# TYPE ")) {
					current = name
				}
			}
		case bytes.HasPrefix(line, []byte("#")):
			name = "" // # EOF, or a comment: no family's
		default:
			sample = true
			if current == "" {
				end := bytes.IndexAny(line, "{ ")
				if end < 0 {
					end = len(line)
				}
				name = string(line[:end])
			}
		}
		if name == "" {
			continue
		}
		fs := byName[name]
		if fs == nil {
			fs = &familySize{Name: name}
			byName[name] = fs
			order = append(order, name)
		}
		fs.Bytes += len(line)
		if sample {
			fs.Series++
		}
	}
	out := make([]familySize, 0, len(order))
	for _, n := range order {
		out = append(out, *byName[n])
	}
	slices.SortStableFunc(out, func(a, b familySize) int { return cmp.Compare(b.Bytes, a.Bytes) })
	return out
}

// Package suggest finds what a mistyped name was meant to be: the one
// rule behind every "did you mean" of mcpwatch, for configuration keys,
// server names, commands and flags alike.
package suggest

import "strings"

// maxDistance is the most edits a suggestion may be away: a slip of one or
// two keys ("checkk", a swapped pair as in "stirct"), not another
// word.
const maxDistance = 2

// Closest returns the candidate s was most likely meant to be: one that s
// begins ("ca" for "ca_file", at least 2 characters), else the nearest
// within maxDistance edits; "" when none is near.
func Closest(s string, candidates []string) string {
	for _, c := range candidates {
		if len(s) >= 2 && strings.HasPrefix(c, s) {
			return c
		}
	}
	best, bestDist := "", maxDistance+1
	for _, c := range candidates {
		if d := editDistance(s, c); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

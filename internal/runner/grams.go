package runner

import "sync"

// grams answer "where does this text hold a run of minSecretLen bytes or
// more of a secret?" in one pass over the text: every window of
// minSecretLen bytes of every form of every secret is kept, as a number (8
// bytes are a uint64), and a run of a secret is exactly a stretch of the
// text whose windows are all kept. A set of 64 Ki bits, by a hash of the
// window, answers for most windows without the map. They are made at the
// first text that needs them: most probes have none (see scrubber.cut).
type grams struct {
	once sync.Once
	set  *gramSet
}

type gramSet struct {
	bits    [1 << 16 / 64]uint64
	windows map[uint64]struct{}
}

// A window is a uint64: minSecretLen must be 8.
var (
	_ [8 - minSecretLen]struct{}
	_ [minSecretLen - 8]struct{}
)

// of returns the set of patterns' windows, made at its first use.
func (g *grams) of(patterns []pattern) *gramSet {
	g.once.Do(func() {
		g.set = &gramSet{windows: map[uint64]struct{}{}}
		for _, p := range patterns {
			for i := 0; i+minSecretLen <= len(p.text); i++ {
				w := window8(p.text, i)
				g.set.windows[w] = struct{}{}
				h := hashGram(w)
				g.set.bits[h>>6] |= 1 << (h & 63)
			}
		}
	})
	return g.set
}

// in returns the stretches of v whose every window of minSecretLen bytes
// is a secret's, as the windows themselves (replaceSpans merges them).
func (g *gramSet) in(v string) []span {
	if len(g.windows) == 0 || len(v) < minSecretLen {
		return nil
	}
	var out []span
	w := window8(v, 0)
	for i := 0; ; i++ {
		if h := hashGram(w); g.bits[h>>6]&(1<<(h&63)) != 0 {
			if _, ok := g.windows[w]; ok {
				out = append(out, span{i, i + minSecretLen})
			}
		}
		if i+minSecretLen >= len(v) {
			return out
		}
		w = w>>8 | uint64(v[i+minSecretLen])<<56 // the window one byte on
	}
}

// window8 is the eight bytes of s at i, as a number.
func window8(s string, i int) uint64 {
	_ = s[i+7] // one bounds check
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

// hashGram spreads a window over 16 bits (Fibonacci hashing).
func hashGram(w uint64) uint64 { return (w * 0x9E3779B97F4A7C15) >> 48 }

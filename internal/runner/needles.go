package runner

import "strings"

// needles answers "does this text hold any of these strings?" in one pass
// over the text, however many strings: a secret has a dozen forms (hex,
// base64 at three offsets, in two alphabets, ...), and the scrubber asks
// for every string of every schema of every tool a server lists, so one
// search per form would cost a dozen passes.
//
// Each window of four bytes of the text is hashed into a 64 Ki-bit set of
// the needles' first four bytes; only a window in the set is compared with
// the needles that start so. A needle of fewer than four bytes (a short
// credential) is searched for on its own.
type needles struct {
	set     [1 << 16 / 64]uint64
	byStart map[uint32][]string
	short   []string
}

// newNeedles returns the needles of list, nil for none (a server given no
// secret: the set alone is 8 KiB, every probe).
func newNeedles(list []string) *needles {
	if len(list) == 0 {
		return nil
	}
	n := &needles{byStart: map[uint32][]string{}}
	for _, s := range list {
		if len(s) < 4 {
			n.short = append(n.short, s)
			continue
		}
		w := window(s, 0)
		h := hashWindow(w)
		n.set[h>>6] |= 1 << (h & 63)
		n.byStart[w] = append(n.byStart[w], s)
	}
	return n
}

// in reports whether text holds a needle; nil needles are none.
func (n *needles) in(text string) bool {
	if n == nil {
		return false
	}
	for _, s := range n.short {
		if strings.Contains(text, s) {
			return true
		}
	}
	if len(text) < 4 {
		return false
	}
	set := &n.set
	w := window(text, 0)
	for i := 0; ; i++ {
		if h := hashWindow(w); set[h>>6]&(1<<(h&63)) != 0 {
			for _, s := range n.byStart[w] {
				if strings.HasPrefix(text[i:], s) {
					return true
				}
			}
		}
		if i+4 >= len(text) {
			return false
		}
		w = w>>8 | uint32(text[i+4])<<24 // the window one byte on
	}
}

// window is the four bytes of text at i, as a number.
func window(text string, i int) uint32 {
	return uint32(text[i]) | uint32(text[i+1])<<8 | uint32(text[i+2])<<16 | uint32(text[i+3])<<24
}

// hashWindow spreads a window over 16 bits (Fibonacci hashing).
func hashWindow(w uint32) uint32 { return (w * 2654435761) >> 16 }

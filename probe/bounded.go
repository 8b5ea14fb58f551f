package probe

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
)

// errLineTooLarge is returned by readBoundedLine for a line over the cap.
var errLineTooLarge = errors.New("line over the size cap")

// readBoundedLine reads one newline-terminated line into buf (reused) and
// returns it without the line ending. A line longer than max fails as soon as
// the cap is passed, before the rest of it is read, so a hostile server
// cannot make us hold more than max bytes plus the reader's buffer. The last
// line of a stream may lack its newline.
func readBoundedLine(r *bufio.Reader, max int64, buf []byte) ([]byte, error) {
	buf = buf[:0]
	for {
		frag, err := r.ReadSlice('\n')
		body := bytes.TrimRight(frag, "\r\n")
		if int64(len(buf))+int64(len(body)) > max {
			return nil, errLineTooLarge
		}
		buf = append(buf, frag...)
		switch {
		case err == nil:
			return bytes.TrimRight(buf, "\r\n"), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case len(buf) > 0:
			// The stream ended without a final newline; the next call
			// reports the end.
			return bytes.TrimRight(buf, "\r\n"), nil
		default:
			return nil, err
		}
	}
}

// tailBuffer keeps the last max bytes written to it: a server's stderr,
// which may be endless.
type tailBuffer struct {
	max int

	mu  sync.Mutex
	buf []byte
	cut bool // bytes were dropped from the front
}

func newTailBuffer(max int) *tailBuffer {
	return &tailBuffer{max: max, buf: make([]byte, 0, 2*max)}
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if len(p) >= t.max {
		p = p[len(p)-t.max:]
		t.buf = t.buf[:0]
		t.cut = true
	}
	if len(t.buf)+len(p) > cap(t.buf) {
		// Slide the kept tail to the front: amortised, as the buffer holds
		// twice the tail.
		keep := t.max - len(p)
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-keep:]...)
		t.cut = true
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

// String is the kept tail as valid UTF-8, starting at a line boundary when
// the front was cut and a line boundary is near; else, cut inside a line,
// it starts with "…", as every text cut short does, so that whoever reads
// it (a person, the scrubber) knows its first words are a part of some.
func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if len(b) > t.max {
		b = b[len(b)-t.max:]
	}
	midLine := false
	if t.cut || len(b) < len(t.buf) {
		if i := bytes.IndexByte(b, '\n'); i >= 0 && i < len(b)-1 && i < 200 {
			b = b[i+1:]
		} else {
			midLine = true
			for len(b) > 0 && !utf8.RuneStart(b[0]) {
				b = b[1:] // the rest of a rune cut in two
			}
		}
	}
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	if midLine {
		s = sanitize.Ellipsis + s
	}
	return s
}

// headBuffer keeps the first max bytes written to it, and counts them all:
// what a server wrote on stderr as it started.
type headBuffer struct {
	max int

	mu    sync.Mutex
	buf   []byte
	total int64
}

func newHeadBuffer(max int) *headBuffer { return &headBuffer{max: max} }

func (h *headBuffer) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.total += int64(len(p))
	if room := h.max - len(h.buf); room > 0 {
		h.buf = append(h.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// raw is the kept tail's bytes, uncut.
func (t *tailBuffer) raw() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if len(b) > t.max {
		b = b[len(b)-t.max:]
	}
	return bytes.Clone(b)
}

// joinHeadTail is what was written first (h) and last (t) of one stream:
// the whole stream while it fits in both, else the two with how much lies
// between them.
func joinHeadTail(h *headBuffer, t *tailBuffer) string {
	h.mu.Lock()
	head, total := bytes.Clone(h.buf), h.total
	h.mu.Unlock()
	if total <= int64(len(head)) {
		return t.String() // it all fits: the tail holds it too
	}
	tail := t.raw()
	gap := total - int64(len(head)) - int64(len(tail))
	if gap <= 0 {
		return strings.ToValidUTF8(string(head)+string(tail[-gap:]), "\uFFFD")
	}
	if i := bytes.LastIndexByte(head, '\n'); i >= 0 && len(head)-i < 200 {
		head = head[:i+1]
	}
	end := t.String()
	left := total - int64(len(head)) - int64(len(end))
	if head[len(head)-1] != '\n' {
		head = append(head, '\n')
	}
	return strings.ToValidUTF8(string(head), "\uFFFD") + fmt.Sprintf("[… %d bytes …]\n", left) + end
}

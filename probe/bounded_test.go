package probe

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestReadBoundedLine(t *testing.T) {
	tests := []struct {
		name  string
		input string
		max   int64
		want  []string
		err   error
	}{
		{"lines", "a\nbb\n", 10, []string{"a", "bb"}, io.EOF},
		{"crlf", "a\r\nb\r\n", 10, []string{"a", "b"}, io.EOF},
		{"no final newline", "a\nlast", 10, []string{"a", "last"}, io.EOF},
		{"exactly the cap", "abcd\n", 4, []string{"abcd"}, io.EOF},
		{"over the cap", "ok\nabcde\n", 4, []string{"ok"}, errLineTooLarge},
		{"over the cap without newline", "abcde", 4, nil, errLineTooLarge},
		{"longer than the reader's buffer", strings.Repeat("x", 100) + "\n", 100, []string{strings.Repeat("x", 100)}, io.EOF},
		{"far over, across buffers", strings.Repeat("x", 1000) + "\n", 100, nil, errLineTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := bufio.NewReaderSize(strings.NewReader(tc.input), 16)
			var got []string
			var err error
			for {
				var line []byte
				line, err = readBoundedLine(r, tc.max, nil)
				if err != nil {
					break
				}
				got = append(got, string(line))
			}
			if !errors.Is(err, tc.err) {
				t.Errorf("error = %v, want %v", err, tc.err)
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("lines = %q, want %q", got, tc.want)
			}
		})
	}
}

// A line far over the cap must fail without being read whole.
func TestReadBoundedLineStopsEarly(t *testing.T) {
	src := &countingReader{r: strings.NewReader(strings.Repeat("x", 10<<20) + "\n")}
	_, err := readBoundedLine(bufio.NewReaderSize(src, 4096), 64<<10, nil)
	if !errors.Is(err, errLineTooLarge) {
		t.Fatalf("error = %v, want errLineTooLarge", err)
	}
	if src.n > 128<<10 {
		t.Errorf("read %d bytes to reject a line over 64 KiB", src.n)
	}
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

func TestTailBuffer(t *testing.T) {
	tests := []struct {
		name   string
		max    int
		writes []string
		want   string
	}{
		{"short", 10, []string{"ab", "cd"}, "abcd"},
		// Cut inside a line, it says so: its first word is a part of one.
		{"keeps the last bytes", 5, []string{"abc", "def", "ghi"}, "…efghi"},
		{"one big write", 4, []string{"0123456789"}, "…6789"},
		{"starts at a line when cut", 8, []string{"first\nsecond\nend\n"}, "end\n"},
		{"a rune cut in two is left out", 3, []string{"abcé12"}, "…12"},
		{"invalid UTF-8 repaired", 10, []string{"ok\xff"}, "ok\uFFFD"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := newTailBuffer(tc.max)
			for _, w := range tc.writes {
				if n, err := b.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if got := b.String(); got != tc.want {
				t.Errorf("tail = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestTailBufferManyWrites(t *testing.T) {
	b := newTailBuffer(100)
	var all strings.Builder
	for i := range 10000 {
		s := strings.Repeat(string(rune('a'+i%26)), i%7+1)
		all.WriteString(s)
		_, _ = b.Write([]byte(s))
	}
	want := "…" + all.String()[all.Len()-100:]
	if got := b.String(); got != want {
		t.Errorf("tail = %q, want %q", got, want)
	}
	if cap(b.buf) > 200 {
		t.Errorf("buffer grew to %d bytes for a tail of 100", cap(b.buf))
	}
}

// A stream's start and end: the whole of it while it fits, else both ends
// with how much lies between them, each end bounded.
func TestJoinHeadTail(t *testing.T) {
	write := func(s string) (*headBuffer, *tailBuffer) {
		h, tl := newHeadBuffer(16), newTailBuffer(16)
		_, _ = h.Write([]byte(s))
		_, _ = tl.Write([]byte(s))
		return h, tl
	}
	for _, tc := range []struct{ in, want string }{
		{"short\n", "short\n"},
		{"0123456789abcdefXYZ", "0123456789abcdefXYZ"}, // the ends overlap: nothing lost
		{"rejected: bad key\n" + strings.Repeat("x", 100) + "\nlast line\n", "rejected: bad ke\n[… 103 bytes …]\nlast line\n"},
		{"start line\n" + strings.Repeat("y", 100) + "\nthe end\n", "start line\n[… 101 bytes …]\nthe end\n"},
	} {
		h, tl := write(tc.in)
		if got := joinHeadTail(h, tl); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.in, got, tc.want)
		}
	}
}

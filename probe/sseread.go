package probe

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// sseEvent is one dispatched server-sent event.
type sseEvent struct {
	Event string // the event type; empty means "message"
	Data  string // data lines joined with "\n"
	ID    string
}

// sseReader reads server-sent events from a body with bounded memory: no
// line and no event's data may exceed max bytes, or next fails with
// too_large. Comment lines (":") and unknown fields are ignored, as the SSE
// format says.
type sseReader struct {
	sc   *bufio.Scanner
	max  int64
	eols *sseLineSplitter
	// retry is the last retry: interval the stream set (how long to wait
	// before resuming it), when hasRetry.
	retry    time.Duration
	hasRetry bool
}

func newSSEReader(r io.Reader, max int64) *sseReader {
	split := &sseLineSplitter{}
	sc := bufio.NewScanner(r)
	// A line may carry a whole message; the token limit is max plus room
	// for the "data: " prefix, so the data cap decides.
	limit := min(max, int64(math.MaxInt)-64) + 64
	// The scanner's cap is the larger of its buffer and its max.
	sc.Buffer(make([]byte, 0, min(4096, limit)), int(limit))
	sc.Split(split.split)
	return &sseReader{sc: sc, max: max, eols: split}
}

// errSSETooLarge is wrapped in the too_large failure of an oversized event.
var errSSETooLarge = errors.New("event over the size cap")

// next returns the next event that has at least one field. At the end of
// the stream it returns io.EOF (an event cut off by the end is dropped, as
// the format says); a read error is returned as it is.
func (r *sseReader) next() (sseEvent, error) {
	var (
		ev      sseEvent
		data    bytes.Buffer
		hasData bool
		fields  bool
	)
	for r.sc.Scan() {
		line := r.sc.Bytes()
		if len(line) == 0 {
			if !fields {
				continue // blank lines between events
			}
			if hasData {
				ev.Data = data.String()
			}
			return ev, nil
		}
		if line[0] == ':' {
			continue // comment, often a keep-alive
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(name) {
		case "event":
			ev.Event = string(value)
			fields = true
		case "data":
			add := int64(len(value))
			if hasData {
				add++ // the "\n" joining data lines
			}
			if int64(data.Len())+add > r.max {
				return sseEvent{}, r.tooLarge()
			}
			if hasData {
				data.WriteByte('\n')
			}
			data.Write(value)
			hasData, fields = true, true
		case "id":
			if !bytes.Contains(value, []byte{0}) {
				ev.ID = string(value)
			}
			fields = true
		case "retry":
			if d, ok := parseRetry(value); ok {
				r.retry, r.hasRetry = d, true
			}
		}
	}
	if err := r.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return sseEvent{}, r.tooLarge()
		}
		return sseEvent{}, err
	}
	return sseEvent{}, io.EOF
}

// maxStreamRetry bounds a retry: interval: a server's hour is taken as one,
// and a deadline shorter than that decides anyway.
const maxStreamRetry = time.Hour

// parseRetry reads a retry: field's value, milliseconds in ASCII digits
// (anything else is ignored, as the format says).
func parseRetry(v []byte) (time.Duration, bool) {
	if len(v) == 0 {
		return 0, false
	}
	for _, b := range v {
		if b < '0' || b > '9' {
			return 0, false
		}
	}
	ms, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil || ms > int64(maxStreamRetry/time.Millisecond) {
		return maxStreamRetry, true // digits beyond int64 or an hour
	}
	return time.Duration(ms) * time.Millisecond, true
}

func (r *sseReader) tooLarge() error {
	return &Failure{Reason: ReasonTooLarge, Err: fmt.Errorf("%w: a server-sent event is larger than %d bytes", errSSETooLarge, r.max)}
}

// sseLineSplitter splits on "\r\n", "\n" or "\r". A "\r" at the end of the
// buffered bytes ends the line at once, without waiting for the next byte
// of a live stream; a "\n" right after it is then skipped. It remembers how
// far it has searched a line that is still growing, so a long line costs
// linear time, not a rescan on every read.
type sseLineSplitter struct {
	skipLF   bool
	searched int // bytes of the pending line known to hold no line ending
}

func (s *sseLineSplitter) split(data []byte, atEOF bool) (int, []byte, error) {
	skipped := 0
	if s.skipLF && len(data) > 0 {
		s.skipLF = false
		if data[0] == '\n' {
			data = data[1:]
			skipped = 1
		}
	}
	if i := bytes.IndexAny(data[s.searched:], "\r\n"); i >= 0 {
		i += s.searched
		s.searched = 0
		if data[i] == '\r' {
			if i+1 < len(data) {
				if data[i+1] == '\n' {
					return skipped + i + 2, data[:i], nil
				}
				return skipped + i + 1, data[:i], nil
			}
			s.skipLF = true
		}
		return skipped + i + 1, data[:i], nil
	}
	s.searched = 0
	if atEOF {
		// An unterminated last line is dropped with the event it is in;
		// returning it lets the scanner end cleanly.
		return skipped + len(data), nil, nil
	}
	if skipped > 0 {
		return skipped, nil, nil
	}
	s.searched = len(data)
	return 0, nil, nil
}

// isEventStream reports a text/event-stream content type.
func isEventStream(contentType string) bool {
	return mediaType(contentType) == "text/event-stream"
}

// mediaType is the lower-cased media type of a Content-Type value.
func mediaType(contentType string) string {
	t, _, _ := strings.Cut(contentType, ";")
	return strings.ToLower(strings.TrimSpace(t))
}

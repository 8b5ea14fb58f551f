package lockstore

import (
	"unicode/utf16"
)

// Marshal renders the lock. A server read from a file and not changed since
// is written with the exact bytes it was read from. Others are written the
// way Python's json.dump(lock, f, indent=2, sort_keys=True) writes them, so a
// lock of names only is byte for byte what the Python preflight writes; entries
// with fingerprints put one tool per line, so a review diff shows one line per
// changed tool.
//
// The file ends with a newline (friendlier to git and editors) unless it was
// parsed from a file without one, as the Python preflight writes it: an
// unchanged lock is always rewritten unchanged.
func (l *Lock) Marshal() []byte {
	servers := l.Servers()
	if len(servers) == 0 {
		return l.withFinalNewline([]byte("{}"))
	}
	b := []byte("{\n")
	for i, name := range servers {
		s := l.servers[name]
		b = append(b, "  "...)
		b = appendPythonString(b, name)
		b = append(b, ": "...)
		switch {
		case s.raw != "":
			b = append(b, s.raw...)
		case s.entry.rich():
			b = appendToolObject(b, s.entry)
		default:
			b = appendNameList(b, s.entry)
		}
		if i < len(servers)-1 {
			b = append(b, ',')
		}
		b = append(b, '\n')
	}
	b = append(b, '}')
	return l.withFinalNewline(b)
}

func (l *Lock) withFinalNewline(b []byte) []byte {
	if l != nil && l.noTrailingNewline {
		return b
	}
	return append(b, '\n')
}

// appendNameList writes the names-only form: a list of names, one per line at
// Python's indent=2 nesting (an empty list is "[]", as Python writes it).
func appendNameList(b []byte, e Entry) []byte {
	if len(e.Tools) == 0 {
		return append(b, "[]"...)
	}
	b = append(b, "[\n"...)
	for i, t := range e.Tools {
		b = append(b, "    "...)
		b = appendPythonString(b, t.Name)
		if i < len(e.Tools)-1 {
			b = append(b, ',')
		}
		b = append(b, '\n')
	}
	return append(b, "  ]"...)
}

// appendToolObject writes the rich form: an object keyed by tool name with
// one tool per line, keys sorted, empty fingerprints left out.
func appendToolObject(b []byte, e Entry) []byte {
	b = append(b, "{\n"...)
	for i, t := range e.Tools {
		b = append(b, "    "...)
		b = appendPythonString(b, t.Name)
		b = append(b, ": {"...)
		if t.Description != "" {
			b = append(b, `"description": `...)
			b = appendPythonString(b, t.Description)
		}
		if t.Schema != "" {
			if t.Description != "" {
				b = append(b, ", "...)
			}
			b = append(b, `"schema": `...)
			b = appendPythonString(b, t.Schema)
		}
		b = append(b, '}')
		if i < len(e.Tools)-1 {
			b = append(b, ',')
		}
		b = append(b, '\n')
	}
	return append(b, "  }"...)
}

// appendPythonString quotes s exactly as Python's json module does with its
// default ensure_ascii=True: only printable ASCII is written as is, the usual
// short escapes, everything else as lowercase \uXXXX (surrogate pairs above
// the BMP). Go's encoding/json differs (it escapes <, >, & and keeps UTF-8).
func appendPythonString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for _, r := range s {
		switch {
		case r == '"':
			b = append(b, `\"`...)
		case r == '\\':
			b = append(b, `\\`...)
		case r == '\n':
			b = append(b, `\n`...)
		case r == '\r':
			b = append(b, `\r`...)
		case r == '\t':
			b = append(b, `\t`...)
		case r == '\b':
			b = append(b, `\b`...)
		case r == '\f':
			b = append(b, `\f`...)
		case r >= 0x20 && r < 0x7f:
			b = append(b, byte(r))
		default:
			units := []rune{r}
			if r > 0xffff {
				hi, lo := utf16.EncodeRune(r)
				units = []rune{hi, lo}
			}
			for _, u := range units {
				b = append(b, '\\', 'u', hex[u>>12&0xf], hex[u>>8&0xf], hex[u>>4&0xf], hex[u&0xf])
			}
		}
	}
	return append(b, '"')
}

package config

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/util/suggest"
)

// FieldError is a problem with one key of one file. Its message names the
// file, the key and the fix, and never a value that could be a secret.
type FieldError struct {
	File    string // the config or client config file
	Key     string // dotted path, e.g. servers.report.timeout; "" for the whole file
	Problem string
	Err     error // the underlying error, if any (e.g. an *fs.PathError)
	// Line and Col place a syntax problem in the file (1-based; 0 when
	// unknown), written FILE:LINE:COL as compilers do, so an editor jumps
	// to it.
	Line, Col int
}

func (e *FieldError) Unwrap() error { return e.Err }

func (e *FieldError) Error() string {
	file := e.File
	if e.Line > 0 {
		file = fmt.Sprintf("%s:%d:%d", e.File, e.Line, e.Col)
	}
	if e.Key == "" {
		return file + ": " + e.Problem
	}
	return file + ": " + e.Key + ": " + e.Problem
}

// decoder walks the generic map a YAML or JSON parser produced, checking
// types and unknown keys, and collects every problem rather than stopping at
// the first, so one `config check` run shows them all.
type decoder struct {
	file string
	errs []error
}

func (d *decoder) errorf(key, format string, args ...any) {
	d.errs = append(d.errs, &FieldError{File: d.file, Key: key, Problem: fmt.Sprintf(format, args...)})
}

func (d *decoder) err() error { return errors.Join(d.errs...) }

// joinKey appends name to a dotted key path, quoting names that would make
// the path ambiguous (a server called "my.server").
func joinKey(path, name string) string {
	quoted := name
	if name == "" || strings.IndexFunc(name, func(r rune) bool {
		return !(r == '_' || r == '-' || r == '/' || ('0' <= r && r <= '9') || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z'))
	}) >= 0 {
		quoted = fmt.Sprintf("%q", name)
	}
	if path == "" {
		return quoted
	}
	return path + "." + quoted
}

// object is one mapping being decoded. Every key read is marked, and finish
// reports the rest as unknown.
type object struct {
	d      *decoder
	path   string
	m      map[string]any
	known  []string
	strict bool // unknown keys are errors (mcpwatch.yml); client configs carry extra keys
}

func (d *decoder) object(path string, v any, strict bool) (*object, bool) {
	o := &object{d: d, path: path, strict: strict}
	switch m := v.(type) {
	case nil:
		o.m = map[string]any{}
	case map[string]any:
		o.m = m
	default:
		d.errorf(path, "expected a mapping, got %s", kindOf(v))
		return nil, false
	}
	return o, true
}

func (o *object) key(name string) string { return joinKey(o.path, name) }

// get returns the value of name, marking name as known. A key written with
// no value (`timeout:`) counts as absent.
func (o *object) get(name string) (any, bool) {
	if !slices.Contains(o.known, name) {
		o.known = append(o.known, name)
	}
	v, ok := o.m[name]
	return v, ok && v != nil
}

// keys returns the mapping's keys, sorted so errors come out in a stable order.
func (o *object) keys() []string {
	ks := make([]string, 0, len(o.m))
	for k := range o.m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func (o *object) finish() {
	if !o.strict {
		return
	}
	for _, k := range o.keys() {
		if slices.Contains(o.known, k) {
			continue
		}
		hint := "remove it"
		if s := suggest.Closest(k, o.known); s != "" {
			hint = fmt.Sprintf("did you mean %s?", s)
		}
		known := append([]string(nil), o.known...)
		sort.Strings(known)
		o.d.errorf(o.key(k), "unknown key; %s (known keys here: %s)", hint, strings.Join(known, ", "))
	}
}

func (o *object) string(name string) (string, bool) {
	v, ok := o.get(name)
	if !ok {
		return "", false
	}
	s, isString := v.(string)
	if !isString {
		o.d.errorf(o.key(name), "expected a string, got %s; quote the value", kindOf(v))
		return "", false
	}
	return s, true
}

func (o *object) boolean(name string) (bool, bool) {
	v, ok := o.get(name)
	if !ok {
		return false, false
	}
	b, isBool := v.(bool)
	if !isBool {
		o.d.errorf(o.key(name), "expected true or false, got %s", kindOf(v))
		return false, false
	}
	return b, true
}

func (o *object) integer(name string) (int64, bool) {
	v, ok := o.get(name)
	if !ok {
		return 0, false
	}
	n, isInt := asInt(v)
	if !isInt {
		o.d.errorf(o.key(name), "expected an integer, got %s", kindOf(v))
		return 0, false
	}
	return n, true
}

// duration reads a Go duration string ("10s", "1m30s"); a bare number is
// refused because its unit would be a guess.
func (o *object) duration(name string) (time.Duration, bool) {
	v, ok := o.get(name)
	if !ok {
		return 0, false
	}
	s, isString := v.(string)
	if !isString {
		o.d.errorf(o.key(name), "expected a duration with a unit, like 10s or 1m30s, got %s", kindOf(v))
		return 0, false
	}
	dur, err := time.ParseDuration(s)
	if err != nil {
		o.d.errorf(o.key(name), "%q is not a duration; write it like 10s or 1m30s", s)
		return 0, false
	}
	if dur <= 0 {
		o.d.errorf(o.key(name), "must be positive, got %s", s)
		return 0, false
	}
	return dur, true
}

// schedule reads a schedule: the string ParseSchedule accepts, as the
// daemon will run it.
func (o *object) schedule(name string) (string, bool) {
	s, ok := o.string(name)
	if !ok {
		return "", false
	}
	if _, err := ParseSchedule(s); err != nil {
		o.d.errorf(o.key(name), "%v", err)
		return "", false
	}
	return s, true
}

func (o *object) strings(name string) ([]string, bool) {
	v, ok := o.get(name)
	if !ok {
		return nil, false
	}
	list, isList := v.([]any)
	if !isList {
		o.d.errorf(o.key(name), "expected a list of strings, got %s", kindOf(v))
		return nil, false
	}
	out := make([]string, 0, len(list))
	good := true
	for i, item := range list {
		s, isString := item.(string)
		if !isString {
			o.d.errorf(fmt.Sprintf("%s[%d]", o.key(name), i), "expected a string, got %s; quote the value", kindOf(item))
			good = false
			continue
		}
		out = append(out, s)
	}
	return out, good
}

// stringMap reads a mapping of strings. Values are never quoted in errors:
// env and headers hold secrets.
func (o *object) stringMap(name string) (map[string]string, bool) {
	v, ok := o.get(name)
	if !ok {
		return nil, false
	}
	sub, ok := o.d.object(o.key(name), v, false)
	if !ok {
		return nil, false
	}
	out := make(map[string]string, len(sub.m))
	good := true
	for _, k := range sub.keys() {
		item := sub.m[k]
		s, isString := item.(string)
		if !isString {
			if item == nil {
				o.d.errorf(sub.key(k), "has no value; write \"\" for an empty one")
			} else {
				o.d.errorf(sub.key(k), "expected a string, got %s; quote the value", kindOf(item))
			}
			good = false
			continue
		}
		out[k] = s
	}
	return out, good
}

func (o *object) sub(name string, strict bool) (*object, bool) {
	v, ok := o.get(name)
	if !ok {
		return nil, false
	}
	return o.d.object(o.key(name), v, strict)
}

func asInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int64:
		return n, true
	case uint64:
		if n > math.MaxInt64 {
			return 0, false
		}
		return int64(n), true
	case float64: // JSON numbers
		if n != math.Trunc(n) || math.Abs(n) > 1<<53 {
			return 0, false
		}
		return int64(n), true
	}
	return 0, false
}

// kindOf names a value's type for an error, without its content.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "nothing"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int, int64, uint64:
		return "an integer"
	case float64:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	case time.Time:
		return "a timestamp"
	}
	return fmt.Sprintf("a %T", v)
}

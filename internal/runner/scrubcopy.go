package runner

import (
	"encoding/json"
	"reflect"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/contracts"
	"github.com/mcpwatch/mcpwatch/probe"
)

// The scrubber fails closed: it copies a probe result or call outcomes by
// reflection and scrubs every string it meets, so a field added to one of
// them is scrubbed without anyone listing it. What is left alone is listed
// here, each with its reason; TestScrubberCoversEveryField fills every
// field of the types with a secret and fails on a field the scrubber
// neither scrubs nor lists, or on a kind of field it cannot see into.

// unscrubbedTypes are string types whose values are a closed set of
// mcpwatch's own (a failure reason, a transport, an era), never text a
// server chose: replacing one that happens to equal a short secret would
// break what reads it (a metric label, the verdict), and cannot leak.
var unscrubbedTypes = map[reflect.Type]bool{
	reflect.TypeFor[probe.Reason]():    true,
	reflect.TypeFor[probe.Transport](): true,
	reflect.TypeFor[probe.Era]():       true,
}

// unscrubbedFields are plain string fields that mcpwatch fills from a
// closed set of its own, for the same reason.
var unscrubbedFields = map[reflect.Type][]string{
	reflect.TypeFor[probe.TranscriptEntry](): {"Direction"}, // send or recv
	reflect.TypeFor[contracts.Assertion]():   {"Name", "Outcome"},
}

var (
	rawMessageType = reflect.TypeFor[json.RawMessage]()
	timeType       = reflect.TypeFor[time.Time]()
)

// scrubCopy returns a deep copy of v with every string in it scrubbed
// (s.cut), every json.RawMessage scrubbed as JSON (s.raw), and the rest
// copied. v itself is left alone. A field of a kind the scrubber cannot
// see into (an interface, a func, a channel, an unexported field) comes
// out as its zero value: dropped, never copied unscrubbed.
func scrubCopy[T any](s Scrubber, v T) T {
	var out T
	s.copyValue(reflect.ValueOf(&out).Elem(), reflect.ValueOf(&v).Elem())
	return out
}

func (s Scrubber) copyValue(dst, src reflect.Value) {
	t := src.Type()
	switch {
	case t == rawMessageType:
		if !src.IsNil() {
			dst.Set(reflect.ValueOf(s.raw(src.Interface().(json.RawMessage))))
		}
		return
	case t == timeType:
		dst.Set(src)
		return
	case unscrubbedTypes[t]:
		dst.Set(src)
		return
	}
	switch t.Kind() {
	case reflect.String:
		dst.SetString(s.cut(src.String()))
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		dst.Set(src)
	case reflect.Pointer:
		if !src.IsNil() {
			dst.Set(reflect.New(t.Elem()))
			s.copyValue(dst.Elem(), src.Elem())
		}
	case reflect.Slice:
		if src.IsNil() || t.Elem().Kind() == reflect.Uint8 {
			return // bytes that are not JSON: no field holds any
		}
		dst.Set(reflect.MakeSlice(t, src.Len(), src.Len()))
		for i := range src.Len() {
			s.copyValue(dst.Index(i), src.Index(i))
		}
	case reflect.Array:
		for i := range src.Len() {
			s.copyValue(dst.Index(i), src.Index(i))
		}
	case reflect.Map:
		if src.IsNil() {
			return
		}
		dst.Set(reflect.MakeMapWithSize(t, src.Len()))
		for it := src.MapRange(); it.Next(); {
			k, v := reflect.New(t.Key()).Elem(), reflect.New(t.Elem()).Elem()
			s.copyValue(k, it.Key())
			s.copyValue(v, it.Value())
			dst.SetMapIndex(k, v)
		}
	case reflect.Struct:
		keep := unscrubbedFields[t]
		for i := range t.NumField() {
			f := t.Field(i)
			switch {
			case !f.IsExported():
				// Dropped: it cannot be set from here, nor read to scrub.
			case contains(keep, f.Name):
				dst.Field(i).Set(src.Field(i))
			default:
				s.copyValue(dst.Field(i), src.Field(i))
			}
		}
	}
	// Interfaces, funcs, channels: dropped (see scrubCopy).
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

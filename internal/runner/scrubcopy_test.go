package runner

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/contracts"
	"github.com/mcpwatch/mcpwatch/probe"
)

// The scrubber fails closed: every string field of a probe result and of
// call outcomes, now and as they grow, is scrubbed unless it is listed as
// mcpwatch's own, and a field the scrubber cannot see into fails here.
// The values are built by reflection over the types, so a field added to
// them is covered by this test without editing it.
func TestScrubberCoversEveryField(t *testing.T) {
	const secret = "s3cret-t0ken-value"
	s := NewScrubber(Secrets{Probed: probe.Target{Env: map[string]string{"REPORT_API_TOKEN": secret}}})
	for _, typ := range []reflect.Type{reflect.TypeFor[probe.Result](), reflect.TypeFor[[]contracts.Outcome](), reflect.TypeFor[probe.CallResult]()} {
		t.Run(typ.String(), func(t *testing.T) {
			if bad := unscrubbable(typ); len(bad) > 0 {
				t.Fatalf("the scrubber cannot see into (give them a type it can, or scrub them by hand):\n%s", strings.Join(bad, "\n"))
			}
			in := filled(typ, secret)
			again := filled(typ, secret)
			out := reflect.New(typ).Elem()
			s.copyValue(out, in)
			if !reflect.DeepEqual(in.Interface(), again.Interface()) {
				t.Error("scrubbing changed the original")
			}
			n := compareScrubbed(t, typ.String(), in, out, secret, false)
			if n == 0 {
				t.Fatal("no field was scrubbed")
			}
			t.Logf("%d strings scrubbed", n)
		})
	}
	for typ, names := range unscrubbedFields {
		for _, name := range names {
			if f, ok := typ.FieldByName(name); !ok || f.Type.Kind() != reflect.String {
				t.Errorf("unscrubbedFields lists %s.%s, which is not a string field", typ, name)
			}
		}
	}
}

// The checks above can fail: a type with fields the scrubber cannot see
// into is reported, and those fields come out dropped, not copied.
func TestScrubberDropsWhatItCannotSee(t *testing.T) {
	type hidden struct {
		Text   string
		Any    any
		Bytes  []byte
		Func   func() string
		secret string
	}
	bad := unscrubbable(reflect.TypeFor[hidden]())
	for _, want := range []string{".Any", ".Bytes", ".Func", ".secret"} {
		found := false
		for _, b := range bad {
			found = found || strings.Contains(b, want)
		}
		if !found {
			t.Errorf("unscrubbable does not report %s: %q", want, bad)
		}
	}
	const key = "s3cret-t0ken-value"
	s := NewScrubber(Secrets{Probed: probe.Target{Env: map[string]string{"K": key}}})
	got := scrubCopy(s, hidden{Text: key, Any: key, Bytes: []byte(key), Func: func() string { return key }, secret: key})
	if got.Text != config.Redacted || got.Any != nil || got.Bytes != nil || got.Func != nil || got.secret != "" {
		t.Errorf("scrubCopy kept what it cannot scrub: %+v", got)
	}
}

// filled returns a value of typ with every string holding secret, every
// slice and map one element, every pointer set, every number 1.
func filled(typ reflect.Type, secret string) reflect.Value {
	v := reflect.New(typ).Elem()
	fill(v, secret, 0)
	return v
}

func fill(v reflect.Value, secret string, depth int) {
	t := v.Type()
	if depth > 12 {
		return
	}
	switch t {
	case rawMessageType:
		v.Set(reflect.ValueOf(json.RawMessage(`{"said":"` + secret + `"}`)))
		return
	case timeType:
		return
	}
	switch t.Kind() {
	case reflect.String:
		v.SetString("said " + secret)
		if unscrubbedTypes[t] {
			v.SetString(secret)
		}
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1)
	case reflect.Pointer:
		v.Set(reflect.New(t.Elem()))
		fill(v.Elem(), secret, depth+1)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(t, 1, 1))
		fill(v.Index(0), secret, depth+1)
	case reflect.Map:
		v.Set(reflect.MakeMap(t))
		k, e := reflect.New(t.Key()).Elem(), reflect.New(t.Elem()).Elem()
		fill(k, secret, depth+1)
		fill(e, secret, depth+1)
		v.SetMapIndex(k, e)
	case reflect.Struct:
		for i := range t.NumField() {
			if t.Field(i).IsExported() {
				fill(v.Field(i), secret, depth+1)
			}
		}
	}
}

// compareScrubbed walks in and out together: every string of out is
// scrubbed, but those the scrubber leaves alone by design, which are
// unchanged. It returns how many strings were scrubbed.
func compareScrubbed(t *testing.T, path string, in, out reflect.Value, secret string, keep bool) int {
	t.Helper()
	typ := in.Type()
	switch {
	case typ == rawMessageType:
		got := string(out.Bytes())
		if strings.Contains(got, secret) || !strings.Contains(got, config.Redacted) || !json.Valid(out.Bytes()) {
			t.Errorf("%s = %s: not scrubbed", path, got)
		}
		return 1
	case typ == timeType:
		return 0
	case unscrubbedTypes[typ]:
		keep = true
	}
	switch typ.Kind() {
	case reflect.String:
		switch {
		case keep && out.String() != in.String():
			t.Errorf("%s = %q: changed, but it is mcpwatch's own (%q)", path, out.String(), in.String())
		case keep:
			return 0
		case strings.Contains(out.String(), secret) || !strings.Contains(out.String(), config.Redacted):
			t.Errorf("%s = %q: not scrubbed", path, out.String())
		}
		return 1
	case reflect.Pointer:
		if out.IsNil() {
			t.Errorf("%s: dropped", path)
			return 0
		}
		return compareScrubbed(t, path, in.Elem(), out.Elem(), secret, keep)
	case reflect.Slice, reflect.Array:
		if out.Len() != in.Len() {
			t.Errorf("%s: %d elements, want %d", path, out.Len(), in.Len())
			return 0
		}
		n := 0
		for i := range in.Len() {
			n += compareScrubbed(t, fmt.Sprintf("%s[%d]", path, i), in.Index(i), out.Index(i), secret, keep)
		}
		return n
	case reflect.Map:
		if out.Len() != in.Len() {
			t.Errorf("%s: %d entries, want %d", path, out.Len(), in.Len())
			return 0
		}
		n := 0
		outKeys, inKeys := out.MapKeys(), in.MapKeys()
		for i := range inKeys {
			n += compareScrubbed(t, path+"{key}", inKeys[i], outKeys[i], secret, keep)
			n += compareScrubbed(t, path+"{}", in.MapIndex(inKeys[i]), out.MapIndex(outKeys[i]), secret, keep)
		}
		return n
	case reflect.Struct:
		n := 0
		for i := range typ.NumField() {
			f := typ.Field(i)
			if f.IsExported() {
				n += compareScrubbed(t, path+"."+f.Name, in.Field(i), out.Field(i), secret, keep || contains(unscrubbedFields[typ], f.Name))
			}
		}
		return n
	default:
		if !reflect.DeepEqual(in.Interface(), out.Interface()) {
			t.Errorf("%s = %v, want %v as it was", path, out.Interface(), in.Interface())
		}
		return 0
	}
}

// unscrubbable lists the fields of t, and of the types it holds, that
// scrubCopy cannot see into and so drops: an interface, a func, a channel,
// bytes that are not a json.RawMessage, an unexported field. A result type
// must have none (TestScrubberCoversEveryField).
func unscrubbable(t reflect.Type) []string {
	var out []string
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type, path string)
	walk = func(t reflect.Type, path string) {
		if seen[t] || t == rawMessageType || t == timeType || unscrubbedTypes[t] {
			return
		}
		seen[t] = true
		switch t.Kind() {
		case reflect.Pointer, reflect.Array:
			walk(t.Elem(), path)
		case reflect.Slice:
			if t.Elem().Kind() == reflect.Uint8 {
				out = append(out, fmt.Sprintf("%s (%s: bytes that are not a json.RawMessage)", path, t))
				return
			}
			walk(t.Elem(), path+"[]")
		case reflect.Map:
			walk(t.Key(), path+"{key}")
			walk(t.Elem(), path+"{}")
		case reflect.Struct:
			for i := range t.NumField() {
				f := t.Field(i)
				if !f.IsExported() {
					out = append(out, fmt.Sprintf("%s.%s (unexported)", path, f.Name))
					continue
				}
				walk(f.Type, path+"."+f.Name)
			}
		case reflect.Interface, reflect.Func, reflect.Chan, reflect.UnsafePointer:
			out = append(out, fmt.Sprintf("%s (%s)", path, t))
		}
	}
	walk(t, t.String())
	return out
}

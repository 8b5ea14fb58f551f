package jsondoc

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

func TestMarshal(t *testing.T) {
	v := struct {
		Name    string   `json:"name"`
		Timeout Duration `json:"timeout"`
	}{"<redacted> -> x", Duration(90 * time.Second)}
	got, err := Marshal(v, Member{"call", map[string]int{"n": 1}})
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"schema_version\": 2,\n  \"name\": \"<redacted> -> x\",\n  \"timeout\": \"1m30s\",\n  \"call\": {\n    \"n\": 1\n  }\n}\n"
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got, _ := Marshal(struct{}{}); string(got) != "{\n  \"schema_version\": 2\n}\n" {
		t.Errorf("empty object: %s", got)
	}
	if _, err := Marshal([]int{1}); err == nil || !strings.Contains(err.Error(), "not an object") {
		t.Errorf("a list: %v", err)
	}
	if _, err := Marshal(map[string]float64{"x": math.Inf(1)}); err == nil {
		t.Error("an unencodable value: no error")
	}
}

func TestDurationRoundTrip(t *testing.T) {
	var d Duration
	if err := json.Unmarshal([]byte(`"2m"`), &d); err != nil || time.Duration(d) != 2*time.Minute {
		t.Errorf("read %v, %v", d, err)
	}
	if err := json.Unmarshal([]byte(`120000000000`), &d); err == nil {
		t.Error("a number of nanoseconds read as a duration")
	}
}

func TestCheck(t *testing.T) {
	good := `{"schema_version": 2, "duration_seconds": 0.5, "config": {"timeout": "10s"}, "timings": {"pages_seconds": [0.1]}, "servers": [{"call_timeout": "5s"}]}`
	if err := Check([]byte(good)); err != nil {
		t.Errorf("a good document: %v", err)
	}
	for doc, want := range map[string]string{
		`[]`:                    "not a JSON object",
		`{"ok": true}`:          "first member",
		`{"schema_version": 1}`: "schema_version is 1",
		`{"schema_version": 2, "duration_ms": 3}`:               "duration_ms: a duration in ms",
		`{"schema_version": 2, "servers": [{"timeout_ms": 3}]}`: "servers[0].timeout_ms",
		`{"schema_version": 2, "config": {"timeout": 1e10}}`:    "config.timeout: 1e10 is neither",
		`{"schema_version": 2, "took_seconds": "1s"}`:           "took_seconds: 1s is not a number",
		`{"schema_version": 2, "calls": [{"duration": 12345}]}`: "calls[0].duration",
	} {
		if err := Check([]byte(doc)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Check(%s) = %v, want %q", doc, err, want)
		}
	}
}

// A list encoded item by item is the document Marshal writes for the same
// list as a member, byte for byte, for no item, one and several; an item
// that cannot be encoded returns nothing.
func TestMarshalList(t *testing.T) {
	type item struct {
		Name  string         `json:"name"`
		Tools []string       `json:"tools"`
		Meta  map[string]int `json:"meta,omitempty"`
	}
	lists := [][]item{
		nil,
		{{Name: "<one> & more", Tools: []string{}}},
		{{Name: "a", Tools: []string{"x", "y"}, Meta: map[string]int{"n": 1}}, {Name: "b"}, {Name: "c", Tools: []string{"z"}}},
	}
	// With members after the list, as a page of the list has its cursor.
	memberSets := [][]Member{nil, {{Name: "next", Value: "b <&>"}, {Name: "n", Value: 3}}}
	for _, list := range lists {
		for _, members := range memberSets {
			want, err := Marshal(struct {
				Servers []item `json:"servers"`
			}{append([]item{}, list...)}, members...)
			if err != nil {
				t.Fatal(err)
			}
			got, err := MarshalList("servers", func(yield func(any) bool) {
				for _, it := range list {
					if !yield(it) {
						return
					}
				}
			}, members...)
			if err != nil || string(got) != string(want) {
				t.Errorf("%d items, %d members: %v\ngot\n%s\nwant\n%s", len(list), len(members), err, got, want)
			}
		}
	}
	bad := func(yield func(any) bool) { _ = yield(item{Name: "ok"}) && yield(math.NaN()) }
	if got, err := MarshalList("servers", bad); err == nil || got != nil {
		t.Errorf("an unencodable item: %q, %v", got, err)
	}
}

package jsondoc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Check reports how doc breaks the conventions above, for the tests of
// every command and endpoint that writes a document: its first member must
// be schema_version with the current version; a member whose name ends in
// _seconds must be a number; any other member whose name speaks of a
// duration (duration, timeout, interval, ttl, elapsed, took, latency) must
// be a duration string such as "10s"; and no name may end in a unit other
// than seconds (_ms, _millis, _us, _ns).
func Check(doc []byte) error {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return fmt.Errorf("not a JSON object")
	}
	var problems []string
	var version int
	if tok, err := dec.Token(); err != nil || tok != "schema_version" {
		problems = append(problems, fmt.Sprintf("the first member is %v, not schema_version", tok))
	} else if dec.Decode(&version) != nil || version != schemaVersion {
		problems = append(problems, fmt.Sprintf("schema_version is %d, want %d", version, schemaVersion))
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return err
	}
	walk("", v, &problems)
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return nil
}

func walk(path string, v any, problems *[]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			at := k
			if path != "" {
				at = path + "." + k
			}
			checkMember(at, k, child, problems)
			walk(at, child, problems)
		}
	case []any:
		for i, child := range v {
			walk(fmt.Sprintf("%s[%d]", path, i), child, problems)
		}
	}
}

func checkMember(at, name string, v any, problems *[]string) {
	lower := strings.ToLower(name)
	for _, unit := range []string{"_ms", "_millis", "_milliseconds", "_us", "_ns", "_nanos"} {
		if strings.HasSuffix(lower, unit) {
			*problems = append(*problems, fmt.Sprintf("%s: a duration in %s; write seconds in a member named *_seconds", at, unit[1:]))
			return
		}
	}
	if strings.HasSuffix(lower, "_seconds") {
		switch v.(type) {
		case json.Number, nil:
		case []any: // pages_seconds: one per page
			for _, x := range v.([]any) {
				if _, ok := x.(json.Number); !ok {
					*problems = append(*problems, fmt.Sprintf("%s: %v is not a number of seconds", at, x))
				}
			}
		default:
			*problems = append(*problems, fmt.Sprintf("%s: %v is not a number of seconds", at, v))
		}
		return
	}
	for _, word := range []string{"duration", "timeout", "interval", "ttl", "elapsed", "took", "latency"} {
		if !strings.Contains(lower, word) {
			continue
		}
		s, ok := v.(string)
		if _, err := time.ParseDuration(s); !ok || err != nil {
			*problems = append(*problems, fmt.Sprintf("%s: %v is neither a number in a *_seconds member nor a duration string such as \"10s\"", at, v))
		}
		return
	}
}

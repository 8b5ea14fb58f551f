package probe

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// Every duration in the JSON of a result is seconds, as a float, under a
// name that says so.
func TestResultJSONInSeconds(t *testing.T) {
	ttl := int64(1500)
	res := &Result{
		OK: true, TTLMillis: &ttl,
		Timings:    Timings{Connect: 1500 * time.Millisecond, Handshake: 250 * time.Millisecond, Pages: []time.Duration{time.Second}, Total: 2750 * time.Millisecond},
		Duration:   2.75,
		Transcript: []TranscriptEntry{{At: 20 * time.Millisecond, Direction: "send"}},
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	for _, want := range []string{`"timings":{"connect_seconds":1.5,"handshake_seconds":0.25,"pages_seconds":[1],"total_seconds":2.75}`,
		`"ttl_seconds":1.5`, `"duration_seconds":2.75`, `{"at_seconds":0.02,"direction":"send"}`} {
		if !strings.Contains(got, want) {
			t.Errorf("JSON lacks %s:\n%s", want, got)
		}
	}
	for _, bad := range []string{`"ttl_ms"`, `"at":`, `"connect":`} {
		if strings.Contains(got, bad) {
			t.Errorf("JSON holds %s:\n%s", bad, got)
		}
	}
}

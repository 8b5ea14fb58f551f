package runner

import (
	"encoding/json"
	"math/rand"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpwatch/mcpwatch/probe"
)

// FuzzScrubber is TestScrubberNoEncodingSurvives with the fuzzer choosing
// the secret, the text around it and the encoding: no encoding of the
// secret survives, in a string or in JSON. make fuzz runs it for a while;
// go test runs the seeds.
func FuzzScrubber(f *testing.F) {
	f.Add("Tr0ub4dor&3 horse", "GET /auth?pw=", "failed", uint8(3), false, int64(1))
	f.Add("pässwörd-42", `{"error":"bad`, `"}`, uint8(6), false, int64(2))
	f.Add("h2x7", "pin", "rejected", uint8(12), true, int64(3))
	f.Add("correct  horse  battery", "login", "staple", uint8(13), false, int64(4))
	f.Add("clé-🔑-secret", "key", "", uint8(8), true, int64(5))
	f.Fuzz(func(t *testing.T, secret, before, after string, enc uint8, credential bool, seed int64) {
		if len(secret) < 4 || len(secret) > 200 || !utf8.ValidString(secret) || strings.TrimSpace(secret) != secret ||
			!credential && len(secret) < minSecretLen {
			t.Skip("not a secret the scrubber promises to find: short ones only under a credential's name")
		}
		// The text around must not spell the secret itself: a short secret
		// inside a longer word is not replaced, by design.
		if leaks(before+" "+after, secret) != "" || leaks(before+after, secret) != "" {
			t.Skip("the text around holds the secret")
		}
		name := "SETTING"
		if credential {
			name = "API_KEY"
		}
		e := encodings[int(enc)%len(encodings)]
		encoded := e.enc(secret, rand.New(rand.NewSource(seed))) //nolint:gosec // G404: the fuzzer's seed, so an input reads the same every run
		text := before + " " + encoded + " " + after
		s := newScrubber(probe.Target{}, probe.Target{Env: map[string]string{name: secret}})
		got := s.str(text)
		if l := leaks(got, secret); l != "" {
			t.Fatalf("%s %q (%s) in %q\nscrubbed: %q\nleaks: %s", name, secret, e.name, text, got, l)
		}
		raw := s.raw(json.RawMessage(`{"d":` + string(quote(text)) + `}`))
		if !json.Valid(raw) {
			t.Fatalf("raw: not JSON any more: %s", raw)
		}
		if l := leaks(said(raw), secret); l != "" {
			t.Fatalf("raw: %s %q (%s) in %q\nscrubbed: %s\nleaks: %s", name, secret, e.name, text, raw, l)
		}
	})
}

package runner

import (
	"encoding/json"
	"math/rand"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
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
		s := NewScrubber(Secrets{Probed: probe.Target{Env: map[string]string{name: secret}}})
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

// FuzzScrubberCut is the scrubber's promise for texts cut short: for any
// secret of minSecretLen characters or more, and any cut of any text that
// holds it, as mcpwatch cuts (at rune boundaries, marked "…" where text
// went, maybe put on one line, maybe quoted in a longer message), no run
// of minSecretLen or more of the secret's bytes is left. An uncut text
// loses the secret whole, as FuzzScrubber says. make fuzz runs it for a
// while; go test runs the seeds.
func FuzzScrubberCut(f *testing.F) {
	const key = "sk-1A2b3C4d5E6f7G8h9I0j1K2l3M4n5O6p7Q8r9S0t"
	f.Add(key, "presented ", " and then the remote service answered: invalid api key", uint16(200), uint16(65535), false, "credential env:API_KEY rejected: ", "")
	f.Add(key, "invalid api key: key=", "", uint16(0), uint16(30000), false, "", " (exit 1)")
	f.Add("correct  horse  battery staple", "login ", " failed", uint16(9000), uint16(40000), true, "", "")
	f.Add("pässwörd-42-ok", "pw ", " bad", uint16(20000), uint16(50000), false, "stderr: ", "")
	f.Add("hunter2hunter2", "", "", uint16(1), uint16(65534), true, "", "")
	f.Fuzz(func(t *testing.T, secret, before, after string, from, to uint16, oneLine bool, prefix, suffix string) {
		if len(secret) < minSecretLen || len(secret) > 300 || !utf8.ValidString(secret) || strings.ContainsRune(secret, 0) {
			t.Skip("not a secret a configuration holds")
		}
		// The scrubber's own words: a run that crosses "<redacted>" or "…"
		// holds one of their bytes, and "redacted" is one.
		if strings.ContainsAny(secret, "<>…") || strings.Contains(secret, "redacted") {
			t.Skip("the secret spells the scrubber's own words")
		}
		text := before + secret + after
		// The cut: [i, j) of the text, at rune boundaries, as
		// sanitize.Truncate and TruncateStart cut.
		i, j := int(from)*len(text)/65535, int(to)*len(text)/65535
		if i > j {
			i, j = j, i
		}
		for i > 0 && !utf8.RuneStart(text[i]) {
			i--
		}
		for j < len(text) && !utf8.RuneStart(text[j]) {
			j++
		}
		cut := text[i:j]
		if oneLine {
			cut = strings.Join(strings.Fields(cut), " ")
		}
		if i > 0 {
			cut = sanitize.Ellipsis + cut
		}
		if j < len(text) {
			cut += sanitize.Ellipsis
		}
		said := prefix + cut + suffix
		s := NewScrubber(Secrets{Probed: probe.Target{Env: map[string]string{"API_KEY": secret}}})
		got := s.cut(said)
		if !strings.Contains(said, sanitize.Ellipsis) {
			if strings.Contains(got, secret) {
				t.Fatalf("an uncut text kept the secret %q: %q", secret, got)
			}
			return
		}
		collapsed := strings.Join(strings.Fields(secret), " ")
		for _, form := range []string{secret, collapsed} {
			if f := fragment(got, form); f != "" {
				t.Fatalf("secret %q, text %q cut to %q:\nscrubbed %q\nholds %q", secret, text, said, got, f)
			}
		}
	})
}

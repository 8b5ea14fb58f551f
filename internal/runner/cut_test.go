package runner

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpwatch/mcpwatch/probe"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// longSecret is a 43-byte API key, as services issue them.
const longSecret = "sk-1A2b3C4d5E6f7G8h9I0j1K2l3M4n5O6p7Q8r9S0t"

// fragment returns the first run of minSecretLen bytes or more of secret
// that text holds, "" when none: what identifies a secret although it is
// not whole.
func fragment(text, secret string) string {
	for i := 0; i+minSecretLen <= len(secret); i++ {
		if strings.Contains(text, secret[i:i+minSecretLen]) {
			return secret[i : i+minSecretLen]
		}
	}
	return ""
}

// A server repeats its key before saying it is invalid, far enough into
// its answer that the credential rule quotes the words around "invalid api
// key" from a point inside the key: the quote began "…" and the key's last
// 27 characters, which reached the outcome's message, the rejection's
// quote and every report, the scrubber taking only a whole key (or a start
// before a final "…"). The answer is scrubbed before it is judged, so the
// quote is of a scrubbed text; and no part of the key long enough to
// identify it is left anywhere in the outcome.
func TestCallRejectionQuotesNoPartOfTheKey(t *testing.T) {
	url := httpServer(t, probetest.Config{Tools: append(probetest.DefaultTools(), probetest.EchoTool()), Token: longSecret})
	// The quote window opens 66 bytes before "invalid api key": 16 bytes
	// into the key.
	message := strings.Repeat("request refused by the upstream billing service. ", 3) +
		"presented " + longSecret + " and then the remote service answered: invalid api key"
	s := callServer(url, mustContracts(t, `{"tools":{"echo":{"input":{"message":`+string(quote(message))+`}}}}`))
	lookup := func(name string) (string, bool) { return longSecret, name == "TOKEN" }

	obs := Probe(t.Context(), NewPool(1, 1), s, Request{Lookup: lookup, Calls: true})
	if !obs.Result.OK || len(obs.Calls) != 1 {
		t.Fatalf("probe %v (%s), %d calls", obs.Result.OK, obs.Result.Error, len(obs.Calls))
	}
	o := obs.Calls[0]
	if o.Reason != probe.ReasonCredentialRejected || o.Rejection == nil {
		t.Fatalf("reason %s, rejection %+v, want the key rejected", o.Reason, o.Rejection)
	}
	t.Logf("quote: %s", o.Rejection.Quote)
	b, _ := json.Marshal(o)
	if f := fragment(string(b), longSecret); f != "" {
		t.Errorf("the outcome holds %q of the key: %s", f, b)
	}
	if !strings.Contains(o.Rejection.Quote, "invalid api key") {
		t.Errorf("the quote lost why: %q", o.Rejection.Quote)
	}
}

// Whatever cut a text holds a secret in, no run of minSecretLen bytes of
// it is left: at either end of a cut, on both sides of one, in the middle
// of a message that quotes a cut, in a stderr tail that begins inside a
// line.
func TestScrubberCutTexts(t *testing.T) {
	s := NewScrubber(Secrets{Probed: probe.Target{Env: map[string]string{"API_KEY": longSecret, "PIN": "48213"}}})
	tail := longSecret[16:] // "G8h9I0j1K2l3M4n5O6p7Q8r9S0t"
	for _, tc := range []struct{ in, want string }{
		{"…" + tail + " rejected: invalid api key", "…<redacted> rejected: invalid api key"},
		{"request with key=" + longSecret[:20] + "…", "request with key=<redacted>…"},
		{"…" + longSecret[5:30] + "…", "…<redacted>…"},
		{"credential env:API_KEY rejected: …" + tail + " was rejected: invalid api key", "credential env:API_KEY rejected: …<redacted> was rejected: invalid api key"},
		{"…" + tail + "\nError: unauthorized\n", "…<redacted>\nError: unauthorized\n"},
		// Shorter than a run, only at a cut: its end after one, its start before one.
		{"…0t rejected", "…0t rejected"},
		{"…9S0t rejected", "…<redacted> rejected"},
		{"key sk-1A…", "key <redacted>…"},
		{"pin 482…", "pin 482…"},
		// Not cut: a part of the key is some other text.
		{"see " + longSecret[5:30] + " there", "see " + longSecret[5:30] + " there"},
	} {
		if got := s.cut(tc.in); got != tc.want {
			t.Errorf("cut(%q)\n = %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

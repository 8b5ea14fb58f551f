package credential

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// corpusEntry is one documented answer of a service (testdata/corpus.json).
type corpusEntry struct {
	Service string `json:"service"`
	URL     string `json:"url"`
	Status  int    `json:"status"`
	As      string `json:"as"`
	Text    string `json:"text"`
	Want    string `json:"want"`
}

// evidence is the answer as an MCP server passes it on, given a
// credential.
func (c corpusEntry) evidence() Evidence {
	e := Evidence{Given: true}
	switch c.As {
	case "result":
		e.Text, e.HasDocument = c.Text, looksLikeDocument(c.Text)
	case "is_error":
		e.IsError, e.Text = true, c.Text
	case "rpc":
		e.RPCMessage = c.Text
	case "stderr":
		e.Stderr = c.Text
	}
	return e
}

func loadCorpus(t testing.TB) (rejections, others []corpusEntry) {
	t.Helper()
	b, err := os.ReadFile("testdata/corpus.json")
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Rejections []corpusEntry `json:"rejections"`
		Others     []corpusEntry `json:"others"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("testdata/corpus.json: %v", err)
	}
	return c.Rejections, c.Others
}

// TestCorpus measures the rule on the documented answers of many
// services: every authentication failure recognised, no other failure
// called a rejection, every network failure called unreachable, and
// every rate limit or quota rate_limited.
func TestCorpus(t *testing.T) {
	t.Parallel()
	rejections, others := loadCorpus(t)
	if len(rejections) < 40 || len(others) < 20 {
		t.Fatalf("the corpus holds %d authentication failures and %d others; it needs at least 40 and 20", len(rejections), len(others))
	}
	services := map[string]bool{}
	for _, c := range append(append([]corpusEntry{}, rejections...), others...) {
		if c.Service == "" || !strings.HasPrefix(c.URL, "https://") || c.Text == "" ||
			!strings.Contains("result is_error rpc stderr", c.As) || c.As == "" {
			t.Errorf("corpus entry %+v: a service, an https URL of its documentation, a text and how it is passed on are required", c)
		}
		if services[c.Service] {
			t.Errorf("corpus: %s twice", c.Service)
		}
		services[c.Service] = true
	}
	recognised := 0
	for _, c := range rejections {
		o := Classify(c.evidence())
		if o.Kind == KindRejected {
			recognised++
			if o.Quote == "" || o.Marker == "" || o.Source == "" {
				t.Errorf("%s: rejected without a marker, source or quote: %+v", c.Service, o)
			}
			continue
		}
		t.Errorf("%s (%s): %q read as %q, want rejected", c.Service, c.URL, c.Text, o.Kind)
	}
	falsePositives, unreachable, wantUnreachable := 0, 0, 0
	for _, c := range others {
		o := Classify(c.evidence())
		want := Kind("")
		switch c.Want {
		case "unreachable":
			want = KindUnreachable
			wantUnreachable++
		case "rate_limited":
			want = KindRateLimited
		}
		if o.Kind == KindRejected {
			falsePositives++
		}
		if o.Kind == KindUnreachable && want == KindUnreachable {
			unreachable++
		}
		if o.Kind != want {
			t.Errorf("%s (%s): %q read as %q (%s: %q), want %q", c.Service, c.URL, c.Text, o.Kind, o.Source, o.Marker, want)
		}
	}
	t.Logf("corpus: recognised %d/%d authentication failures; false positives %d/%d other failures; unreachable %d/%d network failures",
		recognised, len(rejections), falsePositives, len(others), unreachable, wantUnreachable)
}

// The same answers from a server given no credential: a rejection read in
// a stderr tail needs one (the rest of the rule does not depend on it).
func TestCorpusStderrNeedsGiven(t *testing.T) {
	t.Parallel()
	rejections, _ := loadCorpus(t)
	for _, c := range rejections {
		if c.As != "stderr" {
			continue
		}
		e := c.evidence()
		e.Given = false
		if o := Classify(e); o.Kind == KindRejected {
			t.Errorf("%s: rejected on stderr for a server given no credential", c.Service)
		}
	}
}

func BenchmarkClassify(b *testing.B) {
	msg := `{"object":"error","status":401,"code":"unauthorized","message":"API token is invalid."} `
	kib := strings.Repeat("Error: upstream said something long-winded about the request. ", 16)[:1024-len(msg)] + msg
	mib := kib + strings.Repeat("x", 1<<20-len(kib))
	data := `{"items":[` + strings.Repeat(`{"title":"bad credentials"},`, (1<<20)/28) + `{}]}`
	for _, bc := range []struct {
		name string
		e    Evidence
	}{
		{"1KiB-isError", Evidence{Given: true, IsError: true, Text: kib}},
		{"1MiB-isError", Evidence{Given: true, IsError: true, Text: mib}},
		{"1MiB-result-data", Evidence{Given: true, Text: data, HasDocument: true}},
		{"1MiB-stderr", Evidence{Given: true, Stderr: mib}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.e.Text) + len(bc.e.Stderr)))
			b.ReportAllocs()
			for b.Loop() {
				Classify(bc.e)
			}
		})
	}
}

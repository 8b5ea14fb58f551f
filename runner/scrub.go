package runner

import (
	"bytes"
	"encoding/json"
	"net/url"
	"slices"
	"strings"

	"github.com/mcpwatch/mcpwatch/config"
	"github.com/mcpwatch/mcpwatch/probe"
)

// minSecretLen is the shortest env or header value scrubbed from output.
// Shorter values ("read", "1", "info") are settings rather than secrets, and
// replacing them would mangle every line that happens to contain them.
const minSecretLen = 8

// scrubber removes a server's secret values from what the server or the
// probe said: a server may echo its token on stderr, in an error or in a
// tool description, and nothing mcpwatch prints may carry it.
type scrubber struct {
	secrets []string // longest first, so a token inside a header value goes with it
}

// newScrubber collects the secrets of a target: its expanded env and header
// values, the credential after the scheme word of a header ("Bearer
// <token>"), and what ${...} references put into its arguments and URL
// (written is the target before expansion; only its Args and URL are read).
// A key in a URL path ("https://host/${KEY}/sse") shows in every error that
// names the URL; a referenced argument may be echoed on stderr.
func newScrubber(written, expanded probe.Target) scrubber {
	var secrets []string
	add := func(v string) {
		if len(v) >= minSecretLen {
			secrets = append(secrets, v)
		}
	}
	for _, v := range expanded.Env {
		add(v)
	}
	for _, v := range expanded.Headers {
		add(v)
		if _, cred, ok := strings.Cut(strings.TrimSpace(v), " "); ok {
			add(strings.TrimSpace(cred))
		}
	}
	if len(written.Args) == len(expanded.Args) {
		for i, a := range written.Args {
			for _, v := range referencedValues(a, expanded.Args[i]) {
				add(v)
			}
		}
	}
	for _, v := range referencedValues(written.URL, expanded.URL) {
		// The host is where the probe went, which a person needs to read in
		// an error; a variable that picks it is not a secret.
		if !isHostOf(expanded.URL, v) {
			add(v)
		}
	}
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	return scrubber{secrets: slices.Compact(secrets)}
}

// referencedValues returns what the ${...} references of written became in
// expanded: the text between the literal ends the two share. Both are cut
// at slashes first when they have as many pieces, so the key in
// "https://${HOST}/${KEY}/sse" comes out apart from the host.
func referencedValues(written, expanded string) []string {
	if !strings.Contains(written, "${") {
		return nil
	}
	wp, ep := strings.Split(written, "/"), strings.Split(expanded, "/")
	if len(wp) != len(ep) {
		wp, ep = []string{written}, []string{expanded}
	}
	var out []string
	for i, w := range wp {
		if !strings.Contains(w, "${") {
			continue
		}
		e := ep[i]
		// The shared ends stop at the first reference and after the last.
		pre := min(commonPrefix(w, e), strings.Index(w, "${"))
		suf := min(commonSuffix(w[pre:], e[pre:]), len(w)-1-strings.LastIndexByte(w, '}'))
		if v := e[pre : len(e)-suf]; v != "" {
			out = append(out, v)
		}
	}
	return out
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func commonSuffix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[len(a)-1-n] == b[len(b)-1-n] {
		n++
	}
	return n
}

// isHostOf reports whether v is the host of the URL raw, with or without
// its port.
func isHostOf(raw, v string) bool {
	u, err := url.Parse(raw)
	return err == nil && u.Host != "" && (v == u.Host || v == u.Hostname())
}

func (s scrubber) str(v string) string {
	for _, secret := range s.secrets {
		if strings.Contains(v, secret) {
			v = strings.ReplaceAll(v, secret, config.Redacted)
		}
	}
	return v
}

// raw scrubs a JSON value. A secret is replaced only where it appears as
// written, and only if it needs no JSON escaping, so the result stays valid
// JSON.
func (s scrubber) raw(v json.RawMessage) json.RawMessage {
	out := v
	for _, secret := range s.secrets {
		if !jsonSafe(secret) || !bytes.Contains(out, []byte(secret)) {
			continue
		}
		out = bytes.ReplaceAll(out, []byte(secret), []byte(config.Redacted))
	}
	return out
}

func jsonSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x7f {
			return false
		}
	}
	return true
}

// result returns a scrubbed copy of r; r itself is left alone.
func (s scrubber) result(r *probe.Result) *probe.Result {
	c := *r
	if len(s.secrets) == 0 {
		return &c
	}
	c.Error = s.str(c.Error)
	c.ServerName = s.str(c.ServerName)
	c.ServerVersion = s.str(c.ServerVersion)
	c.StderrTail = s.str(c.StderrTail)
	if c.Challenge != nil {
		ch := *c.Challenge
		ch.Description = s.str(ch.Description)
		ch.Scope = s.str(ch.Scope)
		ch.ResourceMetadata = s.str(ch.ResourceMetadata)
		ch.Error = s.str(ch.Error)
		c.Challenge = &ch
	}
	if c.Warnings != nil {
		c.Warnings = make([]string, len(r.Warnings))
		for i, w := range r.Warnings {
			c.Warnings[i] = s.str(w)
		}
	}
	c.Tools = make([]probe.Tool, len(r.Tools))
	for i, t := range r.Tools {
		t.Name = s.str(t.Name)
		t.Title = s.str(t.Title)
		t.Description = s.str(t.Description)
		t.InputSchema = s.raw(t.InputSchema)
		t.OutputSchema = s.raw(t.OutputSchema)
		t.Annotations = s.raw(t.Annotations)
		c.Tools[i] = t
	}
	if c.Transcript != nil {
		c.Transcript = make([]probe.TranscriptEntry, len(r.Transcript))
		for i, e := range r.Transcript {
			e.Message = s.raw(e.Message)
			e.Note = s.str(e.Note)
			c.Transcript[i] = e
		}
	}
	return &c
}

// Scrub returns a copy of r with the secret values of the target (see
// newScrubber) replaced by config.Redacted, for a caller that ran the probe
// itself (mcpwatch probe); r is left alone. written is the target before
// ${...} expansion, expanded the one probed.
func Scrub(written, expanded probe.Target, r *probe.Result) *probe.Result {
	return newScrubber(written, expanded).result(r)
}

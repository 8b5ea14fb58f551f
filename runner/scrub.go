package runner

import (
	"bytes"
	"encoding/json"
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

// newScrubber collects the expanded env and header values of a target, and
// the credential after the scheme word of a header ("Bearer <token>").
func newScrubber(t probe.Target) scrubber {
	var secrets []string
	add := func(v string) {
		if len(v) >= minSecretLen {
			secrets = append(secrets, v)
		}
	}
	for _, v := range t.Env {
		add(v)
	}
	for _, v := range t.Headers {
		add(v)
		if _, cred, ok := strings.Cut(strings.TrimSpace(v), " "); ok {
			add(strings.TrimSpace(cred))
		}
	}
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	return scrubber{secrets: slices.Compact(secrets)}
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

// Scrub returns a copy of r with t's secret values (its expanded env and
// header values) replaced by config.Redacted, for a caller that ran the
// probe itself (mcpwatch probe); r is left alone.
func Scrub(t probe.Target, r *probe.Result) *probe.Result {
	return newScrubber(t).result(r)
}

package probe

import (
	"net/http"
	"strings"

	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
)

// maxChallengeField bounds each parsed challenge field: they end up in
// results and status pages, and the server chooses them.
const maxChallengeField = 512

// parseChallenge reads the WWW-Authenticate headers of a 401 or 403 and
// returns the Bearer challenge, or the first challenge when none is Bearer,
// or nil when there is none. A header may hold several challenges
// (`Basic realm="x", Bearer error="invalid_token"`), and a response may
// carry several headers.
func parseChallenge(h http.Header) *Challenge {
	var first *Challenge
	for _, value := range h.Values("WWW-Authenticate") {
		for _, c := range parseChallenges(value) {
			ch := c.challenge()
			if strings.EqualFold(c.scheme, "Bearer") {
				return ch
			}
			if first == nil {
				first = ch
			}
		}
	}
	return first
}

// rawChallenge is one challenge of a WWW-Authenticate value: its scheme and
// auth-params (names lower-cased, the first of a repeated name kept).
type rawChallenge struct {
	scheme string
	params map[string]string
}

func (c rawChallenge) challenge() *Challenge {
	return &Challenge{
		Scheme:           sanitize.Truncate(c.scheme, maxChallengeField),
		Error:            sanitize.Truncate(c.params["error"], maxChallengeField),
		Scope:            sanitize.Truncate(c.params["scope"], maxChallengeField),
		ResourceMetadata: sanitize.Truncate(c.params["resource_metadata"], maxChallengeField),
		Description:      sanitize.Truncate(c.params["error_description"], maxChallengeField),
	}
}

// parseChallenges splits one WWW-Authenticate value into challenges, after
// RFC 9110 section 11.6.1:
//
//	challenge  = auth-scheme [ 1*SP ( token68 / #auth-param ) ]
//	auth-param = token BWS "=" BWS ( token / quoted-string )
//
// It is lenient: a stray character is skipped rather than failing the
// whole header, since the challenge only explains a failure.
func parseChallenges(value string) []rawChallenge {
	p := &challengeParser{s: value}
	var out []rawChallenge
	for {
		p.skip(" \t,")
		if p.done() {
			return out
		}
		scheme := p.token()
		if scheme == "" {
			p.i++ // not a token character: skip it
			continue
		}
		c := rawChallenge{scheme: scheme, params: map[string]string{}}
		p.skip(" \t")
		if !p.token68() {
			p.params(c.params)
		}
		out = append(out, c)
	}
}

type challengeParser struct {
	s string
	i int
}

func (p *challengeParser) done() bool { return p.i >= len(p.s) }

func (p *challengeParser) peek() byte {
	if p.done() {
		return 0
	}
	return p.s[p.i]
}

func (p *challengeParser) skip(set string) {
	for !p.done() && strings.IndexByte(set, p.s[p.i]) >= 0 {
		p.i++
	}
}

// params reads auth-params until the header ends or a token that is not
// followed by "=" starts the next challenge.
func (p *challengeParser) params(into map[string]string) {
	for {
		p.skip(" \t,")
		start := p.i
		name := p.token()
		if name == "" {
			return
		}
		p.skip(" \t")
		if p.peek() != '=' {
			p.i = start // the next challenge's scheme
			return
		}
		p.i++
		p.skip(" \t")
		var value string
		if p.peek() == '"' {
			value = p.quoted()
		} else {
			value = p.token()
		}
		key := strings.ToLower(name)
		if _, seen := into[key]; !seen {
			into[key] = value
		}
	}
}

// token68 consumes a token68 credential (`Bearer abc+/==`) when one stands
// right after the scheme and ends the challenge; it reports whether it did.
func (p *challengeParser) token68() bool {
	j := p.i
	for j < len(p.s) && isToken68Char(p.s[j]) {
		j++
	}
	if j == p.i {
		return false
	}
	for j < len(p.s) && p.s[j] == '=' {
		j++
	}
	k := j
	for k < len(p.s) && (p.s[k] == ' ' || p.s[k] == '\t') {
		k++
	}
	if k < len(p.s) && p.s[k] != ',' {
		return false // `name=value`: auth-params follow
	}
	p.i = k
	return true
}

func (p *challengeParser) token() string {
	start := p.i
	for !p.done() && isTokenChar(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

// quoted reads a quoted-string, undoing backslash escapes. An unterminated
// string runs to the end of the header.
func (p *challengeParser) quoted() string {
	p.i++ // opening quote
	var b strings.Builder
	for !p.done() {
		c := p.s[p.i]
		p.i++
		switch {
		case c == '"':
			return b.String()
		case c == '\\' && !p.done():
			b.WriteByte(p.s[p.i])
			p.i++
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// isTokenChar reports a tchar of RFC 9110.
func isTokenChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func isToken68Char(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("-._~+/", c) >= 0
}

package credential

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
	"github.com/mcpwatch/mcpwatch/internal/util/secret"
)

// word is one word of a text, lower case, with where it stands in it.
type word struct {
	w          string
	start, end int  // bytes of the original text
	brk        bool // a sentence ends before it ('.', '!', '?', a line break)
}

// words splits s into its lower-case words as a credential's name is
// split (secret.Words), so that codes read as words in every spelling
// ("invalid_auth", "InvalidClientTokenId", "JWSInvalidSignature",
// "SUBSCRIPTION_TOKEN_INVALID", "re-authorize" all give their words), and
// marks each word that starts a sentence.
func words(s string) []word {
	out := make([]word, 0, len(s)/5)
	end := 0
	for start, stop := range secret.Words(s) {
		out = append(out, word{w: strings.ToLower(s[start:stop]), start: start, end: stop, brk: sentenceEnds(s[end:start])})
		end = stop
	}
	return out
}

// sentenceEnds reports whether the text between two words ends a
// sentence: a '!', a '?', a line break, or a '.' that does not stand
// right before the next word ("api.example.com" and "1.1" end none).
func sentenceEnds(between string) bool {
	for i := 0; i < len(between); i++ {
		switch between[i] {
		case '!', '?', '\n':
			return true
		case '.':
			if i+1 < len(between) {
				return true
			}
		}
	}
	return false
}

// phrase is a run of words, matched at a word.
type phrase []string

func p(s string) phrase { return strings.Fields(s) }

// at reports whether ph starts at ws[i], within one sentence.
func (ph phrase) at(ws []word, i int) bool {
	if i+len(ph) > len(ws) {
		return false
	}
	for k, w := range ph {
		if ws[i+k].w != w || k > 0 && ws[i+k].brk {
			return false
		}
	}
	return true
}

// phrases are phrases by their first word: each word of a text is looked
// up once, not compared with every phrase.
type phrases map[string][]phrase

func set(phs ...phrase) phrases {
	out := phrases{}
	for _, ph := range phs {
		out[ph[0]] = append(out[ph[0]], ph)
	}
	return out
}

// find is the length in words of the first phrase of phs starting at
// ws[i], or 0.
func find(phs phrases, ws []word, i int) int {
	for _, ph := range phs[ws[i].w] {
		if ph.at(ws, i) {
			return len(ph)
		}
	}
	return 0
}

// The guards, each a list of phrases. A guard wins over every mark of a
// rejection: an answer that says the network failed, or that it is about
// a rate, a path, an input or a thing not found, is not about the
// credential, whatever else it says.
var (
	// network are the words of a server that could not reach its service:
	// Node's and Go's errors, HTTP clients', gateways' and TLS's.
	network = set(
		p("econnrefused"), p("econnreset"), p("enotfound"), p("eai again"), p("etimedout"), p("esockettimedout"),
		p("ehostunreach"), p("enetunreach"), p("econnaborted"), p("epipe"), p("getaddrinfo"),
		p("fetch failed"), p("failed to fetch"), p("socket hang up"), p("connection refused"), p("connection reset"),
		p("connection timed out"), p("connect timeout"), p("connection closed"), p("network error"), p("network is unreachable"),
		p("no such host"), p("dial tcp"), p("i o timeout"), p("could not resolve host"), p("name resolution"),
		p("host unreachable"), p("no route to host"), p("timed out"), p("timeout of"), p("read timeout"),
		p("request timeout"), p("gateway timeout"), p("bad gateway"), p("service unavailable"), p("temporarily unavailable"),
		p("upstream connect error"), p("tls handshake"), p("ssl handshake"), p("x509"), p("certificate verify failed"),
		p("unable to verify the first certificate"), p("self signed certificate"), p("cert has expired"),
		p("certificate has expired"), p("unable to get local issuer certificate"), p("und err connect timeout"),
		p("und err socket"), p("err network"), p("unable to connect"), p("could not connect"), p("cannot connect"),
		p("failed to connect"), p("is unreachable"), p("under maintenance"),
		// "Request failed to reach api.example.com" and its kin, as API
		// clients word a request that never got an answer.
		p("failed to reach"), p("unable to reach"), p("could not reach"), p("couldn t reach"), p("cannot reach"),
		p("can t reach"), p("not reachable"), p("enetdown"), p("ehostdown"),
	)
	// rate are the words of a rate limit or a quota (KindRateLimited).
	rate = set(
		p("rate limit"), p("rate limited"), p("ratelimit"), p("ratelimited"), p("rate limit exceeded"), p("too many requests"),
		p("quota"), p("throttled"), p("throttling"), p("slow down"), p("retry after"), p("requests per"),
	)
	// model are the words of the language-model sense of "token".
	model = set(
		p("max tokens"), p("maximum tokens"), p("token limit"), p("tokens limit"), p("context length"), p("context window"),
		p("too many tokens"), p("token count"), p("tokens per"), p("prompt tokens"), p("completion tokens"),
	)
	// notFound, validation and onPath are about a thing other than the
	// credential, unless one is named right beside them ("token not
	// found" is the credential's).
	notFound   = set(p("not found"), p("notfound"), p("no such"), p("does not exist"), p("doesn t exist"), p("enoent"))
	validation = set(
		p("validation error"), p("validation failed"), p("failed validation"), p("invalid input"), p("invalid argument"),
		p("invalid arguments"), p("invalid params"), p("invalid parameter"), p("invalid parameters"), p("must be a"),
		p("must be one of"), p("expected string"), p("expected number"), p("required property"), p("required parameter"),
		p("unprocessable input"), p("zod"),
	)
	onPath = set(
		p("outside allowed directories"), p("outside allowed directory"), p("outside the allowed"), p("eacces"), p("eperm"),
		p("permission denied open"), p("read only file system"), p("path outside"), p("not in allowed"),
	)
)

// The grammar of a rejection.
var (
	// marks say it alone.
	marks = set(
		p("unauthorized"), p("unauthorised"), p("unauthenticated"), p("not authenticated"), p("not authorized"),
		p("not authorised"), p("reauthorize"), p("re authorize"), p("reauthorise"), p("re authorise"),
		p("reauthenticate"), p("re authenticate"), p("reauth"), p("re auth"), p("bad credentials"), p("not authed"),
		p("access denied"), p("not accessible by integration"), p("insufficient scope"), p("insufficient scopes"),
		p("missing scope"), p("missing scopes"), p("invalid scope"), p("account inactive"), p("invalid grant"),
		p("invalid client"), p("log in again"), p("sign in again"), p("login required"), p("requires authentication"),
		p("authentication required"), p("authorization required"), p("invalid credentials"), p("invalid credential"),
		p("could not authenticate"), p("couldn t authenticate"), p("unable to authenticate"), p("cannot authenticate"),
		p("can t authenticate"), p("failed to authenticate"), p("incorrect credentials"), p("wrong credentials"), p("expired credentials"), p("credentials expired"),
	)
	// auth nouns pair with every rejection word, weak ones too.
	authNouns = []string{"authentication", "authorization", "authorisation", "authentification", "auth", "credential",
		"credentials", "creds", "login", "signin"}
	// secret nouns pair with the strong rejection words. "key" counts
	// only qualified ("api key", "secret key"), "token" not in its
	// language-model or paging senses.
	secretNouns   = []string{"token", "apikey", "secret", "password", "passphrase", "signature", "jwt", "bearer", "pat"}
	keyQualifiers = []string{"api", "access", "secret", "subscription", "license", "licence", "private", "client",
		"developer", "app", "application", "account", "auth", "publishable", "restricted", "service", "user", "master", "admin"}
	notTokens  = []string{"page", "cursor", "continuation", "next", "sync", "csrf", "idempotency", "max", "maximum", "input", "output", "prompt", "completion"}
	tokenAfter = []string{"limit", "limits", "count", "usage", "budget", "window", "id"}
	// sessions count only as expired or revoked: an MCP session that is
	// invalid or missing is the transport's, not the credential's.
	sessionWords = []string{"expired", "revoked", "invalidated"}
	// strong rejection words pair with every noun.
	strong = set(
		p("invalid"), p("expired"), p("expire"), p("revoked"), p("malformed"), p("rejected"), p("incorrect"),
		p("unrecognized"), p("unrecognised"), p("wrong"), p("bad"), p("disabled"), p("deactivated"), p("inactive"),
		p("suspended"), p("missing"), p("required"), p("requires"), p("unknown"), p("mismatch"), p("bogus"), p("unverified"),
		p("invalidated"), p("not valid"), p("no longer valid"), p("not recognized"), p("not recognised"), p("not accepted"),
		p("not active"), p("does not match"), p("doesn t match"), p("did not match"), p("could not be verified"),
		p("could not be validated"), p("could not be authenticated"), p("verification failed"), p("validation failed"),
		p("failed to verify"), p("failed to validate"), p("failed to authenticate"), p("not provided"), p("not supplied"),
		p("no valid"), p("is empty"), p("denied"), p("failed"), p("failure"),
	)
	// weak ones pair with the auth nouns only.
	weak = set(p("error"), p("exception"), p("fail"), p("problem"), p("issue"))
)

// window is how many words apart a noun and its rejection word may be.
const window = 5

// read reads one text: its guards, then its JSON documents, its HTTP
// statuses, its marks and its words.
func read(text string) Outcome {
	if strings.TrimSpace(text) == "" {
		return Outcome{}
	}
	ws := words(text)
	for i := range ws {
		if k := find(network, ws, i); k > 0 && !answered(ws, i+k) {
			return hit(KindUnreachable, text, ws, i, k, "a network failure")
		}
		if k := statusAt(ws, i); k >= 502 && k <= 504 {
			o := hit(KindUnreachable, text, ws, i, 1, "an upstream status in the text")
			o.Marker = "status " + o.Marker
			return o
		}
	}
	limited, limitedLen := -1, 0
	for i := range ws {
		if find(model, ws, i) > 0 {
			return Outcome{}
		}
		if k := find(rate, ws, i); k > 0 && limited < 0 {
			limited, limitedLen = i, k
		}
		if s := statusAt(ws, i); s == 429 && limited < 0 {
			limited, limitedLen = i, 1
		}
		for _, g := range []phrases{notFound, validation, onPath} {
			if k := find(g, ws, i); k > 0 && !nounNear(ws, i, i+k, 2) {
				return Outcome{}
			}
		}
		if s := statusAt(ws, i); s == 404 && !nounNear(ws, i, i+1, 2) {
			return Outcome{}
		}
	}
	if limited >= 0 {
		// A rate limit or a quota: never a rejection, whatever else the
		// answer says; the caller slows down (see RateLimit).
		o := hit(KindRateLimited, text, ws, limited, limitedLen, "a rate limit or a quota")
		if statusAt(ws, limited) == 429 {
			o.Marker = "status " + o.Marker
		}
		o.RetryAfter, o.ResetAt = retryAfter(text)
		return o
	}
	if o := readDocuments(text); o.Kind != KindNone {
		return o
	}
	for i := range ws {
		if s := statusAt(ws, i); s == 401 || s == 403 {
			o := hit(KindRejected, text, ws, i, 1, "an HTTP status in the text")
			o.Marker = "status " + o.Marker
			return o
		}
	}
	return readWords(text, ws)
}

// readWords reads the marks and the grammar of words.
func readWords(text string, ws []word) Outcome {
	o, _, _ := readWordsAt(text, ws)
	return o
}

// readWordsAt is readWords, with where in text the marker stands.
func readWordsAt(text string, ws []word) (Outcome, int, int) {
	for i := range ws {
		if k := find(marks, ws, i); k > 0 {
			return hit(KindRejected, text, ws, i, k, "a mark of a rejected credential"), ws[i].start, ws[i+k-1].end
		}
	}
	for i := range ws {
		class := nounAt(ws, i)
		if class == 0 {
			continue
		}
		lo, hi := i-window, i+window
		for j := max(lo, 0); j <= hi && j < len(ws); j++ {
			if j == i || crossesSentence(ws, i, j) {
				continue
			}
			n := 0
			if k := find(strong, ws, j); k > 0 {
				n = k
				if class == nounSession && !slices.Contains(sessionWords, ws[j].w) {
					n = 0
				}
			} else if k := find(weak, ws, j); k > 0 && class == nounAuth {
				n = k
			}
			if n == 0 {
				continue
			}
			a, b := min(i, j), max(i+1, j+n)
			return hit(KindRejected, text, ws, a, b-a, "a credential with a rejection word"), ws[a].start, ws[b-1].end
		}
	}
	return Outcome{}, 0, 0
}

const (
	nounAuth = 1 + iota
	nounSecret
	nounSession
)

// nounAt says whether ws[i] is a credential noun, and of which class.
func nounAt(ws []word, i int) int {
	w := ws[i].w
	prev := func() string {
		if i == 0 || ws[i].brk {
			return ""
		}
		return ws[i-1].w
	}
	next := func() string {
		if i+1 >= len(ws) || ws[i+1].brk {
			return ""
		}
		return ws[i+1].w
	}
	switch {
	case slices.Contains(authNouns, w):
		return nounAuth
	case w == "token":
		if slices.Contains(notTokens, prev()) || slices.Contains(tokenAfter, next()) {
			return 0
		}
		return nounSecret
	case w == "key":
		if slices.Contains(keyQualifiers, prev()) {
			return nounSecret
		}
		return 0
	case w == "session":
		if next() == "id" {
			return 0
		}
		return nounSession
	case slices.Contains(secretNouns, w):
		return nounSecret
	}
	return 0
}

// nounNear reports whether a credential noun stands within n words of
// ws[from:to].
func nounNear(ws []word, from, to, n int) bool {
	for j := max(from-n, 0); j < min(to+n, len(ws)); j++ {
		if nounAt(ws, j) != 0 {
			return true
		}
	}
	return false
}

func crossesSentence(ws []word, i, j int) bool {
	a, b := min(i, j), max(i, j)
	for k := a + 1; k <= b; k++ {
		if ws[k].brk {
			return true
		}
	}
	return false
}

// answered: an HTTP status follows within a few words of the same
// sentence, from ws[j] on ("Fetch failed with status 404", as
// figma-developer-mcp words any answer that is not a success): the
// request was answered, and the status, not the network, says what
// happened.
func answered(ws []word, j int) bool {
	if j >= len(ws) || ws[j].brk {
		return false
	}
	for k := j; k+1 < len(ws) && k < j+4; k++ {
		if ws[k+1].brk {
			return false
		}
		if slices.Contains([]string{"status", "http", "code", "statuscode"}, ws[k].w) && statusAt(ws, k+1) != 0 {
			return true
		}
	}
	return false
}

// statusWords stand beside a number that is an HTTP status.
var (
	statusBefore = []string{"http", "status", "code", "error", "statuscode", "returned", "response", "got", "with", "e", "err"}
	statusAfter  = []string{"unauthorized", "unauthorised", "forbidden", "error", "unauthenticated", "not", "too",
		"bad", "service", "gateway", "unprocessable"}
)

// statusAt is the HTTP status ws[i] is, when it is a three-digit number
// that stands as one ("HTTP 401", "status code 403", "401 Unauthorized",
// "Error 404"); 0 otherwise.
func statusAt(ws []word, i int) int {
	w := ws[i].w
	if len(w) != 3 || w[0] < '1' || w[0] > '5' || w[1] < '0' || w[1] > '9' || w[2] < '0' || w[2] > '9' {
		return 0
	}
	n := int(w[0]-'0')*100 + int(w[1]-'0')*10 + int(w[2]-'0')
	for k := 1; k <= 3 && i-k >= 0; k++ {
		if slices.Contains(statusBefore, ws[i-k].w) {
			return n
		}
		if ws[i-k+1].brk {
			break
		}
	}
	if i+1 < len(ws) && !ws[i+1].brk && slices.Contains(statusAfter, ws[i+1].w) {
		return n
	}
	return 0
}

// hit is an outcome read at ws[i:i+n] of text.
func hit(kind Kind, text string, ws []word, i, n int, source string) Outcome {
	var m []string
	for _, w := range ws[i : i+n] {
		m = append(m, w.w)
	}
	marker := strings.Join(m, " ")
	if n > 2 {
		marker = m[0] + " … " + m[len(m)-1]
	}
	return Outcome{Kind: kind, Marker: marker, Source: source, Quote: quoteAround(text, ws[i].start, ws[i+n-1].end)}
}

// quote puts s on one line, at most maxQuoteBytes with its "…", cut at a
// rune boundary: sanitize's one rule for cutting text to a line.
func quote(s string) string {
	return sanitize.Line(s, maxQuoteBytes-len(sanitize.Ellipsis))
}

// quoteAround is quote, but when the marker (s[start:end]) would be cut
// off it keeps the part of s around it instead of its start: the quote
// must show why.
func quoteAround(s string, start, end int) string {
	if end <= maxQuoteBytes-len("…") {
		return quote(s[:min(len(s), 4*maxQuoteBytes)])
	}
	from := runeStart(s, max(0, start-maxQuoteBytes/3))
	to := runeStart(s, min(len(s), from+2*maxQuoteBytes))
	one := strings.Join(strings.Fields(s[from:to]), " ")
	if len(one) > maxQuoteBytes-2*len("…") {
		one = one[:runeStart(one, maxQuoteBytes-2*len("…"))]
	}
	out := "…" + one
	if to < len(s) || len(one) < len(s[from:to]) {
		out += "…"
	}
	return out
}

// runeStart moves i back to the start of the rune it falls in.
func runeStart(s string, i int) int {
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

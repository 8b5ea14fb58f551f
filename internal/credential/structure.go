package credential

import (
	"encoding/json"
	"strconv"
	"strings"
)

// maxDocument is the longest success-result document read for an error's
// shape: an error document is short; a longer one is data.
const maxDocument = maxRead

// maxDocuments is how many JSON documents of one text are tried.
const maxDocuments = 3

// maxNodes bounds the walk of one document.
const maxNodes = 256

// looksLikeDocument: a text that is a JSON object or array.
func looksLikeDocument(s string) bool {
	s = strings.TrimSpace(s)
	return s != "" && (s[0] == '{' || s[0] == '[')
}

// errorShapedDocument reports whether a success result's text is a short
// JSON document shaped as an error: Notion answers {"object":"error",
// "status":401,...} as a normal result, Slack {"ok":false,"error":...}.
// Data is never read.
func errorShapedDocument(s string) bool {
	if len(s) > maxDocument || !looksLikeDocument(s) {
		return false
	}
	var doc any
	if json.Unmarshal([]byte(strings.TrimSpace(s)), &doc) != nil {
		return false
	}
	return errorShaped(doc)
}

// errorShaped: a document whose top level says it is an error.
func errorShaped(doc any) bool {
	m, ok := doc.(map[string]any)
	if !ok {
		return false
	}
	for k, v := range m {
		switch norm(k) {
		case "error", "errors", "fault", "errormessage", "errorcode":
			if present(v) {
				return true
			}
		case "ok", "success", "succeeded":
			if b, ok := v.(bool); ok && !b {
				return true
			}
		case "object", "type", "kind":
			if s, ok := v.(string); ok && strings.Contains(strings.ToLower(s), "error") {
				return true
			}
		case "status", "statuscode", "httpstatus", "httpstatuscode", "code", "httpcode":
			if n, ok := number(v); ok && n >= 400 && n <= 599 {
				return true
			}
		}
	}
	return false
}

// present: a member that is there (not null, false, "" or empty).
func present(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	case string:
		return v != ""
	case []any:
		return len(v) > 0
	case map[string]any:
		return len(v) > 0
	}
	return true
}

// readDocuments reads the JSON documents of an error-shaped text (the
// whole text, or one that follows a prefix: "Brave API error: 422 ...
// {...}"): their status-like members first, then their codes and
// messages as words.
func readDocuments(text string) Outcome {
	from := 0
	for range maxDocuments {
		i := strings.IndexAny(text[from:], "{[")
		if i < 0 {
			break
		}
		start := from + i
		dec := json.NewDecoder(strings.NewReader(text[start:]))
		var doc any
		if dec.Decode(&doc) != nil {
			from = start + 1
			continue
		}
		if o := readDocument(doc, text); o.Kind != KindNone {
			return o
		}
		from = start + int(dec.InputOffset())
	}
	return Outcome{}
}

// readDocument walks one document: a status-like member of 401 or 403, or
// a code, type or message member in a rejection's words, under any key
// (GraphQL's errors[].extensions.code, Stripe's error.type,
// Google's error.status).
func readDocument(doc any, text string) Outcome {
	var codes, messages []string
	status, nodes := 0, 0
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		nodes++
		if nodes > maxNodes || depth > 6 {
			return
		}
		switch v := v.(type) {
		case map[string]any:
			for k, c := range v {
				switch norm(k) {
				case "status", "statuscode", "httpstatus", "httpstatuscode", "code", "httpcode", "errorcode", "statusnumber":
					if n, ok := number(c); ok && (n == 401 || n == 403) && status == 0 {
						status = n
					}
				}
				if s, ok := c.(string); ok {
					switch norm(k) {
					case "code", "type", "error", "errorcode", "errortype", "status", "reason", "kind", "name", "title", "subcode", "object":
						codes = append(codes, s)
					case "message", "msg", "detail", "details", "description", "errordescription", "errormessage", "hint", "errorsummary":
						messages = append(messages, s)
					}
					continue
				}
				walk(c, depth+1)
			}
		case []any:
			for _, c := range v {
				// A list of strings under an error is its codes
				// (Datadog's {"errors":["Forbidden"]}) or messages.
				if s, ok := c.(string); ok {
					if len(s) <= 40 && !strings.Contains(s, " ") {
						codes = append(codes, s)
					} else {
						messages = append(messages, s)
					}
					continue
				}
				walk(c, depth+1)
			}
		}
	}
	walk(doc, 0)
	all := strings.Join(append(append([]string{}, codes...), messages...), ". ")
	ws := words(all)
	if status != 0 {
		// The message says which: a rate limit or a path is no rejection
		// even under 403; a scope or a token is.
		for i := range ws {
			if find(rate, ws, i) > 0 || find(onPath, ws, i) > 0 {
				return Outcome{}
			}
		}
		marker := "status " + strconv.Itoa(status)
		return Outcome{Kind: KindRejected, Marker: marker, Source: "a status member of a JSON document", Quote: quote(text)}
	}
	// forbidden names the condition as a code (HTTP's 403), never as a
	// word of a message.
	for _, c := range codes {
		if n := norm(c); n == "forbidden" || n == "permissiondenied" && len(messages) == 0 {
			return Outcome{Kind: KindRejected, Marker: strings.ToLower(c), Source: "a code of a JSON document", Quote: quote(text)}
		}
	}
	if o, start, end := readWordsAt(all, ws); o.Kind != KindNone {
		o.Source = "a JSON document: " + o.Source
		// Quote the document as the server sent it, around the member.
		if i := strings.Index(text, all[start:end]); i >= 0 {
			o.Quote = quoteAround(text, i, i+end-start)
		}
		return o
	}
	return Outcome{}
}

// norm is a member name or code without case, '_' or '-'.
func norm(s string) string {
	s = strings.ToLower(s)
	if strings.ContainsAny(s, "_- ") {
		s = strings.NewReplacer("_", "", "-", "", " ", "").Replace(s)
	}
	return s
}

// number is a JSON number, or a string of digits.
func number(v any) (int, bool) {
	switch v := v.(type) {
	case float64:
		return int(v), v == float64(int(v))
	case string:
		n, err := strconv.Atoi(strings.TrimSpace(v))
		return n, err == nil
	}
	return 0, false
}

package contracts

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/probe"
)

// fakeCaller answers each call with the next of its results.
type fakeCaller struct {
	results []*probe.CallResult
	calls   []string
}

func (f *fakeCaller) Call(ctx context.Context, tool string, args json.RawMessage) *probe.CallResult {
	f.calls = append(f.calls, tool+" "+string(args))
	if ctx.Err() != nil {
		return &probe.CallResult{Tool: tool, Reason: probe.ReasonTimeout, Error: "tools/call: no answer within the deadline"}
	}
	r := f.results[0]
	if len(f.results) > 1 {
		f.results = f.results[1:]
	}
	c := *r
	c.Tool = tool
	return &c
}

func text(s string) *probe.CallResult {
	b, _ := json.Marshal([]map[string]string{{"type": "text", "text": s}})
	return &probe.CallResult{Answered: true, Content: b}
}

func isError(s string) *probe.CallResult {
	r := text(s)
	r.IsError = true
	return r
}

func structured(doc string) *probe.CallResult {
	r := text(doc)
	r.StructuredContent = json.RawMessage(doc)
	return r
}

var (
	rpcError    = &probe.CallResult{Reason: probe.ReasonRPCError, RPCCode: -32603, RPCMessage: "Internal error: the report store is locked", Error: "tools/call: JSON-RPC error -32603: Internal error: the report store is locked"}
	invalidArgs = &probe.CallResult{Reason: probe.ReasonRPCError, RPCCode: -32602, RPCMessage: "Unknown tool: x"}
	http401     = &probe.CallResult{Reason: probe.ReasonUnauthorized, HTTPStatus: 401, Error: "tools/call: HTTP 401 Unauthorized"}
	timeout     = &probe.CallResult{Reason: probe.ReasonTimeout, Error: "tools/call: no answer within the deadline of 10s"}
)

var readOnly = []probe.Tool{{Name: "t", Annotations: json.RawMessage(`{"readOnlyHint":true}`)}}

func parse(t testing.TB, contract string) Contract {
	t.Helper()
	f, err := ParseFile([]byte(`{"tools":{"t":` + contract + `}}`))
	if err != nil {
		t.Fatalf("parse %s: %v", contract, err)
	}
	return f.Tools["t"]
}

func run(t *testing.T, contract string, results ...*probe.CallResult) Outcome {
	t.Helper()
	c := parse(t, contract)
	out := Run(context.Background(), &fakeCaller{results: results}, readOnly, []Contract{c}, Options{Retries: true,
		Sleep: func(context.Context, time.Duration) error { return nil }})
	return out[0]
}

// Each assertion, passing and failing, with the reason a failure gets.
func TestAssertions(t *testing.T) {
	cases := []struct {
		name     string
		contract string
		result   *probe.CallResult
		pass     bool
		reason   probe.Reason
		message  string // in the failure message
	}{
		{"default status pass, success", `{}`, text("ok"), true, "", ""},
		{"status pass, isError", `{}`, isError("upstream 500 Internal Server Error"), false, ReasonIsError, "status: expected success, got isError: upstream 500"},
		{"a rejected credential comes first, in the server's words", `{}`, &probe.CallResult{Reason: probe.ReasonRPCError, RPCCode: -32603, RPCMessage: "Authentication Failed: Bad credentials"},
			false, probe.ReasonCredentialRejected, "credential rejected: Authentication Failed: Bad credentials"},
		{"a rejected credential in a success result's document", `{}`, text(`{"ok":false,"error":"invalid_auth"}`),
			false, probe.ReasonCredentialRejected, `credential rejected: {"ok":false,"error":"invalid_auth"}`},
		{"a rejected credential in a short plain-text success", `{}`, text("Error: Bad credentials"), false, probe.ReasonCredentialRejected, "credential rejected: Error: Bad credentials"},
		{"a rejected credential is no refusal a denied write expects", `{"expect":{"status":"fail"}}`, isError("Error: token has expired"), false, probe.ReasonCredentialRejected, "token has expired"},
		{"a short plain-text result of a server that could not reach its service", `{}`, text("Error searching libraries: TypeError: fetch failed"),
			false, probe.ReasonUpstreamUnreachable, "upstream unreachable: Error searching libraries: TypeError: fetch failed"},
		{"an unreachable upstream is no refusal a contract expects", `{"expect":{"status":"fail"}}`, isError("Error: connect ECONNREFUSED 10.0.0.7:443"),
			false, probe.ReasonUpstreamUnreachable, "ECONNREFUSED"},
		{"an unreachable upstream is never a rejected credential", `{}`, isError("Authentication failed - check your Slack tokens: dial tcp: lookup slack.com: no such host"),
			false, probe.ReasonUpstreamUnreachable, "no such host"},
		{"errorCode 401 expects the credential's refusal", `{"expect":{"errorCode":401}}`, isError("Error: Bad credentials"), true, "", ""},
		{"status pass, JSON-RPC error", `{"expect":{"status":"pass"}}`, rpcError, false, probe.ReasonRPCError, "JSON-RPC error -32603: Internal error: the report store is locked"},
		{"status pass, HTTP 401", `{}`, http401, false, probe.ReasonUnauthorized, "HTTP 401"},
		{"status pass, timeout", `{}`, timeout, false, probe.ReasonTimeout, "no result (timeout)"},
		{"status pass, error text in a success", `{}`, text(`{"error":"the report store is locked"}`), false, ReasonErrorText, `reports an error: {"error":"the report store is locked"}`},
		{"error member null is no error", `{}`, text(`{"error":null,"rows":[]}`), true, "", ""},
		{"status fail, refused", `{"expect":{"status":"fail"}}`, isError("permission denied"), true, "", ""},
		{"status fail, rpc error", `{"expect":{"status":"fail"}}`, rpcError, true, "", ""},
		{"status fail, succeeded", `{"expect":{"status":"fail"}}`, text("deleted"), false, ReasonAssertion, "expected a refusal"},
		{"status fail, timeout is no refusal", `{"expect":{"status":"fail"}}`, timeout, false, probe.ReasonTimeout, "expected a refusal"},
		{"not_error_code, HTTP status", `{"expect":{"status":"fail","not_error_code":[401,403]}}`, http401, false, ReasonAssertion, "not_error_code: error code 401"},
		{"not_error_code, number in the error text", `{"expect":{"status":"fail","not_error_code":[401]}}`, isError("upstream said 401"), false, ReasonAssertion, "error code 401"},
		{"not_error_code, other code", `{"expect":{"status":"fail","not_error_code":[401]}}`, isError("denied: 403"), true, "", ""},
		{"not_error_code ignores a date", `{"expect":{"status":"fail","not_error_code":[2026]}}`, isError("denied on 2026-08-01"), true, "", ""},
		{"not_error_code ignores success text", `{"expect":{"not_error_code":[401]}}`, text("401 rows"), true, "", ""},
		{"errorCode, JSON-RPC", `{"expect":{"errorCode":-32602}}`, invalidArgs, true, "", ""},
		{"errorCode, wrong code", `{"expect":{"errorCode":-32602}}`, rpcError, false, ReasonAssertion, "errorCode: expected error code -32602, got JSON-RPC error -32603"},
		{"errorCode, succeeded", `{"expect":{"errorCode":-32602}}`, text("fine"), false, ReasonAssertion, "status: expected a refusal"},
		{"errorCode in a structured isError", `{"expect":{"errorCode":4003}}`, func() *probe.CallResult { r := structured(`{"code":4003}`); r.IsError = true; return r }(), true, "", ""},
		{"requiredFields in structuredContent", `{"expect":{"requiredFields":["source","meta.freshness"]}}`, structured(`{"source":"db","meta":{"freshness":"1m"}}`), true, "", ""},
		{"requiredFields missing", `{"expect":{"requiredFields":["source","freshness"]}}`, structured(`{"source":"db"}`), false, ReasonAssertion, "requiredFields: missing freshness"},
		{"requiredFields in a JSON text block", `{"expect":{"requiredFields":["source"]}}`, text(`{"source":"db"}`), true, "", ""},
		{"requiredFields in every row", `{"expect":{"requiredFields":["id"]}}`, text(`[{"id":1},{"name":"x"}]`), false, ReasonAssertion, "missing id"},
		{"requiredFields, text is not JSON", `{"expect":{"requiredFields":["source"]}}`, text("plain words"), false, ReasonAssertion, "no JSON document"},
		{"requiredFields skipped without a result", `{"expect":{"status":"fail","requiredFields":["x"]}}`, rpcError, true, "", ""},
		{"maxRows within", `{"expect":{"maxRows":2}}`, text(`{"count":2,"rows":[1,2]}`), true, "", ""},
		{"maxRows over, first array in document order", `{"expect":{"maxRows":2}}`, text(`{"z":[1,2,3],"a":[1]}`), false, ReasonAssertion, "maxRows: 3 rows, more than 2"},
		{"maxRows, the document is the array", `{"expect":{"maxRows":0}}`, text(`[]`), true, "", ""},
		{"maxRows, no array", `{"expect":{"maxRows":5}}`, text(`{"n":1}`), false, ReasonAssertion, "no array"},
		{"contains", `{"expect":{"contains":"orders"}}`, text("42 orders"), true, "", ""},
		{"contains, a list, one absent", `{"expect":{"contains":["orders","EUR"]}}`, text("42 orders"), false, ReasonAssertion, `contains: "EUR" not found`},
		{"notContains", `{"expect":{"notContains":["stack trace","Traceback"]}}`, text("fine"), true, "", ""},
		{"notContains found, in an error too", `{"expect":{"status":"fail","notContains":["Traceback"]}}`, isError("Traceback (most recent call last)"), false, ReasonAssertion, `notContains: "Traceback" found`},
		{"notContains in a JSON-RPC error message", `{"expect":{"status":"fail","notContains":"store is locked"}}`, rpcError, false, ReasonAssertion, "notContains"},
		{"jsonSchema passes", `{"expect":{"jsonSchema":{"type":"object","required":["temperature","units"],"properties":{"temperature":{"type":"number","minimum":-80,"maximum":80},"units":{"enum":["celsius","fahrenheit"]}}}}}`,
			structured(`{"temperature":21.5,"units":"celsius"}`), true, "", ""},
		{"jsonSchema out of range", `{"expect":{"jsonSchema":{"type":"object","properties":{"temperature":{"type":"number","maximum":80}}}}}`,
			structured(`{"temperature":294.1}`), false, ReasonAssertion, "jsonSchema:"},
		{"jsonSchema enum, from a text block", `{"expect":{"jsonSchema":{"properties":{"units":{"enum":["celsius"]}}}}}`,
			text(`{"units":"kelvin"}`), false, ReasonAssertion, "jsonSchema:"},
		{"jsonSchema pattern", `{"expect":{"jsonSchema":{"properties":{"freshness":{"type":"string","pattern":"^\\d{4}-\\d{2}-\\d{2}T"}}}}}`,
			structured(`{"freshness":"yesterday"}`), false, ReasonAssertion, "jsonSchema:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := run(t, c.contract, c.result)
			if o.Passed != c.pass || o.Reason != c.reason {
				t.Fatalf("passed=%v reason=%q, want %v %q; message %q; assertions %+v", o.Passed, o.Reason, c.pass, c.reason, o.Message, o.Last().Assertions)
			}
			if !strings.Contains(o.Message, c.message) {
				t.Errorf("message %q does not contain %q", o.Message, c.message)
			}
		})
	}
}

func TestRetry(t *testing.T) {
	policy := `{"retry":{"attempts":3,"delayMs":1000,"retryOn":[503,"timeout","rate limit"]}}`
	var slept []time.Duration
	sleeper := func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }
	runWith := func(opts Options, contract string, results ...*probe.CallResult) (Outcome, *fakeCaller) {
		f := &fakeCaller{results: results}
		opts.Sleep = sleeper
		return Run(context.Background(), f, readOnly, []Contract{parse(t, contract)}, opts)[0], f
	}
	http503 := &probe.CallResult{Reason: probe.ReasonHTTPStatus, HTTPStatus: 503, Error: "HTTP 503"}

	slept = nil
	o, f := runWith(Options{Retries: true}, policy, http503, timeout, text("ok"))
	if !o.Passed || len(f.calls) != 3 || !o.Retried() || len(slept) != 2 || slept[0] != time.Second || o.Duration <= 0 {
		t.Fatalf("retried to success: passed %v, calls %d, slept %v", o.Passed, len(f.calls), slept)
	}
	o, f = runWith(Options{Retries: true}, policy, isError("Rate limit exceeded"), isError("Rate limit exceeded"), isError("Rate limit exceeded"), text("never"))
	if o.Passed || len(f.calls) != 3 || o.Reason != probe.ReasonRateLimited || o.RateLimit == nil || !strings.Contains(o.Message, "rate limited: Rate limit exceeded") {
		t.Fatalf("bounded attempts: passed %v, calls %d, reason %s, message %q", o.Passed, len(f.calls), o.Reason, o.Message)
	}
	// A rate limit is tried again only where retryOn names it: at once,
	// another attempt spends what is limited.
	o, f = runWith(Options{Retries: true}, `{"retry":{"attempts":3,"delayMs":1000}}`, isError("429 Too Many Requests; retry after 30 seconds"), text("ok"))
	if o.Passed || len(f.calls) != 1 || o.Reason != probe.ReasonRateLimited || o.RateLimit.RetryAfter != 30*time.Second {
		t.Fatalf("a rate limit retryOn does not name: passed %v, calls %d, reason %s, %+v", o.Passed, len(f.calls), o.Reason, o.RateLimit)
	}
	// A failure retryOn does not name is final.
	o, f = runWith(Options{Retries: true}, policy, http401, text("ok"))
	if o.Passed || len(f.calls) != 1 {
		t.Fatalf("401 is not in retryOn: calls %d", len(f.calls))
	}
	// The daemon makes one call per schedule, whatever the policy.
	o, f = runWith(Options{Retries: false}, policy, http503, text("ok"))
	if o.Passed || len(f.calls) != 1 {
		t.Fatalf("without retries: calls %d", len(f.calls))
	}
	// No time left in the deadline for the delay: no further attempt.
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(time.Hour))
	defer cancel()
	f = &fakeCaller{results: []*probe.CallResult{http503, text("ok")}}
	long := `{"retry":{"attempts":3,"delayMs":600000,"retryOn":[503]}}`
	o = Run(ctx, f, readOnly, []Contract{parse(t, long)}, Options{Retries: true, Timeout: 5 * time.Second, Sleep: sleeper})[0]
	if o.Passed || len(f.calls) != 1 || !strings.Contains(o.Message, "no time left") {
		t.Fatalf("delay past the deadline: calls %d, message %q", len(f.calls), o.Message)
	}
}

func TestPermit(t *testing.T) {
	tool := func(ann string) probe.Tool { return probe.Tool{Name: "t", Annotations: json.RawMessage(ann)} }
	plain := Contract{Tool: "t"}
	side := Contract{Tool: "t", AllowSideEffects: true}
	cases := []struct {
		name   string
		tool   probe.Tool
		c      Contract
		optIn  bool
		refuse string
	}{
		{"read-only", tool(`{"readOnlyHint":true}`), plain, false, ""},
		{"no annotations", tool(``), plain, false, "sends no annotations"},
		{"no annotations, side effects allowed: destructive by default", tool(``), side, false, "allow_destructive_calls"},
		{"no annotations, side effects and opt-in", tool(``), side, true, ""},
		{"not read-only", tool(`{"readOnlyHint":false,"destructiveHint":false}`), plain, false, "allowSideEffects"},
		{"write, not destructive, side effects allowed", tool(`{"destructiveHint":false}`), side, false, ""},
		{"destructive without opt-in", tool(`{"destructiveHint":true}`), side, false, "annotated destructiveHint: true; to call it on a schedule anyway, list it under allow_destructive_calls"},
		{"destructive with opt-in", tool(`{"destructiveHint":true}`), side, true, ""},
		{"destructive, no allowSideEffects, opt-in alone is not enough", tool(`{"destructiveHint":true}`), plain, true, "allowSideEffects"},
		// Keys are read exactly as the protocol spells them, and a key
		// sent twice makes the annotations untrusted: nothing says the
		// tool only reads.
		{"a key in capitals is not the hint", tool(`{"READONLYHINT":true}`), plain, false, "is not annotated readOnlyHint: true"},
		{"a key in another case is not the hint", tool(`{"readOnlyHint":false,"ReadOnlyHint":true}`), plain, false, "is not annotated readOnlyHint: true"},
		{"a Kelvin sign is no k", tool(`{"readOnlyHint":false,"readOnlyHin\u212a":true}`), plain, false, "allowSideEffects"},
		{"a hint sent twice", tool(`{"readOnlyHint":false,"readOnlyHint":true}`), plain, false, `sends annotations mcpwatch does not trust (the key "readOnlyHint" twice)`},
		{"a hint sent twice, both true", tool(`{"readOnlyHint":true,"readOnlyHint":true}`), plain, false, "does not trust"},
		{"a hint that is not a boolean", tool(`{"readOnlyHint":"true"}`), plain, false, "readOnlyHint is a string, not a boolean"},
		{"annotations that are not an object", tool(`[{"readOnlyHint":true}]`), plain, false, "not an object"},
		{"untrusted annotations: destructive by default", tool(`{"destructiveHint":false,"destructiveHint":false}`), side, false, "allow_destructive_calls"},
		{"other keys do not matter", tool(`{"title":"Read","readOnlyHint":true,"x":{"readOnlyHint":false}}`), plain, false, ""},
		{"null hint is an absent hint", tool(`{"readOnlyHint":null}`), plain, false, "is not annotated readOnlyHint: true"},
	}
	for _, c := range cases {
		err := Permit(c.tool, c.c, c.optIn)
		switch {
		case c.refuse == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.refuse != "" && (err == nil || !strings.Contains(err.Error(), c.refuse)):
			t.Errorf("%s: got %v, want a refusal naming %q", c.name, err, c.refuse)
		}
	}
	// Run never calls a refused or an unlisted tool.
	f := &fakeCaller{results: []*probe.CallResult{text("ok")}}
	out := Run(context.Background(), f, []probe.Tool{tool(`{"destructiveHint":true}`)},
		[]Contract{{Tool: "t", Input: json.RawMessage(`{}`)}, {Tool: "gone", Input: json.RawMessage(`{}`)}}, Options{})
	if len(f.calls) != 0 || out[0].Reason != ReasonRefused || out[1].Reason != ReasonNotListed {
		t.Fatalf("calls %v, outcomes %+v", f.calls, out)
	}
}

// mcp-probe's own examples, read as they are.
func TestParseMcpProbeFiles(t *testing.T) {
	for _, src := range []string{
		`{"tools":{"logs_query":{"input":{"query":"service:web status:error","timeframe":"1h"},"expect":{"status":"pass","not_error_code":[401,403],"requiredFields":["source","freshness"],"maxRows":100}}}}`,
		`{"tools":{"get_weather":{"input":{"city":"Seoul"},"expect":{"jsonSchema":{"type":"object","required":["temperature","units","freshness"],"properties":{"temperature":{"type":"number","minimum":-80,"maximum":80},"units":{"enum":["celsius","fahrenheit"]},"freshness":{"type":"string","pattern":"^\\d{4}-\\d{2}-\\d{2}T"}}}}}}}`,
		`{"tools":{"logs_query":{"input":{"query":"service:web status:error","timeframe":"1h"},"retry":{"attempts":3,"delayMs":1000,"retryOn":[429,500,502,503,504,"timeout","rate limit"]},"expect":{"status":"pass"}}}}`,
		`{"tools":{"delete_row":{"input":{"id":1},"allowSideEffects":true,"expect":{"status":"fail","errorCode":-32602,"contains":"denied","notContains":["stack trace","Traceback"]}}}}`,
	} {
		f, err := ParseFile([]byte(src))
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if len(f.Tools) != 1 {
			t.Fatalf("%s: %d contracts", src, len(f.Tools))
		}
	}
}

func TestParseErrors(t *testing.T) {
	for src, want := range map[string]string{
		`{"tool":{}}`: `unknown key "tool"`,
		`{"tools":{"t":{"expect":{"stauts":"pass"}}}}`:                                    `tools.t: expect: unknown key "stauts"`,
		`{"tools":{"t":{"expect":{"status":"ok"}}}}`:                                      `tools.t: expect.status: want "pass"`,
		`{"tools":{"t":{"expect":{"status":"pass","errorCode":-32602}}}}`:                 "contradicts errorCode",
		`{"tools":{"t":{"input":[1]}}}`:                                                   "input: must be an object",
		`{"tools":{"t":{"retry":{"attempts":50}}}}`:                                       "retry.attempts: want a whole number from 1 to 10",
		`{"tools":{"t":{"retry":{"retryOn":[true]}}}}`:                                    "retryOn[0]",
		`{"tools":{"t":{"expect":{"maxRows":-1}}}}`:                                       "maxRows",
		`{"tools":{"t":{"expect":{"contains":""}}}}`:                                      "empty string",
		`{"tools":{"t":{"expect":{"jsonSchema":{"type":3}}}}}`:                            "jsonSchema",
		`{"tools":{"t":{"expect":{"jsonSchema":{"$ref":"https://example.com/s.json"}}}}}`: "jsonSchema",
	} {
		_, err := ParseFile([]byte(src))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error containing %q", src, err, want)
		}
	}
}

// What the server sent reaches no output raw: control characters are
// escaped in the message, the response and every assertion's detail.
func TestServerTextEscaped(t *testing.T) {
	o := run(t, `{"expect":{"contains":"absent"}}`, text("line1\nred \x1b[31malert\x07 \u202egnp"))
	for _, s := range []string{o.Message, o.Last().Response, o.Last().Assertions[1].Detail} {
		if strings.ContainsAny(s, "\x1b\x07\n\u202e") || !strings.Contains(s, `\x1b`) {
			t.Errorf("not escaped: %q", s)
		}
	}
}

func TestOneLineEscapes(t *testing.T) {
	got := oneLine("a\x1b[31mred\nnext\u202eline")
	if strings.ContainsAny(got, "\x1b\n\u202e") || !strings.Contains(got, `\x1b`) {
		t.Fatalf("oneLine = %q", got)
	}
}

// An HTTP 401 on the call rejects the credential of a server that was given
// one; to a server given none, it says one is needed.
func TestHTTP401RejectsAGivenCredential(t *testing.T) {
	t.Parallel()
	for _, given := range []bool{true, false} {
		var creds []string
		if given {
			creds = []string{"header:Authorization"}
		}
		out := Run(context.Background(), &fakeCaller{results: []*probe.CallResult{http401}}, readOnly, []Contract{parse(t, `{}`)},
			Options{Credentials: creds})
		want := probe.ReasonUnauthorized
		if given {
			want = probe.ReasonCredentialRejected
		}
		if out[0].Reason != want || (out[0].Rejection != nil) != given {
			t.Errorf("credential given %v: reason %q (rejection %+v), want %q", given, out[0].Reason, out[0].Rejection, want)
		}
		if given && out[0].Message != "credential header:Authorization rejected: tools/call: HTTP 401 Unauthorized" {
			t.Errorf("message %q names neither the credential nor what the server said", out[0].Message)
		}
	}
}

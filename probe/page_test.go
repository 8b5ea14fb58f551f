package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A tools/list page over streamable HTTP is decoded from the body as it
// is read, and checked as a buffered one is: every way a response can be
// wrong gives the reason and message it gives when read whole.
func TestCallDecodeChecksTheResponse(t *testing.T) {
	t.Parallel()
	page := `{"tools":[{"name":"a","inputSchema":{"type":"object"}},{"name":"b"}],"nextCursor":"c2","ttlMs":5000,"resultType":"complete"}`
	tests := []struct {
		name   string
		body   string
		status int
		max    int64
		reason Reason
		code   int
		errHas string
		tools  int
	}{
		{name: "a page", body: `{"jsonrpc":"2.0","id":1,"result":` + page + `}`, tools: 2},
		{name: "result before the id", body: `{"result":` + page + `,"jsonrpc":"2.0","id":1}`, tools: 2},
		{name: "trailing white space", body: `{"jsonrpc":"2.0","id":1,"result":` + page + "}\n\n", tools: 2},
		{name: "an error", body: `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad cursor"}}`, status: 400,
			reason: ReasonRPCError, code: -32602, errHas: "bad cursor"},
		{name: "wrong id", body: `{"jsonrpc":"2.0","id":7,"result":` + page + `}`, reason: ReasonProtocol, errHas: "id 7, the request had id 1"},
		{name: "result twice", body: `{"jsonrpc":"2.0","id":1,"result":` + page + `,"result":{"tools":[]}}`, reason: ReasonProtocol, errHas: `duplicate member "result"`},
		{name: "id twice", body: `{"jsonrpc":"2.0","id":7,"id":1,"result":` + page + `}`, reason: ReasonProtocol, errHas: `duplicate member "id"`},
		{name: "error beside a result", body: `{"jsonrpc":"2.0","id":1,"result":` + page + `,"error":{"code":1,"message":"m"},"error":{"code":2,"message":"n"}}`,
			reason: ReasonProtocol, errHas: `duplicate member "error"`},
		{name: "a batch", body: `[{"jsonrpc":"2.0","id":1,"result":` + page + `}]`, reason: ReasonProtocol, errHas: "batch"},
		{name: "a request", body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, reason: ReasonProtocol, errHas: "a ping message"},
		{name: "no result", body: `{"jsonrpc":"2.0","id":1}`, reason: ReasonProtocol, errHas: "neither result nor error"},
		{name: "no tools", body: `{"jsonrpc":"2.0","id":1,"result":{}}`, reason: ReasonProtocol, errHas: "no tools array"},
		{name: "tools not an array", body: `{"jsonrpc":"2.0","id":1,"result":{"tools":{}}}`, reason: ReasonProtocol, errHas: "no tools array"},
		{name: "a malformed tool", body: `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":3}]}}`, reason: ReasonProtocol, errHas: "malformed"},
		{name: "not JSON", body: `<html>`, reason: ReasonProtocol, errHas: "not a JSON-RPC message"},
		{name: "cut short", body: `{"jsonrpc":"2.0","id":1,"result":{"tools":[`, reason: ReasonProtocol, errHas: "malformed"},
		{name: "trailing garbage", body: `{"jsonrpc":"2.0","id":1,"result":` + page + `} {}`, reason: ReasonProtocol, errHas: "not a JSON-RPC message"},
		{name: "over the cap", body: `{"jsonrpc":"2.0","id":1,"result":{"tools":[` + strings.Repeat(`{"name":"x"},`, 1000) + `{}]}}`, max: 4096,
			reason: ReasonTooLarge, errHas: "over the cap of 4096 bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				// Chunked, so no Content-Length gives the size away.
				w.WriteHeader(max(tc.status, 200))
				fmt.Fprint(w, tc.body)
			}))
			defer srv.Close()
			opts := Options{MaxMessageBytes: tc.max}.WithDefaults()
			obs := &observer{}
			c, err := newHTTPConn(Target{URL: srv.URL}, opts, obs)
			if err != nil {
				t.Fatal(err)
			}
			defer c.close(context.Background())
			s := &session{opts: opts, obs: obs, res: &Result{Tools: []Tool{}}}
			p, err := s.callPage(context.Background(), c, listParams{}, true, map[string]bool{})
			if tc.reason == "" {
				if err != nil {
					t.Fatal(err)
				}
				if len(s.res.Tools) != tc.tools || p.next == nil || *p.next != "c2" || string(p.ttl) != "5000" {
					t.Errorf("%d tools, page %+v", len(s.res.Tools), p)
				}
				return
			}
			reason, _, code, _ := classify(context.Background(), err)
			if reason != tc.reason || code != tc.code || !strings.Contains(fmt.Sprint(err), tc.errHas) {
				t.Errorf("error %v (%s, code %d), want %s, code %d, containing %q", err, reason, code, tc.reason, tc.code, tc.errHas)
			}
			var rpcErr *RPCError
			if tc.code != 0 && (!errors.As(err, &rpcErr) || rpcErr.HTTPStatus != tc.status) {
				t.Errorf("error %#v, want an *RPCError with HTTP status %d", err, tc.status)
			}
		})
	}
}

// The buffered path (stdio, legacy SSE, a transcript) decodes the same.
func TestDecodePageFromResult(t *testing.T) {
	t.Parallel()
	s := newTestSession()
	c := &scriptConn{answer: func(string, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"tools":[{"name":"a"},{"name":"a"}],"nextCursor":""}`), nil
	}}
	p, err := s.callPage(context.Background(), c, listParams{}, false, map[string]bool{})
	if err != nil || p.next != nil || len(s.res.Tools) != 2 {
		t.Fatalf("page %+v, %d tools, err %v: a legacy empty cursor ends the list", p, len(s.res.Tools), err)
	}
	if len(s.obs.warnings) != 1 || !strings.Contains(s.obs.warnings[0], "more than once") {
		t.Errorf("warnings %q", s.obs.warnings)
	}
}

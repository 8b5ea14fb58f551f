package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// scriptConn answers each method from a script, for the protocol corners
// the test servers do not reach (codes only HTTP carries, odd cursors).
type scriptConn struct {
	answer func(method string, params json.RawMessage) (json.RawMessage, error)
	sent   []string
	era    Era
}

func (c *scriptConn) call(_ context.Context, method string, params any) (json.RawMessage, error) {
	raw, _ := json.Marshal(params)
	c.sent = append(c.sent, method+" "+string(raw))
	return c.answer(method, raw)
}

func (c *scriptConn) notify(_ context.Context, method string, _ any) error {
	c.sent = append(c.sent, method)
	return nil
}

func (c *scriptConn) setProtocol(era Era, _ string) { c.era = era }
func (c *scriptConn) close(context.Context)         {}

func newTestSession() *session {
	obs := &observer{start: time.Now()}
	return &session{opts: Options{}.WithDefaults(), obs: obs, res: &Result{Tools: []Tool{}}}
}

func TestDetect(t *testing.T) {
	t.Parallel()
	result := func(s string) func(string, json.RawMessage) (json.RawMessage, error) {
		return func(string, json.RawMessage) (json.RawMessage, error) { return json.RawMessage(s), nil }
	}
	fail := func(err error) func(string, json.RawMessage) (json.RawMessage, error) {
		return func(string, json.RawMessage) (json.RawMessage, error) { return nil, err }
	}
	tests := []struct {
		name    string
		answer  func(string, json.RawMessage) (json.RawMessage, error)
		era     Era
		version string
		reason  Reason // when detection itself fails
	}{
		{"discover result", result(`{"supportedVersions":["2026-07-28","2025-11-25"],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}`), EraModern, VersionModern, ""},
		{"discover result without our version", result(`{"supportedVersions":["2030-01-01"]}`), "", "", ReasonProtocol},
		{"discover result with bad versions", result(`{"supportedVersions":"2026-07-28"}`), "", "", ReasonProtocol},
		{"a result that is not a discover result", result(`{}`), EraLegacy, "", ""},
		{"-32022 naming our version", fail(&RPCError{Code: -32022, Data: json.RawMessage(`{"supported":["2026-07-28"],"requested":"x"}`)}), EraModern, VersionModern, ""},
		{"-32022 naming legacy versions only (go-sdk in the legacy era)", fail(&RPCError{Code: -32022, HTTPStatus: 400, Data: json.RawMessage(`{"supported":["2025-11-25","2024-11-05"]}`)}), EraLegacy, "", ""},
		{"-32022 naming only unknown versions", fail(&RPCError{Code: -32022, Data: json.RawMessage(`{"supported":["2030-01-01"]}`)}), "", "", ReasonProtocol},
		{"-32022 without data", fail(&RPCError{Code: -32022}), "", "", ReasonProtocol},
		{"discover result naming legacy versions only", result(`{"supportedVersions":["2025-06-18"]}`), EraLegacy, "", ""},
		{"-32021", fail(&RPCError{Code: -32021, HTTPStatus: 400}), EraModern, VersionModern, ""},
		{"-32020", fail(&RPCError{Code: -32020, HTTPStatus: 400}), EraModern, VersionModern, ""},
		{"-32601 with 404", fail(&RPCError{Code: -32601, HTTPStatus: 404}), EraModern, VersionModern, ""},
		{"-32601 on stdio", fail(&RPCError{Code: -32601}), EraLegacy, "", ""},
		{"-32602", fail(&RPCError{Code: -32602}), EraLegacy, "", ""},
		{"-32000 session-less request", fail(&RPCError{Code: -32000, HTTPStatus: 400}), EraLegacy, "", ""},
		{"silence past the sub-deadline", fail(failf(ReasonTimeout, "server/discover: no answer")), EraLegacy, "", ""},
		{"the process exited", fail(failf(ReasonExited, "server/discover: exited")), EraLegacy, "", ""},
		{"HTTP 405", fail(&Failure{Reason: ReasonHTTPStatus, HTTPStatus: 405, Err: errors.New("405")}), EraLegacy, "", ""},
		{"HTTP 401 is no era signal", fail(&Failure{Reason: ReasonUnauthorized, HTTPStatus: 401, Err: errors.New("401")}), "", "", ReasonUnauthorized},
		{"HTTP 403 is no era signal", fail(&Failure{Reason: ReasonForbidden, HTTPStatus: 403, Err: errors.New("403")}), "", "", ReasonForbidden},
		{"connection refused", fail(failf(ReasonConnection, "refused")), "", "", ReasonConnection},
		{"TLS", fail(failf(ReasonTLS, "unknown authority")), "", "", ReasonTLS},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newTestSession()
			c := &scriptConn{answer: tc.answer}
			era, version, err := s.detect(context.Background(), c)
			var f *Failure
			switch {
			case tc.reason != "" && (!errors.As(err, &f) || f.Reason != tc.reason):
				t.Fatalf("error %v, want reason %s", err, tc.reason)
			case tc.reason == "" && err != nil:
				t.Fatalf("error %v", err)
			}
			if era != tc.era || version != tc.version {
				t.Errorf("era %q version %q, want %q %q", era, version, tc.era, tc.version)
			}
			if len(c.sent) != 1 || !strings.Contains(c.sent[0], `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`) {
				t.Errorf("sent %q", c.sent)
			}
		})
	}
}

// The discover sub-deadline is short, but never more than half of what is
// left, so initialize keeps time after a silent discover.
func TestDiscoverBudget(t *testing.T) {
	t.Parallel()
	s := newTestSession()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	// Half of what is left when it is asked, measured on both sides of the
	// call: exact however long the test waited to run.
	deadline, _ := ctx.Deadline()
	most := time.Until(deadline) / 2
	b := s.discoverBudget(ctx)
	if least := time.Until(deadline) / 2; b > most || b < least {
		t.Errorf("budget %s with 2s left, want half of what was left: %s-%s", b, least, most)
	}
	ctx, cancel = context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if b := s.discoverBudget(ctx); b != DefaultDiscoverTimeout {
		t.Errorf("budget %s with a minute left, want %s", b, DefaultDiscoverTimeout)
	}
}

func TestListTools(t *testing.T) {
	t.Parallel()
	// pages maps the cursor sent ("-" for none) to the result.
	type pages map[string]string
	tests := []struct {
		name     string
		modern   bool
		pages    pages
		maxPages int
		tools    string
		reason   Reason
		warning  string
	}{
		{"one page", false, pages{"-": `{"tools":[{"name":"a"},{"name":"b"}]}`}, 0, "a,b", "", ""},
		{"two pages", false, pages{"-": `{"tools":[{"name":"a"}],"nextCursor":"p2"}`, "p2": `{"tools":[{"name":"b"}]}`}, 0, "a,b", "", ""},
		{"legacy: empty cursor ends", false, pages{"-": `{"tools":[{"name":"a"}],"nextCursor":""}`}, 0, "a", "", ""},
		{"modern: empty cursor is a cursor", true, pages{"-": `{"tools":[{"name":"a"}],"nextCursor":"","ttlMs":5000}`, "": `{"tools":[{"name":"b"}],"nextCursor":null}`}, 0, "a,b", "", ""},
		{"repeated cursor", false, pages{"-": `{"tools":[],"nextCursor":"x"}`, "x": `{"tools":[],"nextCursor":"x"}`}, 0, "", ReasonPagination, ""},
		{"cursor cycle", false, pages{"-": `{"tools":[],"nextCursor":"x"}`, "x": `{"tools":[],"nextCursor":"y"}`, "y": `{"tools":[],"nextCursor":"x"}`}, 0, "", ReasonPagination, ""},
		{"page cap", false, pages{"-": `{"tools":[],"nextCursor":"1"}`, "1": `{"tools":[],"nextCursor":"2"}`, "2": `{"tools":[],"nextCursor":"3"}`}, 2, "", ReasonPagination, ""},
		{"no tools array", false, pages{"-": `{"nextCursor":"x"}`}, 0, "", ReasonProtocol, ""},
		{"tools is null", false, pages{"-": `{"tools":null}`}, 0, "", ReasonProtocol, ""},
		{"result is not an object", false, pages{"-": `[]`}, 0, "", ReasonProtocol, ""},
		{"a tool is not an object", false, pages{"-": `{"tools":["a"]}`}, 0, "", ReasonProtocol, ""},
		{"cursor is a number", false, pages{"-": `{"tools":[],"nextCursor":3}`}, 0, "", ReasonProtocol, ""},
		{"duplicate names are kept and reported", false, pages{"-": `{"tools":[{"name":"a"},{"name":"a"}]}`}, 0, "a,a", "", `"a" is listed more than once`},
		{"a nameless tool is kept and reported", false, pages{"-": `{"tools":[{"description":"?"}]}`}, 0, "", "", "has no name"},
		{"a warning repeated does not crowd out the next", false, pages{"-": `{"tools":[` + strings.Repeat(`{},`, 30) + `{"name":"a"},{"name":"a"}]}`}, 0,
			strings.Repeat(",", 30) + "a,a", "", `"a" is listed more than once`},
		{"untrusted annotations are reported", false, pages{"-": `{"tools":[{"name":"w","annotations":{"readOnlyHint":false,"readOnlyHint":true}}]}`}, 0, "w", "",
			`tool "w" sends annotations mcpwatch does not trust (the key "readOnlyHint" twice): it is treated as unannotated, so not read-only`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newTestSession()
			if tc.maxPages > 0 {
				s.opts.MaxPages = tc.maxPages
			}
			c := &scriptConn{answer: func(method string, params json.RawMessage) (json.RawMessage, error) {
				var p struct {
					Cursor *string `json:"cursor"`
				}
				_ = json.Unmarshal(params, &p)
				key := "-"
				if p.Cursor != nil {
					key = *p.Cursor
				}
				page, ok := tc.pages[key]
				if !ok {
					return nil, fmt.Errorf("unexpected cursor %q", key)
				}
				return json.RawMessage(page), nil
			}}
			var meta *requestMeta
			if tc.modern {
				meta = s.meta(VersionModern)
			}
			err := s.listTools(context.Background(), c, meta)
			var f *Failure
			switch {
			case tc.reason == "" && err != nil:
				t.Fatalf("error %v", err)
			case tc.reason != "" && (!errors.As(err, &f) || f.Reason != tc.reason):
				t.Fatalf("error %v, want reason %s", err, tc.reason)
			}
			if tc.reason == "" && strings.Join(s.res.ToolNames(), ",") != tc.tools {
				t.Errorf("tools %q, want %s", s.res.ToolNames(), tc.tools)
			}
			if tc.warning != "" && !strings.Contains(strings.Join(s.obs.warnings, "|"), tc.warning) {
				t.Errorf("warnings %q lack %q", s.obs.warnings, tc.warning)
			}
			if tc.modern && tc.reason == "" && (s.res.TTLMillis == nil || *s.res.TTLMillis != 5000) {
				t.Errorf("ttl %v, want 5000", s.res.TTLMillis)
			}
			if len(s.res.Timings.Pages) != len(c.sent) {
				t.Errorf("%d page timings for %d requests", len(s.res.Timings.Pages), len(c.sent))
			}
		})
	}
}

// A legacy initialize answered with no version, or with one that is not a
// version string (it would go back in the MCP-Protocol-Version header),
// fails. Any version goes on to notifications/initialized and tools/list;
// one outside the initialize era (the Python report server answers 2026-07-28)
// with a warning.
func TestLegacyVersions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		version  string
		accepted bool
	}{
		{"2025-11-25", true}, {"2025-06-18", true}, {"2025-03-26", true}, {"2024-11-05", true},
		{"2026-07-28", true}, {"1999-01-01", true},
		{"", false}, {"2025-11-25\r\nX-Injected: 1", false}, {"2025 11 25", false}, {strings.Repeat("9", 100), false},
	}
	for _, tc := range tests {
		v, accepted := tc.version, tc.accepted
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			s := newTestSession()
			c := &scriptConn{answer: func(method string, _ json.RawMessage) (json.RawMessage, error) {
				if method == "initialize" {
					return json.RawMessage(fmt.Sprintf(`{"protocolVersion":%q,"capabilities":{},"serverInfo":{"name":"x","version":"2"}}`, v)), nil
				}
				return json.RawMessage(`{"tools":[]}`), nil
			}}
			err := s.legacy(context.Background(), c, &dialer{})
			if accepted != (err == nil) {
				t.Fatalf("version %q: error %v", v, err)
			}
			warned := len(s.obs.warnings) > 0
			if want := accepted && !slices.Contains(LegacyVersions, v); warned != want {
				t.Errorf("version %q: warnings %q", v, s.obs.warnings)
			}
			if accepted && (s.res.ProtocolVersion != v || c.era != EraLegacy || len(c.sent) != 3 || c.sent[1] != "notifications/initialized") {
				t.Errorf("version %q, era %q, sent %q", s.res.ProtocolVersion, c.era, c.sent)
			}
			if !accepted && !strings.Contains(err.Error(), "initialize") {
				t.Errorf("error %q does not name initialize", err)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	live := context.Background()
	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	canceled, cancel2 := context.WithCancel(context.Background())
	cancel2()
	tests := []struct {
		name   string
		ctx    context.Context
		err    error
		reason Reason
		status int
		code   int
	}{
		{"rpc error", live, &RPCError{Code: -32603, HTTPStatus: 500}, ReasonRPCError, 500, -32603},
		{"rpc error on a later page", live, onPage(&RPCError{Code: -32602}, 3), ReasonRPCError, 0, -32602},
		{"failure", live, &Failure{Reason: ReasonUnauthorized, HTTPStatus: 401}, ReasonUnauthorized, 401, 0},
		{"untyped error", live, errors.New("odd"), ReasonProtocol, 0, 0},
		{"broken pipe after the deadline", expired, failf(ReasonClosed, "x"), ReasonTimeout, 0, 0},
		{"bare context error after the deadline", expired, context.DeadlineExceeded, ReasonTimeout, 0, 0},
		{"connection error after a cancel", canceled, failf(ReasonConnection, "x"), ReasonCanceled, 0, 0},
		{"the server's own fault before the deadline passed", expired, failf(ReasonProtocol, "x"), ReasonProtocol, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			reason, status, code, _ := classify(tc.ctx, tc.err)
			if reason != tc.reason || status != tc.status || code != tc.code {
				t.Errorf("classify = %s %d %d, want %s %d %d", reason, status, code, tc.reason, tc.status, tc.code)
			}
		})
	}
}

// A page within the message size cap can hold a million empty tool
// objects, each about 120 bytes once decoded, and a listing has up to
// MaxPages pages: the number of tools is capped, and counted while the
// tools are decoded, so a hostile list costs neither memory nor time.
// Not parallel: it measures the allocations of the whole process.
func TestListToolsBoundsTheToolCount(t *testing.T) {
	const perPage, pages = 300_000, 5
	tools := strings.Repeat(`{},`, perPage-1) + `{}`
	s := newTestSession()
	c := &scriptConn{answer: func(_ string, params json.RawMessage) (json.RawMessage, error) {
		n := strings.Count(string(params), "cursor") + len(s.res.Timings.Pages)
		if n >= pages {
			return json.RawMessage(`{"tools":[` + tools + `]}`), nil
		}
		return json.RawMessage(fmt.Sprintf(`{"tools":[%s],"nextCursor":"%d"}`, tools, n)), nil
	}}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err := s.listTools(context.Background(), c, nil)
	runtime.ReadMemStats(&after)
	var f *Failure
	if !errors.As(err, &f) || f.Reason != ReasonTooLarge || !strings.Contains(err.Error(), "10000") {
		t.Errorf("error %v, want too_large naming the cap of 10000 tools", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
		t.Errorf("allocated %d MiB for a list of %d tools offered (%d MiB in all)", alloc>>20, perPage*pages, pages*len(tools)>>20)
	}
	if len(c.sent) != 1 {
		t.Errorf("%d pages asked for, want the first only", len(c.sent))
	}
}

// panicConn stands for a bug of ours: a call that panics.
type panicConn struct{ conn }

func (panicConn) call(context.Context, string, any) (json.RawMessage, error) {
	panic("a bug in the probe")
}

// A panic in the probe still kills the server on its way up: a stdio
// server must not outlive a crashing mcpwatch.
func TestRunReleasesOnPanic(t *testing.T) {
	t.Parallel()
	s := newTestSession()
	var server *stdioConn
	d := &dialer{transport: TransportStdio, open: func(ctx context.Context) (conn, error) {
		c, err := startStdio(ctx, Target{Command: "sleep", Args: []string{"30"}}, s.opts, s.obs)
		if err != nil {
			return nil, err
		}
		server = c
		return panicConn{c}, nil
	}}
	func() {
		defer func() {
			if r := recover(); r != "a bug in the probe" {
				t.Errorf("recovered %v", r)
			}
		}()
		_ = s.run(context.Background(), d, EraLegacy, "")
	}()
	if server == nil {
		t.Fatal("the server was not started")
	}
	select {
	case <-server.exited:
	default:
		t.Error("the server is still running after the probe panicked")
		server.close(context.Background())
	}
}

// The tools of one list are capped in bytes across pages: a server
// listing page after page of one huge tool fails too_large, on the page
// that passes the cap, and what was read is not kept growing.
func TestListBytesCap(t *testing.T) {
	t.Parallel()
	s := newTestSession()
	s.opts.MaxMessageBytes = 16 << 10
	s.opts.MaxListBytes = 32 << 10
	desc := strings.Repeat("x", 10<<10)
	c := &scriptConn{answer: func(_ string, params json.RawMessage) (json.RawMessage, error) {
		n := len(s.res.Timings.Pages)
		return json.RawMessage(fmt.Sprintf(`{"tools":[{"name":"t%d","description":%q}],"nextCursor":"p%d"}`, n, desc, n+1)), nil
	}}
	err := s.listTools(context.Background(), c, nil)
	var f *Failure
	if !errors.As(err, &f) || f.Reason != ReasonTooLarge || !strings.Contains(err.Error(), "tools/list: the tools listed so far take more than 32768 bytes, the probe's cap on the list of one server (page 4)") {
		t.Fatalf("error %v, want too_large on page 4", err)
	}
	if len(c.sent) != 4 {
		t.Errorf("%d pages asked for, want 4", len(c.sent))
	}
}

// The list cap is never below the message cap: a list may be as large as
// one page may.
func TestListBytesCapDefaults(t *testing.T) {
	t.Parallel()
	if o := (Options{}).WithDefaults(); o.MaxListBytes != DefaultMaxListBytes {
		t.Errorf("default %d", o.MaxListBytes)
	}
	if o := (Options{MaxMessageBytes: 64 << 20}).WithDefaults(); o.MaxListBytes != 64<<20 {
		t.Errorf("with a 64 MiB message cap: %d", o.MaxListBytes)
	}
}

package probetest

import (
	"encoding/json"
	"fmt"
	"slices"
)

// Behavior names one way a test server behaves, well or badly. The zero
// value means Healthy.
type Behavior string

const (
	// Healthy answers everything by the book.
	Healthy Behavior = "healthy"
	// TokenGated lists zero tools unless the client has the token (stdio:
	// the variable Config.TokenEnv; HTTP: "Authorization: Bearer <token>").
	// The handshake and tools/list still succeed: the silent failure.
	TokenGated Behavior = "token-gated"
	// Scoped lists only the read tools (names starting with "list_") to a
	// client with read scope. stdio: REPORT_SCOPE=read in the environment.
	// HTTP: any request whose bearer token does not match (see TokenGated),
	// including one with no Authorization header, has read scope only.
	Scoped Behavior = "scoped"
	// ManyTools lists ManyToolsCount generated tools in pages of
	// ManyToolsPageSize, chained by nextCursor.
	ManyTools Behavior = "many-tools"
	// HugePages lists HugePagesCount pages of one tool each, every tool
	// with a description of Config.DescriptionBytes (default
	// HugePageDescriptionBytes: each page within a client's 4 MiB message
	// cap, the whole list 400 MB).
	HugePages Behavior = "huge-pages"
	// StuckCursor returns the same nextCursor on every page, forever.
	StuckCursor Behavior = "stuck-cursor"
	// StallToolsList answers the handshake and everything else, and never
	// answers tools/list.
	StallToolsList Behavior = "stall-tools-list"
	// Unresponsive never answers anything. Over stdio it first spawns a
	// grandchild (a re-exec of itself that writes its pid to Config.PIDFile
	// and sleeps), and both ignore SIGTERM; the child also ignores stdin
	// closing. Over HTTP no response header is ever written.
	Unresponsive Behavior = "unresponsive"
	// ExitAtOnce writes "fatal: REPORT_API_TOKEN is not set" (the name is
	// Config.TokenEnv) to stderr and exits 1 before reading anything. Over
	// HTTP the connection is closed without a response.
	ExitAtOnce Behavior = "exit-at-once"
	// HugeLine answers the first request with one line of HugeLineBytes of
	// padding inside a JSON-RPC result, streamed without building it in
	// memory; later requests are answered normally.
	HugeLine Behavior = "huge-line"
	// Banner prints a non-JSON line on stdout before anything else, then
	// behaves like Healthy. Over HTTP it is Healthy.
	Banner Behavior = "banner"
	// WrongID answers tools/list with an id the client never sent.
	WrongID Behavior = "wrong-id"
	// DuplicateResult answers tools/list with a message that holds its
	// result member twice: the tools, then a list of one tool named
	// ShadowToolName. Which of the two a client reads is up to its JSON
	// parser, so a client must refuse the message.
	DuplicateResult Behavior = "duplicate-result"
	// Unauthorized401 (HTTP only) answers 401 with a Bearer challenge that
	// names resource_metadata and scope="reports:read", unless the request
	// carries "Authorization: Bearer <Config.Token>" with a non-empty Token.
	Unauthorized401 Behavior = "unauthorized-401"
	// InsufficientScope403 (HTTP only) answers every request with 403 and an
	// error="insufficient_scope" Bearer challenge.
	InsufficientScope403 Behavior = "insufficient-scope-403"
	// ServerError500 (HTTP only) answers every request with 500.
	ServerError500 Behavior = "server-error-500"
	// SlowBody writes every byte of every reply body one at a time, DripInterval
	// apart (HTTP: after a 200 status line and headers sent at once).
	SlowBody Behavior = "slow-body"
	// PingFirst sends a ping request to the client before answering each
	// tools/list and waits for its reply (stdio: inline; streamable HTTP:
	// inside the tools/list response, which becomes an SSE stream). A reply
	// that is not a result fails the tools/list with -32603.
	PingFirst Behavior = "ping-first"
	// ListChanged sends notifications/tools/list_changed once per session:
	// over stdio and legacy SSE right after notifications/initialized in the
	// legacy era, otherwise just before the first tools/list reply. Over
	// streamable HTTP it travels inside the tools/list response, which
	// becomes an SSE stream; there a modern request is a session of its own.
	ListChanged Behavior = "list-changed"
	// ExitOnUnknownFirst (stdio) is a legacy server that exits, with status 1
	// and a line on stderr, when its first request is not initialize, as
	// some rmcp-based servers do; started afresh and sent initialize first,
	// it is Healthy.
	ExitOnUnknownFirst Behavior = "exit-on-unknown-first"
	// SilentOnUnknown never answers a request for a method it does not know
	// (server/discover among them, in the legacy era), as some legacy
	// servers do; everything else is Healthy.
	SilentOnUnknown Behavior = "silent-on-unknown"

	// The advertise-then-fail servers: the handshake and tools/list succeed
	// with every tool, as real servers do with an expired or revoked
	// credential, and every tools/call fails.

	// CallIsError answers every tools/call with a result whose isError is
	// true and whose text is CallFailureText.
	CallIsError Behavior = "call-is-error"
	// CallRPCError answers every tools/call with JSON-RPC error -32603 and
	// the message CallFailureText.
	CallRPCError Behavior = "call-rpc-error"
	// CallUnauthorized401 (HTTP only) answers every tools/call POST with
	// 401 and a Bearer error="invalid_token" challenge; everything else is
	// answered as Healthy.
	CallUnauthorized401 Behavior = "call-unauthorized-401"
	// CallErrorText answers every tools/call with a success result (no
	// isError) whose only text block is CallErrorTextBody, as servers that
	// wrap an upstream's error do (an error that is neither a credential's
	// nor a network's).
	CallErrorText Behavior = "call-error-text"

	// DropStream (streamable HTTP) answers every request with an event
	// stream and cuts the first stream of each method short: after its
	// priming event (an id, and retry: Config.RetryMS) the connection
	// drops without the reply. In the legacy era the reply is kept and
	// sent on the GET that resumes the stream with that Last-Event-ID (and
	// the session id); the modern era has no resumption (GET is 405), and
	// the request sent again with a new id is answered.
	DropStream Behavior = "drop-stream"
)

// What the advertise-then-fail behaviors answer a call with.
const (
	CallFailureText   = "upstream API error: 401 Unauthorized (the token was revoked)"
	CallErrorTextBody = `{"error":"the report store is locked"}`
)

// Behaviors lists every behavior, in the order of the documentation.
func Behaviors() []Behavior {
	return []Behavior{
		Healthy, TokenGated, Scoped, ManyTools, HugePages, StuckCursor, StallToolsList,
		Unresponsive, ExitAtOnce, HugeLine, Banner, WrongID, DuplicateResult, Unauthorized401,
		InsufficientScope403, ServerError500, SlowBody, PingFirst, ListChanged,
		ExitOnUnknownFirst, SilentOnUnknown,
		CallIsError, CallRPCError, CallUnauthorized401, CallErrorText,
		DropStream,
	}
}

// httpOnly reports whether a behavior has no meaning over stdio.
func (b Behavior) httpOnly() bool {
	return b == Unauthorized401 || b == InsufficientScope403 || b == ServerError500 || b == CallUnauthorized401 || b == DropStream
}

// Era is the protocol generation a test server speaks. The zero value means
// EraLegacy.
type Era string

const (
	// EraModern is 2026-07-28 only: stateless, server/discover, _meta on
	// every request; initialize is rejected.
	EraModern Era = "modern"
	// EraLegacy is the initialize handshake (2024-11-05 to 2025-11-25);
	// server/discover is an unknown method.
	EraLegacy Era = "legacy"
	// EraDual speaks both: requests carrying the modern _meta version (or a
	// modern MCP-Protocol-Version header, or server/discover) are answered
	// as modern, the rest as legacy.
	EraDual Era = "dual"
)

// Protocol versions a test server knows.
const (
	VersionModern = "2026-07-28"
	VersionLatest = "2025-11-25" // the legacy version answered to an unknown request
)

// LegacyVersions are the initialize-era versions, newest first.
func LegacyVersions() []string {
	return []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}
}

// Sizes and paces of the misbehaviors, so tests can assert on them.
const (
	ManyToolsCount           = 1000
	ManyToolsPageSize        = 100
	HugePagesCount           = 100
	HugePageDescriptionBytes = 4<<20 - 64<<10
	HugeLineBytes            = 50 << 20 // padding in the HugeLine reply; the line is a little longer
	DripIntervalMS           = 200      // SlowBody: milliseconds between two bytes
	DropRetryMS              = 50       // DropStream: the retry: interval announced, unless Config.RetryMS
	// StuckCursorValue is the nextCursor StuckCursor returns on every page.
	StuckCursorValue = "stuck"
	// ShadowToolName is the one tool of DuplicateResult's second result.
	ShadowToolName = "shadow_tool"
)

// Tool is one tool a test server lists.
type Tool struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	InputSchema map[string]any `json:"inputSchema"`
	Annotations map[string]any `json:"annotations,omitempty"`
}

// Surface is a realistic tool list: n tools with small schemas (a date
// range), the surface of the probe benchmarks whose figures
// docs/performance.md quotes, and of the daemon's memory guards.
func Surface(n int) []Tool {
	tools := make([]Tool, n)
	for i := range tools {
		tools[i] = Tool{
			Name:        fmt.Sprintf("tool_%02d", i),
			Description: fmt.Sprintf("Tool %d: fetches a report for a date range.", i),
			InputSchema: map[string]any{
				"type": "object",
				"properties": map[string]any{
					"from": map[string]any{"type": "string", "format": "date"},
					"to":   map[string]any{"type": "string", "format": "date"},
				},
				"required": []any{"from"},
			},
		}
	}
	return tools
}

// ReadOnly are the annotations of a tool that only reads.
func ReadOnly() map[string]any { return map[string]any{"readOnlyHint": true} }

// Config says how a test server behaves. The zero value is a healthy legacy
// server with the two report tools.
type Config struct {
	Behavior Behavior `json:",omitempty"`
	Era      Era      `json:",omitempty"`
	// Tools default to DefaultTools(). ManyTools and HugePages ignore them.
	Tools []Tool `json:",omitempty"`
	// Token is the credential TokenGated, Scoped and Unauthorized401 expect.
	// Empty means any non-empty credential is accepted (Unauthorized401:
	// none is).
	Token string `json:",omitempty"`
	// TokenEnv is the variable a stdio server reads the credential from;
	// default "REPORT_API_TOKEN".
	TokenEnv string `json:",omitempty"`
	// PIDFile is where the Unresponsive grandchild writes its pid, so a test
	// can check that it is gone.
	PIDFile string `json:",omitempty"`
	// ServerName is the serverInfo name; default "probetest".
	ServerName string `json:",omitempty"`
	// SSEResponses makes the streamable HTTP handler answer requests with a
	// text/event-stream (a priming event with an id and empty data, then the
	// reply), as the TypeScript SDK does, instead of application/json.
	SSEResponses bool `json:",omitempty"`
	// RetryMS is the retry: interval (milliseconds) DropStream announces
	// before it drops a stream; default DropRetryMS.
	RetryMS int `json:",omitempty"`
	// StartDelayMS (stdio) keeps a server from reading or answering anything
	// for that many milliseconds after it starts: a slow start, such as npx
	// installing a package or a runtime loading its modules.
	StartDelayMS int `json:",omitempty"`
	// DescriptionBytes is the length of a HugePages tool's description;
	// default HugePageDescriptionBytes.
	DescriptionBytes int `json:",omitempty"`
	// StartStderr (stdio) is what the server writes to stderr as it
	// starts, before it reads anything, and then serves on: a server that
	// logs its service's answer to a start-up request ("API error (401):
	// Invalid token") and lists its tools all the same.
	StartStderr string `json:",omitempty"`
	// SpawnLog (stdio), when set, is a file each server process appends a
	// line with its pid to as it starts, so a test can count the processes
	// a probe started.
	SpawnLog string `json:",omitempty"`
	// StateFile (stdio), when set, is a file that changes how a server
	// already running behaves, read afresh as each line says (see
	// StateFile's lines): a test changes a server that stays up.
	StateFile string `json:",omitempty"`
}

// The lines of a Config.StateFile. The file is read at start and at every
// tools/list; SIGUSR1 makes the server send
// notifications/tools/list_changed.
const (
	// StateExitAtStart, read at start: write StateRevokedLine to stderr and
	// exit 1, as a server whose key was revoked does (one already running
	// does not read it again).
	StateExitAtStart = "exit-at-start"
	// StateHang, read at each tools/list: never answer it.
	StateHang = "hang"
	// StateRemove is the prefix of a line "-NAME": the tool NAME is not
	// listed.
	StateRemove = "-"
	// StateLogAtStart is the prefix of a line "log: TEXT": TEXT is
	// written to stderr as the server starts.
	StateLogAtStart = "log: "
)

// StateRevokedLine is what a server told StateExitAtStart writes on
// stderr before it exits.
const StateRevokedLine = "fatal: authentication failed: the API key was revoked"

// ScopeEnv is the variable a stdio Scoped server reads; "read" means read
// scope only.
const ScopeEnv = "REPORT_SCOPE"

// DefaultTools are the example report server's tools, annotated read-only.
func DefaultTools() []Tool {
	return []Tool{
		{
			Name:        "fetch_daily_report",
			Description: "Fetch the daily sales report",
			InputSchema: map[string]any{
				"type": "object",
				"properties": map[string]any{
					"date": map[string]any{"type": "string", "description": "the day, YYYY-MM-DD"},
				},
				"required": []any{"date"},
			},
			Annotations: ReadOnly(),
		},
		{
			Name:        "list_report_dates",
			Description: "List available report dates",
			InputSchema: map[string]any{"type": "object", "properties": map[string]any{}},
			Annotations: ReadOnly(),
		},
	}
}

// EchoTool is a read-only tool that answers "Echo: " and its message
// argument, as server-everything's echo does: a call whose response
// repeats its input.
func EchoTool() Tool {
	return Tool{
		Name:        "echo",
		Description: "Echo back the message",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"message": map[string]any{"type": "string"}}, "required": []any{"message"}},
		Annotations: ReadOnly(),
	}
}

// Validate reports a behavior or era this package does not know.
func (c Config) Validate() error {
	if c.Behavior != "" && !slices.Contains(Behaviors(), c.Behavior) {
		return fmt.Errorf("probetest: unknown behavior %q (known: %v)", c.Behavior, Behaviors())
	}
	switch c.Era {
	case "", EraModern, EraLegacy, EraDual:
	default:
		return fmt.Errorf("probetest: unknown era %q (known: modern, legacy, dual)", c.Era)
	}
	return nil
}

// withDefaults fills in what the zero value leaves open.
func (c Config) withDefaults() Config {
	if c.Behavior == "" {
		c.Behavior = Healthy
	}
	if c.Era == "" {
		c.Era = EraLegacy
	}
	if c.Tools == nil {
		c.Tools = DefaultTools()
	}
	if c.TokenEnv == "" {
		c.TokenEnv = "REPORT_API_TOKEN"
	}
	if c.ServerName == "" {
		c.ServerName = "probetest"
	}
	return c
}

// EnvConfig is the variable that carries an encoded Config to a re-executed
// test binary (see Command and RunIfChild).
const EnvConfig = "MCPWATCH_PROBETEST"

func encodeConfig(c Config) string {
	b, err := json.Marshal(c)
	if err != nil {
		// Config holds only strings, bools and JSON-shaped schemas.
		panic(fmt.Sprintf("probetest: encode config: %v", err))
	}
	return string(b)
}

func decodeConfig(s string) (Config, error) {
	var c Config
	if err := json.Unmarshal([]byte(s), &c); err != nil {
		return c, fmt.Errorf("probetest: decode %s: %w", EnvConfig, err)
	}
	return c, c.Validate()
}

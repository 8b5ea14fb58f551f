// Package probe answers one question about one MCP server: which tools does it
// offer right now, and if that could not be told, why not.
//
// A probe speaks both protocol eras (the stateless 2026-07-28 era and the
// initialize-based legacy eras) over stdio, streamable HTTP and the legacy
// HTTP+SSE transport, within the single deadline of the caller's context. It
// owns the server process it spawns and kills its whole process group when it
// ends. It never trusts the server: every message, body and stderr tail is
// bounded.
//
// The client side is a small JSON-RPC layer of our own over transports of our
// own, not go-sdk's client: with its defaults that client leaks grandchild
// processes, overruns deadlines (a 2 s probe of a silent server took 22 s),
// loops on a cursor that never advances and hides JSON-RPC codes and HTTP
// statuses (see CLIENT.md). Exact era detection and per-phase timings need
// the wire in hand. go-sdk serves as the server side in tests and examples.
//
// It knows nothing of locks, schedules or metrics.
package probe

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Era is the protocol generation a server speaks.
type Era string

const (
	EraAuto   Era = "auto"   // detect with server/discover, fall back to initialize
	EraModern Era = "modern" // 2026-07-28 and later: stateless, _meta on every request
	EraLegacy Era = "legacy" // 2024-11-05 to 2025-11-25: the initialize handshake
)

// Protocol versions a probe speaks, newest first.
const (
	VersionModern = "2026-07-28"
)

// LegacyVersions are the initialize-based versions a probe accepts, in order
// of preference.
var LegacyVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// Reason is the stable, bounded cause of a failed probe. It is used as a
// metric label value, so the set must stay small and fixed.
type Reason string

const (
	ReasonNone         Reason = ""
	ReasonSpawnFailed  Reason = "spawn_failed" // the command could not be started
	ReasonExited       Reason = "exited"       // the process ended before the probe finished
	ReasonTimeout      Reason = "timeout"      // the deadline passed
	ReasonCanceled     Reason = "canceled"     // the caller gave up (shutdown), not the server's fault
	ReasonClosed       Reason = "closed"       // the server closed the stream or connection
	ReasonProtocol     Reason = "protocol"     // the server broke the protocol (bad JSON-RPC, wrong id, no tools array)
	ReasonRPCError     Reason = "rpc_error"    // the server answered with a JSON-RPC error
	ReasonUnauthorized Reason = "unauthorized" // HTTP 401
	ReasonForbidden    Reason = "forbidden"    // HTTP 403
	ReasonHTTPStatus   Reason = "http_status"  // another unexpected HTTP status
	ReasonConnection   Reason = "connection"   // dial, DNS or reset
	ReasonTLS          Reason = "tls"          // certificate or handshake failure
	ReasonTooLarge     Reason = "too_large"    // a message or body over the size cap
	ReasonPagination   Reason = "pagination"   // a repeated cursor or more pages than the cap
	ReasonConfig       Reason = "config"       // the target could not be built (unset variable, unreadable secret file)

	// The caller's judgements of a probe, never set by Run: the runner
	// checks the credentials a server is given before probing it, and
	// reads a failed probe for a rejected credential (internal/credential).
	ReasonCredentialMissing  Reason = "credential_missing"  //nolint:gosec // G101: a reason, not a credential. A credential expanded to an empty value; the server was not probed
	ReasonCredentialRejected Reason = "credential_rejected" //nolint:gosec // G101: a reason, not a credential. The server rejected the credential it was given
	// ReasonUpstreamUnreachable: the server answered, or said as it died,
	// that it could not reach the service it fronts (connection refused,
	// DNS, TLS, a 502/503/504 from it): the service is unreachable, the
	// server and its credential are not at fault.
	ReasonUpstreamUnreachable Reason = "upstream_unreachable"
	// ReasonRateLimited: an answer refused the request for a rate limit or
	// a quota (a 429, "rate limit exceeded"; internal/credential reads
	// it). A canary call's judgement, never a probe's: a probe refused so
	// fails with the reason its request did (http_status, rpc_error).
	ReasonRateLimited Reason = "rate_limited"
)

// Reasons lists every reason a probe fails with, for metrics that must be
// bounded.
var Reasons = []Reason{
	ReasonSpawnFailed, ReasonExited, ReasonTimeout, ReasonCanceled, ReasonClosed,
	ReasonProtocol, ReasonRPCError, ReasonUnauthorized, ReasonForbidden,
	ReasonHTTPStatus, ReasonConnection, ReasonTLS, ReasonTooLarge,
	ReasonPagination, ReasonConfig, ReasonCredentialMissing, ReasonCredentialRejected, ReasonUpstreamUnreachable,
}

// Target says where a server is and how to reach it. Values are final: any
// ${VAR} expansion happened before the probe.
type Target struct {
	// Stdio servers.
	Command    string
	Args       []string
	Env        map[string]string // the server's own variables, added to the minimal environment
	Dir        string
	InheritEnv bool // pass mcpwatch's whole environment instead of the minimal one

	// Remote servers.
	URL       string
	Transport Transport // stdio for Command targets; http, sse or auto (default) for URLs
	Headers   map[string]string
	// CA is the PEM of the certificates that replace the system roots (a
	// private CA), read by the caller when it built the target, through
	// its bounded reader: the probe reads no file. CAFile is where it was
	// read, for messages only.
	CA                 []byte
	CAFile             string
	InsecureSkipVerify bool
	// Auth, when set, authorizes every request (OAuth); Headers should then
	// hold no Authorization.
	Auth Authorizer
	// PublicOnly keeps every connection of the probe, redirects included,
	// to public addresses: the rule is checked on the addresses a host name
	// resolves to, as the connection is dialed, so a public-looking name
	// that resolves to 127.0.0.1, 10.0.0.7 or 169.254.169.254 is refused
	// before any request (and so any header) leaves. A server whose URL and
	// headers someone else chose (a registry) gets it. PublicOnlyFix is the
	// next step a refusal names ("set private_remotes: true ...").
	PublicOnly    bool
	PublicOnlyFix string

	// Era pins the protocol era; EraAuto (or empty) detects it.
	Era Era
	// EraHint, when Era is auto, is the era the server spoke last time (the
	// daemon's memory, the preflight's era cache): tried first, without
	// server/discover, and detected afresh within the same deadline when
	// the probe fails in a way a change of era explains.
	EraHint Era
}

// Options bound what a probe may cost. Zero values take the defaults.
type Options struct {
	MaxMessageBytes int64 // per JSON-RPC message or HTTP body; default 4 MiB
	MaxPages        int   // tools/list pages; default 100
	MaxTools        int   // tools in the whole list, all pages together; default 10,000
	// MaxListBytes bounds the bytes of the tools of one list, all pages
	// together (names, descriptions, schemas, annotations as decoded):
	// default 16 MiB, and never less than MaxMessageBytes. Without it a
	// server could list 100 pages of one 4 MiB tool each, and a daemon
	// would hold 400 MB for it.
	MaxListBytes    int64
	StderrTailBytes int           // kept from a stdio server's stderr; default 4 KiB
	DiscoverTimeout time.Duration // sub-deadline for server/discover during detection; default 3s
	MaxRedirects    int           // HTTP redirects followed; default 3
	ClientName      string        // clientInfo.name; default "mcpwatch"
	ClientVersion   string        // clientInfo.version
	Transcript      bool          // record every message sent and received (debug)
	// Conns, when set, keeps HTTP connections alive for the next probe of
	// the same origin (the daemon's); nil closes them with the probe.
	Conns *ConnPool
	// AfterList, when set, is called once tools/list succeeded, with a
	// Caller for canary tools/call requests in the same session.
	AfterList AfterList
}

// Result is what one probe observed. A probe always returns one; OK is false
// and Reason is set when it failed.
type Result struct {
	OK         bool   `json:"ok"`
	Reason     Reason `json:"reason,omitempty"`
	Error      string `json:"error,omitempty"` // one line for people; never carries a secret
	HTTPStatus int    `json:"http_status,omitempty"`
	RPCCode    int    `json:"rpc_code,omitempty"` // JSON-RPC error code; codes are never 0
	// Challenge is the parsed WWW-Authenticate header of a 401 or 403.
	Challenge *Challenge `json:"challenge,omitempty"`

	Transport       Transport `json:"transport"` // the transport actually used
	Era             Era       `json:"era,omitempty"`
	ProtocolVersion string    `json:"protocol_version,omitempty"`
	ServerName      string    `json:"server_name,omitempty"`
	ServerVersion   string    `json:"server_version,omitempty"`

	Tools       []Tool `json:"tools"`
	Pages       int    `json:"pages"`
	TTLMillis   *int64 `json:"-"` // modern results: the first page's ttlMs; JSON has ttl_seconds
	ListChanged int    `json:"list_changed_notifications,omitempty"`
	// Relisted is true when tools/list was read a second time in the same
	// session, because the server announced a change of its list during
	// the probe (Tools is the second list).
	Relisted bool `json:"relisted,omitempty"`
	// AnnouncesChanges is true when the server declared
	// capabilities.tools.listChanged (in its initialize or server/discover
	// result): it says when its list changes, so a listener can hear it.
	AnnouncesChanges bool `json:"announces_changes,omitempty"`

	Started  time.Time `json:"started"`
	Timings  Timings   `json:"timings"`
	Duration float64   `json:"duration_seconds"` // Timings.Total in seconds, for readers of JSON

	// Credentials is what the caller knows of the credentials used.
	Credentials *CredentialStatus `json:"credentials,omitempty"`
	// Upstream is how the server said it could not reach the service it
	// fronts, when the caller judged the probe so (reason
	// upstream_unreachable); Run does not fill it.
	Upstream *UpstreamFailure `json:"upstream_unreachable,omitempty"`

	// Session is how the probe reached a stdio server kept running
	// between probes (Live): nil for a probe that started its own and
	// ended it.
	Session *Session `json:"session,omitempty"`

	StderrTail string            `json:"stderr_tail,omitempty"`
	Warnings   []string          `json:"warnings,omitempty"`
	Transcript []TranscriptEntry `json:"transcript,omitempty"`

	// Operations are the requests the probe made, in order, each with its
	// duration and outcome (at most MaxOperations): what OpenTelemetry's
	// mcp.client.operation.duration measures. Notifications are not in
	// it, nor a request that never went out (a spawn that failed).
	Operations []Operation `json:"-"`
}

// Session is what a probe of a Live says of the server it spoke to.
type Session struct {
	// Started is when that server's process started.
	Started time.Time `json:"started"`
	// Start is why the probe started it (a StartReason), empty when it was
	// running already and the probe was tools/list on it.
	Start StartReason `json:"start,omitempty"`
	// Kept: it runs on after the probe, for the next one. A probe that
	// failed or ran out of time ended it with its process group.
	Kept bool `json:"kept"`
}

// StartReason is why a probe of a Live started its server: a fixed set.
type StartReason string

const (
	StartFirst   StartReason = "first"         // none was running
	StartExited  StartReason = "exited"        // the server ended between probes
	StartFailed  StartReason = "failed"        // the probe before failed or timed out, and ended it
	StartChanged StartReason = "changed"       // its command, arguments, environment or folder changed (a rotated secret too)
	StartRenewed StartReason = "restart_every" // it had run for restart_every
)

// Methods of the requests a probe makes, as Operation.Method names them.
const (
	MethodDiscover   = "server/discover"
	MethodInitialize = "initialize"
	MethodListTools  = "tools/list"
	MethodCallTool   = "tools/call"
)

// MaxOperations bounds Result.Operations: a probe of 100 tools/list pages
// and its calls fits; a longer one keeps its first requests.
const MaxOperations = 128

// Operation is one request a probe made: from sending it to its answer,
// or to its failure.
type Operation struct {
	Method string // one of the Method constants
	// Tool is the tool a tools/call called; empty for other methods.
	Tool     string
	Duration time.Duration
	// Error is why the request failed ("" when it was answered): the
	// probe's reasons, rpc_error for a JSON-RPC error.
	Error Reason
	// ToolError is a tools/call answered with isError: true: the request
	// succeeded, the tool reported an error.
	ToolError bool
}

// Tool is one tool as the server listed it. Its strings and bytes may be
// shared with other probes' tools of the same text (see toolText): read
// them, never write them.
type Tool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema,omitempty"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
}

// size is what the tool takes in memory, near enough: the bytes of its
// fields.
func (t Tool) size() int64 {
	return int64(len(t.Name) + len(t.Title) + len(t.Description) + len(t.InputSchema) + len(t.OutputSchema) + len(t.Annotations))
}

// Timings are the durations of a probe's phases.
type Timings struct {
	// Connect is spawning the process (stdio) or opening the event stream
	// up to its endpoint event (legacy SSE). Streamable HTTP connects in
	// its first exchange, and that phase counts the time.
	Connect   time.Duration   `json:"connect"`
	Handshake time.Duration   `json:"handshake"` // server/discover and/or initialize
	Pages     []time.Duration `json:"pages"`     // each tools/list page
	Total     time.Duration   `json:"total"`
}

// MarshalJSON writes every duration as seconds, a float, as the rest of
// mcpwatch's JSON does: connect_seconds, handshake_seconds, pages_seconds,
// total_seconds.
func (t Timings) MarshalJSON() ([]byte, error) {
	pages := make([]float64, len(t.Pages))
	for i, p := range t.Pages {
		pages[i] = p.Seconds()
	}
	return json.Marshal(struct {
		Connect   float64   `json:"connect_seconds"`
		Handshake float64   `json:"handshake_seconds"`
		Pages     []float64 `json:"pages_seconds"`
		Total     float64   `json:"total_seconds"`
	}{t.Connect.Seconds(), t.Handshake.Seconds(), pages, t.Total.Seconds()})
}

// MarshalJSON adds ttl_seconds, the server's ttlMs in seconds.
func (r Result) MarshalJSON() ([]byte, error) {
	type plain Result // without this method
	out := struct {
		plain
		TTLSeconds *float64 `json:"ttl_seconds,omitempty"`
	}{plain: plain(r)}
	if r.TTLMillis != nil {
		s := float64(*r.TTLMillis) / 1000
		out.TTLSeconds = &s
	}
	return json.Marshal(out)
}

// MarshalJSON writes At as at_seconds.
func (e TranscriptEntry) MarshalJSON() ([]byte, error) {
	type plain TranscriptEntry
	return json.Marshal(struct {
		AtSeconds float64 `json:"at_seconds"`
		plain
	}{e.At.Seconds(), plain(e)})
}

// Challenge is a parsed WWW-Authenticate Bearer challenge.
type Challenge struct {
	Scheme           string `json:"scheme"`
	Error            string `json:"error,omitempty"` // e.g. insufficient_scope, invalid_token
	Scope            string `json:"scope,omitempty"`
	ResourceMetadata string `json:"resource_metadata,omitempty"`
	Description      string `json:"error_description,omitempty"`
}

// TranscriptEntry is one message of a debug transcript. Header values are
// never recorded.
type TranscriptEntry struct {
	At        time.Duration   `json:"-"`         // since the probe started; JSON has at_seconds
	Direction string          `json:"direction"` // "send" or "recv"
	Message   json.RawMessage `json:"message,omitempty"`
	Note      string          `json:"note,omitempty"`
}

// ToolNames returns the names of the tools seen, in the server's order.
func (r *Result) ToolNames() []string {
	names := make([]string, len(r.Tools))
	for i, t := range r.Tools {
		names[i] = t.Name
	}
	return names
}

// String renders the challenge on one line for people: the scheme and what
// it asks for (error, scope, where the resource's metadata is).
func (c *Challenge) String() string {
	parts := []string{c.Scheme}
	if c.Error != "" {
		parts = append(parts, fmt.Sprintf("error=%q", c.Error))
	}
	if c.Scope != "" {
		parts = append(parts, fmt.Sprintf("scope=%q", c.Scope))
	}
	if c.ResourceMetadata != "" {
		parts = append(parts, "resource_metadata="+c.ResourceMetadata)
	}
	return strings.Join(parts, " ")
}

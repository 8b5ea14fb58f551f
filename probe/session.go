package probe

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
)

// The MCP logic of a probe, written once for every transport: era detection,
// the legacy handshake, and tools/list with its pages. A conn moves the
// messages.
//
// What a conn can rely on: a modern request's params always carry the
// _meta with io.modelcontextprotocol/protocolVersion (server/discover
// included, which is sent before setProtocol, since detection is not over
// yet); setProtocol is called once the era and version are settled (modern:
// before the first tools/list; legacy: right after the initialize result,
// before notifications/initialized). A conn returns an *RPCError when the
// server answered with a JSON-RPC error (with the HTTP status that carried
// it), and a *Failure otherwise.

// JSON-RPC error codes that decide the era.
const (
	codeMethodNotFound     = -32601
	codeHeaderMismatch     = -32020
	codeMissingCapability  = -32021
	codeUnsupportedVersion = -32022
)

// modernVersions are the stateless versions a probe speaks, preferred first.
var modernVersions = []string{VersionModern}

// implementation is clientInfo and serverInfo.
type implementation struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// requestMeta is the _meta every modern request carries.
type requestMeta struct {
	ProtocolVersion    string         `json:"io.modelcontextprotocol/protocolVersion"`
	ClientInfo         implementation `json:"io.modelcontextprotocol/clientInfo"`
	ClientCapabilities struct{}       `json:"io.modelcontextprotocol/clientCapabilities"`
}

type discoverParams struct {
	Meta *requestMeta `json:"_meta"`
}

type initializeParams struct {
	ProtocolVersion string         `json:"protocolVersion"`
	Capabilities    struct{}       `json:"capabilities"`
	ClientInfo      implementation `json:"clientInfo"`
}

// listParams are the params of tools/list. In the modern era an empty cursor
// is a cursor, so presence is a pointer.
type listParams struct {
	Meta   *requestMeta `json:"_meta,omitempty"`
	Cursor *string      `json:"cursor,omitempty"`
}

// resultMeta is the _meta of a modern result.
type resultMeta struct {
	ServerInfo *implementation `json:"io.modelcontextprotocol/serverInfo"`
}

// dialer makes fresh conns to one target.
type dialer struct {
	transport Transport
	open      func(ctx context.Context) (conn, error)
	// respawn: a conn can die of a request it does not know (stdio: some
	// legacy servers exit on a first request that is not initialize), and
	// a fresh one is opened for initialize when it did. A conn that is
	// alive is never replaced: the server that answered server/discover
	// (or kept silent past its sub-deadline) gets initialize.
	respawn bool
	// detect: send server/discover when the era is not known. Off for the
	// legacy HTTP+SSE transport, which no modern server speaks.
	detect bool
	// fallback is tried when a legacy initialize fails with an error that
	// sseFallback recognises (streamable HTTP in auto mode).
	fallback *dialer
}

// session is one probe in progress: what it has learnt so far, and the conn
// it holds.
type session struct {
	opts Options
	obs  *observer
	res  *Result
	cur  conn
	// hinted: the era being followed is a hint, not detected or pinned.
	hinted bool
	// discoverSilent: server/discover got no answer within its
	// sub-deadline.
	discoverSilent bool
	// listBytes counts the bytes of the tools listed so far, against
	// Options.MaxListBytes.
	listBytes int64
	// keep: a stdio conn that served the whole probe is kept running for
	// the next (Live), in kept, instead of being closed.
	keep bool
	kept *stdioConn
}

// run probes with d, honouring an era pin or hint. Whatever it opened is
// closed when it returns, on a panic too: a bug of ours must not leave a
// server's process group behind.
func (s *session) run(ctx context.Context, d *dialer, era, hint Era) (err error) {
	defer func() {
		if r := recover(); r != nil {
			s.release(ctx)
			panic(r)
		}
		if err == nil && s.keep && ctx.Err() == nil {
			s.detach()
		}
		s.release(ctx)
	}()
	if era == EraAuto {
		era = ""
	}
	if era == "" && (hint == EraModern || hint == EraLegacy) && d.detect {
		s.hinted = true
		err := s.attempt(ctx, d, hint)
		s.hinted = false
		if err == nil || !hintDisproved(ctx, err) {
			return err
		}
		// The era remembered from an earlier probe is no longer the
		// server's: detect it afresh, within the same deadline.
		s.release(ctx)
		s.retry(hint, err)
	}
	return s.attempt(ctx, d, era)
}

// attempt is one probe over a conn of d: era pinned (modern, legacy) or
// detected ("").
func (s *session) attempt(ctx context.Context, d *dialer, era Era) error {
	c, err := s.connect(ctx, d)
	if err != nil {
		return err
	}
	switch {
	case era == EraModern:
		return s.modern(ctx, c, VersionModern)
	case era == EraLegacy || !d.detect:
		return s.legacy(ctx, c, d)
	}
	verdict, version, err := s.detect(ctx, c)
	if err != nil {
		return err
	}
	if verdict == EraModern {
		return s.modern(ctx, c, version)
	}
	return s.legacyAfterDiscover(ctx, c, d)
}

// legacyAfterDiscover runs the legacy handshake after server/discover said
// legacy, on the same conn while it lives: a legacy server that got an
// unknown first request answers it (-32601 from the TypeScript SDK, -32602
// from the Python SDK), ignores it, or exits. Only one that read the
// request and then exited or closed its stdout, before or instead of
// answering initialize, is started again; one that ended without reading
// anything (it could not start: see its stderr) is not, and a slow one is
// never killed for being slow (the probe's deadline alone ends it).
func (s *session) legacyAfterDiscover(ctx context.Context, c conn, d *dialer) error {
	if d.respawn && endedOnRequest(c) {
		s.obs.warn("the server ended after server/discover, its first request; started it again for initialize (it is a legacy server that ends on an unknown first request)")
		var err error
		if c, err = s.reconnect(ctx, d); err != nil {
			return err
		}
		return s.legacy(ctx, c, d)
	}
	err := s.legacy(ctx, c, d)
	if err == nil || ctx.Err() != nil || s.res.ProtocolVersion != "" {
		return err
	}
	var rpcErr *RPCError
	switch {
	case d.respawn && endedOnRequest(c):
		s.obs.warn("the server ended after server/discover, without answering initialize; started it again for initialize (it is a legacy server that ends on an unknown first request)")
		if c, err = s.reconnect(ctx, d); err != nil {
			return err
		}
		return s.legacy(ctx, c, d)
	case s.discoverSilent && errors.As(err, &rpcErr):
		// server/discover went unanswered within its sub-deadline, and
		// initialize was refused: a modern server that was slow to start.
		// It is up now, so ask it again, once.
		s.discoverSilent = false
		verdict, version, derr := s.detect(ctx, c)
		if derr == nil && verdict == EraModern {
			return s.modern(ctx, c, version)
		}
	}
	return err
}

// reconnect replaces the current conn with a fresh one of d: the old
// process goes before its successor starts.
func (s *session) reconnect(ctx context.Context, d *dialer) (conn, error) {
	s.release(ctx)
	return s.connect(ctx, d)
}

// endedOnRequest reports whether a conn's server ended after reading what
// was sent to it: its process exited or closed stdout, and the request is
// not still in its stdin. That is how a legacy server that ends on an
// unknown first request behaves; one that ended without reading anything
// crashed at start (a missing directory, a missing credential) and would
// only crash again. Conns that cannot tell are alive.
func endedOnRequest(c conn) bool {
	dc, ok := c.(interface {
		dead() bool
		readNothing() bool
	})
	return ok && dc.dead() && !dc.readNothing()
}

// endedUnprompted reports whether err is the exit of a server that read
// nothing it was sent: it ended on its own, whatever the era.
func endedUnprompted(err error) bool { return errors.Is(err, errEndedUnprompted) }

// hintDisproved says whether a probe that followed a remembered era failed
// in a way a change of era explains: the server answered, but not as that
// era's server would (an error, a refusal by status, a malformed answer),
// or went away after reading the request. Authorization, connection, TLS,
// size and deadline failures say nothing about the era, nor does a server
// error (5xx, 429), nor a process that ended before reading anything.
func hintDisproved(ctx context.Context, err error) bool {
	if ctx.Err() != nil || endedUnprompted(err) {
		return false
	}
	var rpcErr *RPCError
	var f *Failure
	switch {
	case errors.As(err, &f):
		switch f.Reason {
		case ReasonProtocol, ReasonClosed, ReasonExited:
			return true
		case ReasonHTTPStatus:
			return f.HTTPStatus >= 400 && f.HTTPStatus < 500 && f.HTTPStatus != 429
		case ReasonRPCError:
			return true
		}
		return false
	case errors.As(err, &rpcErr):
		return rpcErr.HTTPStatus < 500
	}
	return false
}

// retry forgets what a probe that followed a wrong era hint learnt, keeping
// its timings (they were spent), before the era is detected afresh.
func (s *session) retry(hint Era, err error) {
	r := s.res
	r.Tools = r.Tools[:0]
	s.listBytes = 0
	r.Pages, r.Relisted = 0, false
	r.Timings.Pages = nil
	r.TTLMillis = nil
	r.Era, r.ProtocolVersion, r.ServerName, r.ServerVersion = "", "", "", ""
	s.obs.warn("the server no longer speaks the %s era it spoke last time (%s); detected its era again", hint, sanitize.OneLine(err.Error()))
}

// connect opens a conn with d and makes it the session's current one.
func (s *session) connect(ctx context.Context, d *dialer) (conn, error) {
	s.res.Transport = d.transport
	start := time.Now()
	c, err := d.open(ctx)
	s.res.Timings.Connect += time.Since(start)
	if err != nil {
		return nil, err
	}
	s.cur = c
	return c, nil
}

// detach moves a stdio conn that served the probe to kept, still running,
// with what it wrote on stderr so far; release then closes nothing.
func (s *session) detach() {
	if c, ok := s.cur.(*stdioConn); ok {
		s.kept, s.cur = c, nil
		s.res.StderrTail = c.stderrStartAndTail()
	}
}

// release closes the current conn, keeping its stderr tail.
func (s *session) release(ctx context.Context) {
	if s.cur == nil {
		return
	}
	s.cur.close(ctx)
	if st, ok := s.cur.(interface{ stderrTail() string }); ok {
		if tail := st.stderrTail(); tail != "" {
			s.res.StderrTail = tail
		}
	}
	s.cur = nil
}

func (s *session) meta(version string) *requestMeta {
	return &requestMeta{
		ProtocolVersion: version,
		ClientInfo:      implementation{Name: s.opts.ClientName, Version: s.opts.ClientVersion},
	}
}

// modern lists tools statelessly: no handshake, _meta on every request.
func (s *session) modern(ctx context.Context, c conn, version string) error {
	s.res.Era = EraModern
	s.res.ProtocolVersion = version
	c.setProtocol(EraModern, version)
	return s.listTools(ctx, c, s.meta(version))
}

// legacy runs initialize, notifications/initialized and tools/list. On
// streamable HTTP in auto mode, an initialize refused by the spec's rule
// moves the probe to the legacy HTTP+SSE transport.
func (s *session) legacy(ctx context.Context, c conn, d *dialer) error {
	s.res.Era = EraLegacy
	raw, err := s.initialize(ctx, c)
	if err != nil && d.fallback != nil && sseFallback(err) {
		c, raw, err = s.initializeFallback(ctx, d, err)
	}
	if err != nil {
		if endedUnprompted(err) {
			// It never read a request (server/discover's deadline may have
			// passed first on a loaded machine): nothing says which era it
			// speaks, and a page must not blame one.
			s.res.Era = ""
		}
		return err
	}
	r, err := readInitialize(raw)
	s.res.AnnouncesChanges = r.Capabilities.toolsListChanged()
	if err != nil {
		return err
	}
	if !slices.Contains(LegacyVersions, r.ProtocolVersion) {
		// A server that answers initialize with a version of another era
		// (the Python report server answers 2026-07-28) still lists
		// its tools the legacy way. Knowing its surface is the point of a
		// probe, so go on, and say so.
		s.obs.warn("initialize: the server chose protocol version %q, which is not an initialize-era version (%s); listing tools the legacy way",
			sanitize.Truncate(r.ProtocolVersion, 40), strings.Join(LegacyVersions, ", "))
	}
	s.res.ProtocolVersion = r.ProtocolVersion
	s.setServerInfo(r.ServerInfo)
	c.setProtocol(EraLegacy, r.ProtocolVersion)

	start := time.Now()
	err = c.notify(ctx, "notifications/initialized", nil)
	s.res.Timings.Handshake += time.Since(start)
	if err != nil {
		return err
	}
	return s.listTools(ctx, c, nil)
}

// initializeFallback moves to d's fallback transport (legacy HTTP+SSE) after
// the streamable initialize was refused by the spec's rule, and initializes
// there. A GET that the server answers with a status, and no event stream,
// means it speaks no HTTP+SSE either: its refusal of the streamable
// initialize is then the answer, not the GET's status.
func (s *session) initializeFallback(ctx context.Context, d *dialer, refused error) (conn, json.RawMessage, error) {
	s.release(ctx)
	c, err := s.connect(ctx, d.fallback)
	if err != nil {
		var f *Failure
		var rpcErr *RPCError
		if (errors.As(err, &f) && f.Reason == ReasonHTTPStatus) || errors.As(err, &rpcErr) {
			s.res.Transport = d.transport
			return nil, nil, refused
		}
		return nil, nil, err
	}
	raw, err := s.initialize(ctx, c)
	return c, raw, err
}

func (s *session) initialize(ctx context.Context, c conn) (json.RawMessage, error) {
	start := time.Now()
	raw, err := c.call(ctx, MethodInitialize, initializeParams{
		ProtocolVersion: LegacyVersions[0],
		ClientInfo:      implementation{Name: s.opts.ClientName, Version: s.opts.ClientVersion},
	})
	took := time.Since(start)
	s.res.Timings.Handshake += took
	s.obs.operation(ctx, Operation{Method: MethodInitialize, Duration: took}, err)
	return raw, err
}

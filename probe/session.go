package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/sanitize"
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
}

// run probes with d, honouring an era pin or hint. Whatever it opened is
// closed when it returns, on a panic too: a bug of ours must not leave a
// server's process group behind.
func (s *session) run(ctx context.Context, d *dialer, era, hint Era) error {
	defer s.release(ctx)
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

// discoverBudget is the sub-deadline of server/discover: the configured
// timeout, but never more than half of what remains, so a legacy server that
// ignores unknown methods leaves time for initialize.
func (s *session) discoverBudget(ctx context.Context) time.Duration {
	budget := s.opts.DiscoverTimeout
	if deadline, ok := ctx.Deadline(); ok {
		budget = min(budget, time.Until(deadline)/2)
	}
	return budget
}

// detect asks server/discover under its own short deadline and reads the
// era from the answer (see CLIENT.md, Era detection). Authorization, connection
// and TLS failures are not era signals: they end the probe. A version list
// (a discover result's, or -32022's data) decides by eraOf.
func (s *session) detect(ctx context.Context, c conn) (Era, string, error) {
	sub, cancel := context.WithTimeout(ctx, s.discoverBudget(ctx))
	defer cancel()
	start := time.Now()
	raw, err := c.call(sub, MethodDiscover, discoverParams{Meta: s.meta(VersionModern)})
	took := time.Since(start)
	s.res.Timings.Handshake += took
	s.obs.operation(sub, Operation{Method: MethodDiscover, Duration: took}, err)
	if ctx.Err() != nil {
		return "", "", ctxFailure(ctx, "server/discover", s.obs.start)
	}
	if err == nil {
		return s.discovered(raw)
	}
	s.discoverSilent = sub.Err() != nil
	var rpcErr *RPCError
	var f *Failure
	switch {
	case errors.As(err, &f) && isFinal(f.Reason), endedUnprompted(err):
		return "", "", err
	case !errors.As(err, &rpcErr):
		return EraLegacy, "", nil // silence, exit, garbage: a legacy server
	case rpcErr.Code == codeUnsupportedVersion:
		var data struct {
			Supported []string `json:"supported"`
		}
		_ = json.Unmarshal(rpcErr.Data, &data)
		return eraOf(data.Supported)
	case rpcErr.Code == codeMissingCapability, rpcErr.Code == codeHeaderMismatch,
		rpcErr.Code == codeMethodNotFound && rpcErr.HTTPStatus == 404:
		return EraModern, VersionModern, nil
	}
	return EraLegacy, "", nil
}

// isFinal says whether a failure of server/discover ends the probe instead
// of meaning "legacy".
func isFinal(r Reason) bool {
	switch r {
	case ReasonUnauthorized, ReasonForbidden, ReasonConnection, ReasonTLS,
		ReasonSpawnFailed, ReasonCanceled, ReasonConfig:
		return true
	}
	return false
}

// discovered reads a server/discover result: one with supportedVersions is
// a modern server.
func (s *session) discovered(raw json.RawMessage) (Era, string, error) {
	var r struct {
		SupportedVersions json.RawMessage `json:"supportedVersions"`
		Meta              json.RawMessage `json:"_meta"`
		Capabilities      capabilities    `json:"capabilities"`
	}
	if json.Unmarshal(raw, &r) != nil || isAbsent(r.SupportedVersions) {
		return EraLegacy, "", nil //nolint:nilerr // a reply that is no discover result is what a legacy server sends: an answer, not a failure
	}
	s.res.AnnouncesChanges = r.Capabilities.toolsListChanged()
	var versions []string
	if err := json.Unmarshal(r.SupportedVersions, &versions); err != nil {
		return "", "", failf(ReasonProtocol, "server/discover: supportedVersions is not a list of strings")
	}
	s.serverInfoFrom(r.Meta)
	return eraOf(versions)
}

// eraOf picks the era from the versions a server says it supports: a modern
// one we speak, else legacy when it names an initialize-era version we speak
// (go-sdk v1.8.0 configured for the legacy era answers server/discover with
// -32022 naming only those: initialize is the only way to use them).
func eraOf(supported []string) (Era, string, error) {
	if version, ok := pickVersion(supported, modernVersions); ok {
		return EraModern, version, nil
	}
	if _, ok := pickVersion(supported, LegacyVersions); ok {
		return EraLegacy, "", nil
	}
	return "", "", failf(ReasonProtocol, "server/discover: the server supports protocol versions %s, none of which mcpwatch speaks (%s, %s)",
		listVersions(supported), strings.Join(modernVersions, ", "), strings.Join(LegacyVersions, ", "))
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
	var r struct {
		ProtocolVersion string          `json:"protocolVersion"`
		ServerInfo      json.RawMessage `json:"serverInfo"`
		Capabilities    capabilities    `json:"capabilities"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return failf(ReasonProtocol, "initialize: the result is not an initialize result: %v", err)
	}
	s.res.AnnouncesChanges = r.Capabilities.toolsListChanged()
	switch {
	case r.ProtocolVersion == "":
		return failf(ReasonProtocol, "initialize: the result names no protocolVersion")
	case len(r.ProtocolVersion) > 64 || !visibleASCII(r.ProtocolVersion):
		// It goes back in every MCP-Protocol-Version header, and into
		// results and metrics.
		return failf(ReasonProtocol, "initialize: the server chose protocol version %q, which is not a version string", sanitize.Truncate(r.ProtocolVersion, 40))
	case !slices.Contains(LegacyVersions, r.ProtocolVersion):
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

// listTools reads every page of tools/list. meta is nil in the legacy era.
// A cursor seen before, or more pages than the cap, fails at once: a server
// whose cursor never advances would otherwise hold the probe to its deadline.
func (s *session) listTools(ctx context.Context, c conn, meta *requestMeta) error {
	seen := map[string]bool{}
	names := map[string]bool{}
	modern := meta != nil
	var cursor *string
	for n := 1; ; n++ {
		start := time.Now()
		p, err := s.callPage(ctx, c, listParams{Meta: meta, Cursor: cursor}, modern, names)
		s.res.Timings.Pages = append(s.res.Timings.Pages, time.Since(start))
		s.obs.operation(ctx, Operation{Method: MethodListTools, Duration: s.res.Timings.Pages[len(s.res.Timings.Pages)-1]}, err)
		if err == nil && modern && s.hinted && n == 1 && isAbsent(p.resultType) {
			// Some legacy servers list their tools without initialize; a
			// modern list carries resultType. Only a hint is questioned so.
			err = failf(ReasonProtocol, "tools/list: the result has no resultType, as a modern server's would")
		}
		if err != nil {
			return onPage(err, n)
		}
		if modern && s.res.TTLMillis == nil && !isAbsent(p.ttl) {
			var ttl float64
			if json.Unmarshal(p.ttl, &ttl) == nil {
				ms := int64(ttl)
				s.res.TTLMillis = &ms
			}
		}
		s.serverInfoFrom(p.meta)
		s.res.Pages = n
		next := p.next
		switch {
		case next == nil && s.relistDue():
			// The server announced a change of its list during this
			// probe: the list just read may be the one before it. Read
			// it once more, in the same session.
			s.res.Tools, s.res.Pages, s.res.Timings.Pages = nil, 0, nil
			s.listBytes = 0
			s.res.Relisted = true
			return s.listTools(ctx, c, meta)
		case next == nil:
			return s.afterList(ctx, c, meta)
		case seen[*next]:
			return failf(ReasonPagination, "tools/list: page %d returned cursor %q again; the server's pagination does not advance", n, sanitize.Truncate(*next, 40))
		case n >= s.opts.MaxPages:
			return failf(ReasonPagination, "tools/list: still more tools after %d pages, the page cap", n)
		}
		seen[*next] = true
		cursor = next
	}
}

// relistDue reports whether tools/list should be read once more: the
// server announced a change of its list (notifications/tools/list_changed)
// during the probe, and the list has not been read again yet.
func (s *session) relistDue() bool {
	if s.res.Relisted {
		return false
	}
	s.obs.mu.Lock()
	defer s.obs.mu.Unlock()
	return s.obs.listChanged > 0
}

// capabilities is what a server declares it does, as far as a probe cares.
type capabilities struct {
	Tools *struct {
		ListChanged bool `json:"listChanged"`
	} `json:"tools"`
}

func (c capabilities) toolsListChanged() bool { return c.Tools != nil && c.Tools.ListChanged }

// onPage names the page of a tools/list failure after the first one.
func onPage(err error, page int) error {
	if page == 1 {
		return err
	}
	var f *Failure
	if errors.As(err, &f) {
		return &Failure{Reason: f.Reason, HTTPStatus: f.HTTPStatus, Challenge: f.Challenge, Err: fmt.Errorf("%w (page %d)", err, page)}
	}
	return &Failure{Reason: ReasonRPCError, Err: fmt.Errorf("%w (page %d)", err, page)}
}

// serverInfoFrom takes serverInfo from a modern result's _meta, once.
func (s *session) serverInfoFrom(meta json.RawMessage) {
	if s.res.ServerName != "" || isAbsent(meta) {
		return
	}
	var m resultMeta
	if json.Unmarshal(meta, &m) == nil && m.ServerInfo != nil {
		s.res.ServerName = sanitize.Truncate(m.ServerInfo.Name, 200)
		s.res.ServerVersion = sanitize.Truncate(m.ServerInfo.Version, 100)
	}
}

func (s *session) setServerInfo(raw json.RawMessage) {
	var info implementation
	if json.Unmarshal(raw, &info) == nil {
		s.res.ServerName = sanitize.Truncate(info.Name, 200)
		s.res.ServerVersion = sanitize.Truncate(info.Version, 100)
	}
}

// pickVersion is the first of ours that the server lists.
func pickVersion(theirs, ours []string) (string, bool) {
	for _, v := range ours {
		if slices.Contains(theirs, v) {
			return v, true
		}
	}
	return "", false
}

func listVersions(vs []string) string {
	if len(vs) == 0 {
		return "(none listed)"
	}
	vs = slices.Clone(vs)
	if len(vs) > 8 {
		vs = append(vs[:8], "…")
	}
	for i, v := range vs {
		vs[i] = sanitize.Truncate(v, 20)
	}
	return "[" + strings.Join(vs, ", ") + "]"
}

// isAbsent is true for a missing or null JSON field.
func isAbsent(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

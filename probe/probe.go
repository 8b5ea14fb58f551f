package probe

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
)

// Defaults of Options.
const (
	DefaultMaxMessageBytes = 4 << 20
	DefaultMaxPages        = 100
	DefaultMaxTools        = 10_000
	DefaultMaxListBytes    = 16 << 20
	DefaultStderrTailBytes = 4 << 10
	DefaultDiscoverTimeout = 3 * time.Second
	DefaultMaxRedirects    = 3
	DefaultClientName      = "mcpwatch"
	DefaultClientVersion   = "dev"
)

// WithDefaults returns o with every zero field set to its default.
func (o Options) WithDefaults() Options {
	if o.MaxMessageBytes <= 0 {
		o.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if o.MaxPages <= 0 {
		o.MaxPages = DefaultMaxPages
	}
	if o.MaxTools <= 0 {
		o.MaxTools = DefaultMaxTools
	}
	if o.MaxListBytes <= 0 {
		o.MaxListBytes = DefaultMaxListBytes
	}
	// A list may always be as large as one page may be.
	o.MaxListBytes = max(o.MaxListBytes, o.MaxMessageBytes)
	if o.StderrTailBytes <= 0 {
		o.StderrTailBytes = DefaultStderrTailBytes
	}
	if o.DiscoverTimeout <= 0 {
		o.DiscoverTimeout = DefaultDiscoverTimeout
	}
	if o.MaxRedirects == 0 {
		o.MaxRedirects = DefaultMaxRedirects
	}
	if o.ClientName == "" {
		o.ClientName = DefaultClientName
	}
	if o.ClientVersion == "" {
		o.ClientVersion = DefaultClientVersion
	}
	return o
}

// Run probes one target within ctx: its deadline covers spawning or
// connecting, the handshake and every page of tools/list, and Run returns by
// then (a silent server gets reason timeout; a ctx canceled by the caller,
// canceled). It always returns a Result; OK is false and Reason set when the
// probe failed. Nothing Run starts outlives it: a stdio server's process
// group is killed and reaped, an HTTP session is closed.
func Run(ctx context.Context, t Target, opts Options) *Result {
	return runSession(ctx, opts, func(s *session) error { return s.probe(ctx, t) })
}

// runSession runs probe on a new session of one probe and returns its
// result.
func runSession(ctx context.Context, opts Options, probe func(*session) error) *Result {
	started := time.Now()
	opts = opts.WithDefaults()
	obs := &observer{start: started, transcript: opts.Transcript}
	scratch := toolScratch.Get().(*[]Tool)
	s := &session{opts: opts, obs: obs, res: &Result{Started: started, Tools: (*scratch)[:0]}}
	s.finish(ctx, probe(s), started)
	clear((*scratch)[:cap(*scratch)]) // the tools' strings and bytes belong to the result
	toolScratch.Put(scratch)
	return s.res
}

// toolScratch holds the slices tools/list appends a probe's tools to: a
// result gets a slice of exactly its tools, one allocation, rather than
// every slice appending doubled through (three times the tools' size, at
// every probe of every server). A slice grown past the scratch's capacity
// is its own and not kept.
var toolScratch = sync.Pool{New: func() any {
	s := make([]Tool, 0, 64)
	return &s
}}

// probe picks the transport and runs the session over it.
func (s *session) probe(ctx context.Context, t Target) error {
	d, err := s.dialerFor(t)
	if err != nil {
		return err
	}
	s.res.Transport = d.transport
	for _, era := range []Era{t.Era, t.EraHint} {
		switch era {
		case "", EraAuto, EraModern, EraLegacy:
		default:
			return failf(ReasonConfig, "unknown era %q (want auto, modern or legacy)", sanitize.Truncate(string(era), 20))
		}
	}
	return s.run(ctx, d, t.Era, t.EraHint)
}

// dialerFor builds the dialer of a target's transport (see dialers): a
// command's is stdio, a URL's auto unless the target names one.
func (s *session) dialerFor(t Target) (*dialer, error) {
	switch {
	case t.Command != "" && t.URL != "":
		return nil, failf(ReasonConfig, "a target has either a command or a URL, not both")
	case t.Command == "" && t.URL == "":
		return nil, failf(ReasonConfig, "a target needs a command or a URL")
	}
	name := t.Transport
	if name == "" {
		name = TransportAuto
		if t.Command != "" {
			name = TransportStdio
		}
	}
	d, ok := dialers[name]
	switch {
	case t.Command != "" && (!ok || !d.command):
		return nil, failf(ReasonConfig, "command %q: transport %q is for URLs", t.Command, t.Transport)
	case t.Command == "" && (!ok || d.command):
		return nil, failf(ReasonConfig, "unknown transport %q for a URL (want %s)", sanitize.Truncate(string(t.Transport), 20), urlTransports())
	}
	return d.dial(s, t), nil
}

// transportDialer makes the dialer of one transport for a target.
type transportDialer struct {
	command bool // it runs Target.Command; the others reach Target.URL
	dial    func(s *session, t Target) *dialer
}

// dialers are the transports a probe speaks, by name: a new transport is
// one entry.
var dialers = map[Transport]transportDialer{
	TransportStdio: {command: true, dial: func(s *session, t Target) *dialer {
		return &dialer{transport: TransportStdio, detect: true, respawn: true, open: func(ctx context.Context) (conn, error) {
			return asConn(startStdio(ctx, t, s.opts, s.obs))
		}}
	}},
	TransportHTTP: {dial: streamableDialer},
	TransportSSE:  {dial: sseDialer},
	TransportAuto: {dial: func(s *session, t Target) *dialer {
		d := streamableDialer(s, t)
		d.fallback = sseDialer(s, t) // tried when the server does not speak streamable HTTP
		return d
	}},
}

// streamableDialer dials streamable HTTP (2025-03-26 and later).
func streamableDialer(s *session, t Target) *dialer {
	return &dialer{transport: TransportHTTP, detect: true, open: func(context.Context) (conn, error) {
		return asConn(newHTTPConn(t, s.opts, s.obs))
	}}
}

// sseDialer dials the legacy HTTP+SSE transport (2024-11-05), which no
// modern server speaks: no era detection.
func sseDialer(s *session, t Target) *dialer {
	return &dialer{transport: TransportSSE, open: func(ctx context.Context) (conn, error) {
		return asConn(newSSEConn(ctx, t, s.opts, s.obs))
	}}
}

// urlTransports names the transports of a URL, for an error: "auto, http
// or sse".
func urlTransports() string {
	var names []string
	for name, d := range dialers {
		if !d.command {
			names = append(names, string(name))
		}
	}
	slices.Sort(names)
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// asConn passes on what a conn's constructor returned, keeping the nil
// pointer of a failed one out of the interface.
func asConn[C conn](c C, err error) (conn, error) {
	if err != nil {
		return nil, err
	}
	return c, nil
}

// finish fills the result's outcome, timings and what the observer saw.
func (s *session) finish(ctx context.Context, err error, started time.Time) {
	r := s.res
	if err == nil {
		r.OK = true
	} else {
		r.Tools = []Tool{} // a failed probe's partial list must not pass for a surface
		r.Reason, r.HTTPStatus, r.RPCCode, r.Challenge = classify(ctx, err)
		r.Error = sanitize.OneLine(err.Error())
	}
	s.obs.mu.Lock()
	r.Warnings = s.obs.warnings
	r.ListChanged = s.obs.listChanged
	r.Transcript = s.obs.entries
	r.Operations = s.obs.operations
	s.obs.mu.Unlock()
	r.Timings.Total = time.Since(started)
	r.Duration = r.Timings.Total.Seconds()
}

// classify maps an error to its reason and the details that go with it.
func classify(ctx context.Context, err error) (Reason, int, int, *Challenge) {
	var (
		reason    Reason
		status    int
		code      int
		challenge *Challenge
		f         *Failure
		rpcErr    *RPCError
	)
	if errors.As(err, &f) {
		reason, status, challenge = f.Reason, f.HTTPStatus, f.Challenge
	}
	if errors.As(err, &rpcErr) {
		code = rpcErr.Code
		if status == 0 {
			status = rpcErr.HTTPStatus
		}
		if reason == "" {
			reason = ReasonRPCError
		}
	}
	// Once the context has ended, a broken pipe or connection is its
	// consequence, not the server's doing.
	if ctx.Err() != nil {
		switch {
		case reason == "", reason == ReasonConnection, reason == ReasonClosed, reason == ReasonExited,
			errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
			reason = ReasonCanceled
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				reason = ReasonTimeout
			}
		}
	}
	if reason == "" {
		reason = ReasonProtocol
	}
	return reason, status, code, challenge
}

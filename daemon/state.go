package daemon

import (
	"slices"
	"strings"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/mcpwatch/mcpwatch/daemon/status"
	"github.com/mcpwatch/mcpwatch/internal/contracts"
	"github.com/mcpwatch/mcpwatch/internal/sanitize"
	"github.com/mcpwatch/mcpwatch/internal/verdict"
	"github.com/mcpwatch/mcpwatch/lockstore"
	"github.com/mcpwatch/mcpwatch/probe"
)

// stateOf judges one probe against its diff. A nil result is pending.
func stateOf(res *probe.Result, diff lockstore.Diff) verdict.State {
	return verdict.JudgeServer(res, diff, nil).State
}

// stateOfStatus judges a server's last probe and its last canary calls.
func stateOfStatus(st status.Server) verdict.State {
	return verdict.JudgeServer(st.Last, st.Diff, st.LatestCalls()).State
}

// failingCalls are the tools whose last call failed, in tool order.
func failingCalls(calls []status.Call) []string {
	var out []string
	for _, c := range calls {
		if c.Last != nil && !c.Last.Passed && c.Last.Reason != contracts.ReasonProbeFailed {
			out = append(out, c.Tool)
		}
	}
	return out
}

// judgement is what a state-change log line is about. Two probes with the
// same judgement make no line at info level, however their timings or error
// wording differ; a change of the missing set or of the failure reason does.
type judgement struct {
	state     verdict.State
	reason    probe.Reason
	missing   []string
	forbidden []string
	calls     []string // tools whose last call failed
}

func verdictOf(res *probe.Result, diff lockstore.Diff, calls []status.Call) judgement {
	var latest []contracts.Outcome
	for _, c := range calls {
		if c.Last != nil {
			latest = append(latest, *c.Last)
		}
	}
	v := judgement{state: verdict.StatePending}
	if res != nil {
		v.state = verdict.JudgeServer(res, diff, latest).State
	}
	switch v.state {
	case verdict.StateFailed:
		v.reason = res.Reason
	case verdict.StateMissing, verdict.StateForbidden:
		v.missing, v.forbidden = diff.Missing, diff.Forbidden
	}
	if v.state != verdict.StateFailed {
		v.calls = failingCalls(calls)
	}
	return v
}

func (v judgement) equal(o judgement) bool {
	return v.state == o.state && v.reason == o.reason &&
		slices.Equal(v.missing, o.missing) && slices.Equal(v.forbidden, o.forbidden) &&
		slices.Equal(v.calls, o.calls)
}

// fields are the "was" of a transition, in the shape of the fields of the
// line itself: was=missing was_missing=a,b; was=failed was_reason=timeout.
func (v judgement) fields() []zap.Field {
	f := []zap.Field{zap.String("was", string(v.state))}
	switch v.state {
	case verdict.StateFailed:
		f = append(f, zap.String("was_reason", string(v.reason)))
	case verdict.StateMissing, verdict.StateForbidden:
		if len(v.missing) > 0 {
			f = append(f, names("was_missing", v.missing))
		}
		if len(v.forbidden) > 0 {
			f = append(f, names("was_forbidden", v.forbidden))
		}
	case verdict.StateCallFailed:
		f = append(f, names("was_calls", v.calls))
	}
	return f
}

// names is a list of tool names as every log line writes one: a single
// value, comma-separated (missing=a,b), in logfmt and JSON alike, each name
// through sanitize.Text.
func names(key string, list []string) zap.Field {
	return zap.String(key, sanitize.Join(list, ","))
}

// transition is a server's judgement before and after a probe, or a change
// of the lock, with what the line about it names.
type transition struct {
	was   *judgement // nil for the server's first probe
	now   judgement
	res   *probe.Result
	diff  lockstore.Diff
	calls []status.Call
}

func (t transition) changed() bool { return t.was == nil || !t.was.equal(t.now) }

// logTransition writes the one line for a server whose judgement changed.
// What the server sent (tool names, its error, its stderr) goes through
// sanitize: the encoders escape line breaks and ESC, not bidirectional
// controls or C1 codes.
func logTransition(log *zap.Logger, server string, t transition) {
	was, now, res, diff := t.was, t.now, t.res, t.diff
	fields := []zap.Field{zap.String("server", server), zap.String("state", string(now.state))}
	if was != nil {
		fields = append(fields, was.fields()...)
	}
	level, msg := zapcore.WarnLevel, ""
	switch now.state {
	case verdict.StateOK:
		level, msg = zapcore.InfoLevel, "recovered"
		fields = append(fields, zap.Int("tools", len(res.Tools)))
		if diff.Locked {
			fields = append(fields, zap.Int("expected", len(diff.Expected)))
		}
	case verdict.StateMissing:
		msg = "locked tools missing"
		fields = append(fields, names("missing", diff.Missing),
			zap.Int("tools", len(res.Tools)), zap.Int("expected", len(diff.Expected)))
		if len(diff.Forbidden) > 0 {
			fields = append(fields, names("forbidden", diff.Forbidden))
		}
	case verdict.StateForbidden:
		msg = "forbidden tools present"
		fields = append(fields, names("forbidden", diff.Forbidden), zap.Int("tools", len(res.Tools)))
	case verdict.StateCallFailed:
		msg = "tool calls failing"
		fields = append(fields, names("calls", now.calls))
		for _, c := range t.calls {
			if c.Last != nil && !c.Last.Passed {
				fields = append(fields, zap.String("tool", sanitize.Text(c.Tool)), zap.String("reason", string(c.Last.Reason)), zap.String("error", sanitize.Text(c.Last.Message)))
				break
			}
		}
	case verdict.StateFailed:
		msg = "probe failed"
		fields = append(fields, zap.String("reason", string(res.Reason)), zap.String("error", sanitize.Text(res.Error)))
		if tail := stderrField(res.StderrTail); tail != "" {
			fields = append(fields, zap.String("stderr", sanitize.Text(tail)))
		}
	}
	if was == nil {
		msg = "first probe: " + msg
		if now.state == verdict.StateOK {
			msg = "first probe: ok"
		}
	}
	log.Log(level, msg, fields...)
}

// maxLoggedStderr bounds the stderr of a failure log line: the probe keeps
// a tail of probe.DefaultStderrTailBytes, which this matches.
const maxLoggedStderr = probe.DefaultStderrTailBytes

// stderrField is the whole stderr tail of a failed probe for its log line
// (the lines before the last often say why), without trailing blank lines,
// and at most maxLoggedStderr bytes: the end of it, where the error is.
// sanitize.Text escapes its line breaks, so it stays one log line.
func stderrField(tail string) string {
	tail = strings.TrimRight(tail, "\r\n\t ")
	if len(tail) > maxLoggedStderr {
		tail = "…" + strings.ToValidUTF8(tail[len(tail)-maxLoggedStderr:], "")
	}
	return tail
}

package daemon

import (
	"strings"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/mcpwatch/mcpwatch/internal/status"
	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
	"github.com/mcpwatch/mcpwatch/internal/verdict"
	"github.com/mcpwatch/mcpwatch/lockstore"
	"github.com/mcpwatch/mcpwatch/probe"
)

// wasFields are the "was" of a transition, in the shape of the fields of
// the line itself: was=missing was_missing=a,b; was=failed
// was_reason=timeout; was=call_failed was_calls=a.
func wasFields(was verdict.Judgement) []zap.Field {
	f := []zap.Field{zap.String("was", string(was.State))}
	switch was.State {
	case verdict.StateFailed:
		f = append(f, zap.String("was_reason", string(was.Reason)))
	case verdict.StateMissing, verdict.StateForbidden:
		if len(was.Missing) > 0 {
			f = append(f, names("was_missing", was.Missing))
		}
		if len(was.Forbidden) > 0 {
			f = append(f, names("was_forbidden", was.Forbidden))
		}
	case verdict.StateCallFailed:
		f = append(f, names("was_calls", was.Calls))
	case verdict.StateCredentialMissing, verdict.StateCredentialRejected:
		f = append(f, zap.String("was_credential", was.Credential))
	case verdict.StateUpstreamUnreachable:
		if len(was.Calls) > 0 {
			f = append(f, names("was_calls", was.Calls))
		}
	}
	return f
}

// names is a list of tool names as every log line writes one: a single
// value, comma-separated (missing=a,b), in logfmt and JSON alike, each name
// cut (sanitize.Name), at most sanitize.MaxNames of them, through
// sanitize.Text.
func names(key string, list []string) zap.Field {
	return zap.String(key, sanitize.Text(sanitize.JoinNames(list, ",", sanitize.MaxNames)))
}

// transition is a server's judgement before and after a probe, or a change
// of the lock, with what the line about it names. Two judgements that are
// Equal make no line at info level, however their timings or error
// wording differ; a change of the missing set, of the failure reason or of
// the failing calls does.
type transition struct {
	first bool // the server's first probe: was is pending
	was   verdict.Judgement
	now   verdict.Judgement
	res   *probe.Result
	diff  lockstore.Diff
	calls []status.Call
}

func (t transition) changed() bool { return t.first || !t.was.Equal(t.now) }

// logTransition writes the one line for a server whose judgement changed.
// What the server sent (tool names, its error, its stderr) goes through
// sanitize: the encoders escape line breaks and ESC, not bidirectional
// controls or C1 codes.
func logTransition(log *zap.Logger, server string, t transition) {
	now, res, diff := t.now, t.res, t.diff
	fields := []zap.Field{zap.String("server", server), zap.String("state", string(now.State))}
	if !t.first {
		fields = append(fields, wasFields(t.was)...)
	}
	level, msg := zapcore.WarnLevel, string(now.State)
	switch now.State {
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
		fields = append(fields, names("calls", now.Calls))
		// The first failing call's reason and message.
		for _, c := range t.calls {
			if c.Last != nil && len(now.Calls) > 0 && c.Tool == now.Calls[0] {
				fields = append(fields, zap.String("tool", sanitize.Text(sanitize.Name(c.Tool))), zap.String("reason", string(c.Last.Reason)), zap.String("error", sanitize.Text(c.Last.Message)))
				break
			}
		}
	case verdict.StateFailed:
		msg = "probe failed"
		fields = append(fields, zap.String("reason", string(res.Reason)), zap.String("error", sanitize.Text(res.Error)))
		fields = append(fields, stderrFields(res)...)
	case verdict.StateCredentialMissing:
		msg = "credential missing"
		fields = append(fields, zap.String("credential", now.Credential), zap.String("error", sanitize.Text(res.Error)))
	case verdict.StateCredentialRejected:
		msg = "credential rejected"
		fields = append(fields, zap.String("credential", now.Credential))
		if len(now.Calls) > 0 {
			fields = append(fields, names("calls", now.Calls))
		}
		if now.Quote != "" {
			fields = append(fields, zap.String("error", sanitize.Text(now.Quote)))
		}
		fields = append(fields, stderrFields(res)...)
	case verdict.StateUpstreamUnreachable:
		msg = "service unreachable"
		if len(now.Calls) > 0 {
			fields = append(fields, names("calls", now.Calls))
		}
		if now.Quote != "" {
			fields = append(fields, zap.String("error", sanitize.Text(now.Quote)))
		}
		fields = append(fields, stderrFields(res)...)
	}
	if t.first {
		msg = "first probe: " + msg
		if now.State == verdict.StateOK {
			msg = "first probe: ok"
		}
	}
	log.Log(level, msg, fields...)
}

// stderrFields is a failed probe's stderr tail as a log field: the whole
// tail (the lines before the last often say why), its end where it is
// long; sanitize.Text escapes its line breaks, so it stays one log line.
// None for a probe that did not fail, or a server that wrote nothing.
func stderrFields(res *probe.Result) []zap.Field {
	if res == nil || res.OK {
		return nil
	}
	tail := strings.Join(sanitize.LastLines(res.StderrTail, 0), "\n")
	if tail == "" {
		return nil
	}
	return []zap.Field{zap.String("stderr", sanitize.Text(sanitize.TruncateStart(tail, maxLoggedStderr)))}
}

// maxLoggedStderr bounds the stderr of a failure log line: the probe keeps
// a tail of probe.DefaultStderrTailBytes, which this matches.
const maxLoggedStderr = probe.DefaultStderrTailBytes

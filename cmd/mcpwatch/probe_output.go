package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/preflight"
	"github.com/mcpwatch/mcpwatch/internal/util/jsondoc"
	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
	"github.com/mcpwatch/mcpwatch/probe"
)

// probed is what mcpwatch probe found: the probe's result, the target as
// the text names it, and the call made after it, when --call asked.
type probed struct {
	res    *probe.Result
	target string
	called *callOutcome
}

// probeFormats are probe's output formats.
var probeFormats = formats[*probed]{
	preflight.FormatText: func(w io.Writer, p *probed) error {
		printResult(w, p.res, p.target)
		printCredentials(w, p.res.Credentials, time.Now())
		if p.called != nil {
			p.called.print(w)
		}
		return nil
	},
	preflight.FormatJSON: func(w io.Writer, p *probed) error {
		if p.called != nil {
			// The call is the last member, "call", after the probe's own.
			return jsondoc.Write(w, p.res, jsondoc.Member{Name: "call", Value: p.called.json()})
		}
		return jsondoc.Write(w, p.res)
	},
}

// printResult writes a probe result for people: the verdict first, then
// what is known of the server, the tools, and what may explain a failure.
// Every string the server sent goes through sanitize.Text.
func printResult(w io.Writer, r *probe.Result, target string) {
	if r.OK {
		fmt.Fprintf(w, "ok: %s lists %d %s\n", sanitize.Text(target), len(r.Tools), plural(len(r.Tools), "tool", "tools"))
	} else {
		fmt.Fprintf(w, "FAILED (%s): %s\n", r.Reason, sanitize.Text(target))
		fmt.Fprintf(w, "  error      %s\n", sanitize.Text(r.Error))
		if r.HTTPStatus != 0 {
			fmt.Fprintf(w, "  http       %d\n", r.HTTPStatus)
		}
		if r.RPCCode != 0 {
			fmt.Fprintf(w, "  rpc code   %d\n", r.RPCCode)
		}
		if ch := r.Challenge; ch != nil {
			fmt.Fprintf(w, "  challenge  %s\n", sanitize.Text(ch.String()))
		}
	}
	if r.ServerName != "" {
		fmt.Fprintf(w, "  server     %s\n", sanitize.Text(strings.TrimSpace(r.ServerName+" "+r.ServerVersion)))
	}
	if r.Era != "" {
		era := string(r.Era)
		if r.ProtocolVersion != "" {
			era += ", protocol " + sanitize.Text(r.ProtocolVersion)
		}
		fmt.Fprintf(w, "  era        %s\n", era)
	}
	if r.Transport != "" {
		fmt.Fprintf(w, "  transport  %s\n", r.Transport)
	}
	if r.Pages > 0 {
		fmt.Fprintf(w, "  pages      %d\n", r.Pages)
	}
	if r.TTLMillis != nil {
		fmt.Fprintf(w, "  ttl        %s\n", time.Duration(*r.TTLMillis)*time.Millisecond)
	}
	if r.ListChanged > 0 {
		fmt.Fprintf(w, "  notices    %d tools/list_changed\n", r.ListChanged)
	}
	fmt.Fprintf(w, "  timings    %s\n", describeTimings(r.Timings))

	if r.OK && len(r.Tools) > 0 {
		fmt.Fprintln(w, "tools:")
		for _, t := range r.Tools {
			fmt.Fprintf(w, "  %s\n", sanitize.Text(sanitize.Name(t.Name)))
		}
	}
	if len(r.Warnings) > 0 {
		fmt.Fprintln(w, "warnings:")
		for _, warning := range r.Warnings {
			fmt.Fprintf(w, "  %s\n", sanitize.Text(warning))
		}
	}
	if lines := sanitize.LastLines(r.StderrTail, 0); len(lines) > 0 {
		fmt.Fprintln(w, "stderr (last lines):")
		for _, line := range lines {
			fmt.Fprintf(w, "  | %s\n", sanitize.Text(line))
		}
	}
	if len(r.Transcript) > 0 {
		fmt.Fprintln(w, "transcript:")
	}
	for _, e := range r.Transcript {
		msg := string(e.Message)
		if msg == "" {
			msg = e.Note
		}
		fmt.Fprintf(w, "  %8s %-4s %s\n", e.At.Round(time.Millisecond), e.Direction, sanitize.Text(msg))
	}
}

func describeTimings(t probe.Timings) string {
	var pages time.Duration
	for _, p := range t.Pages {
		pages += p
	}
	ms := func(d time.Duration) string { return d.Round(100 * time.Microsecond).String() }
	return fmt.Sprintf("connect %s, handshake %s, tools/list %s, total %s", ms(t.Connect), ms(t.Handshake), ms(pages), ms(t.Total))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

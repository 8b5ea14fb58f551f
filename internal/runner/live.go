package runner

import (
	"context"
	"time"

	"github.com/mcpwatch/mcpwatch/probe"
)

// run probes target: on live, a stdio server kept running between probes,
// when it is set (probe.Live.Run: a target without a command is probed as
// by probe.Run), else with a process of the probe's own.
func run(ctx context.Context, live *probe.Live, target probe.Target, opts probe.Options, restartEvery time.Duration) *probe.Result {
	if live == nil {
		return probe.Run(ctx, target, opts)
	}
	return live.Run(ctx, target, opts, restartEvery)
}

package main

import (
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/statetimeline"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// calls is the row of canary tool calls: a tool listed but no longer
// working shows here, not in the surface panels.
func calls() []cog.Builder[dashboard.Panel] {
	return []cog.Builder[dashboard.Panel]{
		stat.NewPanelBuilder().
			Title("Tool calls failing").
			Description("Contracted tools whose last canary call broke its contract, over the selected servers. Pages after one retry (McpToolCallFailing).").
			Datasource(datasource()).Unit("short").Decimals(0).
			Height(4).Span(6).
			GraphMode(common.BigValueGraphModeArea).
			ColorMode(common.BigValueColorModeBackground).
			Thresholds(thresholds("green", 1.0, "red")).
			WithTarget(instant(`count(max by (server, tool) (mcpwatch_call_success{`+one+`}) == 0) or vector(0)`, false)),
		newTable().
			Title("Failing tool calls").
			Description("Tools whose last canary call failed, and why (mcpwatch_call_last_failure_info); the status page shows the failed assertion and what came back.").
			Datasource(datasource()).Unit("none").
			Height(8).Span(18).
			NoValue("Every contracted tool passed its last call").
			WithTarget(instant(`mcpwatch_call_last_failure_info{`+one+`} == 1`, true)).
			WithTransformation(organize(
				[]string{"Time", "Value", "__name__", "job"},
				map[string]string{"server": "Server", "tool": "Tool", "reason": "Reason", "instance": "mcpwatch"})),
		statetimeline.NewPanelBuilder().
			Title("Call result").
			Description("Whether the last canary call of each contracted tool passed, over time.").
			Datasource(datasource()).Unit("none").
			Height(6).Span(24).
			Mappings(okFailed()).
			ShowValue(common.VisibilityModeNever).
			WithTarget(series(`mcpwatch_call_success{`+one+`}`, "{{server}} {{tool}}")),
		timeseries.NewPanelBuilder().
			Title("Call failures by reason").
			Description("Failed canary calls per second, by reason (is_error, rpc_error, unauthorized, assertion, ...).").
			Datasource(datasource()).Unit("ops").Min(0).
			Height(8).Span(12).
			WithTarget(series(`sum by (reason) (rate(mcpwatch_call_failures_total{`+one+`}[$__rate_interval])) > 0`, "{{reason}}")),
		timeseries.NewPanelBuilder().
			Title("Call duration").
			Description("Duration of the last canary call of each tool, retries included.").
			Datasource(datasource()).Unit("s").Min(0).
			Height(8).Span(12).
			WithTarget(series(`mcpwatch_call_duration_seconds{`+one+`}`, "{{server}} {{tool}}")),
	}
}

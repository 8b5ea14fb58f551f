package main

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/statetimeline"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// render returns the dashboard as indented JSON with a final newline.
func render() ([]byte, error) {
	d, err := build()
	if err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode dashboard: %w", err)
	}
	return append(b, '\n'), nil
}

// build assembles the dashboard: every server at a glance, one server in
// detail (the server variable), and mcpwatch itself.
func build() (dashboard.Dashboard, error) {
	b := dashboard.NewDashboardBuilder("mcpwatch").
		Uid("mcpwatch").
		Description("The tool surface of every MCP server mcpwatch watches: tools seen against the lock, missing tools, probe results and latency. Probes run on mcpwatch's schedule, not on scrape.").
		Tags([]string{"mcpwatch", "mcp"}).
		Refresh("30s").
		Time("now-6h", "now").
		Timezone(common.TimeZoneBrowser).
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		Link(dashboard.NewDashboardLinkBuilder("Runbook").
			Type(dashboard.DashboardLinkTypeLink).
			Url("https://github.com/mcpwatch/mcpwatch/blob/main/deploy/RUNBOOK.md"). // the mixin points it at its runbookURLBase.
			TargetBlank(true))
	for _, v := range variables() {
		b = b.WithVariable(v)
	}

	b = b.WithRow(dashboard.NewRowBuilder("Credentials"))
	for _, p := range credentials() {
		b = b.WithPanel(p)
	}
	b = b.WithRow(dashboard.NewRowBuilder("All servers"))
	for _, p := range overview() {
		b = b.WithPanel(p)
	}
	b = b.WithRow(dashboard.NewRowBuilder("Server $server"))
	for _, p := range serverDetail() {
		b = b.WithPanel(p)
	}
	b = b.WithRow(dashboard.NewRowBuilder("Tool calls"))
	for _, p := range calls() {
		b = b.WithPanel(p)
	}
	b = b.WithRow(dashboard.NewRowBuilder("mcpwatch"))
	for _, p := range daemon() {
		b = b.WithPanel(p)
	}

	d, err := b.Build()
	// Build returns a typed-nil cog.BuildErrors on success: a non-nil error
	// interface holding no error.
	var berrs cog.BuildErrors
	if errors.As(err, &berrs) && len(berrs) == 0 {
		err = nil
	}
	if err != nil {
		return dashboard.Dashboard{}, fmt.Errorf("build dashboard: %w", err)
	}
	number(&d)
	return d, nil
}

// number gives every panel and row a unique id and every query a refId
// (A, B, ... unless set), as Grafana would on first save, so the committed
// JSON is what Grafana keeps.
func number(d *dashboard.Dashboard) {
	for i := range d.Panels {
		id := uint32(i + 1)
		if row := d.Panels[i].RowPanel; row != nil {
			row.Id = id
			continue
		}
		p := d.Panels[i].Panel
		p.Id = &id
		for j, t := range p.Targets {
			if q, ok := t.(prometheus.Dataquery); ok && q.RefId == nil {
				q.RefId = cog.ToPtr(string(rune('A' + j)))
				p.Targets[j] = q
			}
		}
	}
}

func variables() []cog.Builder[dashboard.VariableModel] {
	all := dashboard.VariableOption{
		Selected: cog.ToPtr(true),
		Text:     dashboard.StringOrArrayOfString{ArrayOfString: []string{"All"}},
		Value:    dashboard.StringOrArrayOfString{ArrayOfString: []string{"$__all"}},
	}
	query := func(name, label, q, description string) *dashboard.QueryVariableBuilder {
		return dashboard.NewQueryVariableBuilder(name).
			Label(label).
			Description(description).
			Datasource(datasource()).
			Query(dashboard.StringOrMap{String: cog.ToPtr(q)}).
			Definition(q).
			Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
			Sort(dashboard.VariableSortAlphabeticalAsc)
	}
	return []cog.Builder[dashboard.VariableModel]{
		dashboard.NewDatasourceVariableBuilder("datasource").
			Label("Data source").
			Description("The Prometheus that scrapes mcpwatch.").
			Type("prometheus"),
		query("job", "Job", `label_values(mcpwatch_build_info, job)`,
			"Prometheus job(s) scraping mcpwatch.").
			Multi(true).IncludeAll(true).Current(all),
		query("instance", "Instance", `label_values(mcpwatch_build_info{job=~"$job"}, instance)`,
			"mcpwatch instance(s).").
			Multi(true).IncludeAll(true).Current(all),
		query("server", "Server", `label_values(mcpwatch_probe_success{`+fleet+`}, server)`,
			"The MCP server shown in the detail row (the config key)."),
	}
}

// fleetServers counts the servers of the whole fleet: each replica's
// mcpwatch_servers joined with its shard, the replicas of one shard (an HA
// pair) counted once, the shards summed.
const fleetServers = `sum(max by (job, index, total) (mcpwatch_servers{` + fleet + `}` +
	` * on (job, instance) group_left (index, total) mcpwatch_shard_info{` + fleet + `}))`

func overview() []cog.Builder[dashboard.Panel] {
	return []cog.Builder[dashboard.Panel]{
		stat.NewPanelBuilder().
			Title("Servers watched").
			Description("MCP servers in mcpwatch's current config: the shards' servers summed, each HA pair counted once (replicas of one shard watch the same servers).").
			Datasource(datasource()).Unit("short").Decimals(0).
			Height(4).Span(6).
			GraphMode(common.BigValueGraphModeNone).
			ColorMode(common.BigValueColorModeNone).
			WithTarget(instant(fleetServers, false)),
		stat.NewPanelBuilder().
			Title("Servers failing").
			Description("Servers whose last probe failed on every replica that probes them (see Failures by reason).").
			Datasource(datasource()).Unit("short").Decimals(0).
			Height(4).Span(6).
			GraphMode(common.BigValueGraphModeArea).
			ColorMode(common.BigValueColorModeBackground).
			Thresholds(thresholds("green", 1.0, "red")).
			WithTarget(instant(`count(max by (server) (mcpwatch_probe_success{`+fleet+`}) == 0) or vector(0)`, false)),
		stat.NewPanelBuilder().
			Title("Locked tools missing").
			Description("Locked tools absent from the last successful probe, summed over servers (for each server, the most any replica sees). Non-zero pages (McpToolsMissing).").
			Datasource(datasource()).Unit("short").Decimals(0).
			Height(4).Span(6).
			GraphMode(common.BigValueGraphModeArea).
			ColorMode(common.BigValueColorModeBackground).
			Thresholds(thresholds("green", 1.0, "red")).
			WithTarget(instant(`sum(max by (server) (mcpwatch_tools_missing{`+fleet+`})) or vector(0)`, false)),
		stat.NewPanelBuilder().
			Title("Forbidden tools present").
			Description("Tools that match a forbid pattern of their server, summed over servers (for each server, the most any replica sees). Non-zero pages (McpForbiddenToolPresent).").
			Datasource(datasource()).Unit("short").Decimals(0).
			Height(4).Span(6).
			GraphMode(common.BigValueGraphModeArea).
			ColorMode(common.BigValueColorModeBackground).
			Thresholds(thresholds("green", 1.0, "red")).
			WithTarget(instant(`sum(max by (server) (mcpwatch_tools_forbidden{`+fleet+`})) or vector(0)`, false)),

		newTable().
			Title("Tool surface per server").
			Description("Per server: tools seen in the last probe against the tools its lock expects, and the probe state. Seen, missing and extra are empty while a server's probe fails.").
			Datasource(datasource()).Unit("short").
			Height(9).Span(14).
			WithTarget(instant(`mcpwatch_tools{`+fleet+`}`, true).RefId("seen")).
			WithTarget(instant(`mcpwatch_tools_expected{`+fleet+`}`, true).RefId("locked")).
			WithTarget(instant(`mcpwatch_tools_missing{`+fleet+`}`, true).RefId("missing")).
			WithTarget(instant(`mcpwatch_tools_extra{`+fleet+`}`, true).RefId("extra")).
			WithTarget(instant(`mcpwatch_tools_forbidden{`+fleet+`}`, true).RefId("forbidden")).
			WithTarget(instant(`mcpwatch_probe_success{`+fleet+`}`, true).RefId("probe")).
			WithTarget(instant(`time() - mcpwatch_last_probe_timestamp_seconds{`+fleet+`}`, true).RefId("age")).
			WithTransformation(merge()).
			WithTransformation(organize(
				[]string{"Time", "__name__", "job"},
				map[string]string{
					"server":           "Server",
					"instance":         "mcpwatch",
					"Value #seen":      "Seen",
					"Value #locked":    "Locked",
					"Value #missing":   "Missing",
					"Value #extra":     "Extra",
					"Value #forbidden": "Forbidden",
					"Value #probe":     "Last probe",
					"Value #age":       "Probed ago",
				})).
			OverrideByName("Last probe", append(colorBackground(),
				dashboard.DynamicConfigValue{Id: "mappings", Value: okFailed()})).
			OverrideByName("Missing", append(colorBackground(),
				dashboard.DynamicConfigValue{Id: "thresholds", Value: map[string]any{
					"mode": "absolute", "steps": []map[string]any{{"color": "green", "value": nil}, {"color": "red", "value": 1}}}})).
			OverrideByName("Probed ago", []dashboard.DynamicConfigValue{{Id: "unit", Value: "s"}}),
		newTable().
			Title("Missing tools").
			Description("Every locked tool that the last successful probe of its server did not list: what McpToolsMissing pages about.").
			Datasource(datasource()).Unit("none").
			Height(9).Span(10).
			NoValue("No locked tool is missing").
			WithTarget(instant(`mcpwatch_tool_missing{`+fleet+`} == 1`, true)).
			WithTransformation(organize(
				[]string{"Time", "Value", "__name__", "job"},
				map[string]string{"server": "Server", "tool": "Missing tool", "instance": "mcpwatch"})),

		timeseries.NewPanelBuilder().
			Title("Probe success ratio").
			Description("Share of probes that succeeded, per server, from the probe and failure counters.").
			Datasource(datasource()).Unit("percentunit").Min(0).Max(1).
			Height(8).Span(12).
			WithTarget(series(
				`1 - (`+
					`sum by (server) (rate(mcpwatch_probe_failures_total{`+fleet+`}[$__rate_interval]))`+
					` or 0 * sum by (server) (rate(mcpwatch_probes_total{`+fleet+`}[$__rate_interval]))`+
					`) / sum by (server) (rate(mcpwatch_probes_total{`+fleet+`}[$__rate_interval]))`,
				"{{server}}")),
		timeseries.NewPanelBuilder().
			Title("Failures by reason").
			Description("Failed probes per second by server and reason (spawn_failed, timeout, unauthorized, ...); reasons with no failure are left out. The runbook says what each reason means.").
			Datasource(datasource()).Unit("ops").Min(0).
			Height(8).Span(12).
			Stacking(common.NewStackingConfigBuilder().Mode(common.StackingModeNormal)).
			FillOpacity(30).
			WithTarget(series(`sum by (server, reason) (rate(mcpwatch_probe_failures_total{`+fleet+`}[$__rate_interval])) > 0`,
				"{{server}}: {{reason}}")),
		timeseries.NewPanelBuilder().
			Title("Probe latency by phase").
			Description("Duration of each phase of the last probe (connect, handshake, list), slowest server per phase.").
			Datasource(datasource()).Unit("s").Min(0).
			Height(8).Span(12).
			WithTarget(series(`max by (phase) (mcpwatch_probe_phase_duration_seconds{`+fleet+`})`, "{{phase}}")),
		timeseries.NewPanelBuilder().
			Title("Probe duration per server").
			Description("Total duration of each server's last probe, from spawn or connect to the last tools/list page.").
			Datasource(datasource()).Unit("s").Min(0).
			Height(8).Span(12).
			WithTarget(series(`mcpwatch_probe_duration_seconds{`+fleet+`}`, "{{server}}")),

		timeseries.NewPanelBuilder().
			Title("Request latency by method").
			Description("p50 and p95 of each request mcpwatch sends to the servers, by MCP method (initialize, tools/list, tools/call, ...), failed requests included, from the OpenTelemetry histogram mcp_client_operation_duration_seconds. A slow method across servers points at the network or a shared gateway; one server alone, at that server.").
			Datasource(datasource()).Unit("s").Min(0).
			Height(8).Span(12).
			WithTarget(series(`histogram_quantile(0.5, sum by (le, mcp_method_name) (rate(mcp_client_operation_duration_seconds_bucket{`+fleet+`}[$__rate_interval])))`, "p50 {{mcp_method_name}}")).
			WithTarget(series(`histogram_quantile(0.95, sum by (le, mcp_method_name) (rate(mcp_client_operation_duration_seconds_bucket{`+fleet+`}[$__rate_interval])))`, "p95 {{mcp_method_name}}")),
		timeseries.NewPanelBuilder().
			Title("Change listeners").
			Description("Streams on which servers announce changes of their tools (watch_changes): how many are up and how many are down and being reconnected, and the announcements per second by server (each re-probes the server at once).").
			Datasource(datasource()).Unit("short").Min(0).
			Height(8).Span(12).
			WithTarget(series(`count(mcpwatch_change_listener_up{`+fleet+`} == 1) or vector(0)`, "up")).
			WithTarget(series(`count(mcpwatch_change_listener_up{`+fleet+`} == 0) or vector(0)`, "down")).
			WithTarget(series(`sum by (server) (rate(mcpwatch_change_notifications_total{`+fleet+`}[$__rate_interval])) > 0`, "announced {{server}}")),
	}
}

func serverDetail() []cog.Builder[dashboard.Panel] {
	return []cog.Builder[dashboard.Panel]{
		statetimeline.NewPanelBuilder().
			Title("Probe result").
			Description("Whether each probe of $server succeeded, over time.").
			Datasource(datasource()).Unit("none").
			Height(4).Span(24).
			Mappings(okFailed()).
			ShowValue(common.VisibilityModeNever).
			WithTarget(series(`mcpwatch_probe_success{`+one+`}`, "{{server}} ({{instance}})")),
		timeseries.NewPanelBuilder().
			Title("Tool surface").
			Description("Tools of $server over time: seen in each probe against the lock, missing, extra, forbidden, and changed schemas or descriptions. Gaps in seen are failed probes.").
			Datasource(datasource()).Unit("short").Decimals(0).Min(0).
			Height(8).Span(12).
			WithTarget(series(`mcpwatch_tools{`+one+`}`, "seen")).
			WithTarget(series(`mcpwatch_tools_expected{`+one+`}`, "locked")).
			WithTarget(series(`mcpwatch_tools_missing{`+one+`}`, "missing")).
			WithTarget(series(`mcpwatch_tools_extra{`+one+`}`, "extra")).
			WithTarget(series(`mcpwatch_tools_forbidden{`+one+`}`, "forbidden")).
			WithTarget(series(`mcpwatch_tools_changed{`+one+`}`, "changed {{change}}")),
		timeseries.NewPanelBuilder().
			Title("Probe duration by phase").
			Description("Each phase of the probes of $server, stacked: connect (spawn or TCP/TLS), handshake (discover or initialize), list (every tools/list page).").
			Datasource(datasource()).Unit("s").Min(0).
			Height(8).Span(12).
			Stacking(common.NewStackingConfigBuilder().Mode(common.StackingModeNormal)).
			FillOpacity(40).
			WithTarget(series(`mcpwatch_probe_phase_duration_seconds{`+one+`}`, "{{phase}}")),

		stat.NewPanelBuilder().
			Title("Since last success").
			Description("Time since a probe of $server last succeeded.").
			Datasource(datasource()).Unit("s").
			Height(4).Span(6).
			ColorMode(common.BigValueColorModeBackground).
			GraphMode(common.BigValueGraphModeNone).
			Thresholds(thresholds("green", 300.0, "red")).
			WithTarget(instant(`time() - mcpwatch_last_success_timestamp_seconds{`+one+`}`, false)),
		stat.NewPanelBuilder().
			Title("Since last probe").
			Description("Time since the last probe of $server ended, successful or not.").
			Datasource(datasource()).Unit("s").
			Height(4).Span(6).
			GraphMode(common.BigValueGraphModeNone).
			WithTarget(instant(`time() - mcpwatch_last_probe_timestamp_seconds{`+one+`}`, false)),
		stat.NewPanelBuilder().
			Title("Probe interval").
			Description("The schedule's interval for $server; McpProbeStale fires after three without a probe.").
			Datasource(datasource()).Unit("s").
			Height(4).Span(6).
			GraphMode(common.BigValueGraphModeNone).
			ColorMode(common.BigValueColorModeNone).
			WithTarget(instant(`mcpwatch_probe_interval_seconds{`+one+`}`, false)),
		stat.NewPanelBuilder().
			Title("Up in range").
			Description("Share of the selected time range in which the last probe of $server had succeeded.").
			Datasource(datasource()).Unit("percentunit").Decimals(1).
			Height(4).Span(6).
			ColorMode(common.BigValueColorModeBackground).
			GraphMode(common.BigValueGraphModeNone).
			Thresholds(thresholds("red", 0.95, "yellow", 0.999, "green")).
			WithTarget(instant(`avg(avg_over_time(mcpwatch_probe_success{`+one+`}[$__range]))`, false)),

		newTable().
			Title("Missing tools of $server").
			Description("Locked tools the last successful probe of $server did not list.").
			Datasource(datasource()).Unit("none").
			Height(7).Span(6).
			NoValue("No locked tool is missing").
			WithTarget(instant(`mcpwatch_tool_missing{`+one+`} == 1`, true)).
			WithTransformation(organize(
				[]string{"Time", "Value", "__name__", "job", "instance", "server"},
				map[string]string{"tool": "Missing tool"})),
		newTable().
			Title("Forbidden tools of $server").
			Description("Tools the last probe of $server listed that match one of its forbid patterns (at most 50; Tool surface has the count). Pages (McpForbiddenToolPresent).").
			Datasource(datasource()).Unit("none").
			Height(7).Span(6).
			NoValue("No forbidden tool is offered").
			WithTarget(instant(`mcpwatch_tool_forbidden{`+one+`} == 1`, true)).
			WithTransformation(organize(
				[]string{"Time", "Value", "__name__", "job", "instance", "server"},
				map[string]string{"tool": "Forbidden tool"})),
		newTable().
			Title("Server info").
			Description("What $server said about itself in its last successful probe: transport, protocol era and version, name and version.").
			Datasource(datasource()).Unit("none").
			Height(7).Span(12).
			WithTarget(instant(`mcpwatch_server_info{`+one+`}`, true)).
			WithTransformation(organize(
				[]string{"Time", "Value", "__name__", "job"},
				map[string]string{
					"server": "Server", "instance": "mcpwatch", "transport": "Transport", "era": "Era",
					"protocol_version": "Protocol", "server_name": "Name", "server_version": "Version",
				})),
		timeseries.NewPanelBuilder().
			Title("Failures of $server by reason").
			Description("Failed probes of $server per second, by reason.").
			Datasource(datasource()).Unit("ops").Min(0).
			Height(8).Span(24).
			WithTarget(series(`sum by (reason) (rate(mcpwatch_probe_failures_total{`+one+`}[$__rate_interval])) > 0`, "{{reason}}")),
	}
}

func daemon() []cog.Builder[dashboard.Panel] {
	return []cog.Builder[dashboard.Panel]{
		timeseries.NewPanelBuilder().
			Title("Probes per second").
			Description("Probes finished per second by each mcpwatch instance.").
			Datasource(datasource()).Unit("ops").Min(0).
			Height(8).Span(8).
			WithTarget(series(`sum by (instance) (rate(mcpwatch_probes_total{`+fleet+`}[$__rate_interval]))`, "{{instance}}")),
		timeseries.NewPanelBuilder().
			Title("Probes in flight").
			Description("Probes running at once; a value stuck at the concurrency limit means probes wait for a slot.").
			Datasource(datasource()).Unit("short").Min(0).
			Height(8).Span(8).
			WithTarget(series(`mcpwatch_probes_in_flight{`+fleet+`}`, "{{instance}}")),
		timeseries.NewPanelBuilder().
			Title("Schedule lag").
			Description("How late probes start against their schedule (p50 and p99). Growing lag means mcpwatch cannot keep up.").
			Datasource(datasource()).Unit("s").Min(0).
			Height(8).Span(8).
			WithTarget(series(`histogram_quantile(0.5, sum by (le, instance) (rate(mcpwatch_schedule_lag_seconds_bucket{`+fleet+`}[$__rate_interval])))`, "p50 {{instance}}")).
			WithTarget(series(`histogram_quantile(0.99, sum by (le, instance) (rate(mcpwatch_schedule_lag_seconds_bucket{`+fleet+`}[$__rate_interval])))`, "p99 {{instance}}")),
		timeseries.NewPanelBuilder().
			Title("Skipped probes by reason").
			Description("Scheduled probes and calls that did not run, per second by reason: still_queued (defaults.concurrency too small for the fleet), still_running (a server slower than its interval), late (mcpwatch starved of CPU or suspended), calls_still_waiting. A skipped firing is not made up.").
			Datasource(datasource()).Unit("ops").Min(0).
			Height(8).Span(24).
			WithTarget(series(`sum by (instance, reason) (rate(mcpwatch_probes_skipped_total{`+fleet+`}[$__rate_interval])) > 0`, "{{instance}}: {{reason}}")),
		newTable().
			Title("mcpwatch instances").
			Description("Each mcpwatch: whether Prometheus scrapes it (up; McpwatchDown pages when not), its version, whether its last config reload succeeded (a failed one keeps the previous config) and when the config was last loaded, and whether its lock file reads (a failed read keeps the last good lock) and when it was last read.").
			Datasource(datasource()).Unit("none").
			Height(6).Span(24).
			WithTarget(instant(`mcpwatch_build_info{`+fleet+`}`, true).RefId("build")).
			WithTarget(instant(`up{`+fleet+`}`, true).RefId("up")).
			WithTarget(instant(`mcpwatch_config_last_reload_successful{`+fleet+`}`, true).RefId("reload")).
			WithTarget(instant(`1000 * mcpwatch_config_last_reload_success_timestamp_seconds{`+fleet+`}`, true).RefId("loaded")).
			WithTarget(instant(`mcpwatch_lock_last_read_successful{`+fleet+`}`, true).RefId("lock")).
			WithTarget(instant(`1000 * mcpwatch_lock_last_read_success_timestamp_seconds{`+fleet+`}`, true).RefId("lockread")).
			WithTransformation(merge()).
			WithTransformation(organize(
				[]string{"Time", "__name__", "job", "Value #build"},
				map[string]string{
					"instance": "mcpwatch", "Value #up": "Scraped", "version": "Version", "revision": "Revision", "branch": "Branch",
					"goversion": "Go", "Value #reload": "Last reload", "Value #loaded": "Config loaded",
					"Value #lock": "Lock read", "Value #lockread": "Lock last read",
				})).
			OverrideByName("Scraped", append(colorBackground(),
				dashboard.DynamicConfigValue{Id: "mappings", Value: okFailed()})).
			OverrideByName("Last reload", append(colorBackground(),
				dashboard.DynamicConfigValue{Id: "mappings", Value: okFailed()})).
			OverrideByName("Config loaded", []dashboard.DynamicConfigValue{{Id: "unit", Value: "dateTimeAsIso"}}).
			OverrideByName("Lock read", append(colorBackground(),
				dashboard.DynamicConfigValue{Id: "mappings", Value: okFailed()})).
			OverrideByName("Lock last read", []dashboard.DynamicConfigValue{{Id: "unit", Value: "dateTimeAsIso"}}),
	}
}

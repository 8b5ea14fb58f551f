package metrics

import "github.com/prometheus/client_golang/prometheus"

// scheduleNote ends the HELP text of every metric that reports a probe, so a
// reader of /metrics does not expect a scrape to probe anything.
const scheduleNote = " Probes run on mcpwatch's schedule, not on scrape."

// Phase label values of mcpwatch_probe_phase_duration_seconds.
const (
	phaseConnect   = "connect"
	phaseHandshake = "handshake"
	phaseList      = "list"
)

// Change label values of mcpwatch_tools_changed.
const (
	changeSchema      = "schema"
	changeDescription = "description"
)

// descs are the descriptors of every metric rendered from a ServerStatus.
// They are the one place the metric names and HELP texts are written; Names
// reads them back.
type descs struct {
	all   []*prometheus.Desc
	names []string

	servers *prometheus.Desc // the only one not about a single server

	success, duration, phaseDuration *prometheus.Desc
	tools, toolsExpected             *prometheus.Desc
	toolsMissing, toolMissing        *prometheus.Desc
	toolsExtra, toolsForbidden       *prometheus.Desc
	toolForbidden, toolsChanged      *prometheus.Desc
	lastProbe, lastSuccess, interval *prometheus.Desc
	probes, failures, info           *prometheus.Desc
}

func newDescs() *descs {
	d := &descs{}
	d.servers = d.add("mcpwatch_servers",
		"Servers in the running configuration.")

	d.success = d.add("mcpwatch_probe_success",
		"1 if the last probe of the server succeeded, 0 if it failed. Absent until the first probe ends."+scheduleNote,
		"server")
	d.duration = d.add("mcpwatch_probe_duration_seconds",
		"Duration of the last probe of the server, from spawn or connect to the last tools/list page."+scheduleNote,
		"server")
	d.phaseDuration = d.add("mcpwatch_probe_phase_duration_seconds",
		"Duration of each phase of the last probe: connect (spawn, or the first exchange over HTTP), handshake (discovery and initialize), list (every tools/list page). A phase the probe did not reach is 0."+scheduleNote,
		"server", "phase")
	d.tools = d.add("mcpwatch_tools",
		"Tools the server listed in the last probe. Absent when the last probe failed, so a failure never reads as an empty surface: see mcpwatch_probe_success."+scheduleNote,
		"server")
	d.toolsExpected = d.add("mcpwatch_tools_expected",
		"Tools the lock expects the server to list. Absent when the lock has no entry for the server.",
		"server")
	d.toolsMissing = d.add("mcpwatch_tools_missing",
		"Locked tools the last probe did not see. Absent when the last probe failed (a tool is only reported missing from a successful observation; failures are mcpwatch_probe_success 0) or the lock has no entry."+scheduleNote,
		"server")
	d.toolMissing = d.add("mcpwatch_tool_missing",
		"1 if this locked tool was missing from the last probe, 0 if it was listed. One series per locked tool; absent when the last probe failed or the lock has no entry."+scheduleNote,
		"server", "tool")
	d.toolsExtra = d.add("mcpwatch_tools_extra",
		"Tools the last probe saw that the lock does not list (allowed, reported). Absent when the last probe failed or the lock has no entry."+scheduleNote,
		"server")
	d.toolsForbidden = d.add("mcpwatch_tools_forbidden",
		"Tools the last probe saw that match a forbid pattern. Absent when the last probe failed."+scheduleNote,
		"server")
	d.toolForbidden = d.add("mcpwatch_tool_forbidden",
		"1 for each tool the last probe saw that matches a forbid pattern, at most 50 per server (mcpwatch_tools_forbidden has the full count); names are cut to 128 bytes. Absent when the last probe failed."+scheduleNote,
		"server", "tool")
	d.toolsChanged = d.add("mcpwatch_tools_changed",
		"Locked tools whose input schema fingerprint (change=schema) or description hash (change=description) differs from the lock in the last probe. Absent when the last probe failed or the lock has no entry."+scheduleNote,
		"server", "change")
	d.lastProbe = d.add("mcpwatch_last_probe_timestamp_seconds",
		"Unix time the last probe of the server ended. Compare with mcpwatch_probe_interval_seconds to spot a stalled schedule."+scheduleNote,
		"server")
	d.lastSuccess = d.add("mcpwatch_last_success_timestamp_seconds",
		"Unix time the last successful probe of the server ended. Absent if none has succeeded since the server was added."+scheduleNote,
		"server")
	d.interval = d.add("mcpwatch_probe_interval_seconds",
		"Interval between scheduled probes of the server. Absent for schedules without a fixed interval."+scheduleNote,
		"server")
	d.probes = d.add("mcpwatch_probes_total",
		"Probes of the server finished since it was added to the configuration."+scheduleNote,
		"server")
	d.failures = d.add("mcpwatch_probe_failures_total",
		"Failed probes of the server by reason since it was added to the configuration. Every known reason is exported from 0, so increase() counts the first failure of a reason."+scheduleNote,
		"server", "reason")
	d.info = d.add("mcpwatch_server_info",
		"Facts from the last successful probe of the server, value 1: the transport used, the protocol era and version, and the name and version the server reports (server-controlled: cut to 64 bytes, invalid UTF-8 replaced). Absent until a probe succeeds."+scheduleNote,
		"server", "transport", "era", "protocol_version", "server_name", "server_version")
	return d
}

func (d *descs) add(name, help string, labels ...string) *prometheus.Desc {
	desc := prometheus.NewDesc(name, help, labels, nil)
	d.all = append(d.all, desc)
	d.names = append(d.names, name)
	return desc
}

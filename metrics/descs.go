package metrics

import (
	"slices"
	"strings"
)

// scheduleNote ends the HELP text of every metric that reports a probe, so a
// reader of /metrics does not expect a scrape to probe anything.
const scheduleNote = " Probes run on mcpwatch's schedule, not on scrape."

// callNote ends the HELP text of the canary-call metrics.
const callNote = " Calls run on the server's call_schedule, not on scrape."

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

// Metric types as the text format spells them.
const (
	typeGauge     = "gauge"
	typeCounter   = "counter"
	typeHistogram = "histogram"
)

// family is one metric family rendered from the statuses: its name, HELP,
// type and labels, and the function that writes its series for one server.
type family struct {
	name   string
	help   string
	typ    string
	labels []string // after server, which every per-server family has first
	render renderFunc

	// Precomputed text: the HELP and TYPE lines, and the labels in the
	// order a series lists them, sorted by name as the client library sorts
	// them: order[i] is the label's index in (server, labels...), and
	// prefixes[i] the text before its value (the metric name and brace for
	// the first).
	header   string
	omHeader string // the same for OpenMetrics: a counter's family name has no _total
	order    []int
	prefixes []string

	// A histogram's bucket bounds, and for each the text of its le label;
	// labelStarts[i] is prefixes[i] as the first label of a _bucket, _sum
	// or _count series (no name, no separator).
	buckets     []float64
	leLabels    []string
	omLeLabels  []string // the same as OpenMetrics spells the bounds: 1.0, not 1
	labelStarts []string
}

// descs is the table of every metric rendered from a status.Server: the one
// place their names, HELP texts, types and labels are written. The text
// writer renders from it and Names reads it back.
type descs struct {
	// servers is the one family not about a single server.
	servers *family
	// perServer are the families of one server, sorted by name: the order
	// they are written in.
	perServer []*family
	// all are every family, sorted by name.
	all []*family
}

func newDescs() *descs {
	d := &descs{}
	d.servers = d.add("mcpwatch_servers", typeGauge, nil,
		"Servers in the running configuration that this mcpwatch probes: with sharding, the servers of its shard (mcpwatch_shard_info).")

	d.add("mcpwatch_probe_success", typeGauge, renderSuccess,
		"1 if the last probe of the server succeeded, 0 if it failed. Absent until the first probe ends."+scheduleNote)
	d.add("mcpwatch_probe_duration_seconds", typeGauge, renderDuration,
		"Duration of the last probe of the server, from spawn or connect to the last tools/list page."+scheduleNote)
	d.add("mcpwatch_probe_phase_duration_seconds", typeGauge, renderPhaseDuration,
		"Duration of each phase of the last probe: connect (spawn, or the first exchange over HTTP), handshake (discovery and initialize), list (every tools/list page). A phase the probe did not reach is 0."+scheduleNote,
		"phase")
	d.add("mcpwatch_tools", typeGauge, renderTools,
		"Tools the server listed in the last probe. Absent when the last probe failed, so a failure never reads as an empty surface: see mcpwatch_probe_success."+scheduleNote)
	d.add("mcpwatch_tools_expected", typeGauge, renderToolsExpected,
		"Tools the lock expects the server to list. Absent when the lock has no entry for the server.")
	d.add("mcpwatch_tools_missing", typeGauge, renderToolsMissing,
		"Locked tools the last probe did not see. Absent when the last probe failed (a tool is only reported missing from a successful observation; failures are mcpwatch_probe_success 0) or the lock has no entry."+scheduleNote)
	d.add("mcpwatch_tool_missing", typeGauge, renderToolMissing,
		"1 if this locked tool was missing from the last probe, 0 if it was listed. One series per locked tool; absent when the last probe failed or the lock has no entry."+scheduleNote,
		"tool")
	d.add("mcpwatch_tools_extra", typeGauge, renderToolsExtra,
		"Tools the last probe saw that the lock does not list (allowed, reported). Absent when the last probe failed or the lock has no entry."+scheduleNote)
	d.add("mcpwatch_tools_duplicate", typeGauge, renderToolsDuplicate,
		"Tool names the last probe saw listed more than once (only the first definition of each is compared with the lock). Absent when the last probe failed."+scheduleNote)
	d.add("mcpwatch_tools_forbidden", typeGauge, renderToolsForbidden,
		"Tools the last probe saw that match a forbid pattern. Absent when the last probe failed."+scheduleNote)
	d.add("mcpwatch_tool_forbidden", typeGauge, renderToolForbidden,
		"1 for each tool the last probe saw that matches a forbid pattern, at most 50 per server (mcpwatch_tools_forbidden has the full count); names are cut to 128 bytes. Absent when the last probe failed."+scheduleNote,
		"tool")
	d.add("mcpwatch_tools_changed", typeGauge, renderToolsChanged,
		"Locked tools whose input schema fingerprint (change=schema) or description hash (change=description) differs from the lock in the last probe. Absent when the last probe failed or the lock has no entry."+scheduleNote,
		"change")
	d.add("mcpwatch_last_probe_timestamp_seconds", typeGauge, renderLastProbe,
		"Unix time the last probe of the server ended. Compare with mcpwatch_probe_interval_seconds to spot a stalled schedule."+scheduleNote)
	d.add("mcpwatch_last_success_timestamp_seconds", typeGauge, renderLastSuccess,
		"Unix time the last successful probe of the server ended. Absent if none has succeeded since the server was added."+scheduleNote)
	d.add("mcpwatch_probe_interval_seconds", typeGauge, renderInterval,
		"Interval between scheduled probes of the server. Absent for schedules without a fixed interval."+scheduleNote)
	d.add("mcpwatch_probes_total", typeCounter, renderProbes,
		"Probes of the server finished since it was added to the configuration."+scheduleNote)
	d.add("mcpwatch_probe_failures_total", typeCounter, renderFailures,
		"Failed probes of the server by reason since it was added to the configuration. A reason's series appears with the server's first failure of it, at 1 (a server that never failed has none): increase() does not count that first failure; mcpwatch_probe_success says whether the last probe failed."+scheduleNote,
		"reason")
	d.add("mcpwatch_server_info", typeGauge, renderInfo,
		"Facts from the last successful probe of the server, value 1: the transport used, the protocol era and version, and the name and version the server reports (server-controlled: cut to 64 bytes, invalid UTF-8 replaced). Absent until a probe succeeds."+scheduleNote,
		"transport", "era", "protocol_version", "server_name", "server_version")
	d.add("mcpwatch_credential_expiry_timestamp_seconds", typeGauge, renderCredentialExpiry,
		"Unix time a credential of the server expires, for every credential whose expiry is knowable: the OAuth access token (oauth_access_token, renewed by mcpwatch before it expires), the OAuth refresh token when the authorization server states its lifetime or it is a JWT (oauth_refresh_token), an access token mcpwatch login stored because no refresh token was granted (oauth_stored_access_token: sign in again before it), a header or env value that is a JWT (header:NAME, env:NAME; its exp, read without verifying), and a static token whose issuer tells its expiry when asked (GitHub, GitLab, Cloudflare, Trello...: see mcpwatch_credential_issuer_accepted). Read at the last probe."+scheduleNote,
		"credential")
	d.add("mcpwatch_credential_issuer_accepted", typeGauge, renderCredentialIssuer,
		"1 if the service that issued a credential of the server took it when last asked at its identity endpoint (an issuer check: no tool is called, at most every defaults.issuer_check_interval per credential), 0 if it rejected it; absent while the service cannot be reached or its answer is not judged, and for credentials of services the issuer catalogue does not know. service is the catalogue's ID."+scheduleNote,
		"credential", "service")
	d.add("mcpwatch_credential_present", typeGauge, renderCredentialPresent,
		"1 if a credential the server is given (an env or header value whose name says credential, or an auth: block's secret; named env:NAME, header:NAME, auth:client_secret, auth:refresh_token, never by value) had a value at the last probe, 0 if it expanded to an empty value (an unset CI secret, an emptied token file): the server is then not probed (reason credential_missing). Absent for a server given none."+scheduleNote,
		"credential")
	d.add("mcpwatch_credential_rejected_info", typeGauge, renderCredentialRejected,
		"1 while the server's last probe or canary calls show it rejecting its credential (HTTP 401/403, or a rejection's words: Bad credentials, invalid_auth, ...), or the credential's issuer rejects it (the message then starts with where it was asked: api.github.com GET /rate_limit: ...), with the credential to renew (empty when the configuration names none) and the server's words (scrubbed of secrets, escaped, cut to 200 bytes); absent otherwise."+scheduleNote,
		"credential", "message")
	d.add("mcpwatch_upstream_unreachable_info", typeGauge, renderUpstreamUnreachable,
		"1 while the server's last probe or canary calls say it cannot reach the service it fronts (a network failure it reports: ECONNREFUSED, ENOTFOUND, fetch failed, a TLS error, a 502/503/504 from it; never a rejected credential), one series for the probe (tool empty) or one per canary call that said so, with the server's words (scrubbed of secrets, escaped, cut to 200 bytes); absent otherwise."+scheduleNote,
		"tool", "message")
	d.add("mcpwatch_credential_refresh_failures_total", typeCounter, renderRefreshFailures,
		"Failed OAuth token requests of the server by reason (an OAuth error code such as invalid_grant, or http_status, bad_response, connection, timeout, discovery, store when a rotated refresh token could not be written back) since its OAuth client was set up. Every reason is exported from 0. Absent for servers without auth: oauth.",
		"reason")
	d.add("mcpwatch_credential_last_refresh_success_timestamp_seconds", typeGauge, renderLastRefresh,
		"Unix time the server's OAuth client last got an access token. Absent until one succeeds, and for servers without auth: oauth.")

	d.add("mcpwatch_change_listener_up", typeGauge, renderListenerUp,
		"1 while mcpwatch holds a stream to the server on which it announces changes of its tools (watch_changes), 0 while that stream is down and being reconnected. Absent for a server without a listener.")
	d.add("mcpwatch_change_listener_floods_total", typeCounter, renderListenerFloods,
		"Times mcpwatch stopped reading the server's listening stream because it announced more than 100 changes of its tools within 10 seconds, far beyond the one re-probe a second they can cause; each stop waits 5 minutes before listening again, and the schedule still probes. Absent for a server without a listener.")
	d.add("mcpwatch_change_notifications_total", typeCounter, renderChangeNotifications,
		"Changes of its tools the server announced on the listening stream (notifications/tools/list_changed) since the listener started; each one re-probes the server at once (at most one probe a second). Absent for a server without a listener.")

	d.add(OperationDurationName, typeHistogram, renderOperations, operationDurationHelpTxt,
		operationMethodLabel, operationToolLabel, operationErrorLabel, operationVersionLabel, operationTransportLabel,
	).withBuckets(OperationBuckets)

	d.add("mcpwatch_call_success", typeGauge, renderCallSuccess,
		"1 if the last canary call of the tool passed its contract, 0 if it failed (see mcpwatch_call_failures_total for why). One series per contracted tool; absent until its first call ends."+callNote,
		"tool")
	d.add("mcpwatch_call_duration_seconds", typeGauge, renderCallDuration,
		"Duration of the last canary call of the tool, its retries included. Absent until its first call ends."+callNote,
		"tool")
	d.add("mcpwatch_call_failures_total", typeCounter, renderCallFailures,
		"Failed canary calls of the tool by reason since its contract was added. A reason's series appears with the tool's first failure of it, at 1: increase() does not count that first failure; mcpwatch_call_last_failure_info says why the last call failed."+callNote,
		"tool", "reason")
	d.add("mcpwatch_call_last_failure_info", typeGauge, renderCallLastFailure,
		"1, with the reason, while the last canary call of the tool failed; absent while it passes."+callNote,
		"tool", "reason")
	d.add("mcpwatch_last_call_timestamp_seconds", typeGauge, renderLastCall,
		"Unix time the last canary call of the tool ended. Absent until its first call ends."+callNote,
		"tool")
	d.add("mcpwatch_call_interval_seconds", typeGauge, renderCallInterval,
		"Interval between scheduled canary calls of the server (call_schedule). Absent for a server without contracts, or a cron call_schedule."+callNote)

	byName := func(a, b *family) int { return strings.Compare(a.name, b.name) }
	slices.SortFunc(d.perServer, byName)
	slices.SortFunc(d.all, byName)
	return d
}

// add puts a family in the table. A nil render marks the family without a
// server label (mcpwatch_servers), which the writer renders itself.
func (d *descs) add(name, typ string, render renderFunc, help string, labels ...string) *family {
	f := &family{name: name, help: help, typ: typ, labels: labels, render: render}
	f.header = "# HELP " + name + " " + escapeHelp(help) + "\n# TYPE " + name + " " + typ + "\n"
	omName := name
	if typ == typeCounter {
		omName = strings.TrimSuffix(name, "_total")
	}
	f.omHeader = "# HELP " + omName + " " + escapeOMHelp(help) + "\n# TYPE " + omName + " " + typ + "\n"
	if render != nil {
		all := append([]string{"server"}, labels...)
		f.order = make([]int, len(all))
		for i := range f.order {
			f.order[i] = i
		}
		slices.SortFunc(f.order, func(a, b int) int { return strings.Compare(all[a], all[b]) })
		for i, idx := range f.order {
			sep := `",`
			if i == 0 {
				sep = name + "{"
			}
			f.prefixes = append(f.prefixes, sep+all[idx]+`="`)
		}
		d.perServer = append(d.perServer, f)
	}
	d.all = append(d.all, f)
	return f
}

// withBuckets makes f a histogram of these bucket bounds.
func (f *family) withBuckets(bounds []float64) *family {
	f.buckets = bounds
	for _, b := range bounds {
		le := string(appendFloat(nil, b))
		f.leLabels = append(f.leLabels, `",le="`+le+`"} `)
		if !strings.ContainsAny(le, ".e") {
			le += ".0"
		}
		f.omLeLabels = append(f.omLeLabels, `",le="`+le+`"} `)
	}
	f.leLabels = append(f.leLabels, `",le="+Inf"} `)
	f.omLeLabels = append(f.omLeLabels, `",le="+Inf"} `)
	for i, p := range f.prefixes {
		if i == 0 {
			f.labelStarts = append(f.labelStarts, strings.TrimPrefix(p, f.name+"{"))
		} else {
			f.labelStarts = append(f.labelStarts, strings.TrimPrefix(p, `",`))
		}
	}
	return f
}

// seriesNames are the names of f's series: a histogram's _bucket, _sum
// and _count, any other family's own name.
func (f *family) seriesNames() []string {
	if f.typ == typeHistogram {
		return []string{f.name + "_bucket", f.name + "_sum", f.name + "_count"}
	}
	return []string{f.name}
}

// names returns the name of every family, sorted.
func (d *descs) names() []string {
	out := make([]string, len(d.all))
	for i, f := range d.all {
		out[i] = f.name
	}
	return out
}

// escapeOMHelp escapes a HELP text as OpenMetrics wants: backslash, line
// feed and double quote.
func escapeOMHelp(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`).Replace(s)
}

// escapeHelp escapes a HELP text as the text format wants: backslash and
// line feed.
func escapeHelp(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(s)
}

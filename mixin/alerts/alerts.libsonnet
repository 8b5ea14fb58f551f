// The alert rules of mcpwatch, the source of prometheus-alerts.yaml (mixin.libsonnet,
// README.md). Every `for:`, the job selector, the runbook links and the thresholds come from
// _config (config.libsonnet).
//
// Conventions:
// - severity "critical" pages, "warning" opens a ticket (deploy/alertmanager).
// - HA-safe: two (or more) mcpwatch replicas may watch the same servers and
//   all be scraped (deploy/kubernetes/ha-pair), and a sharded fleet splits the
//   servers between replicas (deploy/kubernetes/sharded). Every rule about a
//   server therefore aggregates away the target labels (instance, pod, job):
//   one alert per server (and tool), however many replicas see it, so a pair
//   never pages twice, and each rule says whether one replica seeing the
//   problem is enough (max: a problem any replica sees pages, which is what
//   makes a pair detect twice as fast) or every replica must (min: one
//   replica that still succeeds keeps it quiet). Which replica saw what is in
//   the annotations. The rules about mcpwatch itself keep `instance` only
//   where the alert is about one replica (McpwatchDown). Every rule says how
//   it behaves over replicas in an `// HA:` comment; deploy/rules_test.go
//   checks the comment and the aggregation.
//   The aggregation also merges jobs: if one Prometheus scrapes two separate
//   mcpwatch fleets whose server names overlap, add `job` to every `by (...)`.
// - Surface alerts read the last known value with last_over_time(...[5m]), so a
//   failed probe (the per-probe series are absent then) or one lost scrape does
//   not resolve them; they resolve at once when a successful probe shows the
//   problem gone. A held value gives way as soon as any replica has a
//   successful probe of the server: a replica that died (its series stale)
//   never holds an alert against a live replica's fresh observation. A failing
//   probe has its own alert, McpProbeFailing.
// - Only `up` is matched with _config.mcpwatchSelector (job="mcpwatch" unless
//   you change it); every other series is named mcpwatch_* and cannot come
//   from another job.

local lib = import '../lib.libsonnet';
local fold = lib.fold, runbook = lib.runbook, duration = lib.duration;

// expiresOn is the date a McpCredentialExpiringSoon's credential expires,
// for its annotations: the value of the alert is the time left, and a
// person renewing a token wants the day (as GitHub, GitLab and
// Cloudflare tell it).
local expiresOn = '{{ with printf "min(last_over_time(mcpwatch_credential_expiry_timestamp_seconds{server=%q,credential=%q}[15m]))" $labels.server $labels.credential | query }}{{ . | first | value | humanizeTimestamp }}{{ end }}';

{
  local c = $._config,

  prometheusAlerts+:: {
    groups+: [
      {
        name: "mcpwatch.surface",
        rules: [
          {
            alert: "McpToolsMissing",
            // One alert per (server, tool); Alertmanager groups them by server, so
            // a page lists every missing tool of one server.
            // HA: max by (server, tool): any replica whose latest successful probe
            // lacks the tool pages. Agents reach the same server, so a replica
            // seeing the tool gone is evidence enough (a replica with a stale
            // credential pages too, and is worth fixing); with phases half an
            // interval apart, the first replica to probe after a change pages.
            expr: |||
              max by (server, tool) (
                mcpwatch_tool_missing == 1
                or
                (
                  last_over_time(mcpwatch_tool_missing[5m]) == 1
                  unless on (server)
                  mcpwatch_probe_success == 1
                )
              )
            |||,
            'for': c.forDurations.McpToolsMissing,
            labels: { severity: "critical" },
            annotations: {
              summary: "MCP server {{ $labels.server }} is missing locked tool {{ $labels.tool }}",
              description: fold(|||
                Server {{ $labels.server }} answers tools/list without the locked tool {{ $labels.tool }}
                ({{ with printf "mcpwatch_tool_missing{server=%q,tool=%q} == 1" $labels.server $labels.tool | query | sortByLabel "instance" }}seen by{{ range . }} {{ .Labels.instance }}{{ end }}{{ else }}as of its last successful probe{{ end }}).{{ with printf "max(mcpwatch_tools_missing{server=%q})" $labels.server | query }}{{ $missing := . | first | value }}{{ with printf "max(mcpwatch_tools_expected{server=%q})" $labels.server | query }} In all, {{ $missing }} of {{ . | first | value }} locked tools are missing.{{ end }}{{ end }}
                Agents that need it answer without it. Usual causes: an expired or narrowed
                credential, a renamed tool.
              |||),
              runbook_url: runbook(c, "McpToolsMissing"),
            },
          },
          {
            alert: "McpServerNoTools",
            // The value is the number of locked tools, all of them gone.
            // HA: max by (server), as McpToolsMissing: any replica that saw the
            // list empty pages.
            expr: |||
              max by (server) (
                last_over_time(mcpwatch_tools_expected[5m]) > 0
                and on (job, instance, server)
                (
                  mcpwatch_tools == 0
                  or
                  (
                    last_over_time(mcpwatch_tools[5m]) == 0
                    unless on (server)
                    mcpwatch_probe_success == 1
                  )
                )
              )
            |||,
            'for': c.forDurations.McpServerNoTools,
            labels: { severity: "critical" },
            annotations: {
              summary: "MCP server {{ $labels.server }} lists zero tools; its lock expects {{ $value }}",
              description: fold(|||
                Server {{ $labels.server }} starts and answers, but tools/list is empty while
                the lock expects {{ $value }} tool(s).
                This is how most servers behave without their credential.
              |||),
              runbook_url: runbook(c, "McpServerNoTools"),
            },
          },
          {
            alert: "McpForbiddenToolPresent",
            // HA: max by (server, tool): a forbidden tool any replica sees is
            // there for some agents; one replica not seeing it proves nothing.
            expr: |||
              max by (server, tool) (
                mcpwatch_tool_forbidden == 1
                or
                (
                  last_over_time(mcpwatch_tool_forbidden[5m]) == 1
                  unless on (server)
                  mcpwatch_probe_success == 1
                )
              )
            |||,
            labels: { severity: "critical" },
            annotations: {
              summary: "MCP server {{ $labels.server }} offers forbidden tool {{ $labels.tool }}",
              description: fold(|||
                Server {{ $labels.server }} lists {{ $labels.tool }}, which matches a `forbid`
                pattern in the mcpwatch config. An agent
                connected to it can call that tool now.
              |||),
              runbook_url: runbook(c, "McpForbiddenToolPresent"),
            },
          },
          {
            alert: "McpToolsChanged",
            // HA: max by (server, change): a changed schema or description any
            // replica sees is served to some agents (tool poisoning need not be
            // served to everyone).
            expr: |||
              max by (server, change) (
                mcpwatch_tools_changed
                or
                (
                  last_over_time(mcpwatch_tools_changed[5m])
                  unless on (server)
                  mcpwatch_probe_success == 1
                )
              ) > 0
            |||,
            'for': c.forDurations.McpToolsChanged,
            labels: { severity: "warning" },
            annotations: {
              summary: "MCP server {{ $labels.server }}: {{ $value }} tool(s) changed their {{ $labels.change }}",
              description: fold(|||
                {{ $value }} tool(s) of server {{ $labels.server }} no longer match the
                {{ $labels.change }} recorded in the lock.
                A schema change can break an agent's calls; a description change is what
                tool poisoning looks like. Review the change, then re-lock.
              |||),
              runbook_url: runbook(c, "McpToolsChanged"),
            },
          },
        ],
      },
      {
        name: "mcpwatch.probes",
        rules: [
          {
            alert: "McpProbeFailing",
            // Every probe in the last 5 minutes failed: one lost scrape or one
            // good probe in between cannot hide a server that is down.
            // HA: max by (server) of the successes, i.e. it fires only when every
            // replica failed: a replica that can still probe the server shows it
            // is reachable (the other replica's path or network is the problem,
            // and shows on the dashboard). A dead replica's last samples are real
            // observations, so they count only for the time they cover.
            // A server not probed for want of a credential, or that rejects its
            // credential, pages as McpCredentialMissing or McpCredentialRejected;
            // one that says it cannot reach its service is McpUpstreamUnreachable.
            // The reason in the summary: a failure reason's counter appears at
            // the server's first failure of it, at 1, where increase() cannot
            // see it; a series born within the 10 minutes counts whole, the
            // others by their increase.
            expr: |||
              max by (server) (max_over_time(mcpwatch_probe_success[5m])) == 0
              unless on (server)
              (
                max by (server) (mcpwatch_credential_rejected_info)
                or
                max by (server) (mcpwatch_upstream_unreachable_info)
                or
                min by (server) (mcpwatch_credential_present) == 0
              )
            |||,
            'for': c.forDurations.McpProbeFailing,
            labels: { severity: "critical" },
            annotations: {
              summary: fold(|||
                MCP server {{ $labels.server }} cannot be probed: {{ with printf "topk(1, sum by (reason) (mcpwatch_probe_failures_total{server=%q} unless mcpwatch_probe_failures_total{server=%q} offset 10m) or sum by (reason) (increase(mcpwatch_probe_failures_total{server=%q}[10m])) > 0)" $labels.server $labels.server $labels.server | query }}{{ . | first | label "reason" }}{{ else }}reason unknown{{ end }}
              |||),
              description: fold(|||
                Every probe of server {{ $labels.server }} in the last 5 minutes failed, from
                every mcpwatch replica that probes it; most frequent reason:
                {{ with printf "topk(1, sum by (reason) (mcpwatch_probe_failures_total{server=%q} unless mcpwatch_probe_failures_total{server=%q} offset 10m) or sum by (reason) (increase(mcpwatch_probe_failures_total{server=%q}[10m])) > 0)" $labels.server $labels.server $labels.server | query }}{{ . | first | label "reason" }}{{ else }}unknown{{ end }}.
                The status page of mcpwatch shows the error and the server's stderr tail.
              |||),
              runbook_url: runbook(c, "McpProbeFailing"),
            },
          },
          {
            alert: "McpProbeStale",
            // The value is the age of the freshest probe, in seconds.
            // HA: min by (server) of the ages: the server is unwatched only when
            // no replica has probed it for three intervals; one stuck replica of
            // a pair shows in its schedule lag, and a dead one in McpwatchDown.
            expr: |||
              min by (server) (time() - mcpwatch_last_probe_timestamp_seconds)
              > %(probeStaleIntervals)d * max by (server) (mcpwatch_probe_interval_seconds)
            ||| % c,
            'for': c.forDurations.McpProbeStale,
            labels: { severity: "warning" },
            annotations: {
              summary: "MCP server {{ $labels.server }} has not been probed for {{ $value | humanizeDuration }}",
              description: fold(|||
                The last probe of server {{ $labels.server }} ended {{ $value | humanizeDuration }}
                ago, more than three probe intervals, on every mcpwatch replica that probes it.
                mcpwatch is up but its schedule is stuck, so this server's surface is not watched.
              |||),
              runbook_url: runbook(c, "McpProbeStale"),
            },
          },
        ],
      },
      {
        name: "mcpwatch.credentials",
        // HA-safe: two replicas watching the same servers are aggregated away
        // (by server, credential), so one alert per credential whatever the
        // number of replicas.
        rules: [
          {
            alert: "McpCredentialMissing",
            // A credential the server is given (an env or header value whose
            // name says credential, an auth: secret) has no value: its variable
            // unset or empty (CI's unset secret), an emptied token file. mcpwatch does not probe
            // the server then (it would only list fewer tools, or public data),
            // so this is the page, and McpProbeFailing stays quiet for it.
            // HA: min by (server, credential): any replica that has it empty
            // pages (each reads its own copy of the secret, and agents started
            // from that deployment run without it).
            expr: "min by (server, credential) (mcpwatch_credential_present) == 0",
            'for': c.forDurations.McpCredentialMissing,
            labels: { severity: "critical" },
            annotations: {
              summary: "MCP server {{ $labels.server }} has no value for its credential {{ $labels.credential }}",
              description: fold(|||
                The credential {{ $labels.credential }} that mcpwatch gives server {{ $labels.server }} has no
                value on{{ range printf "mcpwatch_credential_present{server=%q,credential=%q} == 0" $labels.server $labels.credential | query | sortByLabel "instance" }} {{ .Labels.instance }}{{ end }}:
                its variable is unset or empty (CI sets a missing secret to ""), or its token file is empty. mcpwatch does not probe
                the server without it, and agents started the same way run without it. Put the credential
                back; the next probe sees it, no restart needed.
              |||),
              runbook_url: runbook(c, "McpCredentialMissing"),
            },
          },
          {
            alert: "McpCredentialRejected",
            // The server rejects its credential: its transport answers 401 or
            // 403, or a canary call's answer says so in a rejection's words
            // (Bad credentials, invalid_auth, SUBSCRIPTION_TOKEN_INVALID, ...):
            // a wrong, revoked or expired token. The summary quotes the server
            // (scrubbed of secrets, escaped) and names the credential to renew.
            // McpToolCallFailing and McpProbeFailing stay quiet for it.
            // HA: max by (server, credential): any replica whose server rejects
            // the credential pages; a replica with a stale credential is worth
            // fixing, as for McpToolsMissing. The series is present only while
            // rejected, so the restored credential's first good probe or call
            // resolves it.
            expr: "max by (server, credential) (mcpwatch_credential_rejected_info) == 1",
            'for': c.forDurations.McpCredentialRejected,
            labels: { severity: "critical" },
            annotations: {
              summary: fold(|||
                MCP server {{ $labels.server }} rejects its credential{{ with $labels.credential }} {{ . }}{{ end }}: "{{ with printf "mcpwatch_credential_rejected_info{server=%q}" $labels.server | query }}{{ . | first | label "message" }}{{ end }}"
              |||),
              description: fold(|||
                Server {{ $labels.server }} answers that its credential is wrong, revoked or expired
                (seen by{{ range printf "mcpwatch_credential_rejected_info{server=%q}" $labels.server | query | sortByLabel "instance" }} {{ .Labels.instance }}{{ end }}).
                Agents that use it get the same refusal. {{ if $labels.credential }}Renew {{ $labels.credential }}
                and write the new value where mcpwatch and the agents read it{{ else }}Renew the credential the
                server uses (the configuration names none: it may be in an argument, such as a database URL){{ end }};
                the next probe or canary call sees it, no restart needed.
              |||),
              runbook_url: runbook(c, "McpCredentialRejected"),
            },
          },
          {
            alert: "McpUpstreamUnreachable",
            // The server answers, or said as it died, that it cannot reach the
            // service it fronts: a network failure it reports (ECONNREFUSED,
            // ENOTFOUND, fetch failed, a TLS error, a 502/503/504 from it),
            // at the probe (tool empty) or in a canary call's answer, even one
            // answered as a normal result (Context7's "Error searching
            // libraries: TypeError: fetch failed"). No tool broke and no
            // credential is in question (mcpwatch never reads such an answer as
            // a rejection): McpProbeFailing and McpToolCallFailing stay quiet
            // for it. A warning: it pages no one, since nothing of the watch is
            // at fault, but agents get no data from the server meanwhile.
            // HA: max by (server): any replica that cannot get through is worth
            // a look (its network path may be the cause; the description names
            // the replicas). `for:` rides out a blip of the service.
            expr: "max by (server) (mcpwatch_upstream_unreachable_info) == 1",
            'for': c.forDurations.McpUpstreamUnreachable,
            labels: { severity: "warning" },
            annotations: {
              summary: fold(|||
                MCP server {{ $labels.server }} cannot reach the service it fronts: "{{ with printf "mcpwatch_upstream_unreachable_info{server=%q}" $labels.server | query }}{{ . | first | label "message" }}{{ end }}"
              |||),
              description: fold(|||
                Server {{ $labels.server }} says it cannot reach the service behind it
                (seen by{{ range printf "max by (instance) (mcpwatch_upstream_unreachable_info{server=%q})" $labels.server | query | sortByLabel "instance" }} {{ .Labels.instance }}{{ end }}):
                the service is unreachable, no tool broke and the credential is not in question.
                Agents that use it get no data until it is back. Check the service's status page,
                then the network path from where the server runs (DNS, proxy, firewall, TLS
                certificates); nothing to renew or relock. It resolves at the first probe or call
                that gets through.
              |||),
              runbook_url: runbook(c, "McpUpstreamUnreachable"),
            },
          },
          {
            alert: "McpCredentialExpiringSoon",
            // HA: min over replicas: the earliest expiry any replica holds (they read
            // the same secret; a refresh token one replica holds alone expires
            // all the same). OAuth access tokens are left out: mcpwatch renews
            // them itself, and a renewal that fails is McpCredentialRefreshFailing.
            // last_over_time keeps the expiry known across a probe that could not
            // read its configuration. The value is the time left in seconds.
            expr: |||
              min by (server, credential) (
                last_over_time(mcpwatch_credential_expiry_timestamp_seconds{credential!="oauth_access_token"}[15m])
              ) - time() < %(credentialExpiryCriticalSeconds)d
            ||| % c,
            'for': c.forDurations.McpCredentialExpiringSoonCritical,
            labels: { severity: "critical" },
            annotations: {
              summary: fold(|||
                Credential {{ $labels.credential }} of MCP server {{ $labels.server }} {{ if lt $value 0.0 }}has expired{{ else }}expires in {{ $value | humanizeDuration }}{{ end }}
              |||) + ' (' + expiresOn + ')',
              description: fold(|||
                The credential {{ $labels.credential }} that mcpwatch sends to server {{ $labels.server }}
                {{ if lt $value 0.0 }}has expired{{ else }}expires in less than %(critical)s ({{ $value | humanizeDuration }}){{ end }}.
                When it does, the server lists fewer tools or refuses the probe, and so it will for the
                agents that use the same credential. Renew it now.
              ||| % { critical: duration(c.credentialExpiryCriticalSeconds) }),
              runbook_url: runbook(c, "McpCredentialExpiringSoon"),
            },
          },
          {
            alert: "McpCredentialExpiringSoon",
            // The same, a week ahead (by default), as a ticket; quiet once the
            // critical one fires.
            // HA: min over replicas, as above.
            expr: |||
              min by (server, credential) (
                last_over_time(mcpwatch_credential_expiry_timestamp_seconds{credential!="oauth_access_token"}[15m])
              ) - time() < %(credentialExpiryWarningSeconds)d
              >= %(credentialExpiryCriticalSeconds)d
            ||| % c,
            'for': c.forDurations.McpCredentialExpiringSoonWarning,
            labels: { severity: "warning" },
            annotations: {
              summary: "Credential {{ $labels.credential }} of MCP server {{ $labels.server }} expires in {{ $value | humanizeDuration }}, on " + expiresOn,
              description: fold(|||
                The credential {{ $labels.credential }} that mcpwatch sends to server {{ $labels.server }}
                expires in {{ $value | humanizeDuration }}, within %(warning)s. Renew it before it does:
                the agents that use the same credential will fail with it.
              ||| % { warning: duration(c.credentialExpiryWarningSeconds) }),
              runbook_url: runbook(c, "McpCredentialExpiringSoon"),
            },
          },
          {
            alert: "McpCredentialRefreshFailing",
            // Token requests failed in the last 15 minutes and none succeeded
            // since; one alert per (server, reason).
            // HA: max over replicas: any
            // replica that cannot get a token pages, since it cannot probe once
            // its token lapses, and replicas sharing one rotating refresh token
            // invalidate each other's (each needs its own grant).
            expr: |||
              max by (server, reason) (
                increase(mcpwatch_credential_refresh_failures_total[15m]) > 0
                unless ignoring (reason)
                (time() - mcpwatch_credential_last_refresh_success_timestamp_seconds < 900)
              )
            |||,
            'for': c.forDurations.McpCredentialRefreshFailing,
            labels: { severity: "critical" },
            annotations: {
              summary: "mcpwatch cannot get an OAuth token for MCP server {{ $labels.server }}: {{ $labels.reason }}",
              description: fold(|||
                The OAuth token requests for server {{ $labels.server }} have failed with {{ $labels.reason }}
                for at least %(for)s, and none succeeded in the last 15.
                {{ if eq $labels.reason "invalid_grant" }}The refresh token is expired or revoked: run `mcpwatch login {{ $labels.server }}` with the same configuration, which writes the new refresh token to the configured file.
                {{ else if eq $labels.reason "invalid_client" }}The authorization server does not accept the client's secret or key.
                {{ else if eq $labels.reason "store" }}A rotated refresh token could not be written back to its file; a restart would lose the grant.
                {{ end }}The status page of mcpwatch names the step that failed.
              ||| % { 'for': duration(c.forDurations.McpCredentialRefreshFailing) }),
              runbook_url: runbook(c, "McpCredentialRefreshFailing"),
            },
          },
        ],
      },
      {
        name: "mcpwatch.calls",
        rules: [
          {
            alert: "McpToolCallFailing",
            // The server lists the tool, and calling it with its contract fails:
            // the way most servers degrade when their credential expires.
            // HA: max by (server, tool) of the successes: every replica calls the
            // tool, and the alert fires only when every replica's last call
            // failed (a revoked credential fails them all); one replica whose call
            // passed keeps it quiet (one replica's blip pages neither twice nor at
            // all). Shards: one replica calls a server's tools, so it decides.
            // A server that cannot be probed has McpProbeFailing instead, a
            // locked tool that is not listed McpToolsMissing, and a call whose
            // answer shows the credential rejected McpCredentialRejected, one
            // whose server says it cannot reach its service McpUpstreamUnreachable;
            // a call not made because its probe failed (probe_failed: the probe's own
            // alert says why) fails no contract, even once the probes pass again
            // and the next call is still to come. Likewise a locked tool's call
            // not made because the tool was not listed (not_listed): that was
            // McpToolsMissing's page, and once the tool is listed again the next
            // call decides. A contract on a tool that is not locked has no
            // mcpwatch_tool_missing series, so its not_listed still pages here.
            // `for:` rides out one retry: the next call comes one call_schedule
            // (default 5m) later. Set it just over your call_schedule.
            // The summary names the reason of the last failed call
            // (mcpwatch_call_last_failure_info), not the most frequent reason of a
            // window: a tool unlisted a while ago that now fails its contract
            // must say why it fails now.
            expr: |||
              (
                max by (server, tool) (mcpwatch_call_success) == 0
                unless on (server)
                max by (server) (mcpwatch_probe_success) == 0
              )
              unless on (server, tool)
              max by (server, tool) (last_over_time(mcpwatch_tool_missing[5m])) == 1
              unless on (server, tool)
              max by (server, tool) (mcpwatch_call_last_failure_info{reason=~"credential_rejected|upstream_unreachable|probe_failed"})
              unless on (server, tool)
              (
                max by (server, tool) (mcpwatch_call_last_failure_info{reason="not_listed"})
                and on (server, tool)
                max by (server, tool) (mcpwatch_tool_missing)
              )
            |||,
            'for': c.forDurations.McpToolCallFailing,
            labels: { severity: "critical" },
            annotations: {
              summary: fold(|||
                MCP server {{ $labels.server }}: calls to tool {{ $labels.tool }} fail: {{ with printf "max by (reason) (mcpwatch_call_last_failure_info{server=%q,tool=%q})" $labels.server $labels.tool | query }}{{ . | first | label "reason" }}{{ else }}reason unknown{{ end }}
              |||),
              description: fold(|||
                Server {{ $labels.server }} lists {{ $labels.tool }}, but its canary call
                breaks its contract on every mcpwatch replica, and did again at the retry
                one call_schedule later. Agents that call it get errors. Usual causes: an
                expired, revoked or narrowed credential behind a server that keeps listing
                its tools. The status page of mcpwatch shows the failed assertion and what
                came back.
              |||),
              runbook_url: runbook(c, "McpToolCallFailing"),
            },
          },
        ],
      },
      {
        name: "mcpwatch.self",
        rules: [
          {
            alert: "McpwatchDown",
            // One replica cannot be scraped.
            // HA: per instance on purpose, since it is about that replica, and a
            // warning: when it is the last replica of its shard, or the last of
            // all, McpwatchShardDown or McpwatchAbsent pages.
            expr: 'up{%(mcpwatchSelector)s} == 0' % c,
            'for': c.forDurations.McpwatchDown,
            labels: { severity: "warning" },
            annotations: {
              summary: "mcpwatch {{ $labels.instance }} cannot be scraped",
              description: fold(|||
                Prometheus has failed to scrape mcpwatch at {{ $labels.instance }} for %(for)s.
                The servers it probes are watched only by its peers (an HA pair), if it has any;
                McpwatchShardDown or McpwatchAbsent pages when no replica of them is left.
              ||| % { 'for': duration(c.forDurations.McpwatchDown) }),
              runbook_url: runbook(c, "McpwatchDown"),
            },
          },
          {
            alert: "McpwatchShardDown",
            // One alert per shard (index of total) none of whose replicas is up
            // while other shards of the same split are: its servers are not
            // watched. A shard's replicas are known from the last hour of
            // mcpwatch_shard_info; a dead replica's series is stale at once. A
            // split no replica runs any more (after --shard.total changed, or
            // when every replica is down) is left to McpwatchAbsent.
            // HA: by (job, index, total): a shard with one replica of a pair left
            // is watched, and stays quiet.
            expr: |||
              (
                count by (job, index, total) (last_over_time(mcpwatch_shard_info[1h]))
                unless on (job, index, total)
                mcpwatch_shard_info
              )
              and on (job, total)
              count by (job, total) (mcpwatch_shard_info)
            |||,
            'for': c.forDurations.McpwatchShardDown,
            labels: { severity: "critical" },
            annotations: {
              summary: "mcpwatch shard {{ $labels.index }} of {{ $labels.total }} has no replica up",
              description: fold(|||
                No mcpwatch replica of shard {{ $labels.index }} of {{ $labels.total }} (job {{ $labels.job }})
                has been scraped for %(for)s, while other shards are up. The servers of that shard are
                not probed and no surface alert can fire for them.
              ||| % { 'for': duration(c.forDurations.McpwatchShardDown) }),
              runbook_url: runbook(c, "McpwatchShardDown"),
            },
          },
          {
            alert: "McpwatchAbsent",
            // No mcpwatch target is up: none is known to Prometheus, or every one
            // is down (one replica alone, or the last of a pair). Nothing is
            // watched.
            // HA: absent() of the live targets, so the last replica of a pair
            // going down pages once, here (McpwatchShardDown stays quiet then).
            expr: 'absent(up{%(mcpwatchSelector)s} == 1)' % c,
            'for': c.forDurations.McpwatchAbsent,
            labels: { severity: "critical" },
            annotations: {
              summary: "No mcpwatch target is up",
              description: fold(|||
                Prometheus has had no mcpwatch target up (up{%(selector)s}) for %(for)s: every
                replica is down, or the scrape config, the service discovery or the ServiceMonitor
                no longer finds one, so no MCP server is watched and no surface alert can fire.
              ||| % { selector: c.mcpwatchSelector, 'for': duration(c.forDurations.McpwatchAbsent) }),
              runbook_url: runbook(c, "McpwatchAbsent"),
            },
          },
          {
            alert: "McpwatchConfigReloadFailed",
            // All reloads in the last 5 minutes failed, and the daemon still runs
            // the previous config.
            // HA: count by (job): replicas read the same file, so one bad edit
            // fails them all; one alert, its value the number of replicas on an
            // old config (any one of them is enough to warn).
            expr: "count by (job) (max_over_time(mcpwatch_config_last_reload_successful[5m]) == 0)",
            labels: { severity: "warning" },
            annotations: {
              summary: "{{ $value }} mcpwatch replica(s) of job {{ $labels.job }} failed to reload their config",
              description: fold(|||
                The last config reload of mcpwatch at{{ range printf "max_over_time(mcpwatch_config_last_reload_successful{job=%q}[5m]) == 0" $labels.job | query | sortByLabel "instance" }} {{ .Labels.instance }}{{ end }}
                failed and it keeps probing with the previous config, so recent changes (new servers, a new lock)
                are not in effect. Its log says which file and key are wrong.
              |||),
              runbook_url: runbook(c, "McpwatchConfigReloadFailed"),
            },
          },
          {
            alert: "McpwatchLockReadFailed",
            // The lock file has been missing or unreadable for the whole of the
            // last 5 minutes: mcpwatch judges the servers against the last good
            // lock, or against none (nothing locked, nothing can be missing).
            // HA: count by (job), as for reloads: replicas read the same file, so
            // one bad write fails them all; one alert, its value the number of
            // replicas that cannot read it (any one is enough to warn).
            expr: "count by (job) (max_over_time(mcpwatch_lock_last_read_successful[5m]) == 0)",
            labels: { severity: "warning" },
            annotations: {
              summary: "{{ $value }} mcpwatch replica(s) of job {{ $labels.job }} cannot read their lock file",
              description: fold(|||
                mcpwatch at{{ range printf "max_over_time(mcpwatch_lock_last_read_successful{job=%q}[5m]) == 0" $labels.job | query | sortByLabel "instance" }} {{ .Labels.instance }}{{ end }}
                has failed to read its lock file for 5 minutes (missing, unreadable or invalid JSON). It keeps
                judging the servers against the last good lock, or none, so tool changes since are not checked.
                Its log and status page name the file and the error.
              |||),
              runbook_url: runbook(c, "McpwatchLockReadFailed"),
            },
          },
        ],
      },
    ],
  },
}

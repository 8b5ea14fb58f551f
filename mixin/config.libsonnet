// What a user of the mixin may change: override any of it where the mixin is
// imported, e.g.
//
//   (import 'mcpwatch-mixin/mixin.libsonnet') + {
//     _config+:: { mcpwatchSelector: 'job="monitoring/mcpwatch"' },
//   }
{
  _config+:: {
    // The selector of mcpwatch's scrape targets: the `up` series the alerts
    // about mcpwatch itself read (McpwatchDown, McpwatchAbsent), and the jobs
    // the dashboard offers. Every other series is named mcpwatch_* and can
    // come from no other job. A ServiceMonitor names the job after the
    // Service unless its jobLabel says otherwise; the Helm chart and the
    // Kubernetes manifests make it "mcpwatch".
    mcpwatchSelector: 'job="mcpwatch"',

    // Where each alert's runbook_url points: the runbook of a tagged release,
    // so a link never moves under a page (the release that moves every pin
    // moves it: docs/releasing.md). Point it at your own copy if you keep one.
    runbookURLBase: 'https://github.com/mcpwatch/mcpwatch/blob/v0.2.0/deploy/RUNBOOK.md',

    // The `for:` of each alert with one: how long its condition must hold
    // before it fires. McpForbiddenToolPresent, McpwatchConfigReloadFailed
    // and McpwatchLockReadFailed fire at once (their expressions already
    // span 5 minutes, or a forbidden tool is never a blip).
    forDurations: {
      McpToolsMissing: '1m',
      McpServerNoTools: '1m',
      McpToolsChanged: '5m',
      McpProbeFailing: '1m',
      McpProbeStale: '1m',
      McpCredentialMissing: '1m',
      McpCredentialRejected: '1m',
      McpUpstreamUnreachable: '5m',
      McpCredentialExpiringSoonCritical: '5m',
      McpCredentialExpiringSoonWarning: '10m',
      McpCredentialRefreshFailing: '5m',
      // Rides out one retry: set it just over your call_schedule (default 5m).
      McpToolCallFailing: '6m',
      McpwatchDown: '2m',
      McpwatchShardDown: '2m',
      McpwatchAbsent: '2m',
    },

    // Thresholds.
    // McpCredentialExpiringSoon pages below this much time left...
    credentialExpiryCriticalSeconds: 86400,
    // ...and opens a ticket below this much.
    credentialExpiryWarningSeconds: 7 * 86400,
    // McpProbeStale fires when no probe of a server ended for this many of
    // its probe intervals.
    probeStaleIntervals: 3,

    // The dashboard.
    dashboardUID: 'mcpwatch',
    dashboardTags: ['mcpwatch', 'mcp'],
    dashboardRefresh: '30s',
  },
}

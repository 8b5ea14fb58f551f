// The Grafana dashboard of mcpwatch, the source of dashboards_out/mcpwatch.json.
//
// Its panels are built in Go (dashboards/gen, with grafana-foundation-sdk's
// typed builders, whose strict decoding catches a misspelt field that JSON
// would carry silently) and written to panels.json beside this file; this
// applies _config to them: the job selector to the Job variable, the runbook
// link, the uid, tags and refresh.
local panels = import 'panels.json';

{
  local c = $._config,
  local jobs = 'label_values(mcpwatch_build_info{%s}, job)' % c.mcpwatchSelector,

  grafanaDashboards+:: {
    'mcpwatch.json': panels {
      uid: c.dashboardUID,
      tags: c.dashboardTags,
      refresh: c.dashboardRefresh,
      links: [
        if l.title == 'Runbook' then l { url: c.runbookURLBase } else l
        for l in panels.links
      ],
      templating+: {
        list: [
          if v.name == 'job' then v { query: jobs, definition: jobs } else v
          for v in panels.templating.list
        ],
      },
    },
  },
}

// The recording rules of mcpwatch, the source of prometheus-rules.yaml: one
// series per server (or per fleet) however many replicas watch it, for
// long-term storage, federation and reports that should not sum a pair
// twice. Neither the alerts nor the dashboard need them: load them where you
// keep such series. They follow Prometheus's level:metric:operations naming.
{
  prometheusRules+:: {
    groups+: [
      {
        name: 'mcpwatch.fleet',
        rules: [
          {
            // 1 while some replica's latest probe of the server succeeded
            // (the view McpProbeFailing takes over replicas).
            record: 'server:mcpwatch_probe_success:max',
            expr: 'max by (server) (mcpwatch_probe_success)',
          },
          {
            // The locked tools of the server that some replica saw missing
            // at its latest successful probe (McpToolsMissing's view).
            record: 'server:mcpwatch_tools_missing:max',
            expr: 'max by (server) (mcpwatch_tools_missing)',
          },
          {
            // The servers a fleet watches: each replica's count joined with
            // its shard, the replicas of one shard (an HA pair) counted once,
            // the shards summed (the dashboard's "servers watched").
            record: 'job:mcpwatch_servers:sum',
            expr: |||
              sum by (job) (
                max by (job, index, total) (
                  mcpwatch_servers * on (job, instance) group_left (index, total) mcpwatch_shard_info
                )
              )
            |||,
          },
        ],
      },
    ],
  },
}

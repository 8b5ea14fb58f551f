// The monitoring mixin of mcpwatch: its alerts, recording rules and Grafana
// dashboard, with the settings a user changes in _config (config.libsonnet).
// README.md says how to use it; `go generate ./...` in this directory writes
// prometheus-alerts.yaml, prometheus-rules.yaml and dashboards_out/ from it.
(import 'config.libsonnet') +
(import 'alerts/alerts.libsonnet') +
(import 'rules/rules.libsonnet') +
(import 'dashboards/dashboards.libsonnet')

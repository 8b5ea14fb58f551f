// Package e2e holds mcpwatch's end-to-end tests: the built binaries against
// real MCP servers from npm, and the alerting path through real Prometheus and
// Alertmanager processes to a webhook receiver, for one mcpwatch, an HA pair
// and a sharded fleet. The tests carry the build tag
// e2e so `make test` (Go only) does not run them; `make e2e` installs what
// they need (scripts/e2e-deps.sh) and runs them:
//
//	go test -tags e2e -count=1 -v ./e2e/...
//
// Everything they start listens on 127.0.0.1 and is ended when the test
// ends, also when it fails.
package e2e

#!/usr/bin/env bash
# lint-deps.sh: installs the golangci-lint `make lint` runs, at the version
# pinned here, when it is missing or another version; safe to run again, it
# then does nothing. `go install` builds it from the Go module proxy into
# $(go env GOBIN), else $(go env GOPATH)/bin: about five minutes on a busy
# 2-core machine with empty module and build caches.
set -euo pipefail
cd "$(dirname "$0")/.."

version=v2.15.0
bin="$(go env GOBIN)"
[ -n "$bin" ] || bin="$(go env GOPATH)/bin"
lint="$bin/golangci-lint"

if [ -x "$lint" ] && [ "v$("$lint" version --short 2>/dev/null)" = "$version" ]; then
	exit 0
fi
printf 'lint-deps: go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@%s (into %s)\n' "$version" "$bin"
start=$(date +%s)
go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$version"
printf 'lint-deps: golangci-lint %s installed in %ss\n' "$("$lint" version --short)" "$(( $(date +%s) - start ))"

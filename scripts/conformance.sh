#!/bin/sh
# Runs the MCP conformance suite's client scenarios against mcpwatch and
# prints one line a scenario: name, pass or FAIL, and the failed checks.
# Needs node and npm, and the npm registry the first time (the suite is
# installed under $CONFORMANCE_DIR, default /tmp/mcpwatch-conformance, at
# the version pinned below); after that it runs offline, on loopback.
# Exit 0 when at least $CONFORMANCE_MIN scenarios pass (default 23).
#
#   scripts/conformance.sh              # every client scenario
#   scripts/conformance.sh sse-retry    # the ones named
set -eu
version=0.1.16
dir=${CONFORMANCE_DIR:-/tmp/mcpwatch-conformance}
min=${CONFORMANCE_MIN:-23}
root=$(cd "$(dirname "$0")/.." && pwd)

if [ ! -x "$dir/node_modules/.bin/conformance" ]; then
	mkdir -p "$dir"
	(cd "$dir" && npm init -y >/dev/null && npm install --no-audit --no-fund "@modelcontextprotocol/conformance@$version" >/dev/null)
fi
# The suite imports fs.globSync (node 22) for a report it does not need
# here; on an older node that import alone stops it, so it is replaced.
if ! node -e 'process.exit(require("fs").globSync ? 0 : 1)'; then
	f="$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js"
	if grep -q 'globSync as o,' "$f"; then
		sed -i 's/import{existsSync as a,globSync as o,mkdtempSync/import{existsSync as a,mkdtempSync/' "$f"
		echo 'function o(){throw new Error("globSync needs node 22")}' >>"$f"
	fi
fi

(cd "$root" && go build -o bin/mcpwatch ./cmd/mcpwatch)
export MCPWATCH="$root/bin/mcpwatch"
if [ $# -eq 0 ]; then
	set -- $(cd "$dir" && npx conformance list --client | sed -n 's/^  - \([^ ]*\).*/\1/p')
fi
logs=$(mktemp -d)
passed=0 total=0
for s in "$@"; do
	total=$((total + 1))
	log="$logs/$(echo "$s" | tr / _).log"
	(cd "$dir" && npx conformance client --command "$root/scripts/conformance-client.sh" --scenario "$s" --timeout 60000 --verbose) >"$log" 2>&1 || true
	if grep -q 'OVERALL: PASSED' "$log"; then
		passed=$((passed + 1))
		printf '%-45s pass\n' "$s"
	else
		why=$(sed -n '/^Failed Checks:/,/OVERALL/p' "$log" | grep '^  - ' | sed 's/^  - //' | tr '\n' ';' | cut -c1-200)
		printf '%-45s FAIL  %s\n' "$s" "$why"
	fi
done
echo "$passed of $total client scenarios passed (logs in $logs)"
[ "$passed" -ge "$min" ] || [ "$total" -lt "$min" ]

#!/usr/bin/env bash
# peers.sh: installs the pinned MCP servers of testdata/peers and testdata/peers/launchdarkly (npm
# install from each package-lock.json) when a node_modules is absent or was installed from another
# lock; safe to run again, it then does nothing. The tests against real npm MCP servers run them
# (they are skipped, listed at the end of `make test`, without them). `make test` runs this when
# node and npm are present; scripts/e2e-deps.sh runs it after installing node and npm.
#
# Offline-safe: npm takes what its cache has (--prefer-offline) and asks the registry only for
# what it lacks; with neither, it fails, saying so, and the tests are skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'peers: %s\n' "$*"; }
for tool in node npm; do
	command -v "$tool" >/dev/null 2>&1 || { say "$tool is not installed: install node (18 or later) and npm (Debian: apt-get install nodejs npm), or run scripts/e2e-deps.sh as root" >&2; exit 1; }
done
node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 18 ]; then
	say "node $(node --version) is too old: the MCP SDK needs node >= 18" >&2
	exit 1
fi

# testdata/peers, and testdata/peers/launchdarkly for LaunchDarkly's server, whose bin is named mcp
# as @stripe/mcp's is (npx runs a package by its bin's name, so one node_modules cannot hold
# both). The stamp records which package-lock.json the installed node_modules came from, so a
# changed pin reinstalls.
for peers in testdata/peers testdata/peers/launchdarkly; do
	stamp="$peers/node_modules/.mcpwatch-lock.sha256"
	want=$(sha256sum "$peers/package-lock.json" | cut -d' ' -f1)
	if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
		say "$peers/node_modules up to date"
		continue
	fi
	# npm install, not npm ci: slack-mcp-server lists a binary package per platform as optional
	# dependencies, and the lock holds only those the registry had when it was written, which npm
	# ci refuses ("Missing ... from lock file"). npm install follows the lock all the same; a lock
	# it would change is an error here, as npm ci makes it.
	say "npm install (from package-lock.json) in $peers"
	start=$(date +%s)
	(cd "$peers" && npm install --ignore-scripts --no-audit --no-fund --prefer-offline --fetch-retries=1 --loglevel=error)
	if [ "$(sha256sum "$peers/package-lock.json" | cut -d' ' -f1)" != "$want" ]; then
		say "npm changed $peers/package-lock.json: it is out of step with package.json; run npm install there and commit the lock" >&2
		exit 1
	fi
	printf '%s\n' "$want" >"$stamp"
	say "installed $peers in $(( $(date +%s) - start ))s"
done

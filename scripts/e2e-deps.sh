#!/usr/bin/env bash
# e2e-deps.sh: installs what `make e2e` (and the promtool/amtool tests of
# `make test`) need and is missing; safe to run again, it then does nothing.
#
#   - Debian's prometheus (brings promtool) and prometheus-alertmanager (brings
#     amtool), when promtool or prometheus-alertmanager is not on PATH;
#   - node and npm (Debian's nodejs and npm), when missing;
#   - Debian's chromium, for the status page's screenshot test (required
#     when CI is set), when /usr/bin/chromium is missing;
#   - the pinned MCP servers of testdata/peers (npm install from the lock), when node_modules is
#     absent or was installed from another package-lock.json.
#
# Installing packages needs root (CI runs as root); as another user it says
# which command to run instead.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'e2e-deps: %s\n' "$*"; }
have() { command -v "$1" >/dev/null 2>&1; }

apt_updated=
apt_install() {
	if [ "$(id -u)" -ne 0 ]; then
		say "missing $*; as root run: apt-get update && apt-get install -y --no-install-recommends $*" >&2
		exit 1
	fi
	if [ -z "$apt_updated" ]; then
		say "apt-get update"
		DEBIAN_FRONTEND=noninteractive apt-get update -qq
		apt_updated=1
	fi
	say "apt-get install $*"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# Prometheus and Alertmanager (with promtool and amtool).
if have promtool && have prometheus && have prometheus-alertmanager && have amtool; then
	say "prometheus and prometheus-alertmanager present ($(prometheus --version 2>&1 | head -n1))"
else
	apt_install prometheus prometheus-alertmanager
	for tool in promtool prometheus prometheus-alertmanager amtool; do
		have "$tool" || { say "$tool is still not on PATH after installing; is /usr/bin on PATH?" >&2; exit 1; }
	done
fi

# Headless Chromium for the status page's screenshots (daemon tests).
if [ -x /usr/bin/chromium ]; then
	say "chromium present"
else
	apt_install chromium
	[ -x /usr/bin/chromium ] || { say "/usr/bin/chromium is still missing after installing" >&2; exit 1; }
fi

# Node and npm for the real MCP servers.
if have node && have npm; then
	say "node $(node --version) and npm $(npm --version) present"
else
	apt_install nodejs npm
	have node && have npm || { say "node or npm is still not on PATH after installing" >&2; exit 1; }
fi
# The pinned MCP servers (scripts/peers.sh: npm install from the lock, when node_modules is
# absent or stale).
scripts/peers.sh

#!/bin/sh
# shorten-for.sh RULES_IN RULES_OUT
#
# Writes RULES_IN to RULES_OUT with every alert's `for:` set to 0s, so a test
# with 1 s scrapes sees an alert fire as soon as its expression is true. The
# mixin (mixin/) is the single source; the end-to-end test runs this on its
# generated prometheus-alerts.yaml.
#
# One exception: a rule on absent(...) (McpwatchAbsent) gets `for: 30s`.
# absent(up{job="mcpwatch"}) is true in the seconds before Prometheus's first
# scrape (it waits 5 s for service discovery), so with 0s it would fire at
# every start of the test.
#
# Expressions are left alone: the surface alerts (McpToolsMissing,
# McpServerNoTools, McpForbiddenToolPresent) fire on the first bad probe,
# while the max_over_time windows of McpProbeFailing and
# McpwatchConfigReloadFailed still need 5 minutes of failures.
set -eu
if [ "$#" -ne 2 ]; then
	echo "usage: $0 RULES_IN RULES_OUT" >&2
	exit 2
fi
tmp="$2.tmp.$$"
trap 'rm -f "$tmp"' EXIT
awk '
/^[[:space:]]*-[[:space:]]*(alert|record):/ { absent = 0 }
/absent\(/ { absent = 1 }
/^[[:space:]]*for:[[:space:]]/ { sub(/for:.*/, absent ? "for: 30s" : "for: 0s"); n++ }
{ print }
END { if (n == 0) { print "shorten-for.sh: no for: line found in " FILENAME > "/dev/stderr"; exit 1 } }
' "$1" >"$tmp"
mv "$tmp" "$2"
trap - EXIT

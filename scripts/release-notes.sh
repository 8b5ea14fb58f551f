#!/usr/bin/env bash
# release-notes.sh VERSION: prints the section of CHANGELOG.md for VERSION (X.Y.Z, or vX.Y.Z), the
# release notes of that release, without its heading. Fails, saying so, when CHANGELOG.md has no
# such section or it is empty: a release is never published without its notes.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$#" -ne 1 ]; then
	echo "usage: $0 VERSION" >&2
	exit 2
fi
version=${1#v}
notes=$(awk -v v="$version" '
	index($0, "## [" v "]") == 1 { p = 1; next }
	p && (/^## \[/ || /^\[[^]]+\]: /) { exit }
	p { print }
' CHANGELOG.md)
if [ -z "$(printf '%s' "$notes" | tr -d '[:space:]')" ]; then
	echo "release-notes: CHANGELOG.md has no section '## [$version]', or it is empty: rename Unreleased to it first (docs/releasing.md)" >&2
	exit 1
fi
printf '%s\n' "$notes" | sed -e '/./,$!d'

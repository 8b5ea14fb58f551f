#!/usr/bin/env bash
# base-digests.sh [--check]: the base images of the Dockerfiles, pinned by digest.
#
# Every FROM of Dockerfile, Dockerfile.release and Dockerfile.release-stdio names its image as
# IMAGE:TAG@sha256:DIGEST: docker pulls the digest, which no later push can move; the tag beside
# it says which release that digest was, for people and for this script. This asks the registry
# for each tag's current digest (the multi-platform index, with `docker buildx imagetools
# inspect`), then rewrites every pin of that image in the three files to it; with --check it
# changes nothing, lists the pins whose tag has moved on and exits 1 if any has. A tag moves when
# its publisher rebuilds it (security fixes of the distroless and Debian layers): run it before
# a release (docs/releasing.md), then build and test what it changed. The release configuration's
# test (internal/tools/releasecheck) fails on a FROM without a digest, or on two files that pin
# one image differently.
set -euo pipefail
cd "$(dirname "$0")/.."
files=(Dockerfile Dockerfile.release Dockerfile.release-stdio)

check=false
case "${1:-}" in
--check) check=true ;;
"") ;;
*) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

# The current digest of IMAGE:TAG: the Digest line of imagetools' report (the index of a
# multi-platform image; the manifest of a single-platform one).
current() {
	docker buildx imagetools inspect "$1" | awk '$1 == "Digest:" { print $2; exit }'
}

stale=0
for ref in $(sed -n 's/^FROM \([^ @]*\)@sha256:[0-9a-f]\{64\}.*/\1/p' "${files[@]}" | sort -u); do
	pinned=$(sed -n "s|^FROM ${ref//./\\.}@\(sha256:[0-9a-f]\{64\}\).*|\1|p" "${files[@]}" | sort -u)
	digest=$(current "$ref")
	if ! [[ "$digest" =~ ^sha256:[0-9a-f]{64}$ ]]; then
		echo "base-digests: no digest for $ref from 'docker buildx imagetools inspect' (got '$digest'): is docker with buildx installed, and the registry reachable?" >&2
		exit 1
	fi
	if [ "$pinned" = "$digest" ]; then
		echo "$ref: $digest (current)"
		continue
	fi
	stale=1
	if $check; then
		echo "$ref: pinned $(echo $pinned), the tag is now $digest"
	else
		sed -i "s|^FROM ${ref//./\\.}@sha256:[0-9a-f]\{64\}|FROM $ref@$digest|" "${files[@]}"
		echo "$ref: $(echo $pinned) -> $digest"
	fi
done
if $check && [ "$stale" = 1 ]; then
	echo "base-digests: some tags have moved on; $0 updates the pins" >&2
	exit 1
fi

# The mcpwatch images: two targets of one build.
#
#   docker build -t mcpwatch .                        # the default: the static binary on distroless
#   docker build --target stdio -t mcpwatch:stdio .   # the same binary with node (npx) and uv (uvx)
#   docker run --rm -p 127.0.0.1:9713:9713 -v "$PWD/mcpwatch.yml:/etc/mcpwatch/mcpwatch.yml:ro" mcpwatch
#
# The default image holds mcpwatch alone: remote (streamable HTTP, SSE) servers work as they are,
# and nothing else is in it to patch. The stdio target runs servers started by a command, as most
# .mcp.json entries are (npx -y @scope/server, uvx mcp-server-x): node and npm (npx), uv (uvx) and
# a Python for it, on Debian; docs/deployment.md says which to pick. Both run as the same user
# (65532), as the Kubernetes manifests in deploy/kubernetes do, with the same entry point and
# command; the release builds both from Dockerfile.release and Dockerfile.release-stdio, which a
# test keeps in step with these stages (internal/tools/releasecheck).
#
# Every base image is pinned by digest, its tag beside it for people: a tag, even a version's, is
# rebuilt by its publisher, a digest never changes. scripts/base-digests.sh moves the pins to the
# tags' current digests (docs/releasing.md); the same test fails on a FROM without one.

FROM golang:1.26@sha256:595c7847cff97c9a9e76f015083c481d26078f961c9c8dca3923132f51fe12f1 AS build
WORKDIR /src
# The modules first, so a change of source does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# What 'make build' stamps; pass them with --build-arg (e.g. VERSION=$(git describe --tags)).
ARG VERSION=dev
ARG REVISION=unknown
# Static (no cgo: nothing of mcpwatch needs it), reproducible paths, no debug info.
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X github.com/prometheus/common/version.Version=${VERSION} -X github.com/prometheus/common/version.Revision=${REVISION}" \
      -o /out/mcpwatch ./cmd/mcpwatch

# uv and uvx, as Astral publishes them: two static binaries in an image of their own.
FROM ghcr.io/astral-sh/uv:0.11.7@sha256:240fb85ab0f263ef12f492d8476aa3a2e4e1e333f7d67fbdd923d00a506a516a AS uv

# The stdio target: node (with npm and npx) on Debian, uv and uvx, Python for what uvx runs, and
# tini as PID 1, which reaps the processes a package runner leaves behind when mcpwatch kills a
# server's process group. npm's and uv's caches live in the user's home, so a server installed
# once starts from the cache until the container goes (mount a volume at /home/mcpwatch to keep
# them; with a read-only root file system, an emptyDir there).
FROM node:24-bookworm-slim@sha256:6f7b03f7c2c8e2e784dcf9295400527b9b1270fd37b7e9a7285cf83b6951452d AS stdio
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates python3 tini \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 65532 mcpwatch \
 && useradd --uid 65532 --gid 65532 --home-dir /home/mcpwatch --create-home --shell /usr/sbin/nologin mcpwatch
COPY --from=uv /uv /uvx /usr/local/bin/
COPY --from=build /out/mcpwatch /usr/local/bin/mcpwatch
ENV HOME=/home/mcpwatch NPM_CONFIG_UPDATE_NOTIFIER=false NPM_CONFIG_FUND=false UV_PYTHON_PREFERENCE=system
USER 65532:65532
WORKDIR /work
EXPOSE 9713
ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/mcpwatch"]
CMD ["serve", "--config.file=/etc/mcpwatch/mcpwatch.yml", "--web.listen-address=:9713"]

# The default target, last so that a plain docker build makes it: the static binary alone.
FROM gcr.io/distroless/static-debian12:nonroot@sha256:afa5c872c891853ca7fcf1f12c3edb23f7eeef36189728842dd51042ff57f7ab
COPY --from=build /out/mcpwatch /usr/local/bin/mcpwatch
USER 65532:65532
WORKDIR /work
EXPOSE 9713
ENTRYPOINT ["/usr/local/bin/mcpwatch"]
# All interfaces inside the container, so a published port reaches it (the binary's own default is
# 127.0.0.1:9713).
CMD ["serve", "--config.file=/etc/mcpwatch/mcpwatch.yml", "--web.listen-address=:9713"]

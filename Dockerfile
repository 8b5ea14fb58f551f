# The mcpwatch image: the static binary on distroless, as a non-root user.
#
#   docker build -t mcpwatch .
#   docker run --rm -p 127.0.0.1:9713:9713 -v "$PWD/mcpwatch.yml:/etc/mcpwatch/mcpwatch.yml:ro" mcpwatch
#
# It holds mcpwatch alone: remote (streamable HTTP, SSE) servers work as they are; a stdio server
# needs its program in the image (build FROM this one and COPY it in, or use a base that has node).
# The Kubernetes manifests in deploy/kubernetes run it with the same user (65532).

FROM golang:1.26 AS build
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

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/mcpwatch /usr/local/bin/mcpwatch
USER 65532:65532
WORKDIR /work
EXPOSE 9713
ENTRYPOINT ["/usr/local/bin/mcpwatch"]
# All interfaces inside the container, so a published port reaches it (the binary's own default is
# 127.0.0.1:9713).
CMD ["serve", "--config.file=/etc/mcpwatch/mcpwatch.yml", "--web.listen-address=:9713"]

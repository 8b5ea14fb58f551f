// Package releasecheck holds the test of the release configuration: it decodes
// .goreleaser.yaml strictly into GoReleaser's own configuration types, as
// `goreleaser check` does, and checks what a release of mcpwatch must be
// (static binaries stamped as 'make build' stamps them, the licence in every
// archive, checksums, two images tagged by version, each on the base of its
// target of the Dockerfile: the distroless default, and stdio with node and
// uv). No docker engine is needed: the Dockerfiles are read stage by stage.
// It is a Go module of its own so that GoReleaser's module stays out of
// mcpwatch's module graph; building GoReleaser itself to run `goreleaser
// check` costs CI minutes and gigabytes (docs/development.md).
package releasecheck

# mcpwatch: `make run` and `make test` do all the set-up on a fresh machine with Go, git and make.
GO        ?= go
BIN       := bin
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
REVISION  ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS   := -X github.com/prometheus/common/version.Version=$(VERSION) \
             -X github.com/prometheus/common/version.Revision=$(REVISION) \
             -X github.com/prometheus/common/version.Branch=main
# Nothing of mcpwatch needs cgo: every binary is static and builds without a C compiler, as the
# image and the releases do (.goreleaser.yaml). Only the race detector of 'make test' needs cgo,
# and so a C compiler (see test).
export CGO_ENABLED = 0
# golangci-lint as scripts/lint-deps.sh installs it (the version is pinned there).
GOLANGCI_LINT ?= $(or $(shell $(GO) env GOBIN),$(shell $(GO) env GOPATH)/bin)/golangci-lint

# The monitoring mixin, the dashboard generator, the Kubernetes manifests' and Helm chart's tests
# and the release configuration's check are modules of their own, so go-jsonnet, the Grafana SDK,
# the Kubernetes API, Helm (a Go tool there) and GoReleaser stay out of the product's module graph.
SUBMODULES := mixin dashboards deploy/kubernetes internal/tools/releasecheck

.PHONY: all build run test lint fuzz e2e bench build-bench bench-scale release-snapshot clean

all: build

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/mcpwatch ./cmd/mcpwatch
	$(GO) build -o $(BIN)/reportserver ./examples/reportserver

# The daemon on examples/mcpwatch.yml: the report server over stdio with its token read from a
# file, the same without a token, and over HTTP (started here, stopped with the daemon). The
# addresses can be moved: make run RUN_LISTEN=127.0.0.1:19713 RUN_REPORT=127.0.0.1:18931
RUN_LISTEN ?= 127.0.0.1:9713
RUN_REPORT ?= 127.0.0.1:8931
run: build
	@REPORT_API_TOKEN="$$(cat examples/secrets/report-token)" $(BIN)/reportserver --http $(RUN_REPORT) --api-key-file examples/secrets/report-api-key & rs=$$!; \
	trap 'kill $$rs 2>/dev/null; wait $$rs 2>/dev/null' EXIT; trap 'exit 0' INT TERM; \
	i=0; until $(BIN)/mcpwatch probe --timeout 1s --url http://$(RUN_REPORT)/mcp >/dev/null 2>&1; do \
	  i=$$((i+1)); if [ $$i -ge 50 ]; then echo "make run: the report server did not start on $(RUN_REPORT)" >&2; exit 1; fi; sleep 0.1; \
	done; \
	echo "mcpwatch: status page http://$(RUN_LISTEN)/  metrics http://$(RUN_LISTEN)/metrics  (Ctrl-C stops)"; \
	REPORT_HTTP_URL=http://$(RUN_REPORT)/mcp $(BIN)/mcpwatch serve --config.file examples/mcpwatch.yml --web.listen-address $(RUN_LISTEN)

# The promtool and amtool tests skip, saying so (go test -v shows it), where the tools are missing,
# and fail when $$CI is set; this says it up front too. scripts/e2e-deps.sh installs them.
# The race detector needs cgo, and cgo a working C compiler ($(go env CC): gcc unless CC says
# otherwise). Without one the tests run without the race detector, saying so before and after,
# and CI (where CI is set) fails rather than lose it.
CC_CHECK = printf 'int main(void) { return 0; }\n' | "$$($(GO) env CC)" -x c -o /dev/null - >/dev/null 2>&1
NO_RACE  = no working C compiler ('$$($(GO) env CC)'): the race detector needs cgo, which needs one
# Regression guards that measure the heap or a render time skip under -race, whose shadow memory
# and slowdown make such figures meaningless: after the race run, make test runs them without it.
NORACE_GUARDS = ^(TestRetainedMemoryPerServer|TestFirstRoundMemory|TestRetainedMemoryHugeTools|TestStatusPage10000UnderASecond|TestStatusPage10000WithHistoryUnderASecond)$$

# The pinned npm MCP servers (testdata/peers) are installed first when node and npm are present
# (scripts/peers.sh: npm install from the lock, from npm's cache where it can); without them their
# tests are skipped, and the summary says how to include them.
# go test runs with -json through internal/tools/testskips, which prints what plain go test does
# and then every test that skipped, with its reason: a test skipped for want of node and the pinned
# npm servers (npm ci in testdata/peers), promtool or a C compiler is listed, not silent.
# GOTEST defines gotest, which runs go test so and returns go test's own status.
GOTEST = $(GO) build -o $(BIN)/testskips ./internal/tools/testskips && \
  gotest() { st=$$(mktemp); { $(GO) test -json "$$@"; echo $$? > $$st; } | $(BIN)/testskips; s=$$(cat $$st); rm -f $$st; return $$s; }

test:
	@for t in promtool amtool; do command -v $$t >/dev/null 2>&1 || \
	  echo "make test: $$t is not installed: its tests are skipped here (they fail when CI is set); scripts/e2e-deps.sh installs it" >&2; done
	@if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then \
	  scripts/peers.sh || echo "make test: the pinned npm MCP servers could not be installed (above): the tests against them are skipped here, listed at the end (they fail when CI is set)" >&2; \
	else \
	  echo "make test: node and npm are not installed: the tests against the pinned npm MCP servers are skipped here, listed at the end (they fail when CI is set); install node (18 or later) and npm and make test installs the servers (scripts/peers.sh)" >&2; \
	fi
	$(GO) vet ./...
	@$(GOTEST); if $(CC_CHECK); then \
	  echo "CGO_ENABLED=1 $(GO) test -race -count=1 ./..."; export CGO_ENABLED=1; gotest -race -count=1 ./...; \
	elif [ -n "$$CI" ]; then \
	  echo "make test: $(NO_RACE); CI is set, so this fails rather than test without it. Install gcc (Debian: apt-get install gcc)." >&2; exit 1; \
	else \
	  echo "*** make test: $(NO_RACE). Testing WITHOUT the race detector; install gcc (Debian: apt-get install gcc) for it. ***" >&2; \
	  echo "$(GO) test -count=1 ./..."; gotest -count=1 ./...; \
	fi
	@$(GOTEST); if $(CC_CHECK); then echo "$(GO) test -count=1 -run '$(NORACE_GUARDS)' ./daemon/"; gotest -count=1 -run '$(NORACE_GUARDS)' ./daemon/; fi
	@set -e; for m in $(SUBMODULES); do echo "cd $$m && $(GO) vet ./... && $(GO) test -count=1 ./..."; \
	  (cd $$m && $(GO) vet ./... && $(GO) test -count=1 ./...); done
	@$(CC_CHECK) || echo "*** make test: the tests above ran WITHOUT the race detector: $(NO_RACE). ***" >&2

# Every fuzz target (func Fuzz... in the root module's tests) for FUZZTIME each, one after the
# other; go test alone (make test) runs their seed corpora. A failure leaves its input in the
# package's testdata/fuzz/FuzzNAME/: commit it with the fix. Go 1.26's fuzzer can end a run that
# found nothing with "context deadline exceeded" as the time runs out (go.dev/issue/75804, fixed
# in Go 1.27): a run that ends so and wrote no input is reported and not counted as a failure.
# docs/development.md, Fuzzing.
FUZZTIME ?= 15s
fuzz:
	@set -e; log=$$(mktemp); trap 'rm -f $$log' EXIT; \
	for file in $$(git grep -l '^func Fuzz' -- '*_test.go' ':!dashboards' ':!deploy/kubernetes'); do \
	  dir=./$$(dirname $$file); \
	  for target in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$file); do \
	    echo "== $$target ($$dir, $(FUZZTIME))"; \
	    inputs=$$(ls $$dir/testdata/fuzz/$$target 2>/dev/null | wc -l); \
	    if $(GO) test -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) $$dir >$$log 2>&1; then \
	      tail -n 3 $$log; \
	    elif grep -q 'context deadline exceeded' $$log && \
	      [ "$$(ls $$dir/testdata/fuzz/$$target 2>/dev/null | wc -l)" -eq "$$inputs" ]; then \
	      tail -n 3 $$log; echo "make fuzz: $$target ended by the fuzzer's deadline race (go.dev/issue/75804), no failing input: not a failure"; \
	    else \
	      cat $$log; exit 1; \
	    fi; \
	  done; \
	done

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) mod tidy -diff
	@test -x $(GOLANGCI_LINT) || { echo "make lint: no $(GOLANGCI_LINT); run scripts/lint-deps.sh"; exit 1; }
	$(GOLANGCI_LINT) run ./...
	@set -e; for m in $(SUBMODULES); do echo "cd $$m && lint"; \
	  (cd $$m && $(GO) vet ./... && $(GO) mod tidy -diff && $(GOLANGCI_LINT) run --config $(CURDIR)/.golangci.yml ./...); done

# End to end, with real programs: the built mcpwatch against @modelcontextprotocol/server-everything
# (pinned in testdata/peers) over stdio, streamable HTTP and SSE, and the page path: mcpwatch serve ->
# Prometheus (the project's rules) -> Alertmanager -> a webhook, as a token file is emptied and
# restored; the same with an HA pair losing a replica (one page), and 3 shards over 30 servers. scripts/e2e-deps.sh installs what is missing (Debian prometheus and
# prometheus-alertmanager, node, npm ci); everything listens on 127.0.0.1 only. Then the newcomer's
# acceptance: nine credentialed npm servers from a plain .mcp.json, init then check with a good
# credential, a fake one and the service down (cmd/mcpwatch, TestNewcomerCredentials: about 6 minutes,
# two of them Stripe's relay that never answers the handshake and is judged at the probe's deadline),
# and the same on ten servers whose credentials the issuer catalogue covers, a fake one found at its
# issuer (TestIssuerNewcomers: about 6 minutes).
e2e: build
	scripts/e2e-deps.sh
	$(GO) vet -tags e2e ./e2e/... ./cmd/mcpwatch/
	MCPWATCH_E2E_BIN=$(CURDIR)/$(BIN) $(GO) test -tags e2e -count=1 -v -timeout 15m ./e2e/...
	$(GO) test -tags e2e -count=1 -v -timeout 30m -run '^(TestNewcomerCredentials|TestIssuerNewcomers)$$' ./cmd/mcpwatch/

# Go benchmarks of the hot paths, with allocations: one probe over streamable HTTP (modern and legacy
# era) and over stdio, the lock diff of 1,000 tools, and a /metrics scrape of 1,000 servers x 25 tools.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 1 ./probe/ ./lockstore/ ./metrics/ ./daemon/

# The binaries the scale harness runs: mcpwatch itself, the stdio test server, and the harness.
build-bench: build
	$(GO) build -o $(BIN)/mcpwatch-testserver ./internal/tools/mcpwatch-testserver
	$(GO) build -o $(BIN)/mcpwatch-scale ./internal/tools/mcpwatch-scale

# The built `mcpwatch serve` over simulated fleets on loopback (internal/tools/mcpwatch-scale): 100, 1,000 and
# 10,000 streamable HTTP servers (5% failing, 5% slow; 10,000 every 60 s and every 15 s), a
# throughput run, 100 stdio servers for 120 rounds (an hour at 30 s, run at 1 s), `mcpwatch check`
# of 5 stdio servers against 1, and `mcpwatch check` against the reference Python preflight
# (testdata/python) on 1 and 5 Python servers, with `probe --era auto` against `--era legacy`; then
# the performance targets (docs/performance.md), judged. About 15 minutes (the warm-ups let per-server phases settle).
# Results: $(BIN)/bench-scale.jsonl.
SCALE      = $(BIN)/mcpwatch-scale -json $(BIN)/bench-scale.jsonl
bench-scale: build-bench
	@rm -f $(BIN)/bench-scale.jsonl
	$(SCALE) -label http-100   -n 100   -interval 15s -duration 30s  -warmup 25s -scrapes 20
	$(SCALE) -label http-1000  -n 1000  -interval 15s -duration 60s  -warmup 25s -scrapes 20
	$(SCALE) -label http-10000 -n 10000 -interval 60s -duration 120s -warmup 90s -scrapes 5
	$(SCALE) -label http-10000-15s -n 10000 -interval 15s -duration 60s -warmup 30s -scrapes 5
	$(SCALE) -label throughput -n 1000  -interval 1s  -duration 20s  -scrapes 3
	$(SCALE) -label stdio-100  -mode stdio -n 100 -interval 1s -duration 120s -timeout 500ms -scrapes 3
	$(SCALE) -mode check -check-config mcp.json
	$(SCALE) -mode check -check-config mcpwatch.yml
	$(SCALE) -mode check -check-config mcp.json -check-delay 100ms
	$(SCALE) -mode preflight -check-runs 11
	$(BIN)/mcpwatch-scale -summary $(BIN)/bench-scale.jsonl

# The release, tried here without publishing anything (docs/releasing.md): GoReleaser and syft,
# each a Go tool of a module of its own (internal/tools/goreleaser, internal/tools/syft), built into
# bin/tools (the first build of each is long, docs/development.md has the figures; later ones take
# seconds), then goreleaser check, then every archive, checksums.txt and an SBOM per archive in
# dist/. The images and the signatures are the release workflow's: they need a docker engine and
# the workflow's identity (--skip=docker,sign). Not part of make test: see docs/development.md.
TOOLS := $(CURDIR)/$(BIN)/tools
release-snapshot:
	@mkdir -p $(TOOLS)
	cd internal/tools/goreleaser && $(GO) build -o $(TOOLS)/goreleaser github.com/goreleaser/goreleaser/v2
	cd internal/tools/syft && $(GO) build -ldflags "-X main.version=$$($(GO) list -m -f '{{.Version}}' github.com/anchore/syft)" -o $(TOOLS)/syft github.com/anchore/syft/cmd/syft
	PATH="$(TOOLS):$$PATH" $(TOOLS)/goreleaser check
	PATH="$(TOOLS):$$PATH" $(TOOLS)/goreleaser release --snapshot --clean --skip=docker,sign
	@cd dist && ls -l *.tar.gz *.sbom.json checksums.txt && sha256sum --quiet -c checksums.txt && echo "release-snapshot: every file matches checksums.txt"

clean:
	rm -rf $(BIN) dist

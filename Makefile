# TGP for Go. `make test` is what CI runs (.ci/run); `make demo` is the main job.
GO        ?= go
BIN       ?= bin/tgp
FUZZTIME  ?= 60s
PKGS      := ./...

.PHONY: all build test deps vet bench bench-all bench-fleet fuzz fuzz-git lint demo clean vendor-js

all: build

build:
	$(GO) build -o $(BIN) ./cmd/tgp

# deps installs what the tests need on a fresh machine (git CLI as the test
# oracle, PostgreSQL binaries for the throw-away test cluster).
deps:
	@bash scripts/deps.sh

vet:
	$(GO) vet $(PKGS)

# test is what CI runs: lint (gofmt, vet, go mod tidy -diff, staticcheck)
# before the tests.
test: deps vet lint
	$(GO) test -race -count=1 -timeout 20m $(PKGS)

# bench prints one table: every row of issue #15 as a ratio against its
# reference measured in the same run, with allocations per operation
# (bench/cmd/benchtable; -md prints it as Markdown). bench-all runs every
# package's own benchmarks.
bench:
	$(GO) run ./bench/cmd/benchtable

# bench-fleet runs many agents against one remote over a simulated network
# (bench/fleet): M machines x A agents, as tgp call processes, kernels in
# one process and the git CLI loop, over git:// and smart HTTP behind a
# proxy adding FLEET_DELAY each way. FLEET_ARGS adds flags, e.g.
# FLEET_ARGS='-fleet.baseline=/path/to/old/tgp -fleet.pause=5s'.
FLEET_DELAY  ?= 25ms
FLEET_SHAPES ?= 4x8x5,16x4x5
FLEET_ARGS   ?=
bench-fleet: deps
	$(GO) test ./bench/fleet -run '^TestFleetTable$$' -count=1 -timeout 0 -v -args -fleet -fleet.delay=$(FLEET_DELAY) -fleet.shapes=$(FLEET_SHAPES) $(FLEET_ARGS)

bench-all:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 1x $(PKGS)

# fuzz-git runs the randomized differential suite of the git tools against
# the git CLI on SEEDS generated repositories (make test runs 16), from
# seed SEED0; a failure prints its minimal reproduction.
SEEDS ?= 1000
SEED0 ?= 1
fuzz-git: deps
	cd test/integration && TGP_GIT_SEEDS=$(SEEDS) TGP_GIT_SEED0=$(SEED0) $(GO) test -run '^(TestGitDifferential|TestBootClonesLikeGit)$$' -count=1 -timeout 0

fuzz:
	$(GO) test ./vfs -run '^$$' -fuzz FuzzJail -fuzztime $(FUZZTIME)
	$(GO) test ./tools -run '^$$' -fuzz FuzzWriteFilePath -fuzztime $(FUZZTIME)
	$(GO) test ./tools -run '^$$' -fuzz FuzzApplyPatchRoundTrip -fuzztime $(FUZZTIME)
	$(GO) test ./sandbox -run '^$$' -fuzz FuzzReadFrame -fuzztime $(FUZZTIME)
	$(GO) test ./sqldb -run '^$$' -fuzz FuzzSQLiteStaysInItsFile -fuzztime $(FUZZTIME)
	$(GO) test ./internal/gitformat -run '^$$' -fuzz FuzzDecodeIndex -fuzztime $(FUZZTIME)
	$(GO) test ./internal/gitformat -run '^$$' -fuzz FuzzParseIndex -fuzztime $(FUZZTIME)
	$(GO) test ./internal/gitformat -run '^$$' -fuzz FuzzEWAH -fuzztime $(FUZZTIME)
	$(GO) test ./gitbackend -run '^$$' -fuzz FuzzApplyDelta -fuzztime $(FUZZTIME)
	$(GO) test ./gitbackend -run '^$$' -fuzz FuzzPackEntry -fuzztime $(FUZZTIME)
	$(GO) test ./gitbackend -run '^$$' -fuzz FuzzPackIndexFind -fuzztime $(FUZZTIME)

# lint: gofmt, go vet, go mod tidy and staticcheck (pinned; fetched through
# the module proxy on first use).
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
lint: vet
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) mod tidy -diff
	$(GO) run $(STATICCHECK) $(PKGS)

# vendor-js regenerates the npm packages built into the sandbox (zod,
# date-fns) at their pinned versions; the sandbox's tests check the result
# against sandbox/vendorjs/manifest.json.
vendor-js:
	@bash scripts/vendor-js.sh

# demo runs two agents against a throw-away remote and database (examples/agentloop).
demo:
	$(GO) run ./examples/agentloop

clean:
	rm -rf bin

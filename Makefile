# TGP for Go. `make test` is what CI runs (.ci/run); `make demo` is the main job.
GO        ?= go
BIN       ?= bin/tgp
FUZZTIME  ?= 60s
PKGS      := ./...

.PHONY: all build install test test-quick test-compile test-go test-integration deps vet bench bench-all bench-fleet fuzz fuzz-git lint demo clean vendor-js

all: build

build:
	$(GO) build -o $(BIN) ./cmd/tgp

# install puts tgp in $(go env GOPATH)/bin, as `go install
# github.com/tgp-go/tgp/cmd/tgp@latest` does, from this working tree.
install:
	$(GO) install ./cmd/tgp

# deps installs what the tests need on a fresh machine (git CLI as the test
# oracle, PostgreSQL binaries for the throw-away test cluster).
deps:
	@bash scripts/deps.sh

# vet also vets for Windows: the module must build (and its tests
# compile) on every platform it builds for, so what only Unix has stays
# behind build tags.
vet:
	$(GO) vet $(PKGS)
	GOOS=windows $(GO) vet $(PKGS)

# test is what CI runs: lint (gofmt, vet, go mod tidy -diff, staticcheck)
# beside the tests.
#
# The generated suites run small budgets here (GEN_SMALL) and large ones
# in make fuzz-git (GEN_LARGE): each seed is a repository built with the
# git CLI and compared with it, and on a loaded 2-core machine their
# default budgets alone took 12 of make test's 21 minutes.
GEN_SMALL := TGP_CLONEGEN_SEEDS=5 TGP_INDEX_GEN=3 TGP_STASHGEN_SEEDS=10 \
	TGP_COPIES_SEEDS=8 TGP_FOLLOW_SEEDS=2 TGP_ADDSPEC_SEEDS=20 TGP_BLAME_SEEDS=2 TGP_XMERGE_SEEDS=60 \
	TGP_RESTORESPEC_SEEDS=20 TGP_MERGEFILE_SEEDS=60 TGP_REPLAY_MERGE_SEEDS=4 XDIFF_PAIRS=200 TGP_GITPATH_CASES=50
# TGP_GIT_SEEDS is in the configuration's TGP_GIT_ namespace (a kernel
# reading the environment refuses it as a typo): only test/integration,
# which reads it, gets it, in a go test of its own beside the others.
#
# The tests run as several go test processes at once (output kept per
# target): the other packages (test-go), and the longest packages,
# tools/gittools, gitbackend and test/integration, each split in shards.
# A shard runs a set of the package's top-level tests (-run), the last
# one every test the others do not (-skip): none is left out or run
# twice. Most tests wait on git processes, so more processes than cores
# keep the cores busy; before, the run's tail was tools/gittools alone
# for minutes. The tests wait for test-compile, which compiles what they
# all need (-race) once, beside lint: each go command compiles what it
# lacks by itself, and run side by side they compiled the same packages
# over and over. Lint's vet compiles the rest (the tgp binary
# test/integration builds).
TEST_SHARDS := test-gittools-1 test-gittools-2 test-gittools-3 test-gitbackend-1 test-gitbackend-2 test-integration-git
.PHONY: $(TEST_SHARDS)
test: deps
	@$(MAKE) --no-print-directory -j9 --output-sync=target lint test-go test-integration $(TEST_SHARDS)

test-go test-integration $(TEST_SHARDS): test-compile
test-compile:
	$(GO) list -race -export -test $(PKGS) > /dev/null

# test-quick is the loop while editing: no race detector, the small
# generated budgets, -short, and no cross-package suite (test/integration
# builds the binary and drives processes). make test is what CI runs.
test-quick:
	$(GEN_SMALL) $(GO) test -count=1 -short -p $(TEST_P) $(TESTFLAGS) $$($(GO) list $(SLOW_PKGS) $(PKGS) | grep -v -e /test/integration$$)

# test-go runs the slowest of its packages first, up to TEST_P at once
# (go test starts them in the order given). TESTFLAGS adds go test flags
# to every target (-v, -json).
SLOW_PKGS := ./internal/xdiff ./kernel ./sandbox
TEST_P    ?= 4
TESTFLAGS ?=
GOTEST     = $(GEN_SMALL) $(GO) test -race -count=1 -timeout 40m $(TESTFLAGS)
test-go:
	$(GOTEST) -p $(TEST_P) $$($(GO) list $(SLOW_PKGS) $(PKGS) | grep -v -e /test/integration$$ -e /tools/gittools$$ -e /gitbackend$$)

# test/integration's generated suites (the git tools and boot against
# the git CLI) are a shard of their own.
INTEGRATION_GIT := ^(TestGitDifferential|TestBootClonesLikeGit)$$
test-integration:
	cd test/integration && $(GO) test -race -count=1 -timeout 40m $(TESTFLAGS) -skip '$(INTEGRATION_GIT)' .
test-integration-git:
	cd test/integration && TGP_GIT_SEEDS=6 $(GO) test -race -count=1 -timeout 40m $(TESTFLAGS) -run '$(INTEGRATION_GIT)' .

GITTOOLS_1   := ^TestRegress[A-F]
GITTOOLS_2   := ^TestRegress
GITBACKEND_1 := ^Test[A-L]
test-gittools-1:
	$(GOTEST) -run '$(GITTOOLS_1)' ./tools/gittools
test-gittools-2:
	$(GOTEST) -run '$(GITTOOLS_2)' -skip '$(GITTOOLS_1)' ./tools/gittools
test-gittools-3:
	$(GOTEST) -skip '$(GITTOOLS_2)' ./tools/gittools
test-gitbackend-1:
	$(GOTEST) -run '$(GITBACKEND_1)' ./gitbackend
test-gitbackend-2:
	$(GOTEST) -skip '$(GITBACKEND_1)' ./gitbackend

# bench prints one table: every row of issue #15 as a ratio against its
# reference measured in the same run, with allocations per operation
# (bench/cmd/benchtable; -md prints it as Markdown). bench-all runs every
# package's own benchmarks.
bench:
	$(GO) run ./bench/cmd/benchtable

# bench-fleet runs many agents against one remote over a simulated network
# (bench/fleet): M machines x A agents, as tgp call processes, kernels in
# one process and the git CLI loop, over git:// and smart HTTP behind a
# proxy adding FLEET_DELAY each way. The proxy counts the remote's
# pushes, refused pushes and reads: each row prints them, the most pushes
# in any minute and the most reads in any second. FLEET_ARGS adds flags,
# e.g. FLEET_ARGS='-fleet.baseline=/path/to/old/tgp -fleet.pause=5s', or
# FLEET_ARGS='-fleet.budget=6 -fleet.journal' for a remote refusing pushes
# past 6 a minute (429 / a rate-limit ERR line), machines with
# TGP_GIT_PUSHES_PER_MINUTE=6, and tgp writing through a PostgreSQL journal.
FLEET_DELAY  ?= 25ms
FLEET_SHAPES ?= 4x8x5,16x4x5
FLEET_ARGS   ?=
bench-fleet: deps
	$(GO) test ./bench/fleet -run '^TestFleetTable$$' -count=1 -timeout 0 -v -args -fleet -fleet.delay=$(FLEET_DELAY) -fleet.shapes=$(FLEET_SHAPES) $(FLEET_ARGS)

bench-all:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 1x $(PKGS)

# fuzz-git runs the randomized differential suite of the git tools against
# the git CLI on SEEDS generated repositories (make test runs 6), from
# seed SEED0, then every other generated suite at a large budget (GEN_LARGE;
# make test runs GEN_SMALL); a failure prints its minimal reproduction.
SEEDS ?= 1000
SEED0 ?= 1
GEN_LARGE := TGP_CLONEGEN_SEEDS=200 TGP_INDEX_GEN=100 TGP_STASHGEN_SEEDS=400 TGP_COPIES_SEEDS=300 \
	TGP_FOLLOW_SEEDS=60 TGP_ADDSPEC_SEEDS=600 TGP_BLAME_SEEDS=40 TGP_XMERGE_SEEDS=3000 \
	TGP_RESTORESPEC_SEEDS=600 TGP_MERGEFILE_SEEDS=3000 TGP_REPLAY_MERGE_SEEDS=100 XDIFF_PAIRS=3000 TGP_GITPATH_CASES=20000
fuzz-git: deps
	cd test/integration && TGP_GIT_SEEDS=$(SEEDS) TGP_GIT_SEED0=$(SEED0) $(GO) test -run '^(TestGitDifferential|TestBootClonesLikeGit)$$' -count=1 -timeout 0
	$(GEN_LARGE) $(GO) test -count=1 -timeout 0 -run '^(TestBootMatchesGitCloneGenerated|TestIndexGenerated|TestMergeFileMatchesGitMergeFile|TestReplayMergesAsGitMergeFile)$$' ./gitbackend
	$(GEN_LARGE) $(GO) test -count=1 -timeout 0 -run '^(TestMergeMatchesMergeFile|TestDiffGenerated)$$' ./internal/xdiff
	$(GEN_LARGE) $(GO) test -count=1 -timeout 0 -run '^TestVerifyMatchesGit$$' ./gitpath
	$(GEN_LARGE) $(GO) test -count=1 -timeout 0 -run '^(TestStashApplyRandomConflicts|TestCopyDetectionMatchesGit|TestLogFollowRandom|TestAddPathspecRandom|TestRestorePathspecRandom|TestBlameRandomHistories)$$' ./tools/gittools

fuzz:
	$(GO) test ./vfs -run '^$$' -fuzz FuzzJail -fuzztime $(FUZZTIME)
	$(GO) test ./tools -run '^$$' -fuzz FuzzWriteFilePath -fuzztime $(FUZZTIME)
	$(GO) test ./tools -run '^$$' -fuzz FuzzApplyPatchRoundTrip -fuzztime $(FUZZTIME)
	$(GO) test ./sandbox -run '^$$' -fuzz FuzzReadFrame -fuzztime $(FUZZTIME)
	$(GO) test ./sandbox -run '^$$' -fuzz FuzzURLAllowed -fuzztime $(FUZZTIME)
	$(GO) test ./sqldb -run '^$$' -fuzz FuzzSQLiteStaysInItsFile -fuzztime $(FUZZTIME)
	$(GO) test ./internal/gitformat -run '^$$' -fuzz FuzzDecodeIndex -fuzztime $(FUZZTIME)
	$(GO) test ./internal/gitformat -run '^$$' -fuzz FuzzParseIndex -fuzztime $(FUZZTIME)
	$(GO) test ./internal/gitformat -run '^$$' -fuzz FuzzEWAH -fuzztime $(FUZZTIME)
	$(GO) test ./internal/gitformat/packfile -run '^$$' -fuzz FuzzApplyDelta -fuzztime $(FUZZTIME)
	$(GO) test ./internal/gitformat/packfile -run '^$$' -fuzz FuzzPackEntry -fuzztime $(FUZZTIME)
	$(GO) test ./internal/gitformat/idxfile -run '^$$' -fuzz FuzzIndexFind -fuzztime $(FUZZTIME)

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

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

# test is what CI runs: the tests beside lint-quick (gofmt, go vet, go
# mod tidy -diff), in about 10 minutes on a 2-core machine from an empty
# build cache (README, Development). make lint adds what compiles the
# module again, for Windows (vet) and for staticcheck: run it before a
# commit.
#
# Every package's tests run once, without the race detector, the
# generated suites at small budgets (GEN_SMALL; make fuzz-git runs them
# large). The race detector costs twice: a second compile of every
# package the tests link (goja, esbuild, SQLite, pgx and the code host
# SDKs among them) and a run 2-10x slower; over every package it made
# make test 19 minutes warm and over 30 cold. So test-race runs it where
# goroutines share state and a race would lose a write: gitbackend's push
# path (the machine queue, batched pushes, carries, deferred replays, the
# warm index), the MCP server's sessions, the registry and the jail; none
# of them links an engine. make test-race-all is the old whole run.
#
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
# keep the cores busy. The tests wait for test-compile, which compiles
# what they all need once, beside lint: run side by side, go commands
# compile the same packages over and over.
GEN_SMALL := TGP_CLONEGEN_SEEDS=5 TGP_INDEX_GEN=3 TGP_STASHGEN_SEEDS=10 \
	TGP_COPIES_SEEDS=8 TGP_FOLLOW_SEEDS=2 TGP_ADDSPEC_SEEDS=20 TGP_BLAME_SEEDS=2 TGP_XMERGE_SEEDS=60 \
	TGP_RESTORESPEC_SEEDS=20 TGP_MERGEFILE_SEEDS=60 TGP_REPLAY_MERGE_SEEDS=4 XDIFF_PAIRS=200 TGP_GITPATH_CASES=50 \
	TGP_PENDING_SEEDS=1 TGP_FSCK_TREES=25
TEST_SHARDS := test-gittools-1 test-gittools-2 test-gitbackend-1 test-gitbackend-2 test-integration-git
.PHONY: $(TEST_SHARDS) test-race test-race-all lint-quick
test: deps
	@$(MAKE) --no-print-directory -j8 --output-sync=target lint-quick test-go test-integration test-race $(TEST_SHARDS)

test-go test-integration $(TEST_SHARDS): test-compile
test-compile:
	$(GO) list -export -test $(PKGS) > /dev/null

# test-quick is the loop while editing: -short, and no cross-package
# suite (test/integration builds the binary and drives processes).
test-quick:
	$(GEN_SMALL) $(GO) test -count=1 -short -p $(TEST_P) $(TESTFLAGS) $$($(GO) list $(SLOW_PKGS) $(PKGS) | grep -v -e /test/integration$$)

# test-go runs the slowest of its packages first, up to TEST_P at once
# (go test starts them in the order given). TESTFLAGS adds go test flags
# to every target (-v, -json).
SLOW_PKGS := ./kernel ./sandbox ./internal/xdiff
TEST_P    ?= 4
TESTFLAGS ?=
GOTEST     = $(GEN_SMALL) $(GO) test -count=1 -timeout 40m $(TESTFLAGS)
test-go:
	$(GOTEST) -p $(TEST_P) $$($(GO) list $(SLOW_PKGS) $(PKGS) | grep -v -e /test/integration$$ -e /tools/gittools$$ -e /gitbackend$$)

# test/integration's generated suites (the git tools and boot against
# the git CLI) are a shard of their own.
INTEGRATION_GIT := ^(TestGitDifferential|TestBootClonesLikeGit)$$
test-integration:
	cd test/integration && $(GO) test -count=1 -timeout 40m $(TESTFLAGS) -skip '$(INTEGRATION_GIT)' .
test-integration-git:
	cd test/integration && TGP_GIT_SEEDS=6 $(GO) test -count=1 -timeout 40m $(TESTFLAGS) -run '$(INTEGRATION_GIT)' .

GITTOOLS_1   := ^TestRegress
GITBACKEND_1 := ^Test[A-L]
test-gittools-1:
	$(GOTEST) -run '$(GITTOOLS_1)' ./tools/gittools
test-gittools-2:
	$(GOTEST) -skip '$(GITTOOLS_1)' ./tools/gittools
test-gitbackend-1:
	$(GOTEST) -run '$(GITBACKEND_1)' -skip '$(RACE_BACKEND)' ./gitbackend
test-gitbackend-2:
	$(GOTEST) -skip '$(GITBACKEND_1)|$(RACE_BACKEND)' ./gitbackend

# test-race: the race detector where goroutines share state (see test).
# In gitbackend, the tests of the push path and the shared index run here
# only (the gitbackend shards skip them); the git-fidelity suites (boot,
# index, fsck, merge against the git CLI) run in the shards without it.
RACE_PKGS     := ./mcpserver ./registry ./vfs ./internal/backoff ./internal/atomicfile
RACE_BACKEND  := Multi|Group|Writers|Batch|Leader|Budget|RateLimit|Retry|Lost|Carry|Crash|Machine|Polite|Contended|Deferred|Replay|Stop|Ticket|Queue|Forged|Warm|IndexView|IndexCache|Abandoned|Unwritten|Materialize|Refresh|Transient|SecondAgent|Fold
test-race:
	$(GEN_SMALL) $(GO) test -race -count=1 -timeout 40m $(TESTFLAGS) -run '$(RACE_BACKEND)' ./gitbackend
	$(GEN_SMALL) $(GO) test -race -count=1 -timeout 40m $(TESTFLAGS) $(RACE_PKGS)

# test-race-all is every package under the race detector, the generated
# suites at their small budgets: what make test ran before it had to fit
# 10 minutes (19 minutes warm on 2 cores).
test-race-all: deps
	cd test/integration && TGP_GIT_SEEDS=6 $(GO) test -race -count=1 -timeout 60m $(TESTFLAGS) .
	$(GEN_SMALL) $(GO) test -race -count=1 -timeout 60m -p $(TEST_P) $(TESTFLAGS) $$($(GO) list $(PKGS) | grep -v -e /test/integration$$)

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
lint: vet lint-quick
	$(GO) run $(STATICCHECK) $(PKGS)

# lint-quick is make test's part of lint: gofmt, go vet for this
# platform (on the export data test-compile makes) and go mod tidy -diff.
lint-quick: test-compile
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet $(PKGS)
	$(GO) mod tidy -diff

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

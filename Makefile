# TGP for Go. `make test` is what CI runs (.ci/run); `make demo` is the main job.
GO        ?= go
BIN       ?= bin/tgp
FUZZTIME  ?= 60s
PKGS      := ./...

.PHONY: all build test deps vet bench fuzz lint demo clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/tgp

# deps installs what the tests need on a fresh machine (git CLI as the test
# oracle, PostgreSQL binaries for the throw-away test cluster).
deps:
	@bash scripts/deps.sh

vet:
	$(GO) vet $(PKGS)

test: deps vet
	$(GO) test -race -count=1 -timeout 20m $(PKGS)

bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 1x $(PKGS)

fuzz:
	$(GO) test ./vfs -run '^$$' -fuzz FuzzJail -fuzztime $(FUZZTIME)
	$(GO) test ./tools -run '^$$' -fuzz FuzzWriteFilePath -fuzztime $(FUZZTIME)

lint: vet
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }

# demo runs two agents against a throw-away remote and database (examples/agentloop).
demo:
	$(GO) run ./examples/agentloop

clean:
	rm -rf bin

# Drover: the two set-up commands are `make run` (a local cluster) and
# `make test` (the whole suite). See README.md.
GO      ?= go
BIN     := bin
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/droverhq/drover/internal/daemon.Version=$(VERSION)

.PHONY: all build generate test test-short chaos bench run lint fmt clean docs package

# go-nvml's cgo prologue calls NVML functions its header marks deprecated,
# and gcc warns about each one on every build of that package: hundreds of
# lines that hide real output. The flag silences that warning only, and
# only in the cgo builds this Makefile runs (Go's default flags otherwise).
NVML_CGO_CFLAGS := -O2 -g -Wno-deprecated-declarations

# bin/ is built as the packages are (packaging/mkpkg): the daemons and
# plugins position-independent, the commands ordinary executables, all
# with -trimpath. The end-to-end tests build with the same flags. Each
# other set of flags compiles the whole tree again (about three minutes
# on two cores), so the suite shares one set with the packages.
PIE := -buildmode=pie

all: build

build: $(BIN)/drover $(BIN)/commands $(BIN)/drover-gres-nvml $(BIN)/drover-spank-nccl $(BIN)/drover-spank-container $(BIN)/drover-mpi-pmix

# The main binary is pure Go; NVML needs cgo, so the GPU plugin is a
# program of its own.
$(BIN)/drover: FORCE
	CGO_ENABLED=0 $(GO) build -trimpath $(PIE) -ldflags '$(LDFLAGS)' -o $@ ./cmd/drover

# The commands (sbatch, squeue, srun...), a program each as Slurm ships
# them, without the daemons' code: bin/sbatch, bin/squeue...
.PHONY: $(BIN)/commands
$(BIN)/commands:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/commands/...

$(BIN)/drover-gres-nvml: FORCE
	CGO_ENABLED=1 CGO_CFLAGS='$(NVML_CGO_CFLAGS)' $(GO) build -trimpath $(PIE) -o $@ ./cmd/drover-gres-nvml

# The NCCL/PyTorch launch plugin, a plugin program of its own (docs/PLUGINS.md).
$(BIN)/drover-spank-nccl: FORCE
	CGO_ENABLED=0 $(GO) build -trimpath $(PIE) -o $@ ./cmd/drover-spank-nccl

# The container plugin (--container-image...), run through runc or crun.
$(BIN)/drover-spank-container: FORCE
	CGO_ENABLED=0 $(GO) build -trimpath $(PIE) -o $@ ./cmd/drover-spank-container

# The PMIx plugin (srun --mpi=pmix) links Debian's libpmix (libpmix-dev);
# without it, a program that says so is built instead.
$(BIN)/drover-mpi-pmix: FORCE
	if pkg-config --exists pmix 2>/dev/null; then \
		CGO_ENABLED=1 CGO_CFLAGS='$(NVML_CGO_CFLAGS)' $(GO) build -trimpath $(PIE) -tags pmix -o $@ ./cmd/drover-mpi-pmix; \
	else \
		CGO_ENABLED=0 $(GO) build -trimpath $(PIE) -o $@ ./cmd/drover-mpi-pmix; \
	fi

FORCE:

generate:
	$(GO) generate ./openapi ./internal/cli/slurmjson ./bridge/...

# ogen's generated packages (openapi/vNNNN) are neither formatted nor
# vetted here: they are what the generator writes, checked for staleness
# by openapi's test; vetting them cost 45 s of CPU.
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '^openapi/v[0-9]*/')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	CGO_CFLAGS='$(NVML_CGO_CFLAGS)' $(GO) vet $$($(GO) list ./... | grep -v '/openapi/v[0-9]*$$')
	if pkg-config --exists pmix 2>/dev/null; then $(GO) vet -tags pmix ./cmd/drover-mpi-pmix; fi

# The end-to-end tests build and run the binary themselves, which go
# test's cache cannot see: they always run. They mostly wait (for
# daemons, jobs, timeouts: under one core busy on average), so four run
# at once on two cores. Before them, lint and build run side by side:
# vet compiles the tree the tests' way, build the packages' way, and
# together they keep both cores busy.
test:
	$(MAKE) -j2 lint build
	CGO_CFLAGS='$(NVML_CGO_CFLAGS)' $(GO) test -timeout 20m $$($(GO) list ./... | grep -v /test/e2e$$)
	$(GO) test -timeout 20m -count=1 -parallel 4 ./test/e2e/

# The long fault suite: the nemeses of TestChaos, CHAOS_ROUNDS times, and
# CHAOS_KILLS leader kills timed; verdicts and figures in $(CHAOS_REPORT).
CHAOS_ROUNDS ?= 5
CHAOS_KILLS ?= 100
CHAOS_REPORT ?= $(CURDIR)/chaos-report.json
chaos: build
	DROVER_CHAOS_ROUNDS=$(CHAOS_ROUNDS) DROVER_CHAOS_KILLS=$(CHAOS_KILLS) DROVER_CHAOS_REPORT=$(CHAOS_REPORT) \
		$(GO) test -timeout 120m -count=1 -v -run 'TestChaos|TestFailoverTimes' ./test/e2e/

test-short: build
	CGO_CFLAGS='$(NVML_CGO_CFLAGS)' $(GO) test -short ./...

# Benchmarks: the cluster figures of docs/BENCHMARKS.md, measured on real
# `drover controller` and `drover node` processes, and on the real Slurm of
# /work/shared/real-slurm when it is up (skipped otherwise). About 8
# minutes, 35 with real Slurm; BENCHFLAGS=-quick is a smoke run, and
# BENCHFLAGS='-systems drover -figures queue' measures one figure. The
# benchmark builds its own drover, so it needs neither `make build` nor gcc.
bench:
	CGO_ENABLED=0 $(GO) run ./test/bench $(BENCHFLAGS)

run: build
	$(BIN)/drover dev

# drover's manual pages and shell completions, for the packages.
docs:
	$(GO) run ./packaging/gendocs -out $(BIN)/share

# The deb and rpm packages (nfpm), split as Slurm's, into dist/:
# PKGFLAGS='-arch amd64 -format deb' narrows them, -version 1.2.3 names
# the version (default: from git tags), -sign-key KEY.asc signs the rpms
# (passphrase in $$DROVER_SIGN_PASSPHRASE). See packaging/README.md.
package:
	$(GO) run ./packaging/mkpkg -out dist $(PKGFLAGS)

clean:
	rm -rf $(BIN) dist

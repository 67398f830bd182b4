# Longrun: one command to install, one for the main job, one for every test.
#   make install  longrun (the CLI), longrun-worker and longrun-devserver on the PATH
#   make demo     embedded Temporal + Web UI, a worker, and a session with an approval
#   make test     every test, against the real embedded server
BIN      := $(CURDIR)/.longrun-bin
DEVSERVER := $(BIN)/devserver

.PHONY: all build cli devserver temporal-cli gopls lsp-node test demo vet fuzz clean record-histories install

# Every parser and matcher has a fuzz target; CI runs each for a bounded
# number of executions (package:target:count). Counts, not durations: a
# duration -fuzztime races the fuzz coordinator's own deadline in Go 1.26
# (golang/go#75804) and fails a loaded runner with a bare "context deadline
# exceeded" and no crasher. FuzzApplyPatch writes files, so it gets fewer.
# FUZZTIME=30s (or 1000000x) overrides every target's budget.
FUZZ_TARGETS := tools:FuzzResolve:50000x tools:FuzzParsePatch:50000x tools:FuzzApplyPatch:15000x \
	tools:FuzzGitignore:50000x tools:FuzzUnifiedDiff:50000x tools:FuzzEditMatch:50000x tools:FuzzMakePatch:10000x \
	shellcmd:FuzzAnalyze:50000x toolcalls:FuzzParse:50000x transcript:FuzzParseS3URL:50000x \
	guardian:FuzzParse:50000x scriptedmodel:FuzzDecodeResponsesRequest:20000x \
	activities:FuzzFromResponse:20000x activities:FuzzChatReasoning:20000x skills:FuzzParse:50000x \
	untrusted:FuzzVisible:50000x forge:FuzzParse:20000x forge:FuzzParseGitLab:20000x eventlog:FuzzAfter:50000x

all: build

# The devserver module embeds the whole Temporal server: building it cold
# takes minutes, so it is built once and reused by every test package.
devserver:
	@mkdir -p $(BIN)
	go -C devserver build -o $(DEVSERVER) .

build: devserver cli

# The worker and the CLI alone: quick, once the Go build cache is warm.
cli:
	@mkdir -p $(BIN)
	go build -o $(BIN)/worker ./worker
	go build -o $(BIN)/starter ./starter

# make install puts the CLI on the PATH as `longrun`, the worker as
# `longrun-worker` and the embedded server as `longrun-devserver`. Where:
# $(PREFIX)/bin when PREFIX is given (sudo make install PREFIX=/usr/local),
# else where `go install` puts programs ($GOBIN, else $(go env GOPATH)/bin,
# i.e. ~/go/bin), which needs no root and is on a Go user's PATH. BINDIR
# overrides both; DESTDIR prefixes it, for packaging.
ifneq ($(PREFIX),)
BINDIR ?= $(PREFIX)/bin
endif
BINDIR ?= $(or $(shell go env GOBIN),$(shell go env GOPATH)/bin)

# Each program is announced before it builds, with how long that takes,
# so a cold install is never minutes of silence. make install-cli skips
# the embedded server (the slow one) for a person who already runs
# Temporal. A build that fails says what a damaged Go build cache looks
# like, since that shows as hundreds of errors in code nobody changed.
BUILD_FAILED = { echo "make install: building $(1) failed. Errors in packages you did not change (the standard library, dependencies) usually mean a damaged Go build cache: run  go clean -cache  and make install again." >&2; exit 1; }
PATH_NOTE = case ":$$PATH:" in *":$(BINDIR):"*) ;; *) echo "$(BINDIR) is not on your PATH: add it with  export PATH=\"$(BINDIR):\$$PATH\"" ;; esac

.PHONY: install-cli install-programs install-devserver
install-programs:
	@mkdir -p $(DESTDIR)$(BINDIR)
	@echo "longrun: building the CLI (1 to 3 minutes cold, seconds when cached)"
	@go build -o $(DESTDIR)$(BINDIR)/longrun ./starter || $(call BUILD_FAILED,longrun)
	@echo "longrun-worker: building the worker (under a minute after the CLI, which shares its packages)"
	@go build -o $(DESTDIR)$(BINDIR)/longrun-worker ./worker || $(call BUILD_FAILED,longrun-worker)

install-devserver:
	@mkdir -p $(DESTDIR)$(BINDIR)
	@echo "longrun-devserver: building the embedded Temporal server and Web UI (5 to 10 minutes cold on two cores, seconds when cached)"
	@go -C devserver build -o $(DESTDIR)$(BINDIR)/longrun-devserver . || $(call BUILD_FAILED,longrun-devserver)

install: install-programs install-devserver
	@echo "installed longrun, longrun-worker and longrun-devserver in $(DESTDIR)$(BINDIR)"
	@$(PATH_NOTE)

install-cli: install-programs
	@echo "installed longrun and longrun-worker in $(DESTDIR)$(BINDIR) (no longrun-devserver: point them at your Temporal with TEMPORAL_ADDRESS)"
	@$(PATH_NOTE)

# staticcheck runs in make vet (and so in make test and CI) and must stay
# clean, with its default checks. v0.8.2 is the release for Go 1.26; it is
# built once into .longrun-bin and rebuilt when the version here changes.
# A failed build fails vet.
STATICCHECK_VERSION := v0.8.2
STATICCHECK := $(BIN)/staticcheck
.PHONY: staticcheck
staticcheck:
	@mkdir -p $(BIN)
	@$(STATICCHECK) -version 2>/dev/null | grep -q '($(STATICCHECK_VERSION:v%=%))' || \
		GOBIN=$(BIN) go install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

vet: staticcheck
	go vet ./...
	$(STATICCHECK) ./...
	go -C devserver vet ./...
	go -C hostcheck vet ./...
	@test -z "$$(gofmt -l . | tee /dev/stderr)" || (echo "gofmt needed" && exit 1)

# The temporal CLI decodes history through the codec server in an e2e test
# (TestTemporalCLIDecodesThroughCodecServer). v1.5.1 is the release that
# builds with this Go and module proxy; built once into .longrun-bin. A
# failed build does not stop the tests: check-test-deps.sh says loudly that
# the CLI test does not run.
TEMPORAL_CLI := $(BIN)/temporal
temporal-cli:
	@mkdir -p $(BIN)
	@test -x $(TEMPORAL_CLI) || GOBIN=$(BIN) go install github.com/temporalio/cli/cmd/temporal@v1.5.1 || \
		echo "temporal CLI v1.5.1 did not build" >&2

# gopls serves the language-server tests (lsp, tools, e2e
# TestLanguageServerOnAGoModule). v0.23.0 is the last release that builds
# with Go 1.26; built once into .longrun-bin, where the tests find it
# without PATH changes. A failed build says so and the tests skip loudly
# (LONGRUN_REQUIRE_GOPLS=1, as in .ci/run, makes them fail).
GOPLS := $(BIN)/gopls
.PHONY: gopls
gopls:
	@mkdir -p $(BIN)
	@test -x $(GOPLS) || GOBIN=$(BIN) go install golang.org/x/tools/gopls@v0.23.0 || \
		echo "gopls v0.23.0 did not build" >&2

# The servers that are not Go's, to prove any server named in lsp.json
# works as gopls does: pyright (lsp TestPyright*, tools
# TestLSPToolsOnAPythonProject) and typescript-language-server with the
# typescript it runs (lsp TestTypeScript*). Installed with npm, at these
# pinned versions, into .longrun-bin/node, where the tests find them
# without PATH changes (lsp/lsptest; its versions are these). They need
# node and npm (Node 20). A failed install says so and the tests skip
# loudly (LONGRUN_REQUIRE_LSP=1, as in .ci/run, makes them fail).
NODE_LSP := pyright@1.1.414 typescript-language-server@5.1.3 typescript@5.9.3
NODE_LSP_DIR := $(BIN)/node
lsp-node:
	@mkdir -p $(NODE_LSP_DIR)
	@test "$$(cat $(NODE_LSP_DIR)/.installed 2>/dev/null)" = "$(NODE_LSP)" || \
		{ npm install --prefix $(NODE_LSP_DIR) --no-audit --no-fund --loglevel=error $(NODE_LSP) && \
			echo "$(NODE_LSP)" > $(NODE_LSP_DIR)/.installed; } || \
		echo "npm install $(NODE_LSP) failed (are node and npm installed?)" >&2

test: devserver vet temporal-cli gopls lsp-node
	@LONGRUN_TEMPORAL_CLI=$(TEMPORAL_CLI) LONGRUN_GOPLS=$(GOPLS) LONGRUN_NODE_LSP=$(NODE_LSP_DIR) ./scripts/check-test-deps.sh
	@rm -f $(BIN)/test-report.txt
	LONGRUN_TEST_REPORT=$(BIN)/test-report.txt LONGRUN_DEVSERVER=$(DEVSERVER) LONGRUN_TEMPORAL_CLI=$(TEMPORAL_CLI) LONGRUN_GOPLS=$(GOPLS) go test -race -count=1 -timeout 45m ./...
	@if [ -s $(BIN)/test-report.txt ]; then echo "what the tests report loudly:"; cat $(BIN)/test-report.txt; fi
	go -C hostcheck test -race -count=1 ./...
	$(MAKE) test-postgres
	$(MAKE) fuzz

# The e2e set again, with Temporal on PostgreSQL for persistence and
# visibility: a session with approvals, the approve update, a cancel, the
# visibility list, the short chaos run (worker kills) and a server kill and
# restart on the same database. scripts/with-postgres.sh runs a throwaway
# cluster (as nobody under root) in a temporary directory on a free
# loopback port and removes it afterwards, pass or fail; without
# PostgreSQL it says so in a loud line and `make test` goes on
# (LONGRUN_REQUIRE_POSTGRES=1 makes that a failure, as in .ci/run).
POSTGRES_TESTS := TestDevserverOnPostgres|TestReadWriteShellWithApproval|TestApproveUpdateAndPendingAll|TestCancelWhileShellRuns|TestStarterListWaitingAndShow|TestChaosWorkerKills|TestChaosServerRestart
.PHONY: test-postgres
test-postgres: devserver
	LONGRUN_DEVSERVER=$(DEVSERVER) ./scripts/with-postgres.sh \
		go test -race -count=1 -timeout 15m -run '^($(POSTGRES_TESTS))$$' ./e2e

fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; rest=$${t#*:}; f=$${rest%%:*}; n=$${rest#*:}; [ -z "$(FUZZTIME)" ] || n="$(FUZZTIME)"; \
		echo "fuzz $$f ($$n)"; \
		go test -run '^$$' -fuzz "^$$f$$" -fuzztime "$$n" ./$$pkg || exit 1; \
	done

# Re-record the replay corpus from real sessions on the embedded server.
# Old histories stay: they prove sessions started by earlier code replay.
record-histories: devserver
	LONGRUN_DEVSERVER=$(DEVSERVER) LONGRUN_RECORD_HISTORIES=$(CURDIR)/workflows/testdata \
		go test -count=1 -run 'TestBatchReadsOverlapAndBarrierWaits|TestStaleWriteGuardAcrossWorkerRestart|TestCancelWhileShellRuns|TestBackgroundJobAcrossTurnsKilledOnCancel|TestSubagentCancelledWithItsParent|TestReadWriteShellWithApproval|TestDenyWithFeedback|TestApprovalTimeout|TestInterruptWhileShellRuns|TestTwoThousandTurnsContinueAsNew|TestCompactionFitsTheWindow|TestLocalReadsSaveAWorkflowTaskPerTurn|TestLocalModelTakesAtMostOneWorkflowTaskPerTurn|TestUISummariesAndCurrentDetails|TestFastTurnsUpsertCountersSparingly|TestForgedAndMalformedSignalsAreRejected|TestNotificationsOncePerEventAcrossWorkerKills|TestGuardianE2E|TestIsolatedSessionsOnOneRepository|TestSkillsListedAndLoaded|TestLanguageServerOnAGoModule|TestLanguageServerConfiguredInLSPJSON|TestLostWorkerRestoresTheCheckoutOnAnother|TestTwoBuildsPinnedThenUpgradedAtContinueAsNew|TestCallsRunWhereTheCheckoutIsWhenTheWorkflowTaskIsElsewhere|TestForkAndRewindAtAnEarlierTurn|TestPushOpensAPullRequestAtTheEnd|TestServeIssueToPullRequest|TestSetupRunsBeforeTheFirstModelCall' ./e2e

# The long chaos run: CHAOS_SESSIONS sessions whose worker is SIGKILLed at
# random points, and the Temporal server restart (see e2e/chaos_test.go). Each
# run draws a fresh seed and prints it; CHAOS_SEED=N reruns that one. `make
# test` runs the short form (5 sessions, seed 1). The e2e harness uses the
# devserver binary if it is there and builds it only if it is missing.
CHAOS_SESSIONS ?= 24
CHAOS_SEED ?= $(shell date +%s)
CHAOS_LOCAL ?= 0
.PHONY: chaos
chaos:
	LONGRUN_CHAOS_SESSIONS=$(CHAOS_SESSIONS) LONGRUN_CHAOS_SEED=$(CHAOS_SEED) LONGRUN_CHAOS_LOCAL=$(CHAOS_LOCAL) \
		go test -count=1 -timeout 30m -v -run 'Chaos' ./e2e

# The long-run proof in full: a 2,000-turn session that continues as new
# every 250 turns with an approval pending across one switch (`make test`
# runs its 400-turn form). A few minutes on two cores.
.PHONY: longrun
longrun: devserver
	LONGRUN_LONG=1 LONGRUN_DEVSERVER=$(DEVSERVER) go test -race -count=1 -timeout 30m -v -run 'TestTwoThousandTurnsContinueAsNew' ./e2e

# History growth per turn with 20 KB tool results, our design against a
# worker with no transcript store (docs/BENCHMARKS.md). About N minutes.
.PHONY: bench-history
bench-history:
	LONGRUN_DEVSERVER=$(DEVSERVER) go run ./bench -scenario history

# The cost of durability (docs/BENCHMARKS.md): the turn loop in-process vs
# AgentSession on the prebuilt devserver, per-turn overhead, replay and
# concurrent sessions. Takes about four minutes on two cores.
BENCH_ARGS ?= -scenario all -runs 5
.PHONY: bench-durability
bench-durability:
	LONGRUN_DEVSERVER=$(DEVSERVER) go run ./bench $(BENCH_ARGS)

# Checkouts (docs/BENCHMARKS.md): a session's checkout (checkout.Create)
# against plain git worktree add, paired, on a synthetic repository of
# BENCH_FILES files; and what a session pays per call that changes files
# (checkout.Stats) and at its end (checkout.Close).
BENCH_FILES ?= 10000
.PHONY: bench-checkouts
bench-checkouts:
	LONGRUN_BENCH_FILES=$(BENCH_FILES) go test -run '^$$' -bench BenchmarkCheckouts -benchtime 5x -timeout 60m ./checkout

# make demo uses the embedded server LONGRUN_DEVSERVER names when it is
# set, as the e2e tests do (TestDemoScript runs make demo in a fresh
# clone with the server built once), and builds its own otherwise.
demo: cli $(if $(LONGRUN_DEVSERVER),,devserver)
	DEVSERVER=$(or $(LONGRUN_DEVSERVER),$(DEVSERVER)) ./scripts/demo.sh

clean:
	rm -rf $(BIN)

# repoctx — see README.md and docs/development.md. All targets work offline once modules are downloaded (and,
# with the kotlin2 tag, once `make grammar` has installed the grammar's C source).
GO        ?= go
BIN       ?= bin/repoctx
FUZZTIME  ?= 60s
BENCHTIME ?= 1s
COUNT     ?= 6
# Build tags. kotlin2 compiles the tree-sitter-grammars Kotlin grammar (grammars/kotlin2,
# C source installed by `make grammar` from the npm registry); TAGS= builds with the
# bundled fwcd 0.3.8 grammar alone, as a plain `go build` does.
TAGS      ?= kotlin2
GRAMMAR   := $(if $(findstring kotlin2,$(TAGS)),grammar)

# staticcheck (honnef.co/go/tools), run by `make lint` when installed; `make tools` installs
# this version from the Go module proxy (.ci/run does, so CI fails on any finding).
STATICCHECK_VERSION := v0.8.2
STATICCHECK ?= $(or $(shell command -v staticcheck 2>/dev/null),$(wildcard $(firstword $(subst :, ,$(shell $(GO) env GOPATH)))/bin/staticcheck))

.PHONY: build test test-race test-plain test-fwcd test-beam vet lint tools demo fuzz bench bench-memory clean grammar

# Installs the kotlin2 grammar's generated C source into grammars/kotlin2/src (gitignored).
grammar:
	$(GO) run ./grammars/kotlin2/install

build: $(GRAMMAR)
	$(GO) build -tags '$(TAGS)' -o $(BIN) ./cmd/repoctx

# The test command CI runs (.ci/run): vet, staticcheck (when installed) and four passes, two at a
# time (make -j2; each one's output is printed whole when it ends; the race pass, the longest,
# starts first):
#   test-race  the tests with the race detector, but for SERIAL_PKGS and the tests that skip
#              themselves under it (racetest.Skip);
#   test-plain those without it: PLAIN_TESTS, the tests that skip themselves under -race (too slow
#              there, and on one goroutine or with their concurrency checked by other tests: golden
#              digests and rankings over the shared data, predict with the pure-Go dense model, eval
#              of every configuration on the shared dev data, bleve's agreement with the in-house
#              BM25, output memory, the chunker on every truncated prefix, nested errors and real
#              snapshots, the tokenizer's reference counts and regexp2 fallback, the 64 MiB input
#              limit, predict killed and resumed as a whole process, definitions per language, and
#              the randomized checks of fast code against its reference: BM25 pruning, dense search,
#              views, the oracle, the comment finder, edit identifiers), then SERIAL_PKGS whole;
#   test-fwcd  the packages whose behaviour depends on the Kotlin grammar again in a plain build
#              (fwcd 0.3.8);
#   test-beam  the Beam pipelines' own module (beam/, docs/beam.md) on Prism, without the race
#              detector.
# Any pass can also be run alone (`make test-race`). The test binaries are linked without DWARF
# (TESTFLAGS, -ldflags=-w): linking, a large share of a warm run, takes a third less time, and
# stack traces and race reports still name file and line (they use the binary's own tables).
# The race pass runs RACE_P test binaries at once: with the default (GOMAXPROCS, 2 here) building
# and starting race binaries leaves the cores idle for about a third of the pass.
TESTFLAGS   ?= -count=1 -ldflags=-w
RACE_P      ?= 4
TEST_PASSES := test-race test-plain test-fwcd test-beam
# Packages whose code and tests start no goroutine (the vocabulary, the Kotlin grammar's
# binding, the languages' rules, small helpers): the race detector has nothing to check there.
SERIAL_PKGS := . ./grammars/kotlin2/... ./internal/faultfs ./internal/pathsafe ./internal/racetest ./internal/topk ./languages/...
# The tests that call racetest.Skip, and their packages (internal/racetest's test keeps both in
# step with the code).
PLAIN_TESTS := TestGoldenDigests|TestRankingGoldens|TestPredictDense|TestOutputMemoryBounded|TestRunDev|TestAgreesWithInHouseBM25|TestTruncatedInputs|TestNestedErrorsChunk|TestRealSnapshots|TestQwenReference|TestQwenRegexp2|TestInputLimitStdin|TestKillAndResume|TestDefinitionsPerLanguage|TestHugotLongInputs|TestBuildExactQwen|TestTidySignature|TestScoreNovelAndAllRecallQwen|TestWalkFSZipInvariants|TestPredictSharedDev|TestOracleBestIsExact|TestQwenTable|TestViewEqualsOwnIndex|TestPruningIsExact|TestSearchDenseIsExact|TestCommentAbove|TestOracleBounds|TestEditIdentifiersEarlyStop|TestStoredViewSymbols|TestPruningIsExactSharedPool
PLAIN_PKGS  := ./assemble ./cmd/repoctx ./complete ./chunker ./crossrepo ./dataset ./eval ./grammars ./index ./retrieve ./retrieve/hugot ./snapshot ./symbols ./tokens
RACE_PKGS    = $(filter-out $(shell $(GO) list -tags '$(TAGS)' $(SERIAL_PKGS)),$(shell $(GO) list -tags '$(TAGS)' ./...))
test:
	@echo "test: vet, lint, $(TEST_PASSES), two at a time; each prints its output when it ends"
	@$(MAKE) --no-print-directory -j2 --output-sync=target test-race vet lint $(filter-out test-race,$(TEST_PASSES))

test-race: $(GRAMMAR)
	$(GO) test -race -p $(RACE_P) $(TESTFLAGS) -tags '$(TAGS)' $(RACE_PKGS)

test-plain: $(GRAMMAR)
	$(GO) test $(TESTFLAGS) -tags '$(TAGS)' -run '^($(PLAIN_TESTS))$$' $(PLAIN_PKGS)
	$(GO) test $(TESTFLAGS) -tags '$(TAGS)' $(SERIAL_PKGS)

test-fwcd:
	$(GO) test $(TESTFLAGS) ./grammars/ ./languages/ ./languages/kotlin/ ./chunker/ ./symbols/

test-beam: $(GRAMMAR)
	cd beam && $(GO) test $(TESTFLAGS) -tags '$(TAGS)' ./...

vet: $(GRAMMAR)
	$(GO) vet -tags '$(TAGS)' ./...
	$(GO) vet ./...
	cd beam && $(GO) vet -tags '$(TAGS)' ./...

# staticcheck over the tagged build (the root module and beam/); fails on any finding. Without staticcheck it says how
# to install it and passes, except under CI (CI=true), where it fails.
lint: $(GRAMMAR)
ifneq ($(STATICCHECK),)
	$(STATICCHECK) -tags '$(TAGS)' ./...
	cd beam && $(STATICCHECK) -tags '$(TAGS)' ./...
else
	@echo "lint: staticcheck is not installed, skipped (make tools installs $(STATICCHECK_VERSION))"
	@if [ -n "$$CI" ]; then echo "lint: CI runs staticcheck: make tools first" >&2; exit 1; fi
endif

# Installs the linters `make lint` runs (into $(GO) env GOPATH's bin).
tools:
	$(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

# Runs the main job on the bundled sample (testdata/sample) for both languages.
demo:
	@echo "demo: building $(BIN); the first build compiles 15 tree-sitter grammars in C (cgo) and takes a few minutes"
	@$(MAKE) --no-print-directory build
	@mkdir -p out
	$(BIN) predict --data testdata/sample --lang python --stage sample -o out/python-sample.jsonl --cache-dir out/cache
	$(BIN) predict --data testdata/sample --lang kotlin --stage sample -o out/kotlin-sample.jsonl --cache-dir out/cache

# Each fuzz target for FUZZTIME (go test allows one -fuzz target per run).
fuzz: $(GRAMMAR)
	$(GO) test -tags '$(TAGS)' -run=^$$ -fuzz=FuzzChunk -fuzztime=$(FUZZTIME) -fuzzminimizetime=5s ./chunker
	$(GO) test -run=^$$ -fuzz=FuzzReadDatapoints -fuzztime=$(FUZZTIME) ./dataset
	$(GO) test -run=^$$ -fuzz=FuzzAppendJSONString -fuzztime=$(FUZZTIME) ./dataset
	$(GO) test -run=^$$ -fuzz=FuzzCopyLinesMatchesNaive -fuzztime=$(FUZZTIME) -fuzzminimizetime=1x ./complete
	$(GO) test -run=^$$ -fuzz=FuzzOpenZip -fuzztime=$(FUZZTIME) ./snapshot
	$(GO) test -run=^$$ -fuzz=FuzzScanner -fuzztime=$(FUZZTIME) ./tokens
	$(GO) test -run=^$$ -fuzz=FuzzCount -fuzztime=$(FUZZTIME) ./tokens
	$(GO) test -run=^$$ -fuzz=FuzzCRewrite -fuzztime=$(FUZZTIME) ./languages/c
	$(GO) test -run=^$$ -fuzz=FuzzCPPRewrite -fuzztime=$(FUZZTIME) ./languages/c
	$(GO) test -run=^$$ -fuzz=FuzzCSharpRewrite -fuzztime=$(FUZZTIME) ./languages/csharp
	$(GO) test -run=^$$ -fuzz=FuzzResolveText -fuzztime=$(FUZZTIME) ./symbols

# Benchmarks (see docs/performance.md), then a summary table of medians (benchstat):
#   bench.txt           micro-benchmarks, COUNT runs each (chunking vs parsing, BM25, LSA, ...)
#   bench-pipelines.txt whole runs over ../shared/data/dev, PCOUNT runs each: predict cold and
#                       warm, the same pipeline rebuilt per datapoint, the seed's flow
#   bench-growth.txt    only with BENCH_REPO=<checkout>: index cost against repository size,
#                       warm query latency (p50/p95) on 1,000 of its files, repoctx serve over
#                       HTTP (latency, update after a save; scripts/serve-bench.sh: as a process)
BENCH_REPO ?=
PCOUNT     ?= 3
bench: $(GRAMMAR)
	$(GO) test -tags '$(TAGS)' -run='^$$' -bench=. -skip='Pipelines|IndexGrowth|ComposeWarm|Memory' -benchmem -benchtime=$(BENCHTIME) -count=$(COUNT) -timeout=2h ./... | tee bench.txt
	$(GO) test -tags '$(TAGS)' -run='^$$' -bench=Pipelines -benchtime=1x -count=$(PCOUNT) -timeout=2h ./eval | tee bench-pipelines.txt
	@if [ -n "$(BENCH_REPO)" ]; then \
		REPOCTX_BENCH_REPO=$(BENCH_REPO) $(GO) test -tags '$(TAGS)' -run='^$$' -bench=IndexGrowth -benchtime=1x -count=$(PCOUNT) -timeout=2h ./index | tee bench-growth.txt; \
		REPOCTX_BENCH_REPO=$(BENCH_REPO) $(GO) test -tags '$(TAGS)' -run='^$$' -bench=ComposeWarm -benchtime=500x -count=$(PCOUNT) ./assemble | tee -a bench-growth.txt; \
		REPOCTX_BENCH_REPO=$(BENCH_REPO) $(GO) test -tags '$(TAGS)' -run='^$$' -bench=Serve -benchtime=1x -count=$(PCOUNT) ./serve | tee -a bench-growth.txt; \
	fi
	@echo; echo "== summary (medians) =="
	$(GO) tool benchstat bench.txt
	$(GO) tool benchstat bench-pipelines.txt
	@if [ -f bench-growth.txt ] && [ -n "$(BENCH_REPO)" ]; then $(GO) tool benchstat bench-growth.txt; fi

# Peak memory of big runs, one process each: predict on 20,000 datapoints
# generated on one dev snapshot (<= 400 MB) and the index of a generated repository of
# 160,800 chunks (<= 500 MB).
bench-memory: $(GRAMMAR)
	$(GO) test -tags '$(TAGS)' -run='^$$' -bench=MemoryPredict20k -benchtime=1x -timeout=2h ./dataset | tee bench-memory.txt
	$(GO) test -tags '$(TAGS)' -run='^$$' -bench=MemoryLargeRepo -benchtime=1x -timeout=2h ./index | tee -a bench-memory.txt

clean:
	rm -rf bin out bench.txt bench-pipelines.txt bench-growth.txt bench-memory.txt

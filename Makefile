# repoctx — see README.md. All targets work offline once modules are downloaded.
GO        ?= go
BIN       ?= bin/repoctx
FUZZTIME  ?= 60s
BENCHTIME ?= 1s
COUNT     ?= 6

.PHONY: build test race vet demo fuzz bench clean

build:
	$(GO) build -o $(BIN) ./cmd/repoctx

# The test command CI runs (.ci/run): vet, all tests with the race detector, then the
# golden digest test of predict's output, which is too slow under the race detector.
test: vet
	$(GO) test -race -count=1 ./...
	$(GO) test -count=1 -run TestGoldenDigests ./cmd/repoctx

vet:
	$(GO) vet ./...

# Runs the main job on the bundled sample (testdata/sample) for both languages.
demo: build
	@mkdir -p out
	$(BIN) predict --data testdata/sample --lang python --stage sample -o out/python-sample.jsonl --cache-dir out/cache
	$(BIN) predict --data testdata/sample --lang kotlin --stage sample -o out/kotlin-sample.jsonl --cache-dir out/cache

# Each fuzz target for FUZZTIME (go test allows one -fuzz target per run).
fuzz:
	$(GO) test -run=^$$ -fuzz=FuzzChunk -fuzztime=$(FUZZTIME) -fuzzminimizetime=5s ./chunker
	$(GO) test -run=^$$ -fuzz=FuzzReadDatapoints -fuzztime=$(FUZZTIME) ./dataset
	$(GO) test -run=^$$ -fuzz=FuzzOpenZip -fuzztime=$(FUZZTIME) ./workspace
	$(GO) test -run=^$$ -fuzz=FuzzScanner -fuzztime=$(FUZZTIME) ./tokens
	$(GO) test -run=^$$ -fuzz=FuzzCount -fuzztime=$(FUZZTIME) ./tokens

# Benchmarks (see README, Performance), then a summary table of medians (benchstat):
#   bench.txt           micro-benchmarks, COUNT runs each (chunking vs parsing, BM25, LSA, ...)
#   bench-pipelines.txt whole runs over ../shared/data/dev, PCOUNT runs each: predict cold and
#                       warm, the same pipeline rebuilt per datapoint, the seed's flow
#   bench-growth.txt    only with BENCH_REPO=<checkout>: index cost against repository size,
#                       warm query latency (p50/p95) on 1,000 of its files, repoctx serve over
#                       HTTP (latency, update after a save; scripts/serve-bench.sh: as a process)
BENCH_REPO ?=
PCOUNT     ?= 3
bench:
	$(GO) test -run='^$$' -bench=. -skip='Pipelines|IndexGrowth|ComposeWarm' -benchmem -benchtime=$(BENCHTIME) -count=$(COUNT) -timeout=2h ./... | tee bench.txt
	$(GO) test -run='^$$' -bench=Pipelines -benchtime=1x -count=$(PCOUNT) -timeout=2h ./eval | tee bench-pipelines.txt
	@if [ -n "$(BENCH_REPO)" ]; then \
		REPOCTX_BENCH_REPO=$(BENCH_REPO) $(GO) test -run='^$$' -bench=IndexGrowth -benchtime=1x -count=$(PCOUNT) -timeout=2h ./workspace | tee bench-growth.txt; \
		REPOCTX_BENCH_REPO=$(BENCH_REPO) $(GO) test -run='^$$' -bench=ComposeWarm -benchtime=500x -count=$(PCOUNT) ./assemble | tee -a bench-growth.txt; \
		REPOCTX_BENCH_REPO=$(BENCH_REPO) $(GO) test -run='^$$' -bench=Serve -benchtime=1x -count=$(PCOUNT) ./serve | tee -a bench-growth.txt; \
	fi
	@echo; echo "== summary (medians) =="
	$(GO) tool benchstat bench.txt
	$(GO) tool benchstat bench-pipelines.txt
	@if [ -f bench-growth.txt ] && [ -n "$(BENCH_REPO)" ]; then $(GO) tool benchstat bench-growth.txt; fi

clean:
	rm -rf bin out bench.txt bench-pipelines.txt bench-growth.txt

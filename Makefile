# repoctx — see README.md. All targets work offline once modules are downloaded.
GO        ?= go
BIN       ?= bin/repoctx
FUZZTIME  ?= 60s
BENCHTIME ?= 1s
COUNT     ?= 6

.PHONY: build test race vet demo fuzz bench clean

build:
	$(GO) build -o $(BIN) ./cmd/repoctx

# The test command CI runs (.ci/run): vet, then all tests with the race detector.
test: vet
	$(GO) test -race -count=1 ./...

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
	$(GO) test -run=^$$ -fuzz=FuzzOpenZip -fuzztime=$(FUZZTIME) ./dataset

# Benchmarks, COUNT runs each; compare runs with benchstat.
bench:
	$(GO) test -run=^$$ -bench=. -benchmem -benchtime=$(BENCHTIME) -count=$(COUNT) ./... | tee bench.txt

clean:
	rm -rf bin out bench.txt

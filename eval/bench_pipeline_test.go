package eval

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/repoctx/repoctx/assemble"
	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/dataset"
	"github.com/repoctx/repoctx/index"
	"github.com/repoctx/repoctx/retrieve"
	"github.com/repoctx/repoctx/retrieve/hugot"
	"github.com/repoctx/repoctx/snapshot"
	"github.com/repoctx/repoctx/store"
)

// devDir is the shared dev split (benchmarks skip when it is absent).
var devDir = filepath.Join("..", "..", "shared", "data", "dev")

// cpuTime returns the process's user + system CPU time and its peak RSS in MB.
func cpuTime() (time.Duration, int64) {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), ru.Maxrss / 1024
}

// BenchmarkPipelines times whole runs over ../shared/data/dev, per language (one
// iteration = every datapoint; run with -benchtime=1x and -count), and reports per
// datapoint the wall time (ms/dp), the CPU time of the process (cpu-ms/dp) and the
// process's peak RSS so far (peak-MB; the sub-benchmarks run in the order below):
//
//   - cold: `repoctx predict` (dataset.Predict, 2 workers) with an empty cache.
//   - warm: the same again on the cache the cold run left.
//   - rebuild: the same pipeline (structural chunks, BM25 + LSA, symbols, Compose)
//     with nothing reused: a fresh cache for every datapoint, 2 datapoints at once.
//   - seed: the seed's flow as submitted (field-notes.md): 8-line windows with 2
//     lines of overlap, BM25 + dense index rebuilt for every datapoint, top 15 for the
//     prefix and the suffix (eval's seed-bm25 context), 2 datapoints at once. Its dense
//     model is LSA, or the Hugging Face model folder in $REPOCTX_BENCH_MODEL (the seed
//     used all-MiniLM-L6-v2; $REPOCTX_BENCH_BACKEND=ort runs it with ONNX Runtime, see
//     docs/cli.md), then over the first $REPOCTX_BENCH_SEED_N datapoints only (default
//     1: embedding every window of a snapshot takes minutes).
//
// cold vs seed compares repoctx's cost per datapoint with a pipeline that rebuilds
// its index per datapoint.
func BenchmarkPipelines(b *testing.B) {
	if _, err := os.Stat(devDir); err != nil {
		b.Skip("no shared dev data")
	}
	for _, lang := range []string{"kotlin", "python"} {
		dps, _, err := dataset.ReadDatapointsFile(filepath.Join(devDir, lang+"-dev.jsonl"))
		if err != nil {
			b.Fatal(err)
		}
		var cache string
		run := func(name string, n int, fn func(b *testing.B)) {
			b.Run(lang+"/"+name, func(b *testing.B) {
				c0, _ := cpuTime()
				t0 := time.Now()
				for i := 0; i < b.N; i++ {
					fn(b)
				}
				wall := time.Since(t0)
				c1, rss := cpuTime()
				per := float64(b.N * n)
				b.ReportMetric(float64(wall.Milliseconds())/per, "ms/dp")
				b.ReportMetric(float64((c1-c0).Milliseconds())/per, "cpu-ms/dp")
				b.ReportMetric(float64(rss), "peak-MB")
			})
		}
		predict := func(b *testing.B) {
			_, err := dataset.Predict(context.Background(), dataset.PredictOptions{DataDir: devDir, Lang: lang, Stage: "dev",
				Out: filepath.Join(b.TempDir(), "out.jsonl"), Batch: testBatch(cache)})
			if err != nil {
				b.Fatal(err)
			}
		}
		run("cold", len(dps), func(b *testing.B) {
			b.StopTimer()
			os.RemoveAll(cache)
			cache, err = os.MkdirTemp("", "repoctx-bench-")
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			predict(b)
		})
		defer os.RemoveAll(cache) // after warm
		run("warm", len(dps), predict)
		run("rebuild", len(dps), func(b *testing.B) {
			perDatapoint(b, lang, dps, func(snap snapshot.Snapshot, d *dataset.Datapoint, cache string) error {
				repo, done, err := benchView(snap, cache, index.DefaultOptions())
				if err != nil {
					return err
				}
				defer done()
				_, err = assemble.Compose(context.Background(), repo, d.Hole(), assemble.DefaultOptions())
				return err
			})
		})
		seedDPs := dps
		iopts := index.Options{Strategy: chunker.StrategyFixed, Chunk: SeedOptions{}.chunkOptions()}
		if m := os.Getenv("REPOCTX_BENCH_MODEL"); m != "" {
			emb, err := hugot.New(m, hugot.Options{Backend: os.Getenv("REPOCTX_BENCH_BACKEND")})
			if err != nil {
				b.Fatal(err)
			}
			defer emb.Close()
			iopts.Dense, iopts.Embedder = retrieve.DenseModel, emb
			n, _ := strconv.Atoi(os.Getenv("REPOCTX_BENCH_SEED_N"))
			seedDPs = dps[:min(max(n, 1), len(dps))]
		}
		run("seed", len(seedDPs), func(b *testing.B) {
			perDatapoint(b, lang, seedDPs, func(snap snapshot.Snapshot, d *dataset.Datapoint, cache string) error {
				repo, done, err := benchView(snap, cache, iopts)
				if err != nil {
					return err
				}
				defer done()
				_, err = seedContext(context.Background(), repo.Retriever(), snap, d, SeedOptions{}, nil)
				return err
			})
		})
	}
}

// perDatapoint runs fn for every datapoint, 2 at a time, each with its snapshot opened
// anew and a fresh cache directory (so nothing is reused between datapoints).
func perDatapoint(b *testing.B, lang string, dps []dataset.Datapoint, fn func(snapshot.Snapshot, *dataset.Datapoint, string) error) {
	src, err := dataset.OpenSource(devDir, lang, "dev", snapshot.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	jobs := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				d := &dps[i]
				cache, err := os.MkdirTemp("", "repoctx-bench-")
				if err == nil {
					var snap snapshot.Snapshot
					if snap, err = src.Open(d.SnapshotName()); err == nil {
						err = fn(snap, d, cache)
					}
					os.RemoveAll(cache)
				}
				if err != nil {
					mu.Lock()
					first = err
					mu.Unlock()
				}
			}
		}()
	}
	for i := range dps {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if first != nil {
		b.Fatal(first)
	}
}

// benchView makes the view of snap over a new index of its repository in the store of
// cache; done closes the view, the index and the store.
func benchView(snap snapshot.Snapshot, cache string, opts index.Options) (*index.View, func(), error) {
	st := store.Open(cache)
	ix, err := index.Open(st, index.RepoID(snap.Name()), opts)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	v, err := ix.View(context.Background(), snap)
	ix.Close()
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return v, func() { v.Close(); st.Close() }, nil
}

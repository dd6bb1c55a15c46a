package assemble

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/index"
	"github.com/repoctx/repoctx/internal/benchrepo"
	"github.com/repoctx/repoctx/snapshot"
	"github.com/repoctx/repoctx/store"
)

// BenchmarkComposeWarm measures warm query latency on about 1,000 source files of
// $REPOCTX_BENCH_REPO: the repository is opened once, then every iteration composes a
// whole context (hybrid BM25 + LSA retrieval, relative positioning, definitions,
// budget) for a hole at a random line of a random file, as `repoctx query` does after
// loading the index. It reports the median and 95th percentile latency in ms (p50-ms,
// p95-ms).
func BenchmarkComposeWarm(b *testing.B) {
	root, paths := benchrepo.Paths(b)
	snap, err := snapshot.OpenDir(benchrepo.Subset(b, root, paths, min(1000, len(paths))), snapshot.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	st := store.Open(b.TempDir())
	defer st.Close()
	ix, err := index.Open(st, "bench/repo", index.DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	repo, err := ix.View(context.Background(), snap)
	if err != nil {
		b.Fatal(err)
	}
	defer repo.Close()
	files := snap.Paths()
	rng := rand.New(rand.NewPCG(1, 2))
	holes := make([]repoctx.Hole, 256)
	for i := range holes {
		p := files[rng.IntN(len(files))]
		raw, _ := snap.ReadFile(p)
		lines := strings.SplitAfter(string(raw), "\n")
		at := rng.IntN(len(lines))
		end := min(len(lines), at+1+rng.IntN(3))
		holes[i] = repoctx.Hole{Path: p, Prefix: strings.Join(lines[:at], ""), Suffix: strings.Join(lines[end:], ""), Modified: []string{p}}
	}
	co := DefaultOptions()
	ctx := context.Background()
	// One warm-up query loads the dense vectors.
	if _, err := Compose(ctx, repo, holes[0], co); err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if _, err := Compose(ctx, repo, holes[i%len(holes)], co); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(lat)
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(q(0.5), "p50-ms")
	b.ReportMetric(q(0.95), "p95-ms")
	b.ReportMetric(float64(len(repo.Retriever().Chunks())), "chunks")
}

package index

import (
	"context"
	"strconv"
	"testing"

	"github.com/repoctx/repoctx/internal/benchrepo"
	"github.com/repoctx/repoctx/snapshot"
)

// BenchmarkIndexGrowth indexes growing prefixes (in path order) of the repository in
// $REPOCTX_BENCH_REPO with an empty cache: the index (chunks, BM25, LSA) and the
// symbol table. It reports files, chunks, ms/file and the heap allocated per run
// (alloc-MB) and the process's peak RSS so far (peak-MB), so cost can be read against
// repository size.
func BenchmarkIndexGrowth(b *testing.B) {
	root, paths := benchrepo.Paths(b)
	for _, n := range []int{250, 500, 1000, 2000} {
		if n > len(paths) {
			break
		}
		b.Run("files="+strconv.Itoa(n), func(b *testing.B) {
			snap, err := snapshot.OpenDir(benchrepo.Subset(b, root, paths, n), snapshot.Limits{})
			if err != nil {
				b.Fatal(err)
			}
			chunks := 0
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				cache := b.TempDir()
				b.StartTimer()
				r, err := openView(context.Background(), snap, cache, "", DefaultOptions())
				if err != nil {
					b.Fatal(err)
				}
				chunks = r.Stats().Chunks
				r.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N*n), "ms/file")
			b.ReportMetric(float64(chunks), "chunks")
			b.ReportMetric(float64(benchrepo.PeakRSSMB()), "peak-MB")
		})
	}
}

// BenchmarkMemoryLargeRepo indexes a generated Python repository of 160,800 chunks
// (1,608 files of 100 functions; benchrepo.Synthetic) with an empty cache and the
// default options (structural chunks, BM25, the built-in LSA model, symbols) and
// reports the chunks and the process's peak RSS (peak-MB; the bound is 500 MB,
// the LSA fit being bounded by retrieve.MaxLSAFitChunks). Run it alone:
//
//	go test -run '^$' -bench MemoryLargeRepo -benchtime 1x ./index
func BenchmarkMemoryLargeRepo(b *testing.B) {
	dir := benchrepo.Synthetic(b, 1608, 100)
	snap, err := snapshot.OpenDir(dir, snapshot.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := openView(context.Background(), snap, b.TempDir(), "", DefaultOptions())
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(r.Stats().Chunks), "chunks")
		r.Close()
	}
	b.ReportMetric(float64(benchrepo.PeakRSSMB()), "peak-MB")
}

package assemble

import (
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/dataset"
	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/symbols"
)

// benchRepo returns the source files (slash paths, sorted) of the repository checkout
// named by $REPOCTX_BENCH_REPO, skipping the benchmark when it is not set. Fetched
// code is never committed: see the Makefile's bench target for how to get one.
func benchRepo(b *testing.B) (string, []string) {
	root := os.Getenv("REPOCTX_BENCH_REPO")
	if root == "" {
		b.Skip("set REPOCTX_BENCH_REPO to a repository checkout (e.g. ktorio/ktor)")
	}
	var paths []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && grammars.ForPath(p) != nil {
			rel, _ := filepath.Rel(root, p)
			paths = append(paths, filepath.ToSlash(rel))
		}
		return nil
	})
	slices.Sort(paths)
	if len(paths) == 0 {
		b.Skipf("no Kotlin or Python files under %s", root)
	}
	return root, paths
}

// subsetRepo copies the first n of paths (a prefix in path order, so whole modules)
// from root into a new folder and opens it as a snapshot.
func subsetRepo(b *testing.B, root string, paths []string, n int) *dataset.Snapshot {
	dir := filepath.Join(b.TempDir(), "repo")
	for _, p := range paths[:n] {
		raw, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil {
			b.Fatal(err)
		}
		dst := filepath.Join(dir, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(dst), 0o755)
		if err := os.WriteFile(dst, raw, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	snap, err := dataset.OpenDir(dir, dataset.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	return snap
}

// BenchmarkIndexGrowth indexes growing prefixes (in path order) of the repository in
// $REPOCTX_BENCH_REPO with an empty cache: the index (chunks, BM25, LSA) and the
// symbol table. It reports files, chunks, ms/file and the heap allocated per run
// (alloc-MB) and the process's peak RSS so far (peak-MB), so cost can be read against
// repository size.
func BenchmarkIndexGrowth(b *testing.B) {
	root, paths := benchRepo(b)
	for _, n := range []int{250, 500, 1000, 2000} {
		if n > len(paths) {
			break
		}
		b.Run("files="+strconv.Itoa(n), func(b *testing.B) {
			snap := subsetRepo(b, root, paths, n)
			ch := chunker.NewStructural(chunker.Options{})
			defer ch.Close()
			ex := symbols.NewExtractor(0)
			defer ex.Close()
			chunks := 0
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				cache := b.TempDir()
				b.StartTimer()
				ix, st, err := IndexSnapshot(snap, ch, IndexOptions{CacheDir: cache})
				if err != nil {
					b.Fatal(err)
				}
				CachedSymbols(snap, ix, ex, cache, 0)
				chunks = st.Chunks
				ix.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N*n), "ms/file")
			b.ReportMetric(float64(chunks), "chunks")
			b.ReportMetric(float64(peakRSSMB()), "peak-MB")
		})
	}
}

// BenchmarkComposeWarm measures warm query latency on about 1,000 source files of
// $REPOCTX_BENCH_REPO: the index is built once, then every iteration composes a whole
// context (hybrid BM25 + LSA retrieval, relative positioning, definitions, budget)
// for a hole at a random line of a random file, as `repoctx query` does after loading
// the index. It reports the median and 95th percentile latency in ms (p50-ms, p95-ms).
func BenchmarkComposeWarm(b *testing.B) {
	root, paths := benchRepo(b)
	snap := subsetRepo(b, root, paths, min(1000, len(paths)))
	cache := b.TempDir()
	ch := chunker.NewStructural(chunker.Options{})
	defer ch.Close()
	ix, _, err := IndexSnapshot(snap, ch, IndexOptions{CacheDir: cache})
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	ex := symbols.NewExtractor(0)
	defer ex.Close()
	res := Resources{Extractor: ex, Symbols: CachedSymbols(snap, ix, ex, cache, 0)}
	files := snap.Paths()
	rng := rand.New(rand.NewPCG(1, 2))
	holes := make([]Hole, 256)
	for i := range holes {
		p := files[rng.IntN(len(files))]
		raw, _ := snap.ReadFile(p)
		lines := strings.SplitAfter(string(raw), "\n")
		at := rng.IntN(len(lines))
		end := min(len(lines), at+1+rng.IntN(3))
		holes[i] = Hole{Path: p, Prefix: strings.Join(lines[:at], ""), Suffix: strings.Join(lines[end:], ""), Modified: []string{p}}
	}
	// One warm-up query loads the dense vectors.
	if _, _, err := ComposeWith(ix, holes[0], res, Options{}); err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if _, _, err := ComposeWith(ix, holes[i%len(holes)], res, Options{}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(lat)
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(q(0.5), "p50-ms")
	b.ReportMetric(q(0.95), "p95-ms")
	b.ReportMetric(float64(len(ix.Chunks())), "chunks")
}

// peakRSSMB returns the process's peak resident set size in MB.
func peakRSSMB() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Maxrss / 1024
}

package retrieve

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/internal/benchrepo"
	"github.com/repoctx/repoctx/internal/parallel"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// BenchmarkDenseLists measures what an inverted-file index of the dense vectors (IVF:
// the rows grouped by their nearest of L centroids, a search scoring only the rows of
// the P lists nearest the query; Jégou, Douze & Schmid, "Product quantization for
// nearest neighbor search", IEEE TPAMI 33(1), 2011, section III-A) would cost and save
// against the exact scan the index does today: it is an experiment, not a part of the
// product. The vectors are the built-in LSA's of the structural chunks of the first
// $REPOCTX_BENCH_FILES (default 1,000) Kotlin, Java and Python files of
// $REPOCTX_BENCH_REPO in path order; the queries 200 windows of up to 8 lines ending at a
// random line of a random chunk, embedded as prefix queries. The centroids come from
// spherical k-means (Lloyd's iterations, 8, on a sample of at most 50,000 rows,
// centroids renormalized). Each L=…/P=… sub-benchmark reports recall@50 (the share of
// the exact top 50 in the IVF's top 50), scanned (the share of rows scored) and the
// time per query of the IVF's scan (ns/op) and of the exact one (exact-us); L=… alone
// the build: train-s and assign-s.
//
//	REPOCTX_BENCH_REPO=DIR REPOCTX_BENCH_FILES=50000 go test -tags kotlin2 ./retrieve \
//	    -run '^$' -bench DenseLists -benchtime 200x -timeout 1h
func BenchmarkDenseLists(b *testing.B) {
	root, paths := benchrepo.Paths(b)
	files := 1000
	if s := os.Getenv("REPOCTX_BENCH_FILES"); s != "" {
		var err error
		if files, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	x, dim, qs := listsData(b, root, paths, files)
	n := len(x) / dim
	const k = 50
	exact := make([][]int, len(qs))
	start := time.Now()
	for j, q := range qs {
		exact[j] = listsTop(q, x, dim, nil, k)
	}
	exactUS := float64(time.Since(start).Microseconds()) / float64(len(qs))
	rng := rand.New(rand.NewPCG(7, 9))
	for _, nl := range []int{256, 1024} {
		start := time.Now()
		cent := listsKMeans(x, dim, nl, 50000, 8, rng)
		train := time.Since(start)
		start = time.Now()
		assign := listsAssign(x, dim, cent)
		lists := make([][]int, nl)
		for i, a := range assign {
			lists[a] = append(lists[a], i)
		}
		b.Run(fmt.Sprintf("L=%d", nl), func(b *testing.B) {
			b.ReportMetric(train.Seconds(), "train-s")
			b.ReportMetric(time.Since(start).Seconds(), "assign-s")
		})
		for _, np := range []int{8, 16, 32, 64} {
			b.Run(fmt.Sprintf("L=%d/P=%d", nl, np), func(b *testing.B) {
				var hits, scanned int
				j := 0
				for b.Loop() {
					q := qs[j%len(qs)]
					var rows []int
					for _, c := range listsTop(q, cent, dim, nil, np) {
						rows = append(rows, lists[c]...)
					}
					got := listsTop(q, x, dim, rows, k)
					scanned += len(rows)
					for _, i := range got {
						if slices.Contains(exact[j%len(qs)], i) {
							hits++
						}
					}
					j++
				}
				b.ReportMetric(float64(hits)/float64(k*j), "recall@50")
				b.ReportMetric(float64(scanned)/float64(n*j), "scanned")
				b.ReportMetric(exactUS, "exact-us")
			})
		}
	}
}

// listsData returns the LSA vectors (rows of dim) of the structural chunks of the
// first files Kotlin, Java and Python files of paths (benchrepo.Paths of root), and 200
// prefix queries' vectors.
func listsData(b *testing.B, root string, all []string, files int) ([]float32, int, [][]float32) {
	var paths []string
	for _, p := range all {
		if s := grammars.ForPath(p); s != nil && (s.Name == "kotlin" || s.Name == "java" || s.Name == "python") && len(paths) < files {
			paths = append(paths, p)
		}
	}
	per := make([][]chunker.Chunk, len(paths))
	parallel.Ranges(len(paths), runtime.GOMAXPROCS(0), func(lo, hi int) {
		ch := chunker.NewStructural(chunker.DefaultOptions(chunker.StrategyStructural))
		defer ch.Close()
		for i := lo; i < hi; i++ {
			text, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(paths[i])))
			if err != nil {
				continue
			}
			if cs, err := ch.Chunk(&chunker.File{Path: paths[i], Lang: grammars.ForPath(paths[i]).Name, Text: text}); err == nil {
				per[i] = cs
			}
		}
	})
	var chunks []chunker.Chunk
	for _, cs := range per {
		chunks = append(chunks, cs...)
	}
	d, err := LSAVectors(context.Background(), chunks, 0, "")
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var qs [][]float32
	for len(qs) < 200 {
		lines := strings.Split(chunks[rng.IntN(len(chunks))].Text, "\n")
		if len(lines) < 4 {
			continue
		}
		end := 1 + rng.IntN(len(lines)-1)
		v, _, err := d.Embedder.Embed([]string{strings.Join(lines[max(0, end-8):end], "\n")}, KeepTail)
		if err != nil {
			b.Fatal(err)
		}
		if Normalize(v[0]) {
			qs = append(qs, alignedQuery(v[0]))
		}
	}
	b.Logf("%d files, %d chunks, dimension %d", len(paths), len(chunks), d.Dim)
	return d.Vectors, d.Dim, qs
}

// listsTop returns the k rows of x (or of rows, when not nil) with the highest dot
// product with q, best first.
func listsTop(q, x []float32, dim int, rows []int, k int) []int {
	type scored struct {
		i int
		s float32
	}
	var best []scored
	try := func(i int) {
		s := dot(x[i*dim:(i+1)*dim], q)
		if len(best) == k && s <= best[k-1].s {
			return
		}
		if len(best) < k {
			best = append(best, scored{i, s})
		} else {
			best[k-1] = scored{i, s}
		}
		for j := len(best) - 1; j > 0 && best[j].s > best[j-1].s; j-- {
			best[j], best[j-1] = best[j-1], best[j]
		}
	}
	if rows != nil {
		for _, i := range rows {
			try(i)
		}
	} else {
		for i := range len(x) / dim {
			try(i)
		}
	}
	out := make([]int, len(best))
	for i := range best {
		out[i] = best[i].i
	}
	return out
}

// listsAssign returns each row's nearest centroid by dot product (cent: rows of dim),
// blocks of rows multiplied by the centroids on every core.
func listsAssign(x []float32, dim int, cent []float32) []int {
	n, nl := len(x)/dim, len(cent)/dim
	out := make([]int, n)
	const block = 1024
	parallel.Ranges((n+block-1)/block, runtime.GOMAXPROCS(0), func(blo, bhi int) {
		prod := make([]float32, block*nl)
		for lo := blo * block; lo < min(bhi*block, n); lo += block {
			hi := min(lo+block, n)
			blas32.Gemm(blas.NoTrans, blas.Trans, 1,
				blas32.General{Rows: hi - lo, Cols: dim, Stride: dim, Data: x[lo*dim : hi*dim]},
				blas32.General{Rows: nl, Cols: dim, Stride: dim, Data: cent}, 0,
				blas32.General{Rows: hi - lo, Cols: nl, Stride: nl, Data: prod[:(hi-lo)*nl]})
			for r := range hi - lo {
				best, bs := 0, float32(math.Inf(-1))
				for c, s := range prod[r*nl : (r+1)*nl] {
					if s > bs {
						best, bs = c, s
					}
				}
				out[lo+r] = best
			}
		}
	})
	return out
}

// listsKMeans returns nl unit centroids (rows of dim) from iters of spherical k-means
// on a random sample of at most sample rows of x, started from the sample's first nl
// rows; an empty cluster takes a random sample row.
func listsKMeans(x []float32, dim, nl, sample, iters int, rng *rand.Rand) []float32 {
	n := len(x) / dim
	var s []float32
	for _, i := range rng.Perm(n)[:min(sample, n)] {
		s = append(s, x[i*dim:(i+1)*dim]...)
	}
	m := len(s) / dim
	cent := slices.Clone(s[:nl*dim])
	for range iters {
		sum := make([]float64, nl*dim)
		count := make([]int, nl)
		for r, c := range listsAssign(s, dim, cent) {
			count[c]++
			for j := range dim {
				sum[c*dim+j] += float64(s[r*dim+j])
			}
		}
		for c := range nl {
			if count[c] == 0 {
				copy(cent[c*dim:(c+1)*dim], s[rng.IntN(m)*dim:])
				continue
			}
			var norm float64
			for _, v := range sum[c*dim : (c+1)*dim] {
				norm += v * v
			}
			norm = math.Sqrt(norm)
			for j := range dim {
				cent[c*dim+j] = float32(sum[c*dim+j] / norm)
			}
		}
	}
	return cent
}

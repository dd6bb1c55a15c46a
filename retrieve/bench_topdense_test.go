package retrieve

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/repoctx/repoctx/chunker"
)

// BenchmarkTopDense measures a dense search's scan (topDense, k = 50) over every row of
// 100,000 and 700,000 chunks of dimension 128 (the LSA default), random vectors: the
// dense half of a request at 50,000 files (about 690,000 chunks).
func BenchmarkTopDense(b *testing.B) {
	for _, n := range []int{100_000, 700_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			const dim = 128
			ix, d, rng := randomDense(n, dim)
			q := randomVector(rng, dim)
			for b.Loop() {
				if hits := ix.topDense(q, d, 50, nil, nil, nil); len(hits) != 50 {
					b.Fatal(len(hits))
				}
			}
		})
	}
}

// BenchmarkTopDenseShared measures a request's two dense scans over 700,000 random rows
// of dimension 128 (k = 50): "separate" runs topDense for each query at once, as two
// Searches did; "shared" is SearchBatch's one pass (scanShared) over the rows for
// both, split over GOMAXPROCS goroutines.
func BenchmarkTopDenseShared(b *testing.B) {
	const n, dim, k = 700_000, 128, 50
	ix, d, rng := randomDense(n, dim)
	qs := make([][]float32, 2)
	scan := make([]*hybridSearch, len(qs))
	for j := range qs {
		qs[j] = alignedQuery(randomVector(rng, dim))
		scan[j] = &hybridSearch{w: Weights{Depth: k}}
	}
	b.Run("separate", func(b *testing.B) {
		for b.Loop() {
			var wg sync.WaitGroup
			for _, q := range qs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if hits := ix.topDense(q, d, k, nil, nil, nil); len(hits) != k {
						b.Error(len(hits))
					}
				}()
			}
			wg.Wait()
		}
	})
	b.Run("shared", func(b *testing.B) {
		for b.Loop() {
			hits, err := ix.scanShared(qs, d, scan)
			if err != nil || len(hits[0]) != k || len(hits[1]) != k {
				b.Fatal(err)
			}
		}
	})
}

// randomDense returns an index of n chunks (one per file) with random vectors of
// dimension dim, and the generator that made them (seeded: the same every call).
func randomDense(n, dim int) (*Index, *DenseVectors, *rand.Rand) {
	rng := rand.New(rand.NewPCG(1, 2))
	ptrs := make([]*chunker.Chunk, n)
	for i := range ptrs {
		ptrs[i] = &chunker.Chunk{ID: fmt.Sprintf("f%d.kt#0", i), Path: fmt.Sprintf("f%d.kt", i)}
	}
	ix := &Index{chunks: chunkList{ptrs: ptrs}}
	return ix, &DenseVectors{Dim: dim, Vectors: randomVector(rng, n*dim)}, rng
}

// randomVector returns n standard normal values drawn from rng.
func randomVector(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

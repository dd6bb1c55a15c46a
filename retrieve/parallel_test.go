package retrieve

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"
)

// tmulLoop is Aᵀ·B as the fit computed it before it multiplied by the transpose:
// for each row i of A, for each entry (i, j), out_j += a_ij · B_i.
func tmulLoop(a *csr, b []float64, bc int) []float64 {
	out := make([]float64, a.cols*bc)
	for i := range a.rows {
		src := b[i*bc : (i+1)*bc]
		for p := a.ptr[i]; p < a.ptr[i+1]; p++ {
			j := int(a.idx[p])
			floats.AddScaled(out[j*bc:(j+1)*bc], a.val[p], src)
		}
	}
	return out
}

// randomCSR returns a rows×cols sparse matrix with about density·cols entries per row
// (some rows and columns empty), its values spread over several orders of magnitude
// so that a change in the order of additions would show in the bits.
func randomCSR(rng *rand.Rand, rows, cols int, density float64) *csr {
	a := &csr{rows: rows, cols: cols, ptr: make([]int, 1, rows+1)}
	for range rows {
		for j := range cols {
			if rng.Float64() < density {
				a.idx = append(a.idx, int32(j))
				a.val = append(a.val, rng.NormFloat64()*math.Pow(10, float64(rng.IntN(7)-3)))
			}
		}
		a.ptr = append(a.ptr, len(a.idx))
	}
	return a
}

// withProcs runs f with GOMAXPROCS set to n.
func withProcs(n int, f func()) {
	old := runtime.GOMAXPROCS(n)
	defer runtime.GOMAXPROCS(old)
	f()
}

// TestTransposeMul: Aᵀ·B through the transpose equals the row-by-row loop bit for
// bit, and A·B and Aᵀ·B are the same on one goroutine and on several, for products
// below and above minParallelWork.
func TestTransposeMul(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, tc := range []struct {
		rows, cols, bc int
		density        float64
	}{{1, 1, 1, 1}, {5, 3, 2, 0.5}, {300, 200, 7, 0.05}, {3000, 900, 40, 0.02}, {2000, 4000, 148, 0.01}} {
		a := randomCSR(rng, tc.rows, tc.cols, tc.density)
		bt := make([]float64, tc.rows*tc.bc) // B for Aᵀ·B
		for i := range bt {
			bt[i] = rng.NormFloat64()
		}
		b := make([]float64, tc.cols*tc.bc) // B for A·B
		for i := range b {
			b[i] = rng.NormFloat64()
		}
		name := fmt.Sprintf("%dx%d·%d", tc.rows, tc.cols, tc.bc)
		want := tmulLoop(a, bt, tc.bc)
		var mul1 []float64
		withProcs(1, func() { mul1 = a.mul(b, tc.bc) })
		for _, procs := range []int{1, 2, 3, 8} {
			withProcs(procs, func() {
				if got := a.transpose().mul(bt, tc.bc); !bitsEqual(got, want) {
					t.Errorf("%s, GOMAXPROCS %d: Aᵀ·B through the transpose differs from the loop", name, procs)
				}
				if got := a.mul(b, tc.bc); !bitsEqual(got, mul1) {
					t.Errorf("%s, GOMAXPROCS %d: A·B differs from one goroutine's", name, procs)
				}
			})
		}
	}
}

// bitsEqual reports whether a and b hold the same float64 bits.
func bitsEqual(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// TestLSAParallelSame: a fit and the embedding of a corpus give the same bits on one
// goroutine and on several (the products and EmbedTexts' batches run in parallel).
func TestLSAParallelSame(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	words := []string{"alpha", "Beta", "gamma", "DELTA", "parse", "token", "index", "chunk", "query", "score", "fetch", "render"}
	texts := make([]string, 3000)
	for i := range texts {
		var b []string
		for range 5 + rng.IntN(60) {
			b = append(b, fmt.Sprintf("%s%s", words[rng.IntN(len(words))], words[rng.IntN(len(words))]))
		}
		texts[i] = strings.Join(b, " ")
	}
	type result struct {
		proj []float32
		vecs [][]float32
	}
	run := func(procs int) (r result) {
		withProcs(procs, func() {
			m, err := fitLSATexts(texts, 64)
			if err != nil {
				t.Fatal(err)
			}
			r.proj = m.proj
			if r.vecs, _, err = EmbedTexts(context.Background(), m, append(texts, "alpha beta unseen words"), 16, false); err != nil {
				t.Fatal(err)
			}
		})
		return r
	}
	want := run(1)
	if len(want.proj) == 0 {
		t.Fatal("empty model")
	}
	for _, procs := range []int{2, 4} {
		if got := run(procs); !reflect.DeepEqual(got, want) {
			t.Errorf("GOMAXPROCS %d: the model or the vectors differ from one goroutine's", procs)
		}
	}
}

// TestEmbedTextsParallelCancel: a cancelled context stops the parallel embedding with
// its error.
func TestEmbedTextsParallelCancel(t *testing.T) {
	m, err := fitLSATexts([]string{"alpha beta", "beta gamma", "gamma delta", "alpha delta"}, 2)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	withProcs(4, func() {
		if _, _, err := EmbedTexts(ctx, m, make([]string, 1000), 8, false); err != context.Canceled {
			t.Errorf("cancelled: %v", err)
		}
	})
}

// TestNewIndexParallelSame: an index of more than minParallelDocs chunks, whose
// fields' postings are built on goroutines of their own, holds the same postings,
// lengths and statistics as one built on one goroutine, and ranks the same.
func TestNewIndexParallelSame(t *testing.T) {
	cs := synthChunks(minParallelDocs + 500)
	c := NewCorpus()
	ords := c.Add(cs)
	build := func(procs int) (ix *Index) {
		withProcs(procs, func() {
			var err error
			if ix, err = c.NewIndex("k", ords, nil); err != nil {
				t.Fatal(err)
			}
		})
		return ix
	}
	want := build(1)
	for _, procs := range []int{2, 4} {
		got := build(procs)
		if !reflect.DeepEqual(got.post, want.post) || !reflect.DeepEqual(got.lens, want.lens) || got.stats != want.stats {
			t.Fatalf("GOMAXPROCS %d: postings, lengths or statistics differ from one goroutine's", procs)
		}
		q := cs[17].Text
		a, err1 := got.searchBM25(q, 10, nil)
		b, err2 := want.searchBM25(q, 10, nil)
		if err1 != nil || err2 != nil || !reflect.DeepEqual(a, b) {
			t.Fatalf("GOMAXPROCS %d: search differs: %v %v", procs, err1, err2)
		}
	}
}

package topk

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestBestMatchesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	desc := func(a, b int) int { return cmp.Compare(b, a) }
	for trial := 0; trial < 200; trial++ {
		n := r.IntN(60)
		vals := make([]int, n)
		for i := range vals {
			vals[i] = r.IntN(20) // many ties: the order must still be total by value
		}
		k := r.IntN(70)
		got := Best(vals, k, desc)
		want := slices.Clone(vals)
		slices.SortFunc(want, desc)
		want = want[:min(k, n)]
		if !slices.Equal(got, want) {
			t.Fatalf("Best(%v, %d) = %v, want %v", vals, k, got, want)
		}
	}
}

func TestHeapWouldAndReset(t *testing.T) {
	h := New(2, func(a, b int) int { return cmp.Compare(b, a) })
	for _, v := range []int{1, 5, 3} {
		h.Push(v)
	}
	if !h.Full() || h.Worst() != 3 || h.Would(2) || !h.Would(4) {
		t.Fatalf("heap state wrong: len %d worst %d", h.Len(), h.Worst())
	}
	if got := h.Sorted(); !slices.Equal(got, []int{5, 3}) {
		t.Fatalf("Sorted = %v", got)
	}
	h.Reset(0)
	if h.Push(9) || h.Len() != 0 {
		t.Fatal("a heap of bound 0 kept a value")
	}
}

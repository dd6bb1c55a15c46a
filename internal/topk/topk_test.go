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

// A huge k must not reserve storage for k values: the heap grows with what it keeps
// (a k of 10^9 used to reserve 8 GB of float64s for a 139-chunk index).
func TestHugeKReservesByValues(t *testing.T) {
	desc := func(a, b float64) int { return cmp.Compare(b, a) }
	h := New(1<<40, desc)
	if c := cap(h.h); c > InitialCap {
		t.Fatalf("New(2^40) reserved %d values, want at most %d", c, InitialCap)
	}
	for i := range 200 {
		h.Push(float64(i % 37))
	}
	if h.Len() != 200 || cap(h.h) > 2*200 {
		t.Fatalf("after 200 pushes: len %d cap %d, want len 200 and cap within 2x", h.Len(), cap(h.h))
	}
	got := h.Sorted()
	if got[0] != 36 || got[len(got)-1] != 0 {
		t.Fatalf("Sorted = %v...", got[:3])
	}
	h.Reset(1 << 40)
	if h.Len() != 0 || h.Full() {
		t.Fatalf("Reset: len %d full %v", h.Len(), h.Full())
	}
	if got := Best([]int{3, 1, 2}, 1<<40, func(a, b int) int { return cmp.Compare(a, b) }); !slices.Equal(got, []int{1, 2, 3}) {
		t.Fatalf("Best with a huge k = %v", got)
	}
}

package retrieve

import (
	"runtime"
	"slices"
	"strings"
	"testing"
)

// A huge k (--top-k, serve's options.top_k) must cost memory in proportion to the
// index, not to k: k = 10^9 on a 139-chunk index once reserved 8 GB. The check counts
// the bytes allocated (runtime.MemStats.TotalAlloc), which is deterministic for a
// given code path, unlike RSS.
func TestHugeKAllocatesByIndexSize(t *testing.T) {
	chunks := synthChunks(300)
	ix := buildTest(t, chunks)
	q := strings.Join(strings.Split(chunks[17].Text, "\n")[:8], "\n")
	const huge = 10_000_000 // 80 MB of float64s if reserved up front
	allocated := func(f func()) uint64 {
		var a, b runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&a)
		f()
		runtime.ReadMemStats(&b)
		return b.TotalAlloc - a.TotalAlloc
	}
	for _, prune := range []bool{true, false} {
		var got []Hit
		n := allocated(func() {
			var err error
			if got, _, err = ix.search(q, huge, nil, prune); err != nil {
				t.Fatal(err)
			}
		})
		want, _, err := ix.search(q, len(chunks), nil, prune)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("prune %v: k=%d gives other hits than k=len(chunks)", prune, huge)
		}
		if n > 8<<20 {
			t.Errorf("BM25 search (prune %v) with k=%d allocated %d bytes over %d chunks", prune, huge, n, len(chunks))
		}
	}
	var dense []Hit
	n := allocated(func() {
		var err error
		if dense, err = ix.searchDense(q, huge, nil, KeepTail); err != nil {
			t.Fatal(err)
		}
	})
	if len(dense) != len(chunks) {
		t.Errorf("dense search with k=%d: %d hits, want %d", huge, len(dense), len(chunks))
	}
	if n > 8<<20 {
		t.Errorf("dense search with k=%d allocated %d bytes over %d chunks", huge, n, len(chunks))
	}
}

package parallel

import (
	"sync"
	"testing"
)

// TestRanges: the ranges cover [0, n) exactly once, in contiguous pieces, for any
// number of workers (clamped), and f runs once over [0, n) for one worker or none.
func TestRanges(t *testing.T) {
	for _, n := range []int{0, 1, 2, 7, 100, 1001} {
		for _, w := range []int{-1, 0, 1, 2, 3, 8, 5000} {
			var mu sync.Mutex
			seen := make([]int, n)
			calls := 0
			Ranges(n, w, func(lo, hi int) {
				mu.Lock()
				defer mu.Unlock()
				calls++
				if lo > hi || lo < 0 || hi > n {
					t.Errorf("n %d, workers %d: range [%d, %d)", n, w, lo, hi)
					return
				}
				for i := lo; i < hi; i++ {
					seen[i]++
				}
			})
			for i, c := range seen {
				if c != 1 {
					t.Fatalf("n %d, workers %d: item %d covered %d times", n, w, i, c)
				}
			}
			if want := max(1, min(w, n)); calls != want {
				t.Errorf("n %d, workers %d: %d calls, want %d", n, w, calls, want)
			}
		}
	}
}

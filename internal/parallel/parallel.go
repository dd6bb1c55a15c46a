// Package parallel splits a loop over n items into contiguous ranges run on
// goroutines of their own, for work whose result must not depend on the split: each
// range writes only what it owns, so the outcome is that of one loop.
package parallel

import "sync"

// Ranges calls f on workers contiguous ranges [lo, hi) that cover [0, n) in order
// (range k is [k·n/workers, (k+1)·n/workers)), each on its own goroutine, and returns
// when every call has. workers is clamped to [1, n]; with one worker (or n ≤ 1) f runs
// once, on the calling goroutine, over [0, n).
func Ranges(n, workers int, f func(lo, hi int)) {
	workers = min(workers, n)
	if workers <= 1 {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	for k := range workers {
		lo, hi := k*n/workers, (k+1)*n/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(lo, hi)
		}()
	}
	wg.Wait()
}

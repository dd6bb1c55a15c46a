package retrieve

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/internal/racetest"
)

// TestPruningIsExactSharedPool: indexes of different sizes searched concurrently
// (accumulators shared process-wide, sizes shrinking and growing), with filters
// rejecting most or all chunks (the k-th score is then never found) and k beyond the
// matches: pruned equals exhaustive. Under -race it runs one round of one k.
func TestPruningIsExactSharedPool(t *testing.T) {
	rounds, ks := 3, []int{1, 7, 40, 5000}
	if racetest.Enabled {
		rounds, ks = 1, []int{7}
	}
	all := synthChunks(700)
	var ixs []*Index
	for _, n := range []int{700, 5, 130, 64, 65, 1} {
		ixs = append(ixs, buildTest(t, all[:n]))
	}
	filters := []func(*chunker.Chunk) bool{
		nil,
		func(c *chunker.Chunk) bool { return c.Ordinal%5 == 3 },
		func(c *chunker.Chunk) bool { return len(c.Text)%13 == 0 },
		func(c *chunker.Chunk) bool { return false },
	}
	var queries []string
	for i := range 6 {
		c := all[(i*97)%len(all)]
		lines := strings.Split(c.Text, "\n")
		queries = append(queries, lines[min(len(lines)-1, 1+i)], c.Text, c.Text+"\n"+all[(i*97+11)%len(all)].Text)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	narrowed, pruned := 0, 0
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				for xi := range ixs {
					ix := ixs[(xi+g+r)%len(ixs)]
					for fi, f := range filters {
						for _, k := range ks {
							for qi, q := range queries {
								got, st, err := ix.search(q, k, &chunkFilter{f: f}, true)
								mu.Lock()
								narrowed += min(st.narrowed, 1)
								if st.pruned {
									pruned++
								}
								mu.Unlock()
								if err != nil {
									t.Error(err)
									return
								}
								want, _, _ := ix.search(q, k, &chunkFilter{f: f}, false)
								if !slices.Equal(got, want) {
									t.Errorf("index %d filter %d k %d query %d: pruned %v\nexhaustive %v", xi, fi, k, qi, got, want)
									return
								}
							}
						}
					}
				}
			}
		}()
	}
	wg.Wait()
	if narrowed == 0 || pruned == 0 {
		t.Errorf("narrowed %d, pruned %d searches: the test exercises neither", narrowed, pruned)
	}
	t.Logf("narrowed %d, pruned %d", narrowed, pruned)
}

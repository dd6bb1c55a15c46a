package retrieve

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/repoctx/repoctx/chunker"
)

// TestSearchBatchSameAsSearch: every query of a batch gets what Search gives it, hit
// for hit, whether the shared dense scan runs in one goroutine or its rows are split
// over several, with filters, candidates, the three modes, empty queries and k = 0.
func TestSearchBatchSameAsSearch(t *testing.T) {
	chunks := synthChunks(300)
	ix := buildTest(t, chunks)
	ctx := context.Background()
	pre := func(path, lang string) Verdict {
		switch {
		case strings.HasSuffix(path, "3.kt"):
			return Reject
		case strings.HasSuffix(path, "5.kt"):
			return Accept
		}
		return AskFilter
	}
	odd := func(c *chunker.Chunk) bool { return len(c.Text)%2 == 1 }
	var qs []Query
	for i := range 10 {
		text := chunks[i*29].Text[:90]
		qs = append(qs, Query{Text: text, K: 7, Mode: Hybrid, Keep: KeepTail})
		switch i % 5 {
		case 1:
			qs[i].Prefilter, qs[i].Filter = pre, odd
		case 2:
			qs[i].Weights = Weights{DenseCandidates: 40}
		case 3:
			qs[i].Weights, qs[i].Filter = Weights{BM25: 0.5, Dense: 0.5, Depth: 25}, odd
		case 4:
			qs[i].Mode = []Mode{BM25, Dense}[i%2]
		}
	}
	qs = append(qs, Query{Text: "", K: 5, Mode: Hybrid}, Query{Text: chunks[7].Text[:50], K: 0, Mode: Hybrid},
		Query{Text: chunks[8].Text[:50], K: 300, Mode: Hybrid}, Query{Text: chunks[9].Text[:50], K: 4, Mode: Hybrid, Weights: Weights{Dense: 1}})
	defer func(n, p int) { minSharedRows = n; runtime.GOMAXPROCS(p) }(minSharedRows, runtime.GOMAXPROCS(0))
	for _, split := range []struct{ rows, procs int }{{1 << 30, 2}, {7, 4}, {100, 3}} {
		minSharedRows = split.rows
		runtime.GOMAXPROCS(split.procs)
		got, errs := ix.SearchBatch(ctx, qs)
		for i, q := range qs {
			want, err := ix.Search(ctx, q)
			if err != nil || errs[i] != nil {
				t.Fatalf("split %+v query %d: error %v, Search's %v", split, i, errs[i], err)
			}
			sameFused(t, fmt.Sprintf("split %+v query %d", split, i), got[i], want)
		}
		// One query alone takes the single search's path.
		one, errs := ix.SearchBatch(ctx, qs[:1])
		want, _ := ix.Search(ctx, qs[0])
		if errs[0] != nil {
			t.Fatal(errs[0])
		}
		sameFused(t, "alone", one[0], want)
	}
}

// TestSearchBatchErrors: a done context fails every query; a closed index each
// query with ErrClosed.
func TestSearchBatchErrors(t *testing.T) {
	chunks := synthChunks(50)
	ix := buildTest(t, chunks)
	qs := []Query{{Text: chunks[1].Text, K: 3, Mode: Hybrid}, {Text: chunks[2].Text, K: 3, Mode: Hybrid}, {Text: chunks[3].Text, K: 3, Mode: BM25}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, errs := ix.SearchBatch(ctx, qs)
	for i := range qs {
		if !errors.Is(errs[i], context.Canceled) || res[i] != nil {
			t.Errorf("cancelled: query %d: %v, %d hits", i, errs[i], len(res[i]))
		}
	}
	ix.Close()
	res, errs = ix.SearchBatch(context.Background(), qs)
	for i := range qs {
		if !errors.Is(errs[i], ErrClosed) || res[i] != nil {
			t.Errorf("closed: query %d: %v, %d hits", i, errs[i], len(res[i]))
		}
	}
}

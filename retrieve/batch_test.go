package retrieve

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
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

// boomEmbedder is an Embedder that fails on a text holding "BOOM" and panics on one
// holding "PANIC".
type boomEmbedder struct{ Embedder }

func (b boomEmbedder) Embed(texts []string, keep KeepEnd) ([][]float32, []bool, error) {
	for _, t := range texts {
		if strings.Contains(t, "PANIC") {
			panic("embedder panic")
		}
		if strings.Contains(t, "BOOM") {
			return nil, nil, errors.New("boom")
		}
	}
	return b.Embedder.Embed(texts, keep)
}

// TestSearchBatchErrorsPerQuery: an error or a panic of one query's embedding is that
// query's error alone, the other queries' results are Search's; a panic in the shared
// scan is an error of every query in it, never results without one.
func TestSearchBatchErrorsPerQuery(t *testing.T) {
	chunks := synthChunks(300)
	d, err := LSAVectors(context.Background(), chunks, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	d.Embedder = boomEmbedder{d.Embedder}
	ix, err := New(chunks, d)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	ctx := context.Background()
	defer func(n int) { minSharedRows = n }(minSharedRows)
	for _, rows := range []int{0, 7, 1 << 30} {
		minSharedRows = rows
		qs := []Query{{Text: chunks[3].Text[:80], K: 5, Mode: Hybrid}, {Text: chunks[4].Text[:80] + " BOOM", K: 5, Mode: Hybrid},
			{Text: chunks[5].Text[:80] + " PANIC", K: 5, Mode: Hybrid}, {Text: chunks[6].Text[:80], K: 5, Mode: Hybrid}}
		got, errs := ix.SearchBatch(ctx, qs)
		for i, q := range qs {
			want, werr := ix.searchHybrid(q.Text, q.K, nil, q.Weights, q.Keep, false)
			switch i {
			case 1:
				if errs[i] == nil || !strings.Contains(errs[i].Error(), "boom") || werr == nil {
					t.Errorf("rows %d: BOOM query: error %v (Search's %v)", rows, errs[i], werr)
				}
			case 2:
				if errs[i] == nil || !strings.Contains(errs[i].Error(), "embedder panic") || werr == nil {
					t.Errorf("rows %d: PANIC query: error %v (Search's %v)", rows, errs[i], werr)
				}
			default:
				if errs[i] != nil || werr != nil {
					t.Fatalf("rows %d: query %d: error %v, Search's %v", rows, i, errs[i], werr)
				}
				sameFused(t, fmt.Sprintf("rows %d query %d", rows, i), got[i], want)
			}
		}
		// A filter that panics in the scan (no BM25 search asks it first: BM25 weighs 0).
		bad := func(*chunker.Chunk) bool { panic("filter panic") }
		_, errs = ix.SearchBatch(ctx, []Query{{Text: chunks[7].Text[:80], K: 5, Mode: Hybrid, Filter: bad, Weights: Weights{Dense: 1}}, qs[0]})
		for i, err := range errs {
			if err == nil || !strings.Contains(err.Error(), "filter panic") {
				t.Errorf("rows %d: panicking filter, query %d: error %v", rows, i, err)
			}
		}
	}
}

// TestSearchBatchFilterOnce: in a batch whose shared dense scan is split over several
// parts, each hybrid query's Prefilter and Filter are asked at most once per chunk
// over its BM25 stage and the shared scan together (their verdicts are shared), and
// the hits are Search's.
func TestSearchBatchFilterOnce(t *testing.T) {
	chunks := synthChunks(300)
	ix := buildTest(t, chunks)
	ctx := context.Background()
	defer func(n, p int) { minSharedRows = n; runtime.GOMAXPROCS(p) }(minSharedRows, runtime.GOMAXPROCS(0))
	minSharedRows, _ = 16, runtime.GOMAXPROCS(3)
	type counts struct {
		mu   sync.Mutex
		filt map[string]int // by chunk ID
	}
	var qs []Query
	var cs []*counts
	for i := range 3 {
		c := &counts{filt: map[string]int{}}
		cs = append(cs, c)
		qs = append(qs, Query{Text: chunks[i*53].Text[:80], K: 9, Mode: Hybrid, Keep: KeepTail,
			Prefilter: func(path, lang string) Verdict {
				return Verdict(len(path) % 3)
			},
			Filter: func(ch *chunker.Chunk) bool {
				c.mu.Lock()
				defer c.mu.Unlock()
				c.filt[ch.ID]++
				return ch.Ordinal%3 != 1
			}})
	}
	got, errs := ix.SearchBatch(ctx, qs)
	for i, c := range cs {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		for id, n := range c.filt {
			if n > 1 {
				t.Errorf("query %d: Filter asked %d times about chunk %s", i, n, id)
			}
		}
		if len(c.filt) == 0 {
			t.Errorf("query %d: Filter never asked", i)
		}
		q := qs[i]
		q.Filter = func(ch *chunker.Chunk) bool { return ch.Ordinal%3 != 1 }
		want, err := ix.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		sameFused(t, fmt.Sprintf("query %d", i), got[i], want)
	}
}

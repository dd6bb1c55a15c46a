package retrieve

import (
	"context"
	"fmt"
	"math"
	"sort"
	"testing"

	"github.com/repoctx/repoctx/chunker"
)

// refFuse fuses two hit lists by weighted RRF as documented on SearchHybrid,
// independently of its implementation.
func refFuse(ix *Index, bm, dn []Hit, w Weights, k int) []FusedHit {
	m := map[string]*FusedHit{}
	add := func(h Hit, weight float64, dense bool) {
		f := m[h.ID]
		if f == nil {
			f = &FusedHit{ID: h.ID}
			m[h.ID] = f
		}
		f.Score += weight / (w.K + float64(h.Rank))
		if dense {
			f.DenseRank, f.DenseScore = h.Rank, h.Score
		} else {
			f.BM25Rank, f.BM25Score = h.Rank, h.Score
		}
	}
	for _, h := range bm {
		add(h, w.BM25, false)
	}
	for _, h := range dn {
		add(h, w.Dense, true)
	}
	var out []FusedHit
	for _, f := range m {
		out = append(out, *f)
	}
	order := map[string]int{}
	for i, c := range ix.Chunks() {
		order[c.ID] = i
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].Score != out[b].Score {
			return out[a].Score > out[b].Score
		}
		if out[a].BM25Score != out[b].BM25Score {
			return out[a].BM25Score > out[b].BM25Score
		}
		return order[out[a].ID] < order[out[b].ID]
	})
	if len(out) > k {
		out = out[:k]
	}
	for i := range out {
		out[i].Rank = i + 1
	}
	return out
}

// sameFused fails the test when got and want differ in any hit's ID, ranks or
// scores (the fused score to 1e-12).
func sameFused(t *testing.T, what string, got, want []FusedHit) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d hits, want %d", what, len(got), len(want))
	}
	for i := range got {
		g, h := got[i], want[i]
		if g.ID != h.ID || g.Rank != h.Rank || g.BM25Rank != h.BM25Rank || g.DenseRank != h.DenseRank ||
			math.Abs(g.Score-h.Score) > 1e-12 || g.BM25Score != h.BM25Score || g.DenseScore != h.DenseScore {
			t.Fatalf("%s hit %d = %+v, want %+v", what, i, g, h)
		}
	}
}

// refDenseTies returns the depth best chunks of a dense search, ties of the cosine
// similarity broken by the BM25 scores of bm (then by chunk order), as documented
// on Search.
func refDenseTies(t *testing.T, ix *Index, query string, bm []Hit, depth int) []Hit {
	all, err := ix.searchDense(query, len(ix.Chunks()), nil, KeepTail)
	if err != nil {
		t.Fatal(err)
	}
	score := map[string]float64{}
	for _, h := range bm {
		score[h.ID] = h.Score
	}
	sort.SliceStable(all, func(a, b int) bool {
		if all[a].Score != all[b].Score {
			return all[a].Score > all[b].Score
		}
		return score[all[a].ID] > score[all[b].ID]
	})
	all = all[:min(depth, len(all))]
	for i := range all {
		all[i].Rank = i + 1
	}
	return all
}

// TestSearchHybridTiesGoToBM25: among hundreds of near-identical tiny functions (the
// same vector for LSA, whose vocabulary leaves out their one-off names) the exact
// BM25 match ranks first, not after every look-alike that comes earlier in the file.
func TestSearchHybridTiesGoToBM25(t *testing.T) {
	var chunks []chunker.Chunk
	for i := range 400 {
		chunks = append(chunks, chunk("src/Handlers.kt", i, chunker.KindFunction, fmt.Sprint("onEvent", i), nil,
			fmt.Sprintf("fun onEvent%d(event: Event) = dispatch(event)", i)))
	}
	chunks = append(chunks, testChunks()...)
	ix := buildTest(t, chunks)
	for _, want := range []int{3, 237, 399} {
		hits, err := ix.Search(context.Background(), Query{Text: fmt.Sprintf("result = onEvent%d(event)", want), K: 20})
		if err != nil {
			t.Fatal(err)
		}
		id := chunks[want].ID
		if len(hits) == 0 || hits[0].ID != id {
			rank := -1
			for _, h := range hits {
				if h.ID == id {
					rank = h.Rank
				}
			}
			t.Errorf("onEvent%d: rank %d in the top 20, want 1 (first hits %v)", want, rank, hits[:min(3, len(hits))])
		}
	}
}

func TestSearchHybridIsWeightedRRF(t *testing.T) {
	chunks := synthChunks(300)
	ix := buildTest(t, chunks)
	for _, w := range []Weights{
		{},
		{BM25: 0.5, Dense: 0.5, K: 10, Depth: 20},
		{BM25: 1},
		{Dense: 1, Depth: 5},
	} {
		full := w.withDefaults(7)
		if w == (Weights{}) && (full.BM25 != 0.2 || full.Dense != 0.8 || full.K != 60 || full.Depth != DefaultFusionDepth) {
			t.Fatalf("defaults = %+v", full)
		}
		for q := range 8 {
			query := chunks[q*31].Text[:120]
			got, err := ix.searchHybrid(query, 7, nil, w, KeepTail, false)
			if err != nil {
				t.Fatal(err)
			}
			var bm, dn []Hit
			if full.BM25 > 0 {
				bm, _ = ix.searchBM25(query, full.Depth, nil)
			}
			if full.Dense > 0 {
				dn = refDenseTies(t, ix, query, bm, full.Depth)
			}
			sameFused(t, fmt.Sprintf("%+v q%d", w, q), got, refFuse(ix, bm, dn, full, 7))
			if full.BM25 == 0 && len(got) > 0 && got[0].BM25Rank != 0 {
				t.Errorf("BM25 left out but ranked: %+v", got[0])
			}
		}
	}
}

// TestSearchHybridRanksRightChunkFirst: the BM25 test's queries with BM25 + LSA.
func TestSearchHybridRanksRightChunkFirst(t *testing.T) {
	ix := buildTest(t, testChunks())
	tests := []struct{ query, want string }{
		{"evict the eldest entry", "src/cache/BoundedCache.kt#1"},
		{"val r = parseHTTPResponse(bytes)", "src/http/Client.kt#0"},
		{"load settings from environment variables APP_", "config/settings.py#0"},
		{"n := utf8Len(name)", "util/strings.py#0"},
		{"slugify(post.title)", "util/strings.py#1"},
		{"val obj = JsonReader(r).readObject()", "src/json/JsonReader.kt#0"},
		{"withTimeout { transport.post(url) }", "src/http/Client.kt#1"},
	}
	for _, tc := range tests {
		hits, err := ix.searchHybrid(tc.query, 3, nil, Weights{}, KeepTail, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 || hits[0].ID != tc.want {
			t.Errorf("top hit for %q = %+v, want %s", tc.query, hits, tc.want)
		}
	}
}

// TestSearchHybridFilter: the filter applies to both retrievers and is asked at most once
// per chunk.
func TestSearchHybridFilter(t *testing.T) {
	chunks := synthChunks(200)
	ix := buildTest(t, chunks)
	calls := map[string]int{}
	even := func(c *chunker.Chunk) bool { calls[c.ID]++; return c.Ordinal%2 == 0 }
	hits, err := ix.searchHybrid(chunks[5].Text, 10, &chunkFilter{f: even}, Weights{}, KeepHead, false)
	if err != nil || len(hits) != 10 {
		t.Fatalf("%v %v", hits, err)
	}
	for _, h := range hits {
		if c, _ := ix.Chunk(h.ID); c.Ordinal%2 != 0 {
			t.Errorf("filtered-out chunk %s returned", h.ID)
		}
	}
	for id, n := range calls {
		if n > 1 {
			t.Errorf("filter asked %d times about %s", n, id)
		}
	}
	if h, err := ix.searchHybrid("x", 0, nil, Weights{}, KeepHead, false); h != nil || err != nil {
		t.Errorf("k=0: %v %v", h, err)
	}
}

// TestConcurrentHybrid runs hybrid searches from several goroutines and compares them
// with sequential results.
func TestConcurrentHybrid(t *testing.T) {
	chunks := synthChunks(300)
	ix := buildTest(t, chunks)
	ref := buildTest(t, chunks)
	var err error
	queries := make([]string, 6)
	want := make([][]FusedHit, len(queries))
	for i := range queries {
		queries[i] = chunks[i*41].Text[:100]
		if want[i], err = ref.searchHybrid(queries[i], 5, nil, Weights{}, KeepTail, false); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan struct{})
	for g := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 20 {
				q := (g + i) % len(queries)
				got, err := ix.searchHybrid(queries[q], 5, nil, Weights{}, KeepTail, false)
				if err != nil {
					t.Error(err)
					return
				}
				for j := range got {
					if got[j] != want[q][j] {
						t.Errorf("goroutine %d query %d: %+v, want %+v", g, q, got[j], want[q][j])
						return
					}
				}
			}
		}()
	}
	for range 4 {
		<-done
	}
}

// TestSearchHybridDenseCandidates: with Weights.DenseCandidates below the index's size
// the dense list is the reference dense ranking of the chunks of the BM25 search of
// depth max(DenseCandidates, Depth) alone, the BM25 list is unchanged, and they fuse
// as documented; at or above the index's size the search is the exact one.
func TestSearchHybridDenseCandidates(t *testing.T) {
	chunks := synthChunks(300)
	ix := buildTest(t, chunks)
	for _, w := range []Weights{
		{DenseCandidates: 40},
		{DenseCandidates: 10}, // below the depth: the depth's chunks
		{BM25: 0.5, Dense: 0.5, Depth: 20, DenseCandidates: 100},
		{Dense: 1, DenseCandidates: 60},   // BM25 out of the fusion, still the candidates
		{DenseCandidates: 300},            // the index's size: exact
		{DenseCandidates: 10, Depth: 300}, // below the size, but the depth is not: exact
		{DenseCandidates: 5000},
	} {
		full := w.withDefaults(7)
		m := max(full.DenseCandidates, full.Depth)
		for q := range 8 {
			query := chunks[q*31].Text[:120]
			got, err := ix.searchHybrid(query, 7, nil, w, KeepTail, false)
			if err != nil {
				t.Fatal(err)
			}
			all, _ := ix.searchBM25(query, m, nil)
			var bm, dn []Hit
			if full.BM25 > 0 {
				bm, _ = ix.searchBM25(query, full.Depth, nil)
			}
			if m >= len(chunks) {
				dn = refDenseTies(t, ix, query, bm, full.Depth)
			} else {
				in := map[string]bool{}
				for _, h := range all {
					in[h.ID] = true
				}
				for _, h := range refDenseTies(t, ix, query, bm, len(chunks)) {
					if in[h.ID] && len(dn) < full.Depth {
						h.Rank = len(dn) + 1
						dn = append(dn, h)
					}
				}
			}
			sameFused(t, fmt.Sprintf("%+v q%d", w, q), got, refFuse(ix, bm, dn, full, 7))
		}
	}
	// A query no chunk shares a term with: no BM25 candidates, so no dense hits.
	got, err := ix.searchHybrid("zzqqxxunseen", 7, nil, Weights{DenseCandidates: 10}, KeepTail, false)
	if err != nil || len(got) != 0 {
		t.Errorf("no candidates: %v, %v; want no hits", got, err)
	}
}

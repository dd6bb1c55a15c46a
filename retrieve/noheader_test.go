package retrieve

import (
	"context"
	"testing"
)

// TestSearchNoHeader checks that Query.NoHeader leaves the header field out of the
// BM25 score: "capacity" is in the header of BoundedCache.kt#1 (its class signature)
// and in the text of BoundedCache.kt#0 only.
func TestSearchNoHeader(t *testing.T) {
	ix := buildTest(t, testChunks())
	ids := func(noHeader bool) map[string]bool {
		hits, err := ix.Search(context.Background(), Query{Text: "capacity", K: 10, Mode: BM25, NoHeader: noHeader})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, h := range hits {
			out[h.ID] = true
		}
		return out
	}
	with, without := ids(false), ids(true)
	if !with["src/cache/BoundedCache.kt#0"] || !with["src/cache/BoundedCache.kt#1"] {
		t.Errorf("with headers: hits %v, want BoundedCache.kt#0 and #1", with)
	}
	if !without["src/cache/BoundedCache.kt#0"] || without["src/cache/BoundedCache.kt#1"] {
		t.Errorf("without headers: hits %v, want BoundedCache.kt#0 only", without)
	}
}

package index

import (
	"context"
	"crypto/sha256"
	"fmt"
	"reflect"
	"runtime"
	"testing"

	"github.com/repoctx/repoctx/retrieve"
	"github.com/repoctx/repoctx/snapshot"
)

// TestViewParallelSame: a view big enough for its stored vectors to be read on
// several goroutines (and its symbol table made beside them) has the same chunks,
// dense and hybrid search results (scores included) and symbols at GOMAXPROCS 1 as
// at 4, from a new store and from the one the first view filled.
func TestViewParallelSame(t *testing.T) {
	files := map[string]*snapshot.MemFile{}
	for i := range 400 {
		text := fmt.Sprintf("package p%d\n\nclass Widget%d(val size: Int) {\n    fun grow%d(by: Int): Int = size + by * %d\n    fun shrink%d(by: Int): Int = size - by\n}\n\nfun make%d(): Widget%d = Widget%d(%d)\n",
			i%7, i, i, i, i, i, i, i, i)
		files[fmt.Sprintf("src/p%d/W%d.kt", i%7, i)] = &snapshot.MemFile{Data: []byte(text)}
	}
	for _, f := range files {
		f.Sum = sha256.Sum256(f.Data)
	}
	snap := snapshot.NewMem("widgets", files)
	type result struct {
		ids  []string
		hits [][]retrieve.FusedHit // dense and hybrid searches: their scores follow the vectors' bits
		syms any
	}
	view := func(procs int, cache string) (r result) {
		old := runtime.GOMAXPROCS(procs)
		defer runtime.GOMAXPROCS(old)
		v, err := openView(context.Background(), snap, cache, "", DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		defer v.Close()
		for _, c := range v.Retriever().Chunks() {
			r.ids = append(r.ids, c.ID)
		}
		if len(r.ids) < 1100 {
			t.Fatalf("%d chunks: too few for the parallel path", len(r.ids))
		}
		for _, q := range []string{"grow widget size", "shrink by", "make Widget17"} {
			for _, m := range []retrieve.Mode{retrieve.Dense, retrieve.Hybrid} {
				hits, err := v.Retriever().Search(context.Background(), retrieve.Query{Text: q, K: 20, Mode: m, Weights: retrieve.DefaultWeights()})
				if err != nil {
					t.Fatal(err)
				}
				r.hits = append(r.hits, hits)
			}
		}
		r.syms = v.Symbols()
		return r
	}
	cache1, cache4 := t.TempDir(), t.TempDir()
	want := view(1, cache1)
	for _, c := range []struct {
		procs int
		cache string
	}{{4, cache4}, {4, cache4}, {4, cache1}, {1, cache4}} {
		if got := view(c.procs, c.cache); !reflect.DeepEqual(got, want) {
			t.Errorf("GOMAXPROCS %d: chunks, search results or symbols differ", c.procs)
		}
	}
}

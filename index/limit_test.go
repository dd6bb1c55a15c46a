package index

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/retrieve"
	"github.com/repoctx/repoctx/store"
)

// TestParseLimitNotCached: files whose parse runs over its CPU time limit (forced: a
// nanosecond) are windowed with chunker.LimitParseCPU, counted in Stats.Limited, and
// nothing made from them is cached: the same index and a new process chunk them
// again, [Index.Update] too, and a later run under the default limit gets the chunks
// (and the fitted model) of a fresh cache.
func TestParseLimitNotCached(t *testing.T) {
	ctx := context.Background()
	cache := t.TempDir()
	snap := writeRepo(t, filepath.Join(t.TempDir(), "r-1"), storeV1)
	limited := Options{Symbols: true, Chunk: chunker.Options{ParseCPULimit: time.Nanosecond}}
	// One index held across two views (one process), then a new store and index.
	st := store.Open(cache)
	ix, err := Open(st, "o/r", limited)
	if err != nil {
		t.Fatal(err)
	}
	check := func(run int, v *View) {
		t.Helper()
		if s := v.Stats(); s.Chunked != 3 || s.Reused != 0 || s.Limited != 3 || s.ParseErrors != 3 {
			t.Errorf("run %d under 1ns: chunked %d, reused %d, limited %d, parse errors %d; want 3, 0, 3, 3",
				run, s.Chunked, s.Reused, s.Limited, s.ParseErrors)
		}
		for _, c := range v.Retriever().Chunks() {
			if c.Limit != chunker.LimitParseCPU || !c.Fallback || !c.ParseError {
				t.Fatalf("run %d: chunk %s: limit %q, fallback %v, parse error %v", run, c.ID, c.Limit, c.Fallback, c.ParseError)
			}
		}
	}
	for run := range 2 {
		v, err := ix.View(ctx, snap)
		if err != nil {
			t.Fatal(err)
		}
		check(run, v)
		v.Close()
	}
	for run := range 2 {
		us, err := ix.Update(ctx, snap)
		if err != nil {
			t.Fatal(err)
		}
		if us.Reused != 0 || us.Limited != 3 {
			t.Errorf("update %d under 1ns: reused %d, limited %d; want 0, 3", run, us.Reused, us.Limited)
		}
	}
	ix.Close()
	st.Close()
	v, err := openView(ctx, snap, cache, "o/r", limited)
	if err != nil {
		t.Fatal(err)
	}
	check(2, v)
	v.Close()

	def := limited
	def.Chunk = chunker.Options{}
	open := func(cache string) *View {
		t.Helper()
		v, err := openView(ctx, snap, cache, "o/r", def)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { v.Close() })
		return v
	}
	got := open(cache)
	if s := got.Stats(); s.Chunked != 3 || s.Limited != 0 || s.ParseErrors != 0 {
		t.Errorf("default limit after limited runs: %+v, want 3 files chunked, none limited", s)
	}
	want := open(t.TempDir())
	if !reflect.DeepEqual(got.Retriever().Chunks(), want.Retriever().Chunks()) {
		t.Errorf("chunks differ from a fresh cache's")
	}
	q := retrieve.Query{Text: "def one(self): return", K: 4}
	h1, _ := got.Retriever().Search(ctx, q)
	h2, _ := want.Retriever().Search(ctx, q)
	if !reflect.DeepEqual(h1, h2) {
		t.Errorf("hybrid hits differ from a fresh cache's: %v vs %v", h1, h2)
	}
	if s := open(cache).Stats(); s.Chunked != 0 || s.Reused != 3 || s.Built {
		t.Errorf("default limit, new process: %+v, want every file and the model from the store", s)
	}
}

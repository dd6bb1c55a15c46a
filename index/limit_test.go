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

// TestUseAfterClose: an index refuses views and updates after Close, and a store
// writes nothing after its Close (its locks are released: another process may be
// collecting the folder), saying so with store.ErrClosed.
func TestUseAfterClose(t *testing.T) {
	ctx := context.Background()
	cache := t.TempDir()
	snap := writeRepo(t, filepath.Join(t.TempDir(), "r-1"), storeV1)
	st := store.Open(cache)
	ix, err := Open(st, "o/r", Options{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := ix.View(ctx, snap)
	if err != nil {
		t.Fatal(err)
	}
	ix.Close()
	if _, err := ix.View(ctx, snap); err != ErrClosed {
		t.Errorf("View after Close: %v, want ErrClosed", err)
	}
	if _, err := ix.Update(ctx, snap); err != ErrClosed {
		t.Errorf("Update after Close: %v, want ErrClosed", err)
	}
	if len(v.Retriever().Chunks()) == 0 {
		t.Error("a view made before Close lost its chunks")
	}
	v.Close()
	st.Close()
	rs := st.Records("o/r")
	rs.Put(store.Key{Kind: store.KindChunks}, []byte("late"))
	if n, err := rs.Flush(); n != 0 || err != nil {
		t.Errorf("Flush after a Put on a closed store: %d, %v; want nothing pending", n, err)
	}
	segs, _ := filepath.Glob(filepath.Join(cache, store.DirName, "repos", "*", "*.seg"))
	before := len(segs)
	st2 := store.Open(cache)
	rs2 := st2.Records("o/r")
	rs2.Put(store.Key{Kind: store.KindChunks}, []byte("pending"))
	st2.Close()
	segs, _ = filepath.Glob(filepath.Join(cache, store.DirName, "repos", "*", "*.seg"))
	if len(segs) != before+1 {
		t.Errorf("Close wrote %d segments, want its pending one", len(segs)-before)
	}
}

package workspace

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/retrieve"
)

// TestParseLimitNotCached: files whose parse runs over its CPU time limit (forced: a
// nanosecond) are windowed with chunker.LimitParseCPU, counted in Stats.Limited, and
// nothing made from them is cached: the same process and a new one chunk them again,
// [Update] too, and a later run under the default limit gets the chunks (and the
// fitted model) of a fresh cache.
func TestParseLimitNotCached(t *testing.T) {
	cache := t.TempDir()
	snap := writeRepo(t, filepath.Join(t.TempDir(), "r-1"), storeV1)
	limited := Options{Repo: "o/r", CacheDir: cache, Symbols: true, Chunk: chunker.Options{ParseCPULimit: time.Nanosecond}}
	openWith := func(opts Options) *Repo {
		t.Helper()
		r, err := Open(context.Background(), snap, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return r
	}
	for run, fresh := range []bool{false, false, true} {
		if fresh {
			newProcess()
		}
		r := openWith(limited)
		if st := r.Stats(); st.Chunked != 3 || st.Reused != 0 || st.Limited != 3 || st.ParseErrors != 3 {
			t.Errorf("run %d under 1ns: chunked %d, reused %d, limited %d, parse errors %d; want 3, 0, 3, 3",
				run, st.Chunked, st.Reused, st.Limited, st.ParseErrors)
		}
		for _, c := range r.Index().Chunks() {
			if c.Limit != chunker.LimitParseCPU || !c.Fallback || !c.ParseError {
				t.Fatalf("run %d: chunk %s: limit %q, fallback %v, parse error %v", run, c.ID, c.Limit, c.Fallback, c.ParseError)
			}
		}
	}
	for run := range 2 {
		us, err := Update(context.Background(), snap, limited)
		if err != nil {
			t.Fatal(err)
		}
		if us.Reused != 0 || us.Limited != 3 {
			t.Errorf("update %d under 1ns: reused %d, limited %d; want 0, 3", run, us.Reused, us.Limited)
		}
	}
	newProcess()
	def := limited
	def.Chunk = chunker.Options{}
	got := openWith(def)
	if st := got.Stats(); st.Chunked != 3 || st.Limited != 0 || st.ParseErrors != 0 {
		t.Errorf("default limit after limited runs: %+v, want 3 files chunked, none limited", st)
	}
	def.CacheDir = t.TempDir()
	want := openWith(def)
	if !reflect.DeepEqual(got.Index().Chunks(), want.Index().Chunks()) {
		t.Errorf("chunks differ from a fresh cache's")
	}
	q := retrieve.Query{Text: "def one(self): return", K: 4}
	h1, _ := got.Index().Search(context.Background(), q)
	h2, _ := want.Index().Search(context.Background(), q)
	if !reflect.DeepEqual(h1, h2) {
		t.Errorf("hybrid hits differ from a fresh cache's: %v vs %v", h1, h2)
	}
	newProcess()
	def.CacheDir = cache
	if st := openWith(def).Stats(); st.Chunked != 0 || st.Reused != 3 || st.Built {
		t.Errorf("default limit, new process: %+v, want every file and the model from the store", st)
	}
}

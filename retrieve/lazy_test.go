package retrieve

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/repoctx/repoctx/chunker"
)

// lazyFiles returns view's files as LazyFiles whose records are their chunks in JSON,
// and a decoder of such records that counts its calls.
func lazyFiles(t testing.TB, view []chunker.Chunk) ([]LazyFile, ChunkDecoder, *atomic.Int64) {
	var files []LazyFile
	for i := 0; i < len(view); {
		j := i
		for j < len(view) && view[j].Path == view[i].Path {
			j++
		}
		rec, err := json.Marshal(view[i:j])
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, LazyFile{Path: view[i].Path, Lang: view[i].Lang, N: j - i, Record: rec})
		i = j
	}
	calls := new(atomic.Int64)
	decode := func(rec []byte) ([]chunker.Chunk, error) {
		calls.Add(1)
		var cs []chunker.Chunk
		err := json.Unmarshal(rec, &cs)
		return cs, err
	}
	return files, decode, calls
}

// lazyView returns imageView's index and chunks, its image, the image loaded
// lazily with lazyFiles (its files and the index), and the count of files decoded.
func lazyView(t testing.TB) (ix *Index, view []chunker.Chunk, img []byte, files []LazyFile, lz *Index, calls *atomic.Int64) {
	ix, view = imageView(t)
	img = alignedCopy(imageOf(t, ix))
	files, decode, calls := lazyFiles(t, view)
	lz, err := LoadImageLazy("v", files, decode, img, ix.dense.Embedder)
	if err != nil {
		t.Fatal(err)
	}
	return ix, view, img, files, lz, calls
}

// TestLazyEqualsImage checks that an index loaded with its chunks kept encoded ranks
// every query, in every mode, with and without a filter, as the index it was made of,
// gives the same chunks and file texts, and decodes only the files it needs.
func TestLazyEqualsImage(t *testing.T) {
	ix, view, img, files, lz, calls := lazyView(t)
	if calls.Load() != 0 {
		t.Fatalf("%d files decoded by loading", calls.Load())
	}
	if lz.Len() != len(view) {
		t.Fatalf("Len %d, want %d", lz.Len(), len(view))
	}
	ctx := context.Background()
	c := view[57]
	text := strings.Join(strings.Split(c.Text, "\n")[:3], "\n")
	odd := func(c *chunker.Chunk) bool { return c.Ordinal%2 == 1 }
	notFirst := func(path, lang string) Verdict {
		if path == view[0].Path {
			return Reject
		}
		return Accept
	}
	// Searches decode the files their filter asks about, none else (a hit's ID is
	// known without its chunk).
	for _, tc := range []struct {
		name      string
		q         Query
		decodeMin int64
	}{
		{"no filter", Query{Text: text, K: 5}, 0},
		{"a prefilter", Query{Text: text, K: 5, Prefilter: notFirst, Filter: odd}, 0},
		{"a filter", Query{Text: text, K: 5, Filter: odd}, 1},
	} {
		before := calls.Load()
		tc.q.Mode = BM25
		a, err1 := lz.Search(ctx, tc.q)
		b, err2 := ix.Search(ctx, tc.q)
		if err1 != nil || err2 != nil || !reflect.DeepEqual(a, b) || len(a) == 0 {
			t.Fatalf("%s: %v %v\nlazy %v\nindex %v", tc.name, err1, err2, a, b)
		}
		if n := calls.Load() - before; n < tc.decodeMin || n > tc.decodeMin*int64(len(files)-1) {
			t.Errorf("%s: a search decoded %d files of %d", tc.name, n, len(files))
		}
	}
	sameRankings(t, view, ix, lz)
	for i, c := range view {
		got, ok := lz.Chunk(c.ID)
		if !ok || !reflect.DeepEqual(*got, c) || lz.ChunkAt(i) != got {
			t.Fatalf("Chunk(%s): %v %+v", c.ID, ok, got)
		}
		if lz.FileText(c.Path) != ix.FileText(c.Path) {
			t.Fatalf("FileText(%s) differs", c.Path)
		}
	}
	if !reflect.DeepEqual(lz.Chunks(), ix.Chunks()) {
		t.Error("Chunks differ")
	}
	for _, id := range []string{"nope", chunker.ChunkID(view[0].Path, 10), chunker.ChunkID("other.kt", 0)} {
		if _, ok := lz.Chunk(id); ok {
			t.Errorf("Chunk(%s) found", id)
		}
	}
	// The lazy index writes the image the index loaded with its chunks does.
	eager, err := LoadImage("v", ptrs(view), img, ix.dense.Embedder)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(imageOf(t, lz), imageOf(t, eager)) {
		t.Error("the lazy index's image differs")
	}
	if n := calls.Load(); n > int64(len(files))*2 {
		t.Errorf("%d decodings of %d files", n, len(files))
	}
}

// TestLazyRefused checks that LoadImageLazy refuses files that do not fit the image,
// and that a record that does not decode gives chunks with an ID and a path.
func TestLazyRefused(t *testing.T) {
	ix, view := imageView(t)
	img := alignedCopy(imageOf(t, ix))
	files, decode, _ := lazyFiles(t, view)
	emb := ix.dense.Embedder
	change := func(f func([]LazyFile) []LazyFile) []LazyFile {
		return f(append([]LazyFile(nil), files...))
	}
	for name, fs := range map[string][]LazyFile{
		"a file less":          files[1:],
		"a path twice":         change(func(fs []LazyFile) []LazyFile { fs[1].Path = fs[0].Path; return fs }),
		"a file without chunk": change(func(fs []LazyFile) []LazyFile { fs[1].N, fs[2].N = 0, fs[2].N+fs[1].N; return fs }),
		"a chunk more":         change(func(fs []LazyFile) []LazyFile { fs[0].N++; return fs }),
	} {
		if _, err := LoadImageLazy("v", fs, decode, img, emb); !errors.Is(err, ErrImage) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Records of another file, a wrong count, or no JSON.
	bad := change(func(fs []LazyFile) []LazyFile {
		fs[0].Record, fs[1].Record, fs[2].Record = fs[3].Record, []byte("[{}]"), []byte("{")
		return fs
	})
	lz, err := LoadImageLazy("v", bad, decode, img, emb)
	if err != nil {
		t.Fatal(err)
	}
	for f := range 3 {
		for j := range bad[f].N {
			want := chunker.Chunk{ID: chunker.ChunkID(bad[f].Path, j), Path: bad[f].Path, Lang: bad[f].Lang, Ordinal: j}
			if c, ok := lz.Chunk(want.ID); !ok || !reflect.DeepEqual(*c, want) {
				t.Fatalf("file %d chunk %d: %v %+v", f, j, ok, c)
			}
		}
	}
	if c := lz.ChunkAt(bad[3].N + bad[0].N + bad[1].N + bad[2].N - 1); c.Text == "" {
		t.Error("a good file's chunk lost its text")
	}
}

// TestLazyConcurrent searches a lazy index from several goroutines at once (run with
// -race): a file first needed by two searches is decoded safely.
func TestLazyConcurrent(t *testing.T) {
	ix, view, _, _, lz, _ := lazyView(t)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for q := range 10 {
				c := view[(q*31+g*7)%len(view)]
				qq := Query{Text: c.Text[:min(len(c.Text), 200)], K: 8, Mode: Hybrid, Filter: func(c *chunker.Chunk) bool { return c.Ordinal != 3 }}
				a, err1 := lz.Search(context.Background(), qq)
				b, err2 := ix.Search(context.Background(), qq)
				if err1 != nil || err2 != nil || !reflect.DeepEqual(a, b) {
					t.Errorf("goroutine %d query %d: %v %v", g, q, err1, err2)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestPrefilter checks that a search with a Prefilter and a Filter returns what one
// with a Filter deciding the same does, in every mode, on an index made of a corpus
// and on one loaded lazily.
func TestPrefilter(t *testing.T) {
	ix, view, _, _, lz, _ := lazyView(t)
	pre := func(path, lang string) Verdict {
		switch {
		case strings.Contains(path, "module1"):
			return Reject
		case strings.Contains(path, "module2"):
			return AskFilter
		}
		return Accept
	}
	odd := func(c *chunker.Chunk) bool { return c.Ordinal%2 == 1 }
	both := func(c *chunker.Chunk) bool {
		switch pre(c.Path, c.Lang) {
		case Reject:
			return false
		case Accept:
			return true
		}
		return odd(c)
	}
	ctx := context.Background()
	for q := range 20 {
		text := view[(q*41)%len(view)].Text
		for _, mode := range []Mode{BM25, Dense, Hybrid} {
			want, err := ix.Search(ctx, Query{Text: text, K: 12, Mode: mode, Filter: both})
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range []*Index{ix, lz} {
				for _, f := range []func(*chunker.Chunk) bool{odd, nil} {
					w := want
					if f == nil {
						// Without a Filter, AskFilter keeps the chunk.
						w, err = ix.Search(ctx, Query{Text: text, K: 12, Mode: mode, Filter: func(c *chunker.Chunk) bool { return pre(c.Path, c.Lang) != Reject }})
						if err != nil {
							t.Fatal(err)
						}
					}
					got, err := x.Search(ctx, Query{Text: text, K: 12, Mode: mode, Prefilter: pre, Filter: f})
					if err != nil || !reflect.DeepEqual(got, w) {
						t.Fatalf("query %d %v, filter %v: %v\ngot  %v\nwant %v", q, mode, f != nil, err, got, w)
					}
				}
			}
		}
	}
}

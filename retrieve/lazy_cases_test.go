package retrieve

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/repoctx/repoctx/chunker"
)

// lazyCaseView returns chunks of files with 1, 2, ... chunks (several one-chunk files,
// the last file one chunk), in two languages.
func lazyCaseView() []chunker.Chunk {
	all := synthChunks(400)
	var view []chunker.Chunk
	src := 0
	sizes := []int{1, 3, 1, 1, 7, 2, 1, 10, 4, 1, 1, 5, 2, 9, 1, 6, 3, 1}
	for f := 0; src < 300; f++ {
		n := sizes[f%len(sizes)]
		lang := "kotlin"
		if f%3 == 1 {
			lang = "java"
		}
		path := fmt.Sprintf("src/f%d/File%d.kt", f%5, f)
		for j := range n {
			c := all[src]
			src++
			c.ID, c.Path, c.Ordinal, c.Lang = chunker.ChunkID(path, j), path, j, lang
			c.StartByte = j * 100
			c.EndByte = c.StartByte + len(c.Text)
			view = append(view, c)
		}
	}
	// The last file: one chunk.
	c := all[src]
	path := "zz/Last.kt"
	c.ID, c.Path, c.Ordinal, c.Lang = chunker.ChunkID(path, 0), path, 0, "kotlin"
	view = append(view, c)
	return view
}

// lazyCaseIndexes returns the corpus index, an eager image index and a lazy one of view.
func lazyCaseIndexes(t testing.TB, view []chunker.Chunk) (*Index, *Index, *Index, *atomic.Int64) {
	t.Helper()
	d, err := LSAVectors(context.Background(), view, 16, "")
	if err != nil {
		t.Fatal(err)
	}
	ix, err := New(view, d)
	if err != nil {
		t.Fatal(err)
	}
	img := alignedCopy(imageOf(t, ix))
	eager, err := LoadImage("v", ptrs(view), img, ix.dense.Embedder)
	if err != nil {
		t.Fatal(err)
	}
	files, decode, calls := lazyFiles(t, view)
	lz, err := LoadImageLazy("v", files, decode, img, ix.dense.Embedder)
	if err != nil {
		t.Fatal(err)
	}
	return ix, eager, lz, calls
}

func TestLazyEqualsEager(t *testing.T) {
	view := lazyCaseView()
	ix, eager, lz, _ := lazyCaseIndexes(t, view)
	ctx := context.Background()
	odd := func(c *chunker.Chunk) bool { return c.Ordinal%2 == 1 }
	pre := func(path, lang string) Verdict {
		switch {
		case lang == "java":
			return Reject
		case strings.Contains(path, "/f1/"):
			return AskFilter
		}
		return Accept
	}
	type fc struct {
		name string
		pre  func(path, lang string) Verdict
		f    func(*chunker.Chunk) bool
	}
	fcs := []fc{{"none", nil, nil}, {"filter", nil, odd}, {"prefilter", pre, nil}, {"both", pre, odd}}
	for q := 0; q < 30; q++ {
		c := view[(q*53)%len(view)]
		lines := strings.Split(c.Text, "\n")
		text := strings.Join(lines[:min(4, len(lines))], "\n")
		for _, mode := range []Mode{BM25, Dense, Hybrid} {
			for _, k := range []int{1, 7, 40, 1000} {
				for _, dc := range []int{0, 3, 60, 100000} {
					for _, f := range fcs {
						qq := Query{Text: text, K: k, Mode: mode, Prefilter: f.pre, Filter: f.f, Weights: Weights{DenseCandidates: dc}}
						want, err := ix.Search(ctx, qq)
						if err != nil {
							t.Fatal(err)
						}
						for name, x := range map[string]*Index{"eager": eager, "lazy": lz} {
							got, err := x.Search(ctx, qq)
							if err != nil || !reflect.DeepEqual(got, want) {
								t.Fatalf("%s q%d %v k%d dc%d %s: %v\ngot  %v\nwant %v", name, q, mode, k, dc, f.name, err, got, want)
							}
						}
					}
				}
			}
		}
	}
	// Chunks by ID and position, at file boundaries.
	for i := range view {
		c := &view[i]
		for name, x := range map[string]*Index{"eager": eager, "lazy": lz} {
			got, ok := x.Chunk(c.ID)
			if !ok || !reflect.DeepEqual(*got, *c) {
				t.Fatalf("%s Chunk(%s): %v", name, c.ID, ok)
			}
			if !reflect.DeepEqual(*x.ChunkAt(i), *c) {
				t.Fatalf("%s ChunkAt(%d)", name, i)
			}
			if _, ok := x.Chunk(chunker.ChunkID(c.Path, c.Ordinal+100)); ok {
				t.Fatalf("%s found a chunk past %s", name, c.ID)
			}
			if x.FileText(c.Path) != ix.FileText(c.Path) {
				t.Fatalf("%s FileText(%s)", name, c.Path)
			}
		}
	}
	// The ID one past a file's last chunk is not the next file's first.
	for i := 0; i+1 < len(view); i++ {
		if view[i].Path != view[i+1].Path {
			id := chunker.ChunkID(view[i].Path, view[i].Ordinal+1)
			if _, ok := lz.Chunk(id); ok {
				t.Fatalf("lazy found %s", id)
			}
		}
	}
	if !reflect.DeepEqual(lz.Chunks(), ix.Chunks()) {
		t.Fatal("Chunks differ")
	}
}

// TestFilterCalls: per search, Prefilter and Filter are asked at most once per
// chunk; Filter never about a chunk the prefilter accepted or rejected.
func TestFilterCalls(t *testing.T) {
	view := lazyCaseView()
	ix, _, lz, _ := lazyCaseIndexes(t, view)
	ctx := context.Background()
	for name, x := range map[string]*Index{"index": ix, "lazy": lz} {
		for q := 0; q < 20; q++ {
			text := view[(q*41)%len(view)].Text
			for _, mode := range []Mode{BM25, Dense, Hybrid} {
				for _, dc := range []int{0, 5, 100} {
					var mu sync.Mutex
					pcalls := map[string]int{}
					fcalls := map[string]int{}
					verdict := map[string]Verdict{}
					pre := func(path, lang string) Verdict {
						mu.Lock()
						defer mu.Unlock()
						pcalls[path]++ // per file: count chunks below
						v := Verdict((len(path) + int(lang[0])) % 3)
						verdict[path] = v
						return v
					}
					f := func(c *chunker.Chunk) bool {
						mu.Lock()
						defer mu.Unlock()
						fcalls[c.ID]++
						if v := verdict[c.Path]; v != AskFilter {
							t.Errorf("%s: Filter asked about %s with verdict %v", name, c.ID, v)
						}
						return c.Ordinal%2 == 0
					}
					_, err := x.Search(ctx, Query{Text: text, K: 10, Mode: mode, Prefilter: pre, Filter: f, Weights: Weights{DenseCandidates: dc}})
					if err != nil {
						t.Fatal(err)
					}
					for id, n := range fcalls {
						if n > 1 {
							t.Fatalf("%s %v dc%d: Filter asked %d times about %s", name, mode, dc, n, id)
						}
					}
					// Files have up to 10 chunks: a prefilter asked more than that per file
					// asked about a chunk twice.
					for p, n := range pcalls {
						chunks := 0
						for i := range view {
							if view[i].Path == p {
								chunks++
							}
						}
						if n > chunks {
							t.Fatalf("%s %v dc%d: Prefilter asked %d times about %s of %d chunks", name, mode, dc, n, p, chunks)
						}
					}
				}
			}
		}
	}
}

// TestLazyConcurrentMixed uses a fresh lazy index from many goroutines at once:
// searches, Chunk, ChunkAt, FileText and Chunks (run with -race), and checks the
// pointers a file's chunks get are the same for every caller.
func TestLazyConcurrentMixed(t *testing.T) {
	view := lazyCaseView()
	ix, _, _, _ := lazyCaseIndexes(t, view)
	img := alignedCopy(imageOf(t, ix))
	for round := range 5 {
		files, decode, _ := lazyFiles(t, view)
		lz, err := LoadImageLazy("v", files, decode, img, ix.dense.Embedder)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		ptrsSeen := make([][]*chunker.Chunk, 16)
		for g := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got := make([]*chunker.Chunk, len(view))
				for k := range view {
					i := (k + g*13 + round) % len(view)
					switch (g + k) % 5 {
					case 0:
						got[i] = lz.ChunkAt(i)
					case 1:
						c, ok := lz.Chunk(view[i].ID)
						if !ok {
							t.Errorf("Chunk(%s)", view[i].ID)
							return
						}
						got[i] = c
					case 2:
						if lz.FileText(view[i].Path) != ix.FileText(view[i].Path) {
							t.Errorf("FileText(%s)", view[i].Path)
							return
						}
						got[i] = lz.ChunkAt(i)
					case 3:
						qq := Query{Text: view[i].Text[:min(200, len(view[i].Text))], K: 5, Mode: Mode(k % 3),
							Prefilter: func(p, l string) Verdict { return Verdict(len(p) % 3) },
							Filter:    func(c *chunker.Chunk) bool { return c.Ordinal != 1 }}
						a, err1 := lz.Search(context.Background(), qq)
						b, err2 := ix.Search(context.Background(), qq)
						if err1 != nil || err2 != nil || !reflect.DeepEqual(a, b) {
							t.Errorf("search %d: %v %v\n%v\n%v", i, err1, err2, a, b)
							return
						}
						got[i] = lz.ChunkAt(i)
					case 4:
						if k%50 == 4 {
							if len(lz.Chunks()) != len(view) {
								t.Error("Chunks")
							}
						}
						got[i] = lz.ChunkAt(i)
					}
				}
				ptrsSeen[g] = got
			}()
		}
		wg.Wait()
		for g := 1; g < 16; g++ {
			for i := range view {
				if ptrsSeen[g][i] != ptrsSeen[0][i] {
					t.Fatalf("round %d: goroutine %d got another pointer for chunk %d of %d: %p %p", round, g, i, len(view), ptrsSeen[g][i], ptrsSeen[0][i])
				}
			}
		}
	}
}

// TestLazyEmpty: an index of no files, loaded lazily.
func TestLazyEmpty(t *testing.T) {
	ix, err := New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	img := alignedCopy(imageOf(t, ix))
	lz, err := LoadImageLazy("v", nil, func([]byte) ([]chunker.Chunk, error) { return nil, nil }, img, nil)
	if err != nil {
		t.Fatal(err)
	}
	if lz.Len() != 0 || len(lz.Chunks()) != 0 || lz.FileText("a") != "" {
		t.Fatal("not empty")
	}
	if _, ok := lz.Chunk("a#0"); ok {
		t.Fatal("found")
	}
	for _, m := range []Mode{BM25, Dense, Hybrid} {
		h, err := lz.Search(context.Background(), Query{Text: "foo bar", K: 3, Mode: m, Prefilter: func(string, string) Verdict { return Accept }})
		if len(h) != 0 {
			t.Fatal(h)
		}
		_ = err
	}
}

// TestLazyDecoderGarbage: a decoder that returns garbage of
// every sort; the lazy index must not panic.
func TestLazyDecoderGarbage(t *testing.T) {
	view := lazyCaseView()
	ix, _, _, _ := lazyCaseIndexes(t, view)
	img := alignedCopy(imageOf(t, ix))
	files, _, _ := lazyFiles(t, view)
	decs := []ChunkDecoder{
		func([]byte) ([]chunker.Chunk, error) { return nil, nil },
		func(b []byte) ([]chunker.Chunk, error) { return make([]chunker.Chunk, 1000), nil },
		func(b []byte) ([]chunker.Chunk, error) {
			var cs []chunker.Chunk
			json.Unmarshal(b, &cs)
			for i := range cs {
				cs[i].Lang = "other"
			}
			return cs, nil
		},
	}
	for _, d := range decs {
		lz, err := LoadImageLazy("v", files, d, img, ix.dense.Embedder)
		if err != nil {
			t.Fatal(err)
		}
		for i := range view {
			c := lz.ChunkAt(i)
			if c.ID != view[i].ID || c.Path != view[i].Path {
				t.Fatalf("chunk %d: %+v", i, c)
			}
		}
		for _, m := range []Mode{BM25, Dense, Hybrid} {
			lz.Search(context.Background(), Query{Text: view[3].Text, K: 5, Mode: m, Filter: func(c *chunker.Chunk) bool { return c.Text != "x" }})
		}
		lz.FileText(view[0].Path)
	}
}

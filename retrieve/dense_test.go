package retrieve

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/repoctx/repoctx/chunker"
)

// fakeEmbedder is a deterministic bag-of-tokens embedder that counts the texts it
// embeds; texts longer than limit bytes are "truncated" to their kept end.
type fakeEmbedder struct {
	id    string
	dim   int
	limit int
	mu    sync.Mutex
	count int
}

func (f *fakeEmbedder) ID() string   { return f.id }
func (f *fakeEmbedder) Dim() int     { return f.dim }
func (f *fakeEmbedder) Close() error { return nil }
func (f *fakeEmbedder) Embed(texts []string, keep KeepEnd) ([][]float32, []bool, error) {
	f.mu.Lock()
	f.count += len(texts)
	f.mu.Unlock()
	vecs := make([][]float32, len(texts))
	trunc := make([]bool, len(texts))
	for i, t := range texts {
		if f.limit > 0 && len(t) > f.limit {
			trunc[i] = true
			if keep == KeepHead {
				t = t[:f.limit]
			} else {
				t = t[len(t)-f.limit:]
			}
		}
		v := make([]float32, f.dim)
		for _, tok := range Tokens(t) {
			h := sha256.Sum256([]byte(tok))
			j := int(binary.LittleEndian.Uint32(h[:]) % uint32(f.dim))
			v[j] += float32(1 + int(h[4]%3))
		}
		Normalize(v)
		vecs[i] = v
	}
	return vecs, trunc, nil
}

func (f *fakeEmbedder) embedded() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.count
}

// refDense ranks every chunk by the cosine of its embedding (computed afresh) with the
// query's, ties by chunk order.
func refDense(t *testing.T, emb Embedder, chunks []chunker.Chunk, query string, keep KeepEnd) []Hit {
	t.Helper()
	texts := []string{query}
	for i := range chunks {
		texts = append(texts, chunks[i].Text)
	}
	v, _, err := emb.Embed(texts, KeepHead)
	if err != nil {
		t.Fatal(err)
	}
	qv, _, _ := emb.Embed([]string{query}, keep)
	var hits []Hit
	for i := range chunks {
		hits = append(hits, Hit{ID: chunks[i].ID, Score: float64(dot(qv[0], v[i+1])), Rank: i})
	}
	sort.SliceStable(hits, func(a, b int) bool { return hits[a].Score > hits[b].Score })
	for i := range hits {
		hits[i].Rank = i + 1
	}
	return hits
}

// TestSearchDenseIsExact compares SearchDense with brute force computed independently,
// for the built-in LSA model and a fake model, with and without a filter.
func TestSearchDenseIsExact(t *testing.T) {
	chunks := synthChunks(400)
	for _, tc := range []struct {
		name string
		opts BuildOptions
	}{
		{"lsa", BuildOptions{Dim: 32}},
		{"fake", BuildOptions{Embedder: &fakeEmbedder{id: "fake", dim: 24}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "idx")
			if err := Build(context.Background(), dir, "k", chunks, tc.opts); err != nil {
				t.Fatal(err)
			}
			ix, err := Open(dir, "k", tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			_, emb, err := ix.denseData()
			if err != nil {
				t.Fatal(err)
			}
			for q := range 10 {
				query := chunks[q*37].Text[:min(200, len(chunks[q*37].Text))]
				want := refDense(t, emb, chunks, query, KeepTail)
				got, err := ix.searchDense(query, 10, nil, KeepTail)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != 10 {
					t.Fatalf("%d hits", len(got))
				}
				for i := range got {
					if got[i].ID != want[i].ID || math.Abs(got[i].Score-want[i].Score) > 1e-5 || got[i].Rank != i+1 {
						t.Fatalf("query %d hit %d = %+v, want %+v", q, i, got[i], want[i])
					}
				}
				// Filtered: rejected chunks do not count toward k, and the filter is asked
				// at most once per chunk.
				calls := map[string]int{}
				odd := func(c *chunker.Chunk) bool { calls[c.ID]++; return c.Ordinal%2 == 1 }
				fgot, err := ix.searchDense(query, 5, odd, KeepTail)
				if err != nil {
					t.Fatal(err)
				}
				var fwant []Hit
				for _, h := range want {
					if c, _ := ix.Chunk(h.ID); c.Ordinal%2 == 1 && len(fwant) < 5 {
						fwant = append(fwant, h)
					}
				}
				if len(fgot) != 5 {
					t.Fatalf("filtered: %d hits", len(fgot))
				}
				for i := range fgot {
					if fgot[i].ID != fwant[i].ID {
						t.Fatalf("filtered hit %d = %s, want %s", i, fgot[i].ID, fwant[i].ID)
					}
				}
				for id, n := range calls {
					if n > 1 {
						t.Fatalf("filter called %d times for %s", n, id)
					}
				}
			}
		})
	}
}

// TestSearchDenseTiesByChunkOrder: chunks with identical text have identical vectors and
// come back in Build order, whatever k.
func TestSearchDenseTiesByChunkOrder(t *testing.T) {
	var chunks []chunker.Chunk
	for i := range 12 {
		text := "fun evictEldest() { entries.remove(eldest) }"
		if i%3 == 0 {
			text = "def slugify(title): return title.lower()"
		}
		chunks = append(chunks, chunk(fmt.Sprintf("f%02d.kt", i), 0, chunker.KindFunction, "", nil, text))
	}
	ix := buildTest(t, chunks)
	for _, k := range []int{1, 3, 8} {
		hits, err := ix.searchDense("evict eldest entries", k, nil, KeepTail)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, h := range hits {
			ids = append(ids, h.ID)
		}
		want := []string{"f01.kt#0", "f02.kt#0", "f04.kt#0", "f05.kt#0", "f07.kt#0", "f08.kt#0", "f10.kt#0", "f11.kt#0"}[:k]
		if !slices.Equal(ids, want) {
			t.Errorf("k=%d: %v, want %v", k, ids, want)
		}
	}
}

// TestDenseOptions: the default builds LSA; "none" builds BM25 only; the dense model is
// part of the cache directory and of what OpenWith checks.
func TestDenseOptions(t *testing.T) {
	cache := t.TempDir()
	chunks := func() ([]chunker.Chunk, error) { return testChunks(), nil }

	ix, built, err := OpenOrBuild(context.Background(), cache, "snap", ctxless(chunks), BuildOptions{})
	if err != nil || !built {
		t.Fatalf("OpenOrBuild: %v built=%v", err, built)
	}
	if d := ix.DenseInfo(); d.Model != LSAModelID(0) || d.Dim == 0 || d.Vectors != len(testChunks()) || d.Terms == 0 {
		t.Errorf("default dense info = %+v", d)
	}
	hits, err := ix.searchDense("evict the eldest entry", 3, nil, KeepTail)
	if err != nil || len(hits) == 0 || hits[0].ID != "src/cache/BoundedCache.kt#1" {
		t.Errorf("SearchDense = %v, %v", hits, err)
	}
	ix.Close()

	// The same key with another LSA dimension or without dense vectors builds anew, in
	// another directory, and leaves the default one alone.
	for _, opts := range []BuildOptions{{Dim: 4}, {Dense: DenseNone}} {
		ix, built, err := OpenOrBuild(context.Background(), cache, "snap", ctxless(chunks), opts)
		if err != nil || !built {
			t.Fatalf("%+v: %v built=%v", opts, err, built)
		}
		name, _ := IndexDirName("snap", opts)
		if filepath.Base(ix.Dir()) != name || name == CacheDirName("snap") {
			t.Errorf("%+v: dir %s, want %s", opts, ix.Dir(), name)
		}
		ix.Close()
		ix, built, err = OpenOrBuild(context.Background(), cache, "snap", ctxless(chunks), opts)
		if err != nil || built {
			t.Fatalf("%+v second call: %v built=%v", opts, err, built)
		}
		ix.Close()
	}
	ix, built, err = OpenOrBuild(context.Background(), cache, "snap", ctxless(chunks), BuildOptions{})
	if err != nil || built {
		t.Fatalf("default again: %v built=%v", err, built)
	}
	ix.Close()

	// BM25-only index: SearchDense says so, SearchHybrid ranks by BM25 alone.
	none, _, err := OpenOrBuild(context.Background(), cache, "snap", ctxless(chunks), BuildOptions{Dense: DenseNone})
	if err != nil {
		t.Fatal(err)
	}
	defer none.Close()
	if none.HasDense() || none.DenseInfo().Model != "" {
		t.Errorf("none: HasDense %v info %+v", none.HasDense(), none.DenseInfo())
	}
	if _, err := none.searchDense("evict", 3, nil, KeepTail); !errors.Is(err, ErrNoDense) {
		t.Errorf("SearchDense on a BM25 index: %v", err)
	}
	fh, err := none.searchHybrid("evict the eldest entry", 3, nil, Weights{}, KeepTail)
	bm, _ := none.searchBM25("evict the eldest entry", 3, nil)
	if err != nil || len(fh) != len(bm) || fh[0].ID != bm[0].ID || fh[0].DenseRank != 0 || fh[0].BM25Rank != 1 {
		t.Errorf("SearchHybrid on a BM25 index = %+v, %v", fh, err)
	}

	// OpenWith checks the model.
	dir := filepath.Join(cache, CacheDirName("snap"))
	if _, err := Open(dir, "snap", BuildOptions{Dense: DenseNone}); !errors.Is(err, ErrKeyMismatch) {
		t.Errorf("Open(none) on an LSA index: %v", err)
	}
	if _, err := Open(dir, "snap", BuildOptions{Dim: 64}); !errors.Is(err, ErrKeyMismatch) {
		t.Errorf("Open(dim 64) on a dim-128 index: %v", err)
	}
	assertNoLeftovers(t, cache)
}

// TestOldFormatIsRebuilt: an index of format 1 (BM25 only, before dense vectors) is
// rebuilt by OpenOrBuild.
func TestOldFormatIsRebuilt(t *testing.T) {
	cache := t.TempDir()
	chunks := func() ([]chunker.Chunk, error) { return testChunks(), nil }
	dir := filepath.Join(cache, CacheDirName("k"))
	if err := Build(context.Background(), dir, "k", testChunks(), BuildOptions{Dense: DenseNone}); err != nil {
		t.Fatal(err)
	}
	man, err := readManifest(dir, "k")
	if err != nil {
		t.Fatal(err)
	}
	man.Format = 1
	if err := writeManifest(filepath.Join(dir, manifestFile), &man); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, "k", BuildOptions{}); !errors.Is(err, ErrFormat) {
		t.Fatalf("Open format 1: %v", err)
	}
	ix, built, err := OpenOrBuild(context.Background(), cache, "k", ctxless(chunks), BuildOptions{})
	if err != nil || !built || !ix.HasDense() {
		t.Fatalf("OpenOrBuild: %v built=%v", err, built)
	}
	ix.Close()
}

// TestDenseDamage: missing or truncated vectors make the index incomplete.
func TestDenseDamage(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "idx")
	if err := Build(context.Background(), dir, "k", testChunks(), BuildOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(dir, vectorsFile), 12); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, "k", BuildOptions{}); !errors.Is(err, ErrIncomplete) {
		t.Errorf("truncated vectors: %v", err)
	}
	if err := os.Remove(filepath.Join(dir, vectorsFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, "k", BuildOptions{}); !errors.Is(err, ErrIncomplete) {
		t.Errorf("missing vectors: %v", err)
	}
}

// TestEmbedCache: a second snapshot embeds only its changed chunks, a rebuild embeds
// nothing, another model shares nothing, and truncation flags survive the cache.
func TestEmbedCache(t *testing.T) {
	cache := t.TempDir()
	emb := &fakeEmbedder{id: "fake-a", dim: 16, limit: 150}
	opts := BuildOptions{Embedder: emb, BatchSize: 4}
	base := testChunks()
	n := len(base)
	build := func(key string, cs []chunker.Chunk, o BuildOptions) DenseInfo {
		t.Helper()
		ix, built, err := OpenOrBuild(context.Background(), cache, key, ctxless(func() ([]chunker.Chunk, error) { return cs, nil }), o)
		if err != nil || !built {
			t.Fatalf("%s: %v built=%v", key, err, built)
		}
		defer ix.Close()
		if _, err := ix.searchDense("evict eldest", 3, nil, KeepTail); err != nil {
			t.Fatal(err)
		}
		return ix.DenseInfo()
	}
	d := build("snap-1", base, opts)
	if d.Embedded != n || d.Cached != 0 || emb.embedded() != n+1 { // +1: the query
		t.Fatalf("first build: %+v, model saw %d texts", d, emb.embedded())
	}
	var long []string
	for _, c := range base {
		if len(c.Text) > 150 {
			long = append(long, c.ID)
		}
	}
	if d.Truncated != len(long) || !slices.Equal(d.TruncatedIDs, long) || len(long) == 0 {
		t.Errorf("truncated = %d %v, want %v", d.Truncated, d.TruncatedIDs, long)
	}

	changed := slices.Clone(base)
	changed[2].Text += "\n// edited"
	before := emb.embedded()
	d = build("snap-2", changed, opts)
	if d.Embedded != 1 || d.Cached != n-1 || emb.embedded()-before != 2 {
		t.Errorf("changed snapshot: %+v, model saw %d texts", d, emb.embedded()-before)
	}
	if d.Truncated != len(long) {
		t.Errorf("truncation flags lost in the cache: %d, want %d", d.Truncated, len(long))
	}

	// Rebuilding the first snapshot (its index deleted) embeds nothing.
	name, _ := IndexDirName("snap-1", opts)
	if err := os.RemoveAll(filepath.Join(cache, name)); err != nil {
		t.Fatal(err)
	}
	d = build("snap-1", base, opts)
	if d.Embedded != 0 || d.Cached != n {
		t.Errorf("rebuild: %+v", d)
	}

	// Another model ID shares no vectors; NoEmbedCache embeds everything.
	d = build("snap-1", base, BuildOptions{Embedder: &fakeEmbedder{id: "fake-b", dim: 16}})
	if d.Embedded != n {
		t.Errorf("other model: %+v", d)
	}
	d = build("snap-3", base, BuildOptions{Embedder: emb, NoEmbedCache: true})
	if d.Embedded != n || d.Cached != 0 {
		t.Errorf("no cache: %+v", d)
	}
	if _, err := os.Stat(filepath.Join(cache, "embeddings", EmbedCacheFile)); err != nil {
		t.Errorf("cache file: %v", err)
	}
}

// TestOpenNeedsEmbedder: an index of an external model cannot be opened without it
// (nothing could embed its queries); Open attaches the model and refuses another.
func TestOpenNeedsEmbedder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "idx")
	emb := &fakeEmbedder{id: "fake", dim: 8}
	if err := Build(context.Background(), dir, "k", testChunks(), BuildOptions{Embedder: emb}); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, "k", BuildOptions{}); !errors.Is(err, ErrKeyMismatch) {
		t.Errorf("Open without the embedder: %v, want ErrKeyMismatch", err)
	}
	ix, err := Open(dir, "k", BuildOptions{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	if hits, err := ix.searchDense("evict eldest entries", 3, nil, KeepTail); err != nil || len(hits) != 3 {
		t.Errorf("SearchDense with embedder: %v %v", hits, err)
	}
	ix.Close()
	if _, err := Open(dir, "k", BuildOptions{Embedder: &fakeEmbedder{id: "other", dim: 8}}); !errors.Is(err, ErrKeyMismatch) {
		t.Errorf("OpenWith another model: %v", err)
	}
}

func stringsRepeat(s string, n int) string {
	out := ""
	for range n {
		out += s
	}
	return out
}

// fakeSplitter is fakeEmbedder with Split: pieces of at most limit bytes.
type fakeSplitter struct{ fakeEmbedder }

func (f *fakeSplitter) Split(text string) ([]string, error) {
	var out []string
	for len(text) > f.limit {
		out, text = append(out, text[:f.limit]), text[f.limit:]
	}
	return append(out, text), nil
}

// TestBuildSplitsLongChunks: with a Splitter, a chunk over the limit is embedded as the
// normalised mean of its pieces' vectors and counted as split; one of more than
// MaxPieces pieces is counted as truncated too; the chunks themselves are unchanged.
func TestBuildSplitsLongChunks(t *testing.T) {
	emb := &fakeSplitter{fakeEmbedder{id: "split", dim: 16, limit: 40}}
	long := strings.Repeat("evict eldest entries now ", 6)  // 150 bytes: 4 pieces
	huge := strings.Repeat("parse http response body ", 20) // 500 bytes: 13 pieces
	cs := []chunker.Chunk{
		chunk("a.kt", 0, chunker.KindFunction, "", nil, "fun short() = 1"),
		chunk("a.kt", 1, chunker.KindFunction, "", nil, long),
		chunk("a.kt", 2, chunker.KindFunction, "", nil, huge),
	}
	dir := filepath.Join(t.TempDir(), "idx")
	if err := Build(context.Background(), dir, "k", cs, BuildOptions{Embedder: emb}); err != nil {
		t.Fatal(err)
	}
	ix, err := Open(dir, "k", BuildOptions{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	d := ix.DenseInfo()
	if d.Split != 2 || d.Truncated != 1 || !slices.Equal(d.TruncatedIDs, []string{cs[2].ID}) {
		t.Errorf("split %d, truncated %d %v; want 2, 1 [%s]", d.Split, d.Truncated, d.TruncatedIDs, cs[2].ID)
	}
	if ix.Chunks()[1].Text != long {
		t.Error("the chunk itself changed")
	}
	vecs, _, err := ix.denseData()
	if err != nil {
		t.Fatal(err)
	}
	pieces, _ := emb.Split(long)
	pv, _, _ := emb.Embed(pieces, KeepHead)
	want := make([]float32, emb.dim)
	for _, v := range pv {
		Normalize(v)
		for c := range v {
			want[c] += v[c] / float32(len(pv))
		}
	}
	Normalize(want)
	got := vecs[emb.dim : 2*emb.dim]
	for c := range want {
		if math.Abs(float64(got[c]-want[c])) > 1e-6 {
			t.Fatalf("vector of the long chunk %v, want the mean of its pieces %v", got, want)
		}
	}
}

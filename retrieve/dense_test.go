package retrieve

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/internal/racetest"
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
		hits = append(hits, Hit{ID: chunks[i].ID, Score: float64(dot(v[i+1], alignedQuery(qv[0]))), Rank: i})
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
	racetest.Skip(t, "compares dense search with a full scan over many queries on one goroutine")
	chunks := synthChunks(400)
	lsa, err := LSAVectors(context.Background(), chunks, 32, "")
	if err != nil {
		t.Fatal(err)
	}
	fake, err := ModelVectors(context.Background(), &fakeEmbedder{id: "fake", dim: 24}, chunks)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		dense *DenseVectors
	}{{"lsa", lsa}, {"fake", fake}} {
		t.Run(tc.name, func(t *testing.T) {
			ix, err := New(chunks, tc.dense)
			if err != nil {
				t.Fatal(err)
			}
			emb := tc.dense.Embedder
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
				fgot, err := ix.searchDense(query, 5, &chunkFilter{f: odd}, KeepTail)
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
	dv, err := ModelVectors(context.Background(), emb, cs)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := New(cs, dv)
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
	vecs := ix.dense.Vectors
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

// TestDenseRows: an index given its vectors as rows (DenseVectors.Rows) ranks exactly
// as one given the same vectors in one array, and rows of the wrong count or length
// are refused.
func TestDenseRows(t *testing.T) {
	cs := testChunks()
	flat, err := LSAVectors(context.Background(), cs, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	rows := &DenseVectors{Dim: flat.Dim, Embedder: flat.Embedder}
	for i := range cs {
		rows.Rows = append(rows.Rows, flat.Vectors[i*flat.Dim:(i+1)*flat.Dim])
	}
	a, err := New(cs, flat)
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(cs, rows)
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"parse the config file", "retry with backoff", "zz"} {
		q := Query{Text: text, K: 5}
		ha, _ := a.Search(context.Background(), q)
		hb, _ := b.Search(context.Background(), q)
		if !reflect.DeepEqual(ha, hb) {
			t.Errorf("%q: rows rank %v, one array %v", text, hb, ha)
		}
	}
	short := &DenseVectors{Dim: flat.Dim, Embedder: flat.Embedder, Rows: rows.Rows[1:]}
	if _, err := New(cs, short); err == nil {
		t.Error("one row too few was accepted")
	}
	bad := &DenseVectors{Dim: flat.Dim, Embedder: flat.Embedder, Rows: slices.Clone(rows.Rows)}
	bad.Rows[2] = bad.Rows[2][:flat.Dim-1]
	if _, err := New(cs, bad); err == nil {
		t.Error("a row of the wrong length was accepted")
	}
}

// TestDotAlignment: a dense score does not depend on where the row or the query lies
// in memory (gonum's kernel handles an unaligned second operand's head one value at a
// time, which would change the grouping of the sums).
func TestDotAlignment(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, dim := range []int{1, 3, 4, 17, 128, 384} {
		row, q := make([]float32, dim), make([]float32, dim)
		for i := range row {
			row[i], q[i] = rng.Float32()-0.5, rng.Float32()-0.5
		}
		var want float32
		for off := range 4 {
			rb := make([]float32, dim+4)
			qb := make([]float32, dim+4)
			r, qq := rb[off:off+dim], qb[(off+1)%4:(off+1)%4+dim]
			copy(r, row)
			copy(qq, q)
			got := dot(r, alignedQuery(qq))
			if off == 0 {
				want = got
			} else if math.Float32bits(got) != math.Float32bits(want) {
				t.Errorf("dim %d: row at offset %d, query at %d: %v, want %v (offset 0)", dim, off, (off+1)%4, got, want)
			}
		}
	}
}

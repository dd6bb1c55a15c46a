package retrieve

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/repoctx/repoctx/chunker"
)

// imageView returns a view of a corpus that holds more chunks (and terms) than the
// view, with LSA vectors, and its chunks.
func imageView(t testing.TB) (*Index, []chunker.Chunk) {
	all := synthChunks(300)
	corpus := NewCorpus()
	corpus.Add(all[:100])
	view := all[50:250]
	ords := corpus.Add(view)
	corpus.Add(all[200:])
	d, err := LSAVectors(context.Background(), view, 16, "")
	if err != nil {
		t.Fatal(err)
	}
	ix, err := corpus.NewIndex("v", ords, d)
	if err != nil {
		t.Fatal(err)
	}
	return ix, view
}

// TestImageEqualsIndex checks that an index loaded from its image ranks every query,
// in every mode, with and without a filter, as the index it was made of.
func TestImageEqualsIndex(t *testing.T) {
	ix, view := imageView(t)
	img := imageOf(t, ix)
	// In place (memory aligned to 8) and copied (not aligned).
	aligned := alignedCopy(img)
	inPlace, err := LoadImage("v", ptrs(view), aligned, ix.dense.Embedder)
	if err != nil {
		t.Fatal(err)
	}
	if p := uintptr(unsafe.Pointer(&inPlace.dense.Vectors[0])); p < uintptr(unsafe.Pointer(&aligned[0])) || p >= uintptr(unsafe.Pointer(&aligned[0]))+uintptr(len(aligned)) {
		t.Error("the vectors of an aligned image were copied")
	}
	shifted := alignedCopy(append([]byte{0}, img...))[1:] // at an odd address
	chunks := ptrs(view)
	got, err := LoadImage("v", chunks, shifted, ix.dense.Embedder)
	if err != nil {
		t.Fatal(err)
	}
	// A loaded index's image loads the same index again (checked below with it).
	again := imageOf(t, inPlace)
	reloaded, err := LoadImage("v", ptrs(view), alignedCopy(again), ix.dense.Embedder)
	if err != nil {
		t.Fatal(err)
	}
	if got.stats != ix.stats || !reflect.DeepEqual(got.lens, ix.lens) || got.Len() != ix.Len() || got.DenseInfo().Model != ix.DenseInfo().Model {
		t.Fatalf("statistics, lengths or dense model differ")
	}
	sameRankings(t, view, ix, inPlace, got, reloaded)
	if c, ok := got.Chunk(view[3].ID); !ok || c != chunks[3] {
		t.Errorf("Chunk(%s) is not the chunk given", view[3].ID)
	}
	// Again without dense vectors.
	bm, err := New(view, nil)
	if err != nil {
		t.Fatal(err)
	}
	img2 := imageOf(t, bm)
	if _, err := LoadImage("v", ptrs(view), alignedCopy(img2), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadImage("v", ptrs(view), alignedCopy(img2), ix.dense.Embedder); !errors.Is(err, ErrImage) {
		t.Errorf("an image without vectors taken with an embedder: %v", err)
	}
	inPlace.Close() // its postings are the image's, not given to a corpus
}

// sameRankings checks that each of others ranks 40 queries made of view's chunks, in
// every mode, with and without a filter, as ix does.
func sameRankings(t *testing.T, view []chunker.Chunk, ix *Index, others ...*Index) {
	t.Helper()
	ctx := context.Background()
	odd := func(c *chunker.Chunk) bool { return c.Ordinal%2 == 1 }
	for q := range 40 {
		c := view[(q*37)%len(view)]
		lines := strings.Split(c.Text, "\n")
		query := strings.Join(lines[:min(len(lines), 1+q%9)], "\n") + " cache eldest missing_term_xyz"
		for _, mode := range []Mode{BM25, Dense, Hybrid} {
			for _, filter := range []func(*chunker.Chunk) bool{nil, odd} {
				qq := Query{Text: query, K: 10, Mode: mode, Filter: filter, Keep: KeepTail}
				b, err2 := ix.Search(ctx, qq)
				for _, g := range others {
					a, err1 := g.Search(ctx, qq)
					if err1 != nil || err2 != nil {
						t.Fatal(err1, err2)
					}
					if !reflect.DeepEqual(a, b) {
						t.Fatalf("query %d, %v, filter %v:\ngot  %v\nwant %v", q, mode, filter != nil, a, b)
					}
				}
			}
		}
	}
}

// imageOf returns the image of ix (WriteImage).
func imageOf(t testing.TB, ix *Index) []byte {
	var b bytes.Buffer
	n, err := ix.WriteImage(&b)
	if err != nil || n != int64(b.Len()) {
		t.Fatalf("WriteImage: %d bytes of %d, %v", n, b.Len(), err)
	}
	return b.Bytes()
}

// ptrs returns pointers to copies of chunks.
func ptrs(chunks []chunker.Chunk) []*chunker.Chunk {
	cs := slices.Clone(chunks)
	out := make([]*chunker.Chunk, len(cs))
	for i := range cs {
		out[i] = &cs[i]
	}
	return out
}

// alignedCopy returns a copy of b in memory aligned to 8 bytes.
func alignedCopy(b []byte) []byte {
	w := make([]uint64, (len(b)+7)/8+1)
	out := unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), len(b))
	copy(out, b)
	return out
}

// TestImageRefused checks that LoadImage refuses another chunk count, another
// embedder, and images cut or changed anywhere, with ErrImage and without panicking.
func TestImageRefused(t *testing.T) {
	ix, view := imageView(t)
	img := alignedCopy(imageOf(t, ix))
	// Every byte changed in turn (a damaged image, which the store's checksum would
	// catch) is refused or still loads without panicking.
	for i := 0; i < len(img); i += 1 + i/50 {
		img[i] ^= 0x55
		LoadImage("v", ptrs(view), img, ix.dense.Embedder)
		img[i] ^= 0x55
	}
	if _, err := LoadImage("v", ptrs(view[1:]), img, ix.dense.Embedder); !errors.Is(err, ErrImage) {
		t.Errorf("fewer chunks: %v", err)
	}
	other, err := FitLSA(view[:40], 8)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LoadImage("v", ptrs(view), img, other); !errors.Is(err, ErrImage) {
		t.Errorf("another embedder: %v", err)
	}
	if _, err := LoadImage("v", ptrs(view), img, nil); !errors.Is(err, ErrImage) {
		t.Errorf("no embedder: %v", err)
	}
	for cut := 0; cut < len(img); cut += 1 + cut/7 {
		if _, err := LoadImage("v", ptrs(view), alignedCopy(img[:cut]), ix.dense.Embedder); err == nil {
			t.Fatalf("image cut at %d of %d accepted", cut, len(img))
		}
	}
	ix.Close()
	if _, err := ix.WriteImage(io.Discard); !errors.Is(err, ErrClosed) {
		t.Errorf("closed: %v", err)
	}
}

// FuzzLoadImage checks that no image makes LoadImage panic.
func FuzzLoadImage(f *testing.F) {
	ix, view := imageView(f)
	img := imageOf(f, ix)
	f.Add(img[:min(len(img), 4000)])
	small, err := New(view[:3], nil)
	if err != nil {
		f.Fatal(err)
	}
	simg := imageOf(f, small)
	f.Add(simg)
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 {
			return
		}
		for _, img := range [][]byte{alignedCopy(b), b} {
			// An image that loads is searched without panicking (its postings lists
			// are checked as searches read them).
			if x, err := LoadImage("v", ptrs(view[:3]), img, nil); err == nil {
				for _, c := range view[:3] {
					x.Search(context.Background(), Query{Text: c.Text, K: 3, Mode: BM25})
				}
			}
		}
	})
}

// TestImageDamagedPostings checks that a postings list damaged in an image that still
// loads (a chunk position out of range, a zero frequency, positions out of order)
// matches nothing, without a panic, while the other terms still rank.
func TestImageDamagedPostings(t *testing.T) {
	ix, view := imageView(t)
	img := alignedCopy(imageOf(t, ix))
	good, err := LoadImage("v", ptrs(view), img, ix.dense.Embedder)
	if err != nil {
		t.Fatal(err)
	}
	// The text field's postings: find the first one's bytes by its values.
	term := good.img.term(0)
	id := int32(0)
	l := good.termPostings(id, fieldText)
	if len(l) == 0 {
		t.Fatalf("term %q has no text postings", term)
	}
	first := uintptr(unsafe.Pointer(&l[0])) - uintptr(unsafe.Pointer(&img[0]))
	q := Query{Text: term, K: 5, Mode: BM25}
	want, err := good.Search(context.Background(), q)
	if err != nil || len(want) == 0 {
		t.Fatalf("%q: %v, %v", term, want, err)
	}
	for name, change := range map[string]func(b []byte){
		"position out of range": func(b []byte) { binary.LittleEndian.PutUint32(b[first:], uint32(len(view)+5)) },
		"zero frequency":        func(b []byte) { binary.LittleEndian.PutUint32(b[first+4:], 0) },
	} {
		b := alignedCopy(img)
		change(b)
		x, err := LoadImage("v", ptrs(view), b, ix.dense.Embedder)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := x.Search(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range got {
			for _, w := range want {
				if h.ID == w.ID && h.BM25Score == w.BM25Score {
					t.Errorf("%s: %s scored as before", name, h.ID)
				}
			}
		}
		if x.termPostings(id, fieldText) != nil {
			t.Errorf("%s: the damaged list is still read", name)
		}
	}
}

// TestImageCheckPostings: CheckPostings's function is asked about each list's bytes
// (within ImagePostings) the first time a search reads it, and a list it refuses
// matches nothing; ImagePostings is nil for an index not loaded from an image.
func TestImageCheckPostings(t *testing.T) {
	ix, view := imageView(t)
	if ix.ImagePostings() != nil {
		t.Error("ImagePostings of a built index")
	}
	img := alignedCopy(imageOf(t, ix))
	term := ""
	q := func(x *Index) []FusedHit {
		t.Helper()
		hits, err := x.Search(context.Background(), Query{Text: term, K: 5, Mode: BM25})
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}
	for _, refuse := range []bool{false, true} {
		x, err := LoadImage("v", ptrs(view), img, ix.dense.Embedder)
		if err != nil {
			t.Fatal(err)
		}
		parts := x.ImagePostings()
		if len(parts) != numFields {
			t.Fatalf("%d postings parts, want %d", len(parts), numFields)
		}
		term = x.img.term(0)
		asked := 0
		x.CheckPostings(func(b []byte) bool {
			asked++
			inside := false
			for _, p := range parts {
				from := uintptr(unsafe.Pointer(unsafe.SliceData(p)))
				at := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
				inside = inside || len(b) > 0 && at >= from && at+uintptr(len(b)) <= from+uintptr(len(p))
			}
			if !inside {
				t.Errorf("asked about %d bytes outside the postings", len(b))
			}
			return !refuse
		})
		first := q(x)
		n := asked
		if n == 0 {
			t.Fatal("no list checked")
		}
		second := q(x)
		switch {
		case refuse && (len(first) > 0 || len(second) > 0):
			t.Errorf("refused lists matched: %v %v", first, second)
		case !refuse && (len(first) == 0 || !reflect.DeepEqual(first, second)):
			t.Errorf("accepted lists: %v then %v", first, second)
		case !refuse && asked != n:
			t.Errorf("lists checked again: %d then %d checks", n, asked)
		}
	}
}

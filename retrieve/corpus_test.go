package retrieve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/internal/racetest"
)

// TestViewEqualsOwnIndex: the view of one snapshot over a corpus holding two other
// revisions too ranks exactly (same IDs, scores, ranks) as an index built from that
// snapshot's chunks alone, for BM25, dense and hybrid searches, with and without a
// filter: its statistics are the snapshot's own.
func TestViewEqualsOwnIndex(t *testing.T) {
	racetest.Skip(t, "builds and searches three views of 900 chunks on one goroutine")
	all := synthChunks(900)
	// Three "revisions": overlapping thirds of the chunks, plus edited copies.
	rev := func(lo, hi int, edit string) []chunker.Chunk {
		var cs []chunker.Chunk
		for _, c := range all[lo:hi] {
			if edit != "" && c.Ordinal%4 == 0 {
				c.Text += "\n" + edit
			}
			cs = append(cs, c)
		}
		return cs
	}
	r1, r2, r3 := rev(0, 500, ""), rev(200, 800, "cache.evict(eldest)"), rev(100, 900, "retry backoff")
	ctx := context.Background()
	corpus := NewCorpus()
	corpus.Add(r1)
	ords := corpus.Add(r2)
	corpus.Add(r3)
	d, err := LSAVectors(ctx, r2, 32, "")
	if err != nil {
		t.Fatal(err)
	}
	view, err := corpus.NewIndex("r2", ords, d)
	if err != nil {
		t.Fatal(err)
	}
	own, err := New(r2, d)
	if err != nil {
		t.Fatal(err)
	}
	if view.stats != own.stats {
		t.Fatalf("view statistics %+v, own index %+v", view.stats, own.stats)
	}
	odd := func(c *chunker.Chunk) bool { return c.Ordinal%2 == 1 }
	for q := range 30 {
		c := r2[(q*53)%len(r2)]
		lines := strings.Split(c.Text, "\n")
		query := strings.Join(lines[:min(len(lines), 1+q%12)], "\n") + " cache eldest"
		for _, mode := range []Mode{BM25, Dense, Hybrid} {
			for _, filter := range []func(*chunker.Chunk) bool{nil, odd} {
				qq := Query{Text: query, K: 12, Mode: mode, Filter: filter, Keep: KeepTail}
				got, err1 := view.Search(ctx, qq)
				want, err2 := own.Search(ctx, qq)
				if err1 != nil || err2 != nil {
					t.Fatal(err1, err2)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("query %d, %v, filter %v:\nview %v\nown  %v", q, mode, filter != nil, got, want)
				}
			}
		}
	}
	if _, err := corpus.NewIndex("bad", []int32{int32(corpus.Len())}, nil); err == nil {
		t.Error("an ordinal out of range was accepted")
	}
	if _, err := corpus.NewIndex("dup", []int32{ords[0], ords[0]}, nil); err == nil || !strings.Contains(err.Error(), "duplicate") {
		t.Errorf("duplicate chunk IDs: %v", err)
	}
}

// TestAddEncodedEqualsAdd: chunks added from their encoded terms get the term IDs, and
// index and rank as, chunks tokenised by Add; a damaged table or encoding is refused
// and adds nothing.
func TestAddEncodedEqualsAdd(t *testing.T) {
	cs := synthChunks(300)
	cs[7].Header = []string{"class HTTPResponseCache:", "def evictEldest(self, maxSize):"}
	a, b := NewCorpus(), NewCorpus()
	// Terms already in the corpus, in another order: the known ones keep their IDs.
	a.Add(cs[100:110])
	b.Add(cs[100:110])
	oa := a.Add(cs)
	table, enc := EncodeTerms(cs)
	ob, err := b.AddEncoded(cs, table, enc)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.terms, b.terms) || !reflect.DeepEqual(a.dict, b.dict) {
		t.Fatal("AddEncoded gave the terms other IDs than Add")
	}
	ia, _ := a.NewIndex("a", oa, nil)
	ib, _ := b.NewIndex("b", ob, nil)
	if ia.stats != ib.stats || !reflect.DeepEqual(ia.lens, ib.lens) {
		t.Fatalf("statistics differ: %+v %+v", ia.stats, ib.stats)
	}
	ctx := context.Background()
	for q := range 20 {
		text := cs[(q*37)%len(cs)].Text + " http response eldest"
		ra, _ := ia.Search(ctx, Query{Text: text, K: 10, Mode: BM25})
		rb, _ := ib.Search(ctx, Query{Text: text, K: 10, Mode: BM25})
		if !reflect.DeepEqual(ra, rb) {
			t.Fatalf("query %d: %v vs %v", q, ra, rb)
		}
	}
	if _, err := b.AddEncoded(cs[:2], table, enc[:1]); !errors.Is(err, ErrIncomplete) {
		t.Errorf("one encoding for two chunks: %v", err)
	}
	n := b.Len()
	for cut := range len(enc[7]) {
		if _, err := b.AddEncoded(cs[7:8], table, [][]byte{enc[7][:cut]}); !errors.Is(err, ErrIncomplete) {
			t.Fatalf("encoding cut to %d of %d bytes: %v", cut, len(enc[7]), err)
		}
	}
	for cut := range len(table) {
		if _, err := b.AddEncoded(cs[7:8], table[:cut], enc[7:8]); !errors.Is(err, ErrIncomplete) {
			t.Fatalf("table cut to %d of %d bytes: %v", cut, len(table), err)
		}
	}
	// A table of one term: the encoding's indexes past it are refused.
	one, _ := EncodeTerms(cs[:0])
	one = append(one[:0], 1, 1, 'x')
	if _, err := b.AddEncoded(cs[7:8], one, enc[7:8]); !errors.Is(err, ErrIncomplete) {
		t.Errorf("term indexes past the table: %v", err)
	}
	// An empty term, and a term of frequency 0: no encoding makes them.
	if _, err := b.AddEncoded(cs[:1], []byte{1, 0}, [][]byte{{1, 1, 0, 1, 0, 0, 0, 0}}); !errors.Is(err, ErrIncomplete) {
		t.Errorf("an empty term: %v", err)
	}
	if _, err := b.AddEncoded(cs[:1], []byte{1, 1, 'x'}, [][]byte{{1, 1, 0, 0, 0, 0, 0, 0}}); !errors.Is(err, ErrIncomplete) {
		t.Errorf("a term of frequency 0: %v", err)
	}
	if _, err := NewCorpus().AddEncoded(cs[:1], []byte{1, 1, 'x'}, [][]byte{{1, 1, 0, 1, 0, 0, 0, 0}}); err != nil {
		t.Errorf("the same encoding with a frequency of 1 is refused: %v", err)
	}
	if b.Len() != n {
		t.Errorf("damaged encodings added %d chunks", b.Len()-n)
	}
}

// TestClosedIndexPostingsReused: the postings of a closed index are filled again by
// the next index of the corpus, which then ranks as a new one would, and an index
// still open is not disturbed.
func TestClosedIndexPostingsReused(t *testing.T) {
	chunks := synthChunks(600)
	c := NewCorpus()
	ords := c.Add(chunks)
	search := func(ix *Index) string {
		var sb strings.Builder
		for _, q := range []string{"fun value", "return index", "count total size"} {
			hits, err := ix.searchBM25(q, 20, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hits {
				fmt.Fprintf(&sb, "%s %.6f\n", h.ID, h.Score)
			}
		}
		return sb.String()
	}
	big, err := c.NewIndex("big", ords, nil)
	if err != nil {
		t.Fatal(err)
	}
	small, err := c.NewIndex("small", ords[100:400], nil)
	if err != nil {
		t.Fatal(err)
	}
	want := search(small)
	open, err := c.NewIndex("open", ords[:300], nil)
	if err != nil {
		t.Fatal(err)
	}
	wantOpen := search(open)
	big.Close()
	if _, err := big.searchBM25("fun value", 5, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("search after Close: %v, want ErrClosed", err)
	}
	again, err := c.NewIndex("again", ords[100:400], nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := search(again); got != want {
		t.Errorf("an index in reused postings ranks\n%s\nwant\n%s", got, want)
	}
	if got := search(open); got != wantOpen {
		t.Errorf("an open index changed when another was made")
	}
}

// TestChunkLookup: an index finds its chunks by ID, whether they carry the IDs a
// snapshot's chunks have (file by file, "path#n") or any others, and finds nothing
// for IDs it does not hold.
func TestChunkLookup(t *testing.T) {
	var cs []chunker.Chunk
	for f, n := range []int{3, 1, 12} {
		p := fmt.Sprintf("src/f#%d.kt", f) // a '#' in a path too
		for i := range n {
			cs = append(cs, chunker.Chunk{ID: chunker.ChunkID(p, i), Path: p, Ordinal: i, Text: fmt.Sprintf("fun f%d_%d() = %d", f, i, i)})
		}
	}
	odd := slices.Clone(cs)
	odd[4].ID = "custom"
	reordered := slices.Clone(cs)
	reordered[0], reordered[1] = reordered[1], reordered[0]
	split := slices.Concat(cs[4:10], cs[:3], cs[10:], cs[3:4]) // f#2's chunks in two runs
	for name, chunks := range map[string][]chunker.Chunk{"snapshot": cs, "other id": odd, "reordered": reordered, "split": split} {
		ix, err := New(chunks, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if byFile := ix.byPath != nil; byFile != (name == "snapshot") {
			t.Errorf("%s: found by file %v", name, byFile)
		}
		for i := range chunks {
			c, ok := ix.Chunk(chunks[i].ID)
			if !ok || c.ID != chunks[i].ID || c.Text != chunks[i].Text {
				t.Errorf("%s: Chunk(%q) = %v, %v", name, chunks[i].ID, c, ok)
			}
		}
		for _, id := range []string{"src/f#0.kt#3", "src/f#0.kt#03", "src/f#0.kt#", "src/f#0.kt", "src/f#1.kt#1", "x#0", "", "#0", "src/f#2.kt#-1", "src/f#2.kt#12"} {
			if c, ok := ix.Chunk(id); ok {
				t.Errorf("%s: Chunk(%q) found %q", name, id, c.ID)
			}
		}
	}
	if _, err := New(append(slices.Clone(cs), cs[0]), nil); err == nil || !strings.Contains(err.Error(), "duplicate") {
		t.Errorf("duplicate chunk IDs in a snapshot's order: %v", err)
	}
}

// TestEncodeTermsDeterministic: the term encoding of the same chunks is the same bytes
// every time (each field's terms in order of first occurrence), so chunk records, and
// the term IDs given in their order, do not vary from run to run.
func TestEncodeTermsDeterministic(t *testing.T) {
	var words []string
	for i := range 300 {
		words = append(words, fmt.Sprintf("name%dValue", i))
	}
	cs := []chunker.Chunk{{ID: "a.go#0", Path: "a.go", Text: strings.Join(words, " ") + " name7Value"}}
	wantTable, want := EncodeTerms(cs)
	for range 10 {
		if gotTable, got := EncodeTerms(cs); !reflect.DeepEqual(got, want) || !bytes.Equal(gotTable, wantTable) {
			t.Fatal("EncodeTerms gave other bytes for the same chunks")
		}
	}
	// Each field's terms in order of first occurrence, with their counts.
	for f, v := range fieldValues(&cs[0]) {
		var order []string
		count := map[string]int32{}
		for _, w := range Tokens(v) {
			if count[w] == 0 {
				order = append(order, w)
			}
			count[w]++
		}
		var got []string
		for _, tc := range tokenise(cs)[0].terms[f] {
			got = append(got, tc.term)
			if tc.tf != count[tc.term] {
				t.Errorf("field %d: %q counted %d times, Tokens gives %d", f, tc.term, tc.tf, count[tc.term])
			}
		}
		if !slices.Equal(got, order) {
			t.Errorf("field %d: terms %q, want the order of first occurrence %q", f, got, order)
		}
	}
}

// TestPackedTerms: term frequencies past what a packed word holds, and term IDs past
// its bits, survive packing, and a chunk repeating a word past it gets the posting of
// its real frequency through Add, AddEncoded and NewIndex.
func TestPackedTerms(t *testing.T) {
	in := []termFreq{{0, 1}, {5, packMaxTF}, {7, packMaxTF + 1}, {packTermMask, 3}, {packTermMask + 1, 1}, {1 << 30, 1 << 20}, {9, 1}}
	var p packedTerms
	for _, tf := range in {
		p = appendPacked(p, tf)
	}
	if want := len(in) + 2*3; len(p) != want {
		t.Fatalf("%d words, want %d", len(p), want)
	}
	var out []termFreq
	p.each(func(term, tf int32) { out = append(out, termFreq{term, tf}) })
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("unpacked %v, want %v", out, in)
	}

	text := strings.Repeat("zebra ", 1000) + "giraffe okapi"
	cs := []chunker.Chunk{{ID: "a.kt#0", Path: "a.kt", Lang: "kotlin", Text: text, StartLine: 1, EndLine: 1},
		{ID: "b.kt#0", Path: "b.kt", Lang: "kotlin", Text: "zebra giraffe", StartLine: 1, EndLine: 1},
		{ID: "c.kt#0", Path: "c.kt", Lang: "kotlin", Text: "okapi lion", StartLine: 1, EndLine: 1}}
	a, b := NewCorpus(), NewCorpus()
	oa := a.Add(cs)
	table, enc := EncodeTerms(cs)
	ob, err := b.AddEncoded(cs, table, enc)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		corpus *Corpus
		ords   []int32
	}{{a, oa}, {b, ob}} {
		ix, err := c.corpus.NewIndex("k", c.ords, nil)
		if err != nil {
			t.Fatal(err)
		}
		// AddEncoded's packed words are one array, in order: the wide entry did not
		// make append move the words after it (which would keep two arrays alive).
		if c.corpus == b {
			var prev packedTerms
			for _, o := range c.ords {
				for _, p := range c.corpus.docs[o].tfs {
					if len(p) == 0 {
						continue
					}
					if prev != nil && unsafe.Pointer(&p[0]) != unsafe.Add(unsafe.Pointer(&prev[0]), 4*len(prev)) {
						t.Fatal("AddEncoded's packed words are not one array")
					}
					prev = p
				}
			}
		}
		id := c.corpus.dict["zebra"]
		pl := ix.post[fieldText]
		got := pl.flat[pl.offs[id]:pl.offs[id+1]]
		if want := []posting{{0, 1000}, {1, 1}}; !reflect.DeepEqual(got, want) {
			t.Fatalf("postings of zebra %v, want %v", got, want)
		}
	}
}

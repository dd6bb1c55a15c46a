package retrieve

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/internal/parallel"
)

// Corpus holds chunks of any number of revisions of one repository, each tokenised
// once: a chunk is added when the first snapshot holding its file version is opened,
// and every later snapshot that holds the same version reuses it. An [Index] is a view
// of a corpus: the chunks of one snapshot, searched with that snapshot's own BM25
// statistics (see [Corpus.NewIndex]), so a view ranks exactly as an index built from
// that snapshot alone.
//
// Chunks are never removed. A Corpus is safe for concurrent use: Add may run while
// indexes of it are created and searched.
type Corpus struct {
	mu    sync.RWMutex
	dict  map[string]int32 // term -> term ID
	terms []string         // term ID -> term
	docs  []*corpusDoc     // by ordinal

	// spare holds postings arrays of closed indexes (at most maxSpare) that NewIndex
	// fills again: memory the process has touched already, where a new array costs a
	// page fault per 4 KiB page on first touch (a third of a warm predict's CPU time
	// was such faults).
	spareMu sync.Mutex
	spare   [][]posting
}

// maxSpare bounds Corpus.spare: the postings of two indexes (each a few MB at most on
// repositories of thousands of files), what a batch closes while it makes the next.
const maxSpare = 2 * numFields

// takeSpare returns a postings array of length n: a spare one (the smallest that
// holds n) or a new one. Its content is garbage: every element must be written.
func (c *Corpus) takeSpare(n int) []posting {
	c.spareMu.Lock()
	defer c.spareMu.Unlock()
	best := -1
	for i, s := range c.spare {
		if cap(s) >= n && (best < 0 || cap(s) < cap(c.spare[best])) {
			best = i
		}
	}
	if best < 0 {
		return make([]posting, n)
	}
	s := c.spare[best]
	c.spare[best] = c.spare[len(c.spare)-1]
	c.spare = c.spare[:len(c.spare)-1]
	return s[:n]
}

// putSpare keeps p, the postings array of a closed index, for takeSpare (dropping the
// smallest spare array beyond maxSpare).
func (c *Corpus) putSpare(p []posting) {
	if cap(p) == 0 {
		return
	}
	c.spareMu.Lock()
	defer c.spareMu.Unlock()
	c.spare = append(c.spare, p)
	if len(c.spare) > maxSpare {
		k := 0
		for i, s := range c.spare {
			if cap(s) < cap(c.spare[k]) {
				k = i
			}
		}
		c.spare[k] = c.spare[len(c.spare)-1]
		c.spare = c.spare[:len(c.spare)-1]
	}
}

// corpusDoc is one chunk with its term frequencies per field.
type corpusDoc struct {
	chunk chunker.Chunk
	lens  [numFields]int32 // field lengths in tokens
	tfs   [numFields]packedTerms
}

// termFreq is a term of a field with its frequency.
type termFreq struct {
	term int32
	tf   int32
}

// packedTerms is a field's distinct terms with their frequencies, a word each: the
// term ID in the low packTermBits bits, the frequency in the high bits. A term whose
// ID or frequency does not fit takes three words: packEscape, the ID, the frequency.
// Half the memory of a termFreq per term: the term frequencies are a large part of
// a big repository's live heap (docs/performance.md), and NewIndex reads less.
type packedTerms []uint32

const (
	packTermBits = 24
	packTermMask = 1<<packTermBits - 1
	packEscape   = ^uint32(0)               // the first word of a wide entry
	packMaxTF    = 1<<(32-packTermBits) - 2 // the largest frequency a word holds (255 is the escape's)
)

// packedWords returns the words t takes packed: 1, or 3 for a wide entry.
func packedWords(t termFreq) int {
	if t.term > packTermMask || t.tf > packMaxTF || t.tf < 0 {
		return 3
	}
	return 1
}

// appendPacked appends t's packed words to p.
func appendPacked(p packedTerms, t termFreq) packedTerms {
	if packedWords(t) == 3 {
		return append(p, packEscape, uint32(t.term), uint32(t.tf))
	}
	return append(p, uint32(t.tf)<<packTermBits|uint32(t.term))
}

// entry returns the term and frequency of the entry starting at word j of p, and
// the word the next entry starts at.
func (p packedTerms) entry(j int) (term uint32, tf int32, next int) {
	if w := p[j]; w != packEscape {
		return w & packTermMask, int32(w >> packTermBits), j + 1
	}
	return p[j+1], int32(p[j+2]), j + 3
}

// each calls f with every term and frequency of p, in order.
func (p packedTerms) each(f func(term, tf int32)) {
	for j := 0; j < len(p); {
		term, tf, next := p.entry(j)
		f(int32(term), tf)
		j = next
	}
}

// NewCorpus returns an empty corpus.
func NewCorpus() *Corpus { return &Corpus{dict: map[string]int32{}} }

// Len returns the number of chunks added.
func (c *Corpus) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.docs)
}

// termCount is one distinct term of a field with its frequency, before it has a term ID.
type termCount struct {
	term string
	tf   int32
}

// tokenised is one chunk's fields as [Tokens] splits them.
type tokenised struct {
	lens  [numFields]int32
	terms [numFields][]termCount
}

// tokenise splits every field of chunks with [Tokens] and counts the terms, each
// field's in order of first occurrence (so that the chunk records made of them, and the
// term IDs given in their order, are the same run after run).
func tokenise(chunks []chunker.Chunk) []tokenised {
	toks := make([]tokenised, len(chunks))
	place := map[string]int32{} // a field's terms -> their place in tc; reused
	var tc []termCount          // reused; each field's list is copied out
	for i := range chunks {
		vals := fieldValues(&chunks[i])
		for f, v := range vals {
			clear(place)
			tc = tc[:0]
			n := int32(0)
			scan(v, func(start, end int) {
				n++
				w := v[start:end]
				if needsLower(w) {
					w = strings.ToLower(w)
				}
				if p, ok := place[w]; ok {
					tc[p].tf++
					return
				}
				place[w] = int32(len(tc))
				tc = append(tc, termCount{w, 1})
			})
			toks[i].lens[f] = n
			if len(tc) > 0 {
				toks[i].terms[f] = slices.Clone(tc)
			}
		}
	}
	return toks
}

// Add tokenises chunks (their text, header lines and path, with [Tokens]) and adds them,
// returning their ordinals in the order given. The chunks are copied (their strings are
// shared).
func (c *Corpus) Add(chunks []chunker.Chunk) []int32 {
	toks := tokenise(chunks)
	c.mu.Lock()
	defer c.mu.Unlock()
	ords := make([]int32, len(chunks))
	for i := range chunks {
		d := &corpusDoc{chunk: chunks[i], lens: toks[i].lens}
		for f, tc := range toks[i].terms {
			if len(tc) == 0 {
				continue
			}
			p := make(packedTerms, 0, len(tc)) // a word per term, but for a rare wide one
			for _, t := range tc {
				p = appendPacked(p, termFreq{c.id(t.term), t.tf})
			}
			d.tfs[f] = p
		}
		ords[i] = c.add(d)
	}
	return ords
}

// id returns term's ID, giving a new term the next one (c.mu held for writing).
func (c *Corpus) id(term string) int32 {
	id, ok := c.dict[term]
	if !ok {
		id = int32(len(c.terms))
		c.dict[term] = id
		c.terms = append(c.terms, term)
	}
	return id
}

// add appends d and returns its ordinal (c.mu held for writing).
func (c *Corpus) add(d *corpusDoc) int32 {
	c.docs = append(c.docs, d)
	return int32(len(c.docs) - 1)
}

// TermsVersion names the tokenisation ([Tokens]) and the format of [EncodeTerms]: a
// store of encoded terms must key them by it, so that a change of either is never
// misread.
const TermsVersion = "terms-2"

// EncodeTerms tokenises chunks as [Corpus.Add] does and returns their term
// frequencies in a compact binary form that [Corpus.AddEncoded] reads back without
// tokenising again (for a store that keeps them beside the chunks): table, the
// distinct terms of all the chunks once each, in order of first occurrence (chunk by
// chunk, field by field: text, header, path), as their count then each term's length
// and bytes; and per chunk, per field, the field's length in tokens, the number of its
// distinct terms, and each term as its index in table and its frequency (uvarints). A
// file's chunks share most of their terms: the table makes [Corpus.AddEncoded] look
// each up once.
func EncodeTerms(chunks []chunker.Chunk) (table []byte, enc [][]byte) {
	toks := tokenise(chunks)
	var vb [binary.MaxVarintLen64]byte
	index := map[string]int{}
	var terms []string
	for _, t := range toks {
		for f := range numFields {
			for _, tc := range t.terms[f] {
				if _, ok := index[tc.term]; !ok {
					index[tc.term] = len(terms)
					terms = append(terms, tc.term)
				}
			}
		}
	}
	table = append(table, vb[:binary.PutUvarint(vb[:], uint64(len(terms)))]...)
	for _, t := range terms {
		table = append(table, vb[:binary.PutUvarint(vb[:], uint64(len(t)))]...)
		table = append(table, t...)
	}
	enc = make([][]byte, len(chunks))
	for i, t := range toks {
		var b []byte
		put := func(n int) { b = append(b, vb[:binary.PutUvarint(vb[:], uint64(n))]...) }
		for f := range numFields {
			put(int(t.lens[f]))
			put(len(t.terms[f]))
			for _, tc := range t.terms[f] {
				put(index[tc.term])
				put(int(tc.tf))
			}
		}
		enc[i] = b
	}
	return table, enc
}

// AddEncoded adds chunks with their term frequencies as [EncodeTerms] gave them (table,
// and enc[i] for chunks[i]) and returns their ordinals, as [Corpus.Add] would (new
// terms get their IDs in the same order). It returns an error wrapping
// [ErrIncomplete], and adds nothing, when the table or an encoding is damaged or enc
// does not have one entry per chunk.
func (c *Corpus) AddEncoded(chunks []chunker.Chunk, table []byte, enc [][]byte) ([]int32, error) {
	if len(enc) != len(chunks) {
		return nil, fmt.Errorf("retrieve: %d term encodings for %d chunks: %w", len(enc), len(chunks), ErrIncomplete)
	}
	// Check the table and every encoding first, so that damaged data adds nothing;
	// count the terms so that the frequencies of all the chunks share one allocation.
	bad := fmt.Errorf("retrieve: damaged term encoding: %w", ErrIncomplete)
	uvarint := func(b []byte) (int, []byte, bool) {
		v, n := binary.Uvarint(b)
		if n <= 0 || v > 1<<31-1 {
			return 0, nil, false
		}
		return int(v), b[n:], true
	}
	nt, b, ok := uvarint(table)
	if !ok || nt > len(b) {
		return nil, bad
	}
	terms := make([][]byte, nt)
	for k := range terms {
		var tl int
		if tl, b, ok = uvarint(b); !ok || tl == 0 || tl > len(b) || tl > MaxTokenBytes*4 {
			return nil, bad
		}
		terms[k], b = b[:tl:tl], b[tl:]
	}
	if len(b) != 0 {
		return nil, bad
	}
	total, maxTF := 0, 0
	for _, b := range enc {
		for range numFields {
			var l, n int
			var ok1, ok2 bool
			l, b, ok1 = uvarint(b)
			if ok1 {
				n, b, ok2 = uvarint(b)
			}
			if !ok1 || !ok2 || n > len(b) || l < 0 {
				return nil, bad
			}
			total += n
			for range n {
				k, rest, ok := uvarint(b)
				if !ok || k >= nt {
					return nil, bad
				}
				var tf int
				if tf, rest, ok = uvarint(rest); !ok || tf == 0 {
					return nil, bad
				}
				maxTF = max(maxTF, tf)
				b = rest
			}
		}
		if len(b) != 0 {
			return nil, bad
		}
	}
	docs := make([]corpusDoc, len(chunks))
	c.mu.Lock()
	defer c.mu.Unlock()
	// The table lists the terms in the order Add first meets them (chunk by chunk, field
	// by field), so new terms get the IDs Add would give them.
	ids := make([]int32, nt) // table index -> term ID
	for k, t := range terms {
		id, known := c.dict[string(t)] // no allocation for a known term
		if !known {
			id = c.id(string(t))
		}
		ids[k] = id
	}
	// The packed words of all the chunks share one allocation: a word per term, two
	// more for each term that takes three (a frequency or ID past a word's bits; rare,
	// and counted only when one may be), so that append never moves it.
	words := total
	if maxTF > packMaxTF || len(c.terms) > packTermMask {
		words = 0
		for _, b := range enc {
			for range numFields {
				var n int
				_, b, _ = uvarint(b)
				n, b, _ = uvarint(b)
				for range n {
					var k, tf int
					k, b, _ = uvarint(b)
					tf, b, _ = uvarint(b)
					words += packedWords(termFreq{ids[k], int32(tf)})
				}
			}
		}
	}
	flat := make(packedTerms, 0, words)
	ords := make([]int32, len(chunks))
	for i, b := range enc {
		d := &docs[i]
		d.chunk = chunks[i]
		for f := range numFields {
			var l, n int
			l, b, _ = uvarint(b)
			n, b, _ = uvarint(b)
			d.lens[f] = int32(l)
			if n == 0 {
				continue
			}
			start := len(flat)
			for range n {
				var k, tf int
				k, b, _ = uvarint(b)
				tf, b, _ = uvarint(b)
				flat = appendPacked(flat, termFreq{ids[k], int32(tf)})
			}
			d.tfs[f] = flat[start:len(flat):len(flat)]
		}
		ords[i] = c.add(d)
	}
	return ords, nil
}

// Chunk returns the chunk of ordinal ord (shared: do not modify it).
func (c *Corpus) Chunk(ord int32) *chunker.Chunk {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return &c.docs[ord].chunk
}

// posting is one chunk's entry in a postings list: the chunk's position in its index
// (view order) and the term's frequency in the field.
type posting struct {
	doc uint32
	tf  int32
}

// NewIndex returns the index of the chunks ords, in that order (the snapshot's chunk
// order: files in path order, chunks in file order; ties of every ranking are broken
// by it), named key. Its BM25 statistics (document counts, average field lengths,
// document frequencies) are those of these chunks only: the postings are rebuilt for
// the view from the corpus's cached term frequencies, without tokenising again. dense,
// if not nil, gives the chunks' vectors (one row per chunk, in ords order) and the model
// that embeds queries.
//
// It returns an error if an ordinal is out of range, two chunks have the same ID, or the
// dense vectors do not have one row per chunk.
func (c *Corpus) NewIndex(key string, ords []int32, dense *DenseVectors) (*Index, error) {
	c.mu.RLock()
	docs := make([]*corpusDoc, len(ords))
	for i, o := range ords {
		if o < 0 || int(o) >= len(c.docs) {
			c.mu.RUnlock()
			return nil, fmt.Errorf("retrieve: chunk ordinal %d out of range (corpus of %d)", o, len(c.docs))
		}
		docs[i] = c.docs[o]
	}
	nterms := len(c.terms)
	c.mu.RUnlock()

	ptrs := make([]*chunker.Chunk, len(docs))
	for i, d := range docs {
		ptrs[i] = &d.chunk
	}
	ix := &Index{corpus: c, key: key, chunks: chunkList{ptrs: ptrs}}
	if err := ix.setPositions(); err != nil {
		return nil, err
	}
	ix.lens = make([][numFields]int32, len(docs))
	for i, d := range docs {
		ix.lens[i] = d.lens
	}
	// The fields' postings are independent: with enough chunks, each is built on a
	// goroutine of its own (the same arrays as one after the other).
	field := func(f int) {
		// Two passes over the term frequencies: count each list's length, then fill one
		// shared array, so a view costs a few allocations whatever its size.
		offs := make([]uint32, nterms+1)
		st := ix.stats[f] // counted here, stored once (no cache line shared with the other fields' loops)
		for _, d := range docs {
			if d.lens[f] > 0 {
				st.Docs++
				st.Tokens += int64(d.lens[f])
			}
			p := d.tfs[f]
			for j := 0; j < len(p); {
				term, _, next := p.entry(j)
				offs[term+1]++
				j = next
			}
		}
		ix.stats[f] = st
		for t := 1; t <= nterms; t++ {
			offs[t] += offs[t-1]
		}
		flat := c.takeSpare(int(offs[nterms])) // every element is written below
		next := make([]uint32, nterms)
		copy(next, offs[:nterms])
		for i, d := range docs {
			p := d.tfs[f]
			for j := 0; j < len(p); {
				term, tf, after := p.entry(j)
				flat[next[term]] = posting{doc: uint32(i), tf: tf}
				next[term]++
				j = after
			}
		}
		ix.post[f] = postings{offs: offs, flat: flat}
	}
	workers := 1
	if len(docs) >= minParallelDocs {
		workers = min(runtime.GOMAXPROCS(0), numFields)
	}
	parallel.Ranges(numFields, workers, func(lo, hi int) {
		for f := lo; f < hi; f++ {
			field(f)
		}
	})
	if dense != nil {
		if err := ix.setDense(dense); err != nil {
			return nil, err
		}
	}
	return ix, nil
}

// setPositions sets how the index finds a chunk's position by ID (see Index.byPath):
// by file when every file's chunks are consecutive, in order, with chunker.ChunkID's
// IDs, else by chunk. It returns an error for two chunks with the same ID.
func (ix *Index) setPositions() error {
	chunks := ix.chunks.ptrs
	ix.byPath = map[string]int{}
	start := 0 // position of the current file's first chunk
	for i, c := range chunks {
		p := c.Path
		if i > 0 && p == chunks[i-1].Path {
			if !isChunkID(c.ID, p, i-start) {
				ix.byPath = nil
				break
			}
			continue
		}
		start = i
		n := len(ix.byPath)
		ix.byPath[p] = i
		if len(ix.byPath) == n || !isChunkID(c.ID, p, 0) { // a second run of p, or another ID
			ix.byPath = nil
			break
		}
	}
	if ix.byPath == nil {
		ix.byID = make(map[string]int, len(chunks))
		for i, c := range chunks {
			ix.byID[c.ID] = i
			if len(ix.byID) != i+1 { // the ID was there: one map operation per chunk
				return fmt.Errorf("retrieve: duplicate chunk id %q", c.ID)
			}
		}
	}
	return nil
}

// minParallelDocs is the number of chunks from which NewIndex builds the fields'
// postings on goroutines of their own.
const minParallelDocs = 4096

// termID returns the ID of term, or -1 when the corpus has never seen it.
func (c *Corpus) termID(term string) int32 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if id, ok := c.dict[term]; ok {
		return id
	}
	return -1
}

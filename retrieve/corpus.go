package retrieve

import (
	"fmt"
	"strings"
	"sync"

	"github.com/repoctx/repoctx/chunker"
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
}

// corpusDoc is one chunk with its term frequencies per field.
type corpusDoc struct {
	chunk chunker.Chunk
	lens  [numFields]int32 // field lengths in tokens
	tfs   [numFields][]termFreq
}

// termFreq is a term of a field with its frequency.
type termFreq struct {
	term int32
	tf   int32
}

// NewCorpus returns an empty corpus.
func NewCorpus() *Corpus { return &Corpus{dict: map[string]int32{}} }

// Len returns the number of chunks added.
func (c *Corpus) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.docs)
}

// Add tokenises chunks (their text, header lines and path, with [Tokens]) and adds them,
// returning their ordinals in the order given. The chunks are copied (their strings are
// shared).
func (c *Corpus) Add(chunks []chunker.Chunk) []int32 {
	type termCount struct {
		term string
		tf   int32
	}
	type tokenised struct {
		lens  [numFields]int32
		terms [numFields][]termCount
	}
	toks := make([]tokenised, len(chunks))
	counts := map[string]int32{} // reused for every field of every chunk
	for i := range chunks {
		vals := fieldValues(&chunks[i])
		for f, v := range vals {
			clear(counts)
			n := int32(0)
			scan(v, func(start, end int) {
				n++
				w := v[start:end]
				if needsLower(w) {
					w = strings.ToLower(w)
				}
				counts[w]++
			})
			toks[i].lens[f] = n
			if len(counts) > 0 {
				tc := make([]termCount, 0, len(counts))
				for w, tf := range counts {
					tc = append(tc, termCount{w, tf})
				}
				toks[i].terms[f] = tc
			}
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	ords := make([]int32, len(chunks))
	for i := range chunks {
		d := &corpusDoc{chunk: chunks[i], lens: toks[i].lens}
		for f, tc := range toks[i].terms {
			if len(tc) == 0 {
				continue
			}
			tfs := make([]termFreq, len(tc))
			for j, t := range tc {
				id, ok := c.dict[t.term]
				if !ok {
					id = int32(len(c.terms))
					c.dict[t.term] = id
					c.terms = append(c.terms, t.term)
				}
				tfs[j] = termFreq{id, t.tf}
			}
			d.tfs[f] = tfs
		}
		ords[i] = int32(len(c.docs))
		c.docs = append(c.docs, d)
	}
	return ords
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

	ix := &Index{corpus: c, key: key, chunks: make([]chunker.Chunk, len(docs)), byID: make(map[string]int, len(docs))}
	for i, d := range docs {
		ix.chunks[i] = d.chunk
		if _, dup := ix.byID[d.chunk.ID]; dup {
			return nil, fmt.Errorf("retrieve: duplicate chunk id %q", d.chunk.ID)
		}
		ix.byID[d.chunk.ID] = i
	}
	ix.lens = make([][numFields]int32, len(docs))
	for f := range numFields {
		// Two passes over the term frequencies: count each list's length, then fill one
		// shared array, so a view costs a few allocations whatever its size.
		counts := make([]int32, nterms)
		total := 0
		for i, d := range docs {
			ix.lens[i][f] = d.lens[f]
			if d.lens[f] > 0 {
				ix.stats[f].Docs++
				ix.stats[f].Tokens += int64(d.lens[f])
			}
			for _, t := range d.tfs[f] {
				counts[t.term]++
			}
			total += len(d.tfs[f])
		}
		flat := make([]posting, total)
		lists := make([][]posting, nterms)
		off := 0
		for t, n := range counts {
			if n > 0 {
				lists[t] = flat[off : off : off+int(n)]
				off += int(n)
			}
		}
		for i, d := range docs {
			for _, t := range d.tfs[f] {
				lists[t.term] = append(lists[t.term], posting{doc: uint32(i), tf: t.tf})
			}
		}
		ix.post[f] = lists
	}
	if dense != nil {
		if err := ix.setDense(dense); err != nil {
			return nil, err
		}
	}
	return ix, nil
}

// termID returns the ID of term, or -1 when the corpus has never seen it.
func (c *Corpus) termID(term string) int32 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if id, ok := c.dict[term]; ok {
		return id
	}
	return -1
}

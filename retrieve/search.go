package retrieve

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"sort"
	"sync"

	"github.com/repoctx/repoctx/internal/topk"
)

// BM25 parameters (Robertson & Zaragoza 2009): K1 controls term-frequency saturation, B
// the strength of field-length normalisation. They are Lucene's defaults.
const (
	K1 = 1.2
	B  = 0.75
)

// Field weights of [Index.Search]: a chunk's score is the weighted sum of its per-field
// BM25 scores ("most fields" combination). The chunk text carries the signal; the
// header (signatures of enclosing definitions) and the file path are shared by many
// chunks and act as weaker, class- and file-level priors.
const (
	BoostText   = 1.0
	BoostHeader = 0.5
	BoostPath   = 0.3
)

// boosts is indexed like the fields.
var boosts = [numFields]float64{BoostText, BoostHeader, BoostPath}

// MaxQueryTerms caps the distinct query terms [Index.Search] scores. Long queries (the
// code before the cursor can be hundreds of lines) keep the MaxQueryTerms terms of
// lowest document frequency in the index, i.e. highest idf: they contribute most to
// BM25 and have the shortest postings lists, so the cap bounds latency while losing the
// least score mass. Terms absent from the index are dropped before counting.
const MaxQueryTerms = 256

// Hit is one search result.
type Hit struct {
	// ID is the chunk's ID (see [Index.Chunk]).
	ID string
	// Score is the chunk's BM25 score for the query, summed over fields with their boosts;
	// higher is better. It is only comparable between hits of the same query and index.
	Score float64
	// Rank is the 1-based position of the hit in the result list.
	Rank int
}

// qterm is a distinct query term with its postings lists.
type qterm struct {
	term  string
	count int // occurrences in the query
	first int // position of the first occurrence
	df    [numFields]uint64
	lists [numFields][]posting
	sumDF uint64
}

// searchBM25 returns the k chunks that score highest for query under BM25, best first, with
// ties broken by the chunks' order in the index.
//
// The query is tokenised with [Tokens]; duplicate terms count once (OR semantics: a chunk
// matching any term is a candidate), and at most [MaxQueryTerms] terms are scored. A
// chunk's score is
//
//	Σ_fields boost_f · Σ_terms idf_f(t) · tf·(K1+1) / (tf + K1·(1 − B + B·dl/avgdl_f))
//
// over the fields text, header (header lines joined) and path with boosts [BoostText],
// [BoostHeader], [BoostPath], where tf is the term's frequency in the chunk's field, dl the
// field's length in tokens, avgdl_f its mean over chunks whose field is non-empty, and
// idf_f(t) = ln(1 + (N_f − n_f(t) + 0.5)/(n_f(t) + 0.5)) with N_f the number of chunks with
// a non-empty field and n_f(t) those containing t. This is Okapi BM25 as in Robertson &
// Zaragoza, "The Probabilistic Relevance Framework: BM25 and Beyond" (2009), with the
// Lucene-style idf that stays positive; the constant factor K1+1 does not affect ranking.
// Collection statistics (N_f, avgdl_f) count chunks whose field is non-empty, as Lucene
// does.
//
// The top k are exact: postings lists are scored term-at-a-time in decreasing order of
// their score upper bound, and once the bounds of the lists left cannot lift an unseen
// chunk above the current k-th score, the remaining lists only visit the chunks that can
// still make it, skipping through the lists (the MaxScore idea of Turtle & Flood, "Query
// evaluation: strategies and optimizations", Information Processing & Management 31(6),
// 1995). Latency therefore grows with the postings of the query's rarer terms more than
// with those of its common ones.
//
// filter, if not nil, decides which chunks may be returned; rejected chunks do not count
// toward k. It is called at most once per chunk and search, in no particular order, and
// only for chunks matching the query; the pointer is shared with the index (do not modify
// or keep it). k <= 0 or a query without tokens yields no hits. Search is safe for
// concurrent use; it returns [ErrClosed] after [Index.Close].
func (ix *Index) searchBM25(query string, k int, filter *chunkFilter) ([]Hit, error) {
	hits, _, err := ix.searchFields(query, k, filter, true, false)
	return hits, err
}

// searchBM25NoHeader is searchBM25 with the header field left out of the score when
// noHeader is set ([Query.NoHeader]).
func (ix *Index) searchBM25NoHeader(query string, k int, filter *chunkFilter, noHeader bool) ([]Hit, error) {
	hits, _, err := ix.searchFields(query, k, filter, true, noHeader)
	return hits, err
}

// searchStats describes the work of one search.
type searchStats struct {
	lists    int  // postings lists (term × field)
	scanned  int  // postings read sequentially
	advances int  // skips to a candidate
	pruned   bool // whether the candidate phase was reached
	narrowed int  // k-th score searches among the documents above lb only
}

// search is searchBM25 with MaxScore pruning optional (tests compare both) and statistics.
func (ix *Index) search(query string, k int, filter *chunkFilter, prune bool) ([]Hit, searchStats, error) {
	return ix.searchFields(query, k, filter, prune, false)
}

// searchFields is search that leaves the header field out of the score when noHeader
// is set.
func (ix *Index) searchFields(query string, k int, filter *chunkFilter, prune, noHeader bool) ([]Hit, searchStats, error) {
	var st searchStats
	if k <= 0 {
		return nil, st, nil
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.closed {
		return nil, st, ErrClosed
	}
	toks := Tokens(query)
	if len(toks) == 0 || ix.chunks.len() == 0 {
		return nil, st, nil
	}
	acc := ix.getAccum()
	defer ix.putAccum(acc)
	terms := ix.queryTerms(toks, acc)
	if len(terms) == 0 {
		return nil, st, nil
	}
	if filter != nil && filter.verdict == nil {
		// The search's verdicts, each asked once (a hybrid search's filter has them
		// already, shared with its dense stage).
		own := *filter
		own.verdict = getVerdicts(ix.chunks.len())
		defer putVerdicts(own.verdict)
		filter = &own
	}
	acc.filter = filter
	hits := ix.rank(ix.cursors(terms, noHeader, acc), acc, k, prune, &st)
	return hits, st, nil
}

// queryTerms dedupes toks, finds each term's postings in each non-empty field, drops
// terms the index lacks and keeps the MaxQueryTerms rarest. The terms are held by acc
// (valid until putAccum).
func (ix *Index) queryTerms(toks []string, acc *accum) []qterm {
	if acc.pos == nil {
		acc.pos = make(map[string]int, len(toks))
	}
	pos, terms := acc.pos, acc.terms[:0]
	for i, t := range toks {
		if j, ok := pos[t]; ok {
			terms[j].count++
			continue
		}
		pos[t] = len(terms)
		terms = append(terms, qterm{term: t, count: 1, first: i})
	}
	kept := terms[:0]
	for _, q := range terms {
		id := ix.termID(q.term)
		for f := range numFields {
			if ix.stats[f].Docs == 0 {
				continue
			}
			if l := ix.termPostings(id, f); len(l) > 0 {
				q.lists[f], q.df[f] = l, uint64(len(l))
				q.sumDF += uint64(len(l))
			}
		}
		if q.sumDF > 0 {
			kept = append(kept, q)
		}
	}
	clear(terms[len(kept):]) // copies of kept terms, holding postings lists
	terms = kept
	if len(terms) > MaxQueryTerms {
		slices.SortFunc(terms, func(a, b qterm) int {
			if c := cmp.Compare(a.sumDF, b.sumDF); c != 0 {
				return c
			}
			if c := cmp.Compare(b.count, a.count); c != 0 {
				return c
			}
			return cmp.Compare(a.first, b.first)
		})
		clear(terms[MaxQueryTerms:])
		terms = terms[:MaxQueryTerms]
	}
	acc.terms = terms
	return terms
}

// cursor walks the postings of one query term in one field.
type cursor struct {
	term string
	list []posting
	lens [][numFields]int32 // the index's field lengths
	f    int
	df   uint64
	// A posting's contribution is ub·tf/(tf + c1 + c2·dl), the formula documented on
	// searchBM25 with ub = boost·idf·(K1+1). Since c1 = K1·(1−B) > 0 it is strictly below ub.
	ub, c1, c2 float64
}

func (c *cursor) contrib(p posting) float64 {
	tf := float64(p.tf)
	dl := float64(c.lens[p.doc][c.f])
	return c.ub * tf / (tf + c.c1 + c.c2*dl)
}

// cursors returns one cursor per (term, field) postings list, sorted by decreasing upper
// bound (then increasing length); with noHeader, none for the header field. The
// cursors are held by acc (valid until putAccum).
func (ix *Index) cursors(terms []qterm, noHeader bool, acc *accum) []cursor {
	cs := acc.cs[:0]
	for i := range terms {
		q := &terms[i]
		for f, list := range q.lists {
			if list == nil || noHeader && f == fieldHeader {
				continue
			}
			st := ix.stats[f]
			n, df := float64(st.Docs), float64(q.df[f])
			avgdl := float64(st.Tokens) / n
			cs = append(cs, cursor{
				term: q.term,
				list: list,
				lens: ix.lens,
				f:    f,
				df:   q.df[f],
				ub:   boosts[f] * math.Log(1+(n-df+0.5)/(df+0.5)) * (K1 + 1),
				c1:   K1 * (1 - B),
				c2:   K1 * B / avgdl,
			})
		}
	}
	slices.SortFunc(cs, func(a, b cursor) int {
		if c := cmp.Compare(b.ub, a.ub); c != 0 {
			return c
		}
		return cmp.Compare(a.df, b.df)
	})
	acc.cs = cs
	return cs
}

// advanceRatio: in the pruning phase a list is scanned whole when it has at most
// advanceRatio postings per remaining candidate, else the candidates are looked up in
// it by binary search, which costs more per posting visited.
const advanceRatio = 4

// rank scores the cursors' postings into acc and returns the best k accepted chunks.
func (ix *Index) rank(cs []cursor, acc *accum, k int, prune bool, st *searchStats) []Hit {
	st.lists = len(cs)
	rest := 0.0 // Σ ub of the lists not yet processed: the most an unseen chunk can score
	for i := range cs {
		rest += cs[i].ub
	}
	pruning := false // phase 2: only acc.cand can still make the top k
	maxScore := 0.0  // best score so far; the k-th best cannot exceed it
	lastCheck := math.Inf(1)
	lb := math.Inf(-1) // the last k-th score found: scores only grow, so k accepted docs still reach it
	// Once lb is known, acc.above holds every touched document scoring at least lb
	// (and some that fell below it since): the k-th score is looked for among them,
	// not among every touched document again (a search at 50,000 files touches
	// 400,000 chunks and looked for it 30-40 times).
	haveAbove := false
	for j := range cs {
		c := &cs[j]
		if prune && !pruning && rest <= maxScore && rest <= 0.95*lastCheck {
			// Unseen chunks can no longer reach the k-th best score: switch to
			// candidates. The k-th score is recomputed only after rest shrank 5%.
			lastCheck = rest
			docs := acc.touched
			if haveAbove {
				docs = acc.above
				st.narrowed++
			}
			theta, ok := acc.kth(docs, k, lb)
			if ok {
				lb = theta
				acc.keepAbove(docs, lb)
				haveAbove = true
			}
			if ok && rest <= theta {
				pruning = true
				st.pruned = true
				acc.cand = acc.cand[:0]
				for _, d := range acc.touched {
					if acc.scores[d]+rest > theta {
						acc.cand = append(acc.cand, d)
					}
				}
				acc.sortCand()
			}
		} else if pruning && rest <= 0.95*lastCheck {
			// Drop candidates that cannot reach the k-th best score even if they got
			// the full bound of every remaining list (contributions stay strictly
			// below the bounds, so a dropped chunk cannot even tie). As in phase 1,
			// only after rest shrank 5%: a candidate kept longer is still scored
			// whole, so the result is the same, and the k-th score is not recomputed
			// for every list.
			lastCheck = rest
			theta, ok := acc.kth(acc.cand, k, lb)
			if ok {
				lb = theta
			}
			kept := acc.cand[:0]
			for _, d := range acc.cand {
				if acc.scores[d]+rest > theta && (acc.filter == nil || acc.filter.verdict[d] >= 0) {
					kept = append(kept, d)
				}
			}
			acc.cand = kept
		}

		if !pruning || c.df <= uint64(advanceRatio*len(acc.cand)) {
			// Scan the whole list. In phase 2 this also adds to non-candidates, which
			// is harmless: only candidates are ranked. In phase 1, once lb is known,
			// the documents that reach it are noted.
			note := !pruning && haveAbove
			for _, p := range c.list {
				st.scanned++
				s := acc.add(uint64(p.doc), c.contrib(p))
				if s > maxScore {
					maxScore = s
				}
				if note && s >= lb {
					acc.noteAbove(uint64(p.doc))
				}
			}
		} else {
			// Look the candidates (in document order) up in the list, each search
			// starting where the last one ended.
			at := 0
			for _, d := range acc.cand {
				st.advances++
				at += sort.Search(len(c.list)-at, func(i int) bool { return uint64(c.list[at+i].doc) >= d })
				if at == len(c.list) {
					break
				}
				if uint64(c.list[at].doc) == d {
					acc.scores[d] += c.contrib(c.list[at])
				}
			}
		}
		rest -= c.ub
	}
	docs := acc.touched
	if pruning {
		docs = acc.cand
	}
	return ix.collect(acc, docs, k)
}

// collect returns the best k accepted chunks among docs (reordering docs).
func (ix *Index) collect(acc *accum, docs []uint64, k int) []Hit {
	better := func(a, b uint64) int { // best first; ties by chunk order (a document is its chunk's position)
		if c := cmp.Compare(acc.scores[b], acc.scores[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	}
	hits := make([]Hit, 0, min(k, len(docs)))
	// Rank the best m candidates; if the filter rejects too many, rank 4× more and
	// continue where we stopped (the order is total, so the prefix is unchanged).
	done := 0
	for m := k; ; m *= 4 {
		top := topM(docs, min(m, len(docs)), better)
		for _, d := range top[done:] {
			if !acc.accepted(d) {
				continue
			}
			hits = append(hits, Hit{ID: ix.chunks.id(int(d)), Score: acc.scores[d], Rank: len(hits) + 1})
			if len(hits) == k {
				return hits
			}
		}
		done = len(top)
		if done >= len(docs) {
			return hits
		}
	}
}

// topM returns the m best of docs under better, sorted best first. docs is reordered
// when m >= len(docs).
func topM(docs []uint64, m int, better func(a, b uint64) int) []uint64 {
	if m >= len(docs) {
		slices.SortFunc(docs, better)
		return docs
	}
	return topk.Best(docs, m, better)
}

// accum holds per-search scoring state, indexed by document (chunk position); pooled per
// index and cleared through touched.
type accum struct {
	ix      *Index
	filter  *chunkFilter
	scores  []float64 // 0 means untouched (every contribution is positive)
	touched []uint64  // documents with a non-zero score
	cand    []uint64  // phase-2 candidates, ascending
	kh      []float64 // scratch for kth: a min-heap of the k best scores
	bits    []uint64  // scratch for sortCand: one bit per document, all 0 between uses
	above   []uint64  // documents that reached rank's lb (see there), each once
	inAbove []uint64  // one bit per document: in above (all 0 between uses)
	// Scratch of queryTerms and cursors, empty between uses (their elements hold
	// postings lists of the index searched: zeroed when the search ends).
	pos   map[string]int
	terms []qterm
	cs    []cursor
}

// keepAbove makes above the documents of docs scoring at least lb: docs is touched
// (above is then empty) or above itself (filtered in place).
func (a *accum) keepAbove(docs []uint64, lb float64) {
	a.inAbove = docBits(a.inAbove, len(a.scores))
	kept := a.above[:0]
	for _, d := range docs {
		if a.scores[d] >= lb {
			kept = append(kept, d)
			a.inAbove[d>>6] |= 1 << (d & 63)
		} else {
			a.inAbove[d>>6] &^= 1 << (d & 63)
		}
	}
	a.above = kept
}

// docBits returns b as a bitset of one bit per document of n: b resliced when its
// capacity holds them, else a new one. Every bit of an accumulator's bitsets is 0
// between uses, beyond their length too, so either way all are 0.
func docBits(b []uint64, n int) []uint64 {
	w := (n + 63) / 64
	if cap(b) >= w {
		return b[:w]
	}
	return make([]uint64, w)
}

// noteAbove adds doc to above unless it is there.
func (a *accum) noteAbove(doc uint64) {
	if w, bit := &a.inAbove[doc>>6], uint64(1)<<(doc&63); *w&bit == 0 {
		*w |= bit
		a.above = append(a.above, doc)
	}
}

// sortCand sorts the candidates (distinct documents) in ascending order: a few with
// slices.Sort, more through a bitmap of the documents, read word by word (linear in
// the documents/64 plus the candidates, where a comparison sort of thousands of
// candidates cost a tenth of a long query's search).
func (a *accum) sortCand() {
	if len(a.cand) < 64 {
		slices.Sort(a.cand)
		return
	}
	a.bits = docBits(a.bits, len(a.scores))
	for _, d := range a.cand {
		a.bits[d>>6] |= 1 << (d & 63)
	}
	out := a.cand[:0]
	for w, word := range a.bits {
		if word == 0 {
			continue
		}
		a.bits[w] = 0
		for word != 0 {
			out = append(out, uint64(w)<<6|uint64(bits.TrailingZeros64(word)))
			word &= word - 1
		}
	}
	a.cand = out
}

// add adds s to doc's score and returns the new score.
func (a *accum) add(doc uint64, s float64) float64 {
	if a.scores[doc] == 0 {
		a.touched = append(a.touched, doc)
	}
	a.scores[doc] += s
	return a.scores[doc]
}

// accepted reports whether the filter accepts doc, asking it at most once (the
// filter keeps its verdicts: see searchFields).
func (a *accum) accepted(doc uint64) bool {
	return a.filter == nil || a.ix.accepts(a.filter, int(doc))
}

// kth returns the k-th highest score among the accepted docs, and false if fewer than k
// are accepted. The filter is only asked about docs that would enter the running top k.
// lb is a score that k accepted docs of docs are known to reach (an earlier k-th score
// of the same search: scores only grow; -Inf when none): docs below it cannot be
// among the k best and are passed over without the heap or the filter.
//
// It is topk's heap (higher scores better) written out for float64, without a
// comparison function called per value: a search calls it for thousands of docs.
func (a *accum) kth(docs []uint64, k int, lb float64) (float64, bool) {
	if k <= 0 {
		return 0, false
	}
	h := a.kh[:0]
	for _, d := range docs {
		s := a.scores[d]
		// topk.Heap.Would: not full, or better than the worst kept.
		if s < lb || len(h) >= k && !cmp.Less(h[0], s) || !a.accepted(d) {
			continue
		}
		if len(h) < k {
			h = append(h, s)
			for i := len(h) - 1; i > 0; { // up
				p := (i - 1) / 2
				if !cmp.Less(h[i], h[p]) {
					break
				}
				h[i], h[p] = h[p], h[i]
				i = p
			}
			continue
		}
		h[0] = s
		for i := 0; ; { // down
			l := 2*i + 1
			if l >= len(h) {
				break
			}
			c := l
			if r := l + 1; r < len(h) && cmp.Less(h[r], h[l]) {
				c = r
			}
			if !cmp.Less(h[c], h[i]) {
				break
			}
			h[i], h[c] = h[c], h[i]
			i = c
		}
	}
	a.kh = h
	if len(h) < k {
		return 0, false
	}
	return h[0], true
}

// accums holds the accumulators of searches done, of every index of the process:
// their arrays are all zero, and a search of an index of up to as many chunks takes
// them again. A batch makes and closes many views of about the same size one after
// another, and a new array costs a page fault per 4 KiB on first touch.
var accums sync.Pool // of *accum

// getAccum returns an accumulator for a search of ix: scores of ix's length, all
// zero.
func (ix *Index) getAccum() *accum {
	n := ix.chunks.len()
	if a, ok := accums.Get().(*accum); ok && cap(a.scores) >= n {
		a.ix = ix
		a.scores = a.scores[:n]
		return a
	}
	return &accum{ix: ix, scores: make([]float64, n)}
}

// putAccum zeroes what a's search set and keeps a for the next search.
func (ix *Index) putAccum(a *accum) {
	for _, d := range a.touched {
		a.scores[d] = 0
	}
	for _, d := range a.above {
		a.inAbove[d>>6] = 0
	}
	a.touched = a.touched[:0]
	clear(a.pos)
	clear(a.terms)
	clear(a.cs)
	a.terms, a.cs = a.terms[:0], a.cs[:0]
	a.cand = a.cand[:0]
	a.above = a.above[:0]
	a.filter, a.ix = nil, nil
	accums.Put(a)
}

package retrieve

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/repoctx/repoctx/chunker"
)

// RRFK is the rank constant of reciprocal rank fusion (Cormack, Clarke & Büttcher,
// "Reciprocal Rank Fusion outperforms Condorcet and individual Rank Learning Methods",
// SIGIR 2009).
const RRFK = 60

// DefaultFusionDepth is the minimum number of hits each retriever contributes to a
// hybrid search by default.
const DefaultFusionDepth = 50

// Weights configures the fusion of a hybrid search ([Query.Weights]). The zero value
// means [DefaultWeights].
type Weights struct {
	// BM25 and Dense weigh the two retrievers' reciprocal ranks. Both zero means the
	// defaults (0.2 and 0.8, the seed's); a zero (or negative) weight with the other
	// positive leaves that retriever out.
	BM25, Dense float64
	// K is the RRF rank constant; 0 means [RRFK] (60).
	K float64
	// Depth is how many hits each retriever contributes before fusion; 0 means
	// max(k, [DefaultFusionDepth]). It is never below k.
	Depth int
	// DenseCandidates, when positive, makes a hybrid search's dense retrieval rank only
	// the best m = max(DenseCandidates, depth) chunks of its BM25 search (depth: Depth
	// after its default), provided m is smaller than the number of chunks in the index
	// (BM25-first re-ranking, as in the multi-stage pipeline of Nogueira & Cho 2019,
	// "Passage Re-ranking with BERT", section 3), so that its cost follows those chunks
	// instead of every vector; a chunk sharing no term with the query is then never a
	// dense hit. 0 (the default), or an m of at least the index's size, ranks every
	// vector: exact.
	DenseCandidates int
}

// DefaultWeights returns the seed's fusion weights: dense 0.8, BM25 0.2, k = 60, and
// depth 0 (max(k, [DefaultFusionDepth])).
func DefaultWeights() Weights { return Weights{BM25: 0.2, Dense: 0.8, K: RRFK} }

func (w Weights) withDefaults(k int) Weights {
	if w.BM25 <= 0 && w.Dense <= 0 {
		d := DefaultWeights()
		w.BM25, w.Dense = d.BM25, d.Dense
	}
	w.BM25, w.Dense = max(w.BM25, 0), max(w.Dense, 0)
	if w.K <= 0 {
		w.K = RRFK
	}
	if w.Depth <= 0 {
		w.Depth = max(k, DefaultFusionDepth)
	}
	w.Depth = max(w.Depth, k)
	return w
}

// FusedHit is one result of [Index.Search], with what each retriever said about the
// chunk, so a caller can show why it was chosen.
type FusedHit struct {
	// ID is the chunk's ID.
	ID string `json:"id"`
	// Score is, for a hybrid search, the fused score Σ w_r / (K + rank_r) over the
	// retrievers r that returned the chunk; for a BM25 or dense search, that retriever's
	// own score (BM25, cosine). Higher is better.
	Score float64 `json:"score"`
	// Rank is the 1-based position in the fused list.
	Rank int `json:"rank"`
	// BM25Rank and DenseRank are the chunk's 1-based ranks in the BM25 and dense lists,
	// 0 when that list (of Weights.Depth hits) does not have it.
	BM25Rank  int `json:"bm25_rank"`
	DenseRank int `json:"dense_rank"`
	// BM25Score and DenseScore are the retrievers' own scores (BM25, cosine), 0 when
	// absent.
	BM25Score  float64 `json:"bm25_score"`
	DenseScore float64 `json:"dense_score"`
}

// Mode selects the retrievers of a [Query].
type Mode uint8

const (
	// Hybrid fuses BM25 and dense retrieval (weighted RRF); on an index without dense
	// vectors it ranks by BM25 alone, with fused scores.
	Hybrid Mode = iota
	// BM25 ranks by BM25 alone (see [Index.Search] for the formula).
	BM25
	// Dense ranks by the cosine similarity of the query's vector to the chunks'.
	Dense
)

// String returns "hybrid", "bm25" or "dense".
func (m Mode) String() string {
	switch m {
	case Hybrid:
		return "hybrid"
	case BM25:
		return "bm25"
	case Dense:
		return "dense"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// Query is one search of an [Index].
type Query struct {
	// Text is the query: code, tokenised with [Tokens] for BM25 and embedded whole for
	// dense retrieval.
	Text string
	// K is the number of chunks wanted (at most); K <= 0 returns none.
	K int
	// Mode selects the retrievers; the zero value is Hybrid.
	Mode Mode
	// Filter, if not nil, decides which chunks may be returned; rejected chunks do not
	// count toward K. It is called at most once per chunk and search, in no particular
	// order, and only for chunks that could enter the top K; the pointer is shared with
	// the index (do not modify or keep it).
	Filter func(*chunker.Chunk) bool
	// Prefilter, if not nil, is asked about a chunk before Filter, with the chunk's
	// path and language alone (an index loaded with [LoadImageLazy] decodes no file to
	// answer it): [Reject] drops the chunk, [Accept] keeps it without asking Filter,
	// [AskFilter] (or any other value) leaves it to Filter (kept when Filter is nil).
	// Asked at most once per chunk and search, as Filter is.
	Prefilter func(path, lang string) Verdict
	// Weights configure a hybrid search's fusion; the zero value is [DefaultWeights].
	Weights Weights
	// Keep says which end of an over-long query the dense model keeps: [KeepTail] for a
	// prefix query ending at the hole, [KeepHead] (the zero value) for a suffix query.
	Keep KeepEnd
	// NoHeader leaves the header field (the signatures of a chunk's enclosing
	// definitions) out of the BM25 score: an ablation switch; off by default.
	NoHeader bool
}

// Search returns the best q.K chunks for q, best first, ties broken by the chunks'
// order in the index, so results are deterministic. In a hybrid search, ties go first to the higher BM25 score: of the
// fused score, and of the dense score (near-identical chunks tie on the dense side),
// so that the exact lexical match among hundreds of look-alike chunks is not lost.
//
// BM25 (Mode [BM25], Robertson & Zaragoza 2009; see the package documentation for the
// formula and the MaxScore evaluation) and dense retrieval (Mode [Dense]: exact cosine
// kNN over all vectors) return each retriever's own scores, with BM25Rank or DenseRank
// set. A hybrid search ranks by weighted reciprocal rank fusion: each retriever returns
// its best Weights.Depth chunks, and a chunk's fused score is
//
//	w.BM25/(w.K + rank_bm25) + w.Dense/(w.K + rank_dense)
//
// with a term only for the lists that hold the chunk (Cormack, Clarke & Büttcher, SIGIR
// 2009, weighted as in the seed: dense 0.8, BM25 0.2, K = 60). On an index without dense
// vectors ([DenseNone]) a hybrid search ranks by BM25 alone (every DenseRank is 0).
//
// Search is safe for concurrent use. It returns ctx's error when ctx is done before it
// starts, [ErrClosed] after [Index.Close], [ErrNoDense] for a dense search of an index
// without vectors, and the model's errors, wrapped.
func (ix *Index) Search(ctx context.Context, q Query) ([]FusedHit, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if q.K <= 0 {
		return nil, nil
	}
	switch q.Mode {
	case BM25, Dense:
		var hits []Hit
		var err error
		if q.Mode == BM25 {
			hits, err = ix.searchBM25NoHeader(q.Text, q.K, q.filter(), q.NoHeader)
		} else {
			hits, err = ix.searchDense(q.Text, q.K, q.filter(), q.Keep)
		}
		if err != nil {
			return nil, err
		}
		out := make([]FusedHit, len(hits))
		for i, h := range hits {
			out[i] = FusedHit{ID: h.ID, Score: h.Score, Rank: h.Rank}
			if q.Mode == BM25 {
				out[i].BM25Rank, out[i].BM25Score = h.Rank, h.Score
			} else {
				out[i].DenseRank, out[i].DenseScore = h.Rank, h.Score
			}
		}
		return out, nil
	case Hybrid:
		return ix.searchHybrid(q.Text, q.K, q.filter(), q.Weights, q.Keep, q.NoHeader)
	}
	return nil, fmt.Errorf("retrieve: unknown search mode %v", q.Mode)
}

// searchHybrid is Search's hybrid mode: its three stages in turn.
func (ix *Index) searchHybrid(query string, k int, filter *chunkFilter, w Weights, keep KeepEnd, noHeader bool) ([]FusedHit, error) {
	if k <= 0 {
		return nil, nil
	}
	s, err := ix.hybridBM25(query, k, filter, w, keep, noHeader)
	if err != nil {
		return nil, err
	}
	defer s.release()
	if err := ix.hybridDense(s); err != nil {
		return nil, err
	}
	return ix.hybridFuse(s), nil
}

// hybridSearch is a hybrid search between its stages: hybridBM25 makes it with the
// BM25 hits, the dense stage sets dn (hybridDense alone, or [Index.SearchBatch] for
// several searches in one pass over the vectors), hybridFuse ranks.
type hybridSearch struct {
	query string
	k     int
	w     Weights // with defaults
	f     *chunkFilter
	keep  KeepEnd
	bm    []Hit
	dn    []Hit
	cands []int             // the dense search's chunks (BM25-first), nil: all
	dense bool              // the dense stage is to run
	tie   func(int) float64 // the dense ranking's tie-break: BM25 scores, when any
}

// hybridBM25 is a hybrid search's first stage (k > 0): the BM25 search, and the
// dense stage's candidates and tie-break.
func (ix *Index) hybridBM25(query string, k int, filter *chunkFilter, w Weights, keep KeepEnd, noHeader bool) (*hybridSearch, error) {
	w = w.withDefaults(k)
	f := filter
	if filter != nil {
		// The two retrievers ask about many of the same chunks: each once.
		f = &chunkFilter{pre: filter.pre, f: filter.f, verdict: getVerdicts(ix.Len())}
	}
	s := &hybridSearch{query: query, k: k, w: w, f: f, keep: keep}
	var err error
	if w.Dense > 0 && w.DenseCandidates > 0 && max(w.DenseCandidates, w.Depth) < ix.Len() {
		all, err := ix.searchBM25NoHeader(query, max(w.DenseCandidates, w.Depth), f, noHeader)
		if err != nil {
			return nil, err
		}
		s.cands = make([]int, 0, len(all))
		for _, h := range all {
			i, _ := ix.position(h.ID)
			s.cands = append(s.cands, i)
		}
		slices.Sort(s.cands)
		if w.BM25 > 0 {
			s.bm = all[:min(w.Depth, len(all))] // the same hits as a search of depth w.Depth
		}
	} else if w.BM25 > 0 {
		if s.bm, err = ix.searchBM25NoHeader(query, w.Depth, f, noHeader); err != nil {
			return nil, err
		}
	}
	s.dense = w.Dense > 0 && (s.cands == nil || len(s.cands) > 0)
	if s.dense && len(s.bm) > 0 {
		// Chunks with the same vector (near-identical chunks whose differences the
		// dense model does not see) are ranked by their BM25 score first.
		score := make(map[int]float64, len(s.bm))
		for _, h := range s.bm {
			i, _ := ix.position(h.ID)
			score[i] = h.Score
		}
		s.tie = func(i int) float64 { return score[i] }
	}
	return s, nil
}

// release returns what s borrowed (its filter's verdict array); s's filter must not
// be used afterwards.
func (s *hybridSearch) release() {
	if s != nil && s.f != nil {
		putVerdicts(s.f.verdict)
		s.f.verdict = nil
	}
}

// hybridDense is a hybrid search's dense stage on its own.
func (ix *Index) hybridDense(s *hybridSearch) error {
	if !s.dense {
		return nil
	}
	dn, err := ix.searchDenseIn(s.query, s.w.Depth, s.f, s.keep, s.tie, s.cands)
	if errors.Is(err, ErrNoDense) {
		dn, err = nil, nil
	}
	if err != nil {
		return err
	}
	s.dn = dn
	return nil
}

// hybridFuse is a hybrid search's last stage: the reciprocal rank fusion of its
// two lists, the best s.k.
func (ix *Index) hybridFuse(s *hybridSearch) []FusedHit {
	bm, dn, w, k := s.bm, s.dn, s.w, s.k
	at := make(map[string]int, len(bm)+len(dn)) // ID -> index in out
	out := make([]FusedHit, 0, len(bm)+len(dn))
	get := func(id string) *FusedHit {
		i, ok := at[id]
		if !ok {
			i = len(out)
			at[id] = i
			out = append(out, FusedHit{ID: id})
		}
		return &out[i]
	}
	for _, h := range bm {
		fh := get(h.ID)
		fh.BM25Rank, fh.BM25Score = h.Rank, h.Score
		fh.Score += w.BM25 / (w.K + float64(h.Rank))
	}
	for _, h := range dn {
		fh := get(h.ID)
		fh.DenseRank, fh.DenseScore = h.Rank, h.Score
		fh.Score += w.Dense / (w.K + float64(h.Rank))
	}
	// Ties of the fused score go to the better BM25 score, then to chunk order.
	slices.SortFunc(out, func(a, b FusedHit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		if c := cmp.Compare(b.BM25Score, a.BM25Score); c != 0 {
			return c
		}
		i, _ := ix.position(a.ID)
		j, _ := ix.position(b.ID)
		return cmp.Compare(i, j)
	})
	if len(out) > k {
		out = out[:k:k]
	}
	for i := range out {
		out[i].Rank = i + 1
	}
	return out
}

// Verdict is a [Query.Prefilter]'s answer about a chunk.
type Verdict int8

// Verdicts of a [Query.Prefilter].
const (
	AskFilter Verdict = iota // Query.Filter decides (the chunk is kept without one)
	Accept                   // kept, Query.Filter not asked
	Reject                   // dropped
)

// chunkFilter is a search's filter (Query.Prefilter, then Query.Filter); nil keeps
// every chunk.
type chunkFilter struct {
	pre func(path, lang string) Verdict
	f   func(*chunker.Chunk) bool
	// verdict, when not nil (a hybrid search's, shared by its two stages, or a BM25
	// search's own: see searchFields), holds the verdicts found so far by
	// chunk position: 1 kept, -1 dropped, 0 not asked yet. It is one byte per chunk
	// of the index rather than a map, so that the parts of a shared dense scan, each
	// over its own rows, write it at once without a lock, and a search allocates
	// nothing for it (getVerdicts).
	verdict []int8
}

// verdicts holds zeroed verdict arrays of finished searches (*[]int8).
var verdicts sync.Pool

// getVerdicts returns a zeroed verdict array of n chunks.
func getVerdicts(n int) []int8 {
	if v, ok := verdicts.Get().(*[]int8); ok && cap(*v) >= n {
		return (*v)[:n]
	}
	return make([]int8, n)
}

// putVerdicts zeroes v and keeps it for getVerdicts.
func putVerdicts(v []int8) {
	if v == nil {
		return
	}
	clear(v)
	verdicts.Put(&v)
}

// filter returns q's chunkFilter, nil when q has neither filter.
func (q *Query) filter() *chunkFilter {
	if q.Prefilter == nil && q.Filter == nil {
		return nil
	}
	return &chunkFilter{pre: q.Prefilter, f: q.Filter}
}

// accepts reports whether cf keeps the chunk at position i: the chunk is decoded
// (LoadImageLazy) only when cf.f is asked.
func (ix *Index) accepts(cf *chunkFilter, i int) bool {
	if cf == nil {
		return true
	}
	if cf.verdict == nil {
		return ix.keeps(cf, i)
	}
	if v := cf.verdict[i]; v != 0 {
		return v > 0
	}
	v := ix.keeps(cf, i)
	cf.verdict[i] = -1
	if v {
		cf.verdict[i] = 1
	}
	return v
}

// keeps is accepts without cf.verdict: it asks cf's functions (cf not nil).
func (ix *Index) keeps(cf *chunkFilter, i int) bool {
	verdict := AskFilter
	if cf.pre != nil {
		path, lang := ix.chunks.pathLang(i)
		verdict = cf.pre(path, lang)
	}
	switch verdict {
	case Reject:
		return false
	case Accept:
		return true
	default: // AskFilter, or a value that is no Verdict
		return cf.f == nil || cf.f(ix.chunks.at(i))
	}
}

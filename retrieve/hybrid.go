package retrieve

import (
	"cmp"
	"errors"
	"slices"

	"github.com/repoctx/repoctx/chunker"
)

// RRFK is the rank constant of reciprocal rank fusion (Cormack, Clarke & Büttcher,
// "Reciprocal Rank Fusion outperforms Condorcet and individual Rank Learning Methods",
// SIGIR 2009).
const RRFK = 60

// DefaultFusionDepth is the minimum number of hits each retriever contributes to
// [Index.SearchHybrid] by default.
const DefaultFusionDepth = 50

// Weights configures [Index.SearchHybrid]. The zero value means [DefaultWeights].
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
}

// DefaultWeights are the seed's fusion weights: dense 0.8, BM25 0.2, k = 60.
var DefaultWeights = Weights{BM25: 0.2, Dense: 0.8, K: RRFK}

func (w Weights) withDefaults(k int) Weights {
	if w.BM25 <= 0 && w.Dense <= 0 {
		w.BM25, w.Dense = DefaultWeights.BM25, DefaultWeights.Dense
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

// FusedHit is one result of [Index.SearchHybrid], with what each retriever said about
// the chunk, so a caller can show why it was chosen.
type FusedHit struct {
	// ID is the chunk's ID.
	ID string `json:"id"`
	// Score is the fused score Σ w_r / (K + rank_r) over the retrievers r that returned
	// the chunk; higher is better.
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

// SearchHybrid ranks chunks by weighted reciprocal rank fusion of [Index.Search] (BM25)
// and [Index.SearchDense] for the same query: each retriever returns its best w.Depth
// chunks, and a chunk's fused score is
//
//	w.BM25/(w.K + rank_bm25) + w.Dense/(w.K + rank_dense)
//
// with a term only for the lists that hold the chunk (Cormack et al. 2009, weighted as
// in the seed: dense 0.8, BM25 0.2, K = 60). It returns the k best, ties broken by the
// chunks' order in [Build]'s input.
//
// keep is passed to the dense model (see [Index.SearchDense]). filter works as for
// Search and is called at most once per chunk. An index without dense vectors
// ([DenseNone]) ranks by BM25 alone (every DenseRank is 0). Errors are those of the two
// searches.
func (ix *Index) SearchHybrid(query string, k int, filter func(*chunker.Chunk) bool, w Weights, keep KeepEnd) ([]FusedHit, error) {
	if k <= 0 {
		return nil, nil
	}
	w = w.withDefaults(k)
	f := filter
	if filter != nil {
		seen := map[*chunker.Chunk]bool{}
		f = func(c *chunker.Chunk) bool {
			v, ok := seen[c]
			if !ok {
				v = filter(c)
				seen[c] = v
			}
			return v
		}
	}
	var bm, dn []Hit
	var err error
	if w.BM25 > 0 {
		if bm, err = ix.Search(query, w.Depth, f); err != nil {
			return nil, err
		}
	}
	if w.Dense > 0 {
		dn, err = ix.SearchDense(query, w.Depth, f, keep)
		if errors.Is(err, ErrNoDense) {
			dn, err = nil, nil
		}
		if err != nil {
			return nil, err
		}
	}
	byID := make(map[string]*FusedHit, len(bm)+len(dn))
	var out []*FusedHit
	get := func(id string) *FusedHit {
		h := byID[id]
		if h == nil {
			h = &FusedHit{ID: id}
			byID[id] = h
			out = append(out, h)
		}
		return h
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
	slices.SortFunc(out, func(a, b *FusedHit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(ix.byID[a.ID], ix.byID[b.ID])
	})
	if len(out) > k {
		out = out[:k]
	}
	hits := make([]FusedHit, len(out))
	for i, h := range out {
		hits[i] = *h
		hits[i].Rank = i + 1
	}
	return hits, nil
}

package retrieve

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/internal/parallel"
	"github.com/repoctx/repoctx/internal/topk"
)

// DenseKind selects the dense retriever of an index (index.Options.Dense).
type DenseKind uint8

const (
	// DenseLSA is the built-in LSA model fitted on the indexed chunks (the default;
	// see [LSAVectors]).
	DenseLSA DenseKind = iota
	// DenseNone builds no dense vectors: BM25 only.
	DenseNone
	// DenseModel embeds with a model the caller opened (see [ModelVectors]), for
	// example a Hugging Face sentence encoder from the retrieve/hugot package.
	DenseModel
)

// String returns "lsa", "none" or "model".
func (k DenseKind) String() string {
	switch k {
	case DenseLSA:
		return "lsa"
	case DenseNone:
		return "none"
	case DenseModel:
		return "model"
	}
	return fmt.Sprintf("DenseKind(%d)", uint8(k))
}

// ParseDense returns the DenseKind named s ("lsa" or "none"; "model" needs an
// embedder and is chosen by giving one). It returns an error naming s otherwise.
func ParseDense(s string) (DenseKind, error) {
	switch s {
	case "lsa", "":
		return DenseLSA, nil
	case "none":
		return DenseNone, nil
	}
	return 0, fmt.Errorf("retrieve: unknown dense retriever %q (lsa or none; a model is given as an embedder)", s)
}

// DefaultEmbedBatch is the number of texts per [Embedder.Embed] call of [EmbedTexts]
// when its batch argument is 0 or less.
const DefaultEmbedBatch = 32

// ErrNoDense is returned (wrapped) by [Index.Search] in [Dense] mode for an index built without
// dense vectors ([DenseNone]). A [Hybrid] search falls back to BM25 alone instead.
var ErrNoDense = errors.New("retrieve: index has no dense vectors")

// DenseInfo describes the dense vectors of an index (all zero for [DenseNone]).
type DenseInfo struct {
	// Model is the [Embedder.ID] the vectors were computed with.
	Model string `json:"model"`
	// Dim is the vectors' dimension (0: the model produced no vectors, e.g. LSA on
	// chunks without terms).
	Dim int `json:"dim"`
	// Vectors is the number of vectors: one per chunk, in Build order.
	Vectors int `json:"vectors"`
	// Truncated counts the chunks longer than the model's input limit, embedded from
	// their start only (from their first [MaxPieces] pieces for a [Splitter]);
	// TruncatedIDs lists them.
	Truncated    int      `json:"truncated"`
	TruncatedIDs []string `json:"truncated_ids,omitempty"`
	// Split counts the chunks longer than the model's input limit embedded as the mean
	// of their pieces' vectors (see [Splitter]), Truncated ones included.
	Split int `json:"split,omitempty"`
	// Embedded counts the chunks the model embedded for this index, Cached those whose
	// vectors were already computed (in memory or in the store).
	Embedded int `json:"embedded"`
	Cached   int `json:"cached"`
	// FitMS is the LSA fitting time, EmbedMS the embedding time (cache look-ups
	// included), in milliseconds.
	FitMS   int64 `json:"fit_ms,omitempty"`
	EmbedMS int64 `json:"embed_ms"`
	// Terms is the LSA vocabulary size.
	Terms int `json:"terms,omitempty"`
}

// Count adds one chunk's [EmbedStatus] (from [EmbedTexts]) to the counts; id is the
// chunk's ID, listed in TruncatedIDs when it was truncated.
func (d *DenseInfo) Count(s EmbedStatus, id string) {
	if s&EmbedSplit != 0 {
		d.Split++
	}
	if s&EmbedTruncated != 0 {
		d.Truncated++
		d.TruncatedIDs = append(d.TruncatedIDs, id)
	}
}

// DenseVectors is the dense part of an index: one vector per chunk and the model that
// embeds queries.
type DenseVectors struct {
	// Vectors holds one L2-normalised row of Dim float32 per chunk, in index order.
	Vectors []float32
	// Rows, used when Vectors is nil, holds the same rows as one slice of Dim float32
	// per chunk, in index order: a caller that keeps its vectors per chunk (the
	// index package's repository index) hands them over without copying them into one
	// array per view. The index does not modify them.
	Rows [][]float32
	// Dim is the vectors' dimension; 0 means the model produced none (LSA on chunks
	// without terms) and dense searches find nothing.
	Dim int
	// Embedder embeds queries; its ID must be the one the vectors were computed with.
	// The index never closes it.
	Embedder Embedder
	// Info describes the vectors (counts of embedded, cached and truncated chunks).
	Info DenseInfo
}

// setDense attaches d to the index.
func (ix *Index) setDense(d *DenseVectors) error {
	if d.Vectors == nil && d.Rows != nil && d.Dim > 0 {
		if len(d.Rows) != ix.chunks.len() {
			return fmt.Errorf("retrieve: %d dense rows for %d chunks", len(d.Rows), ix.chunks.len())
		}
		for i, r := range d.Rows {
			if len(r) != d.Dim {
				return fmt.Errorf("retrieve: dense row %d has %d values, want the dimension %d", i, len(r), d.Dim)
			}
		}
	} else if d.Dim < 0 || d.Dim > 0 && len(d.Vectors) != d.Dim*ix.chunks.len() {
		return fmt.Errorf("retrieve: %d dense values for %d chunks of dimension %d", len(d.Vectors), ix.chunks.len(), d.Dim)
	}
	if d.Embedder == nil && d.Dim > 0 {
		return fmt.Errorf("retrieve: dense vectors without a query embedder: %w", ErrNoEmbedder)
	}
	if d.Embedder != nil && d.Dim > 0 && d.Embedder.Dim() != d.Dim {
		return fmt.Errorf("retrieve: vectors of dimension %d, embedder %s of dimension %d: %w", d.Dim, d.Embedder.ID(), d.Embedder.Dim(), ErrNoEmbedder)
	}
	d.Info.Dim, d.Info.Vectors = d.Dim, ix.chunks.len()
	if d.Embedder != nil {
		d.Info.Model = d.Embedder.ID()
	}
	ix.dense = d
	return nil
}

// EmbedStatus says how [EmbedTexts] embedded one text (a bit set).
type EmbedStatus uint8

const (
	// EmbedTruncated: the text was longer than the model's input limit and only its
	// start counts (for a [Splitter], its first [MaxPieces] pieces).
	EmbedTruncated EmbedStatus = 1 << iota
	// EmbedSplit: the text was longer than a [Splitter]'s input limit and its vector is
	// the mean of its pieces' vectors.
	EmbedSplit
)

// EmbedTexts embeds texts with emb in batches of batch (0: [DefaultEmbedBatch]), longest
// texts first when byLength (a batch then pads little), and returns one L2-normalised
// vector per text in the order given, with how each was embedded. A text the model
// truncates is, when emb is a [Splitter], embedded again as the normalised mean of its
// pieces' vectors (at most [MaxPieces]). It stops with ctx's error between batches.
// The built-in [LSA], which embeds each text on its own and is safe for concurrent
// use, embeds the batches on up to GOMAXPROCS goroutines (the vectors are the same);
// other embedders get one batch at a time.
func EmbedTexts(ctx context.Context, emb Embedder, texts []string, batch int, byLength bool) ([][]float32, []EmbedStatus, error) {
	if batch <= 0 {
		batch = DefaultEmbedBatch
	}
	order := make([]int, len(texts))
	for i := range order {
		order[i] = i
	}
	if byLength {
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(len(texts[b]), len(texts[a])) })
	}
	vecs := make([][]float32, len(texts))
	status := make([]EmbedStatus, len(texts))
	dim := emb.Dim()
	sp, _ := emb.(Splitter)
	batches := (len(order) + batch - 1) / batch
	// embedBatch embeds batch b (order[b·batch:]) into vecs and status, which it alone
	// writes at those texts' indexes.
	embedBatch := func(b int, in []string) error {
		ids := order[b*batch : min((b+1)*batch, len(order))]
		in = in[:0]
		for _, i := range ids {
			in = append(in, texts[i])
		}
		out, tr, err := emb.Embed(in, KeepHead)
		if err != nil {
			return fmt.Errorf("retrieve: embed chunks with %s: %w", emb.ID(), err)
		}
		if len(out) != len(in) || len(tr) != len(in) {
			return fmt.Errorf("retrieve: %s returned %d vectors for %d texts", emb.ID(), len(out), len(in))
		}
		for j, i := range ids {
			if len(out[j]) != dim {
				return fmt.Errorf("retrieve: %s returned a vector of dimension %d, want %d", emb.ID(), len(out[j]), dim)
			}
			if tr[j] && sp != nil {
				if out[j], tr[j], err = embedPieces(sp, texts[i]); err != nil {
					return err
				}
				status[i] |= EmbedSplit
			}
			if tr[j] {
				status[i] |= EmbedTruncated
			}
			Normalize(out[j])
			vecs[i] = out[j]
		}
		return nil
	}
	workers := 1
	if _, ok := emb.(*LSA); ok {
		workers = runtime.GOMAXPROCS(0)
	}
	// Contiguous runs of batches, one per worker (one worker: this goroutine, batch
	// after batch). A run stops at its first error, and the others at their next batch;
	// the error returned is that of the earliest batch that failed.
	errs := make([]error, batches)
	var failed atomic.Bool
	parallel.Ranges(batches, workers, func(lo, hi int) {
		in := make([]string, 0, batch)
		for b := lo; b < hi && !failed.Load(); b++ {
			err := ctx.Err()
			if err == nil {
				err = embedBatch(b, in)
			}
			if err != nil {
				errs[b] = err
				failed.Store(true)
				return
			}
		}
	})
	for _, err := range errs {
		if err != nil {
			return nil, nil, err
		}
	}
	return vecs, status, nil
}

// embedPieces embeds a text too long for sp as the mean of the vectors of its first
// MaxPieces pieces (see [Splitter]) and reports whether it is still truncated: more
// pieces, or a piece the model truncated.
func embedPieces(sp Splitter, text string) ([]float32, bool, error) {
	pieces, err := sp.Split(text)
	if err != nil {
		return nil, false, fmt.Errorf("retrieve: split a long chunk for %s: %w", sp.ID(), err)
	}
	trunc := len(pieces) > MaxPieces
	pieces = pieces[:min(len(pieces), MaxPieces)]
	vecs, ptrunc, err := sp.Embed(pieces, KeepHead)
	if err != nil {
		return nil, false, fmt.Errorf("retrieve: embed chunk pieces with %s: %w", sp.ID(), err)
	}
	if len(vecs) != len(pieces) || len(ptrunc) != len(pieces) {
		return nil, false, fmt.Errorf("retrieve: %s returned %d vectors for %d texts", sp.ID(), len(vecs), len(pieces))
	}
	mean := make([]float32, sp.Dim())
	for k, v := range vecs {
		if len(v) != len(mean) {
			return nil, false, fmt.Errorf("retrieve: %s returned a vector of dimension %d, want %d", sp.ID(), len(v), len(mean))
		}
		Normalize(v)
		for c, x := range v {
			mean[c] += x / float32(len(vecs))
		}
		trunc = trunc || ptrunc[k]
	}
	return mean, trunc, nil
}

// LSA returns the LSA model the index's vectors were computed with, or nil when the
// index has no LSA vectors (none, or another model).
func (ix *Index) LSA() (*LSA, error) {
	if ix.dense == nil || ix.dense.Dim == 0 {
		return nil, nil
	}
	m, _ := ix.dense.Embedder.(*LSA)
	return m, nil
}

// DenseInfo describes the index's dense vectors; Model is "" when it has none.
func (ix *Index) DenseInfo() DenseInfo {
	if ix.dense == nil {
		return DenseInfo{}
	}
	d := ix.dense.Info
	d.TruncatedIDs = slices.Clone(d.TruncatedIDs)
	return d
}

// HasDense reports whether the index holds dense vectors.
func (ix *Index) HasDense() bool { return ix.dense != nil && ix.dense.Dim > 0 }

// searchDense returns the k chunks whose vectors are most similar to the query's
// (cosine similarity, exact: every vector is compared), best first, with ties broken by
// the chunks' order in [Build]'s input. Hit.Score is the cosine similarity.
//
// The query is embedded with the model the index was built with; keep says which end
// of an over-long query the model keeps ([KeepTail] for a prefix query ending at the
// hole, [KeepHead] for a suffix query). A query the model maps to the zero vector (no
// known term, for LSA) yields no hits.
//
// filter works as for BM25: rejected chunks do not count toward k, and it is
// called at most once per chunk, only for chunks that would enter the current top k.
//
// It returns [ErrNoDense] for an index without dense vectors, [ErrClosed] after Close,
// and the model's errors, wrapped.
func (ix *Index) searchDense(query string, k int, filter *chunkFilter, keep KeepEnd) ([]Hit, error) {
	return ix.searchDenseTies(query, k, filter, keep, nil)
}

// searchDenseTies is searchDense with ties of the cosine similarity broken first by
// tie (higher first; nil: none), given a chunk's index in [Build]'s input.
func (ix *Index) searchDenseTies(query string, k int, filter *chunkFilter, keep KeepEnd, tie func(int) float64) ([]Hit, error) {
	return ix.searchDenseIn(query, k, filter, keep, tie, nil)
}

// searchDenseIn is searchDenseTies over the chunks at positions cands (ascending), or
// over every chunk when cands is nil.
func (ix *Index) searchDenseIn(query string, k int, filter *chunkFilter, keep KeepEnd, tie func(int) float64, cands []int) ([]Hit, error) {
	if k <= 0 {
		return nil, nil
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.closed {
		return nil, ErrClosed
	}
	if ix.dense == nil {
		return nil, ErrNoDense
	}
	d := ix.dense
	if d.Dim == 0 || ix.chunks.len() == 0 {
		return nil, nil
	}
	q, err := embedQuery(d, query, keep)
	if err != nil {
		return nil, err
	}
	if !Normalize(q) {
		return nil, nil
	}
	return ix.topDense(q, d, k, filter, tie, cands), nil
}

// denseCand is a chunk (its position) with its dot product with a query.
type denseCand struct {
	i int
	s float32
}

// denseOrder is the dense ranking's total order, best first: the higher dot product,
// then the higher tie (when not nil), then the earlier chunk.
func denseOrder(tie func(int) float64) func(a, b denseCand) int {
	return func(a, b denseCand) int {
		if c := cmp.Compare(b.s, a.s); c != 0 {
			return c
		}
		if tie != nil {
			if c := cmp.Compare(tie(b.i), tie(a.i)); c != 0 {
				return c
			}
		}
		return cmp.Compare(a.i, b.i)
	}
}

// topDense returns the k best accepted chunks by dot product with q, ties broken by
// tie (higher first, when not nil), then by chunk order; only the chunks at positions
// cands (ascending) when cands is not nil.
func (ix *Index) topDense(q []float32, d *DenseVectors, k int, filter *chunkFilter, tie func(int) float64, cands []int) []Hit {
	h := topk.New(k, denseOrder(tie))
	q = alignedQuery(q)
	n := ix.chunks.len()
	if cands != nil {
		n = len(cands)
	}
	for j := range n {
		i := j
		if cands != nil {
			i = cands[j]
		}
		c := denseCand{i, dot(d.row(i), q)}
		if h.Len() > 0 && h.Full() && c.s < h.Worst().s || !h.Would(c) {
			// (A lower score never ranks before the worst kept: skipped without the
			// comparison function.)
			continue
		}
		if !ix.accepts(filter, i) {
			continue
		}
		h.Push(c)
	}
	top := h.Sorted()
	hits := make([]Hit, len(top))
	for r, c := range top {
		hits[r] = Hit{ID: ix.chunks.id(c.i), Score: float64(c.s), Rank: r + 1}
	}
	return hits
}

// LSAVectors fits an LSA model of dimension dim (0: [DefaultLSADim]) on the texts of
// chunks (Deerwester et al. 1990; see [LSA]), labels it with label (see [LSA.Labeled];
// "" for none) and returns the chunks' vectors with the model as query embedder.
func LSAVectors(ctx context.Context, chunks []chunker.Chunk, dim int, label string) (*DenseVectors, error) {
	start := time.Now()
	m, err := FitLSA(chunks, dim)
	if err != nil {
		return nil, err
	}
	if label != "" {
		m = m.Labeled(label)
	}
	fit := time.Since(start)
	d, err := ModelVectors(ctx, m, chunks)
	if err != nil {
		return nil, err
	}
	d.Info.FitMS, d.Info.Terms = fit.Milliseconds(), m.Terms()
	return d, nil
}

// ModelVectors embeds the texts of chunks with emb (see [EmbedTexts]) and returns them
// as the dense part of an index, with emb as query embedder.
func ModelVectors(ctx context.Context, emb Embedder, chunks []chunker.Chunk) (*DenseVectors, error) {
	start := time.Now()
	d := &DenseVectors{Dim: emb.Dim(), Embedder: emb}
	if d.Dim <= 0 {
		d.Dim = 0
		return d, nil
	}
	texts := make([]string, len(chunks))
	for i := range chunks {
		texts[i] = chunks[i].Text
	}
	_, isLSA := emb.(*LSA)
	vecs, status, err := EmbedTexts(ctx, emb, texts, 0, !isLSA)
	if err != nil {
		return nil, err
	}
	d.Vectors = make([]float32, 0, len(chunks)*d.Dim)
	for i, v := range vecs {
		d.Vectors = append(d.Vectors, v...)
		d.Info.Count(status[i], chunks[i].ID)
	}
	d.Info.Embedded = len(chunks)
	d.Info.EmbedMS = time.Since(start).Milliseconds()
	return d, nil
}

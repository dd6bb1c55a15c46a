package retrieve

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/repoctx/repoctx/internal/parallel"
	"github.com/repoctx/repoctx/internal/topk"
)

// minSharedRows is the number of vector rows below which a shared dense scan runs in
// one goroutine: splitting fewer rows costs more than it saves.
var minSharedRows = 8192

// SearchBatch runs the searches qs as [Index.Search] runs each, at once, and returns
// their results and errors in qs's order (results[i] is nil when errs[i] is set). The
// results are those Search gives, hit for hit. What it saves: the hybrid searches
// that scan every dense vector (all but those with Weights.DenseCandidates) read the
// vectors once between them, each row's dot products with every query taken while
// the row is in cache, the rows split over GOMAXPROCS goroutines (at least
// minSharedRows each). A dense scan reads every vector (128 float32 each with the
// built-in LSA: 350 MB at 680,000 chunks), so scanning them once for two or three
// queries instead of once per query is most of a big index's request (see
// docs/performance.md). Each goroutine keeps every query's best Weights.Depth chunks
// of its rows under the dense ranking's total order (score, BM25 tie-break, chunk
// order); the merged lists are the best of all rows under that order, the same as
// one scan's.
//
// SearchBatch is safe for concurrent use. A query's Prefilter and Filter are called
// from several goroutines at once (by the parts of the shared scan): they must be
// safe for concurrent use. It returns ctx's error for every query when ctx is done
// before it starts; otherwise the errors of Search, a panic of a search (its BM25
// search, or its query's embedding) as that query's error, and a panic during the
// shared scan (a filter's) as the error of every query in it.
func (ix *Index) SearchBatch(ctx context.Context, qs []Query) (results [][]FusedHit, errs []error) {
	results, errs = make([][]FusedHit, len(qs)), make([]error, len(qs))
	if err := ctx.Err(); err != nil {
		for i := range errs {
			errs[i] = err
		}
		return results, errs
	}
	searches := make([]*hybridSearch, len(qs)) // the hybrid searches after their BM25 stage
	var wg sync.WaitGroup
	each := func(f func(i int)) {
		for i := range qs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() {
					if r := recover(); r != nil {
						results[i], errs[i] = nil, fmt.Errorf("retrieve: internal error: %v", r)
					}
				}()
				f(i)
			}()
		}
		wg.Wait()
	}
	each(func(i int) {
		q := &qs[i]
		if q.Mode != Hybrid || q.K <= 0 {
			results[i], errs[i] = ix.Search(ctx, *q)
			return
		}
		searches[i], errs[i] = ix.hybridBM25(q.Text, q.K, q.filter(), q.Weights, q.Keep, q.NoHeader)
	})
	var shared []int // the searches that scan every vector
	for i, s := range searches {
		if s != nil && errs[i] == nil && s.dense && s.cands == nil {
			shared = append(shared, i)
		}
	}
	if len(shared) > 1 {
		ss := make([]*hybridSearch, len(shared))
		for j, i := range shared {
			ss[j] = searches[i]
		}
		for j, err := range ix.denseShared(ss) {
			if err != nil {
				errs[shared[j]] = err
			}
		}
	}
	each(func(i int) {
		s := searches[i]
		if s == nil || errs[i] != nil {
			return
		}
		if s.dense { // not shared
			if errs[i] = ix.hybridDense(s); errs[i] != nil {
				return
			}
		}
		results[i] = ix.hybridFuse(s)
	})
	for _, s := range searches { // every part of every search has returned
		s.release()
	}
	return results, errs
}

// denseShared is the dense stage of searches (none with candidates), in one pass over
// the vectors: it sets each search's dn as hybridDense would, and its dense flag off,
// and returns each search's error (nil for none): an error of its query's embedding
// (a panic of the embedder included) is that search's; a panic in the scan (a filter's)
// is every scanned search's.
func (ix *Index) denseShared(searches []*hybridSearch) []error {
	errs := make([]error, len(searches))
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.closed {
		for j := range errs {
			errs[j] = ErrClosed
		}
		return errs
	}
	for _, s := range searches {
		s.dense = false
	}
	d := ix.dense
	if d == nil || d.Dim == 0 || ix.chunks.len() == 0 {
		return errs // ErrNoDense, or no rows: no dense hits (as hybridDense)
	}
	var scan []*hybridSearch
	var scanAt []int
	var qvs [][]float32
	for j, s := range searches {
		if s.w.Depth <= 0 {
			continue
		}
		qv, err := embedQuery(d, s.query, s.keep)
		if err != nil {
			errs[j] = err
			continue
		}
		if !Normalize(qv) {
			continue
		}
		scan = append(scan, s)
		scanAt = append(scanAt, j)
		qvs = append(qvs, alignedQuery(qv))
	}
	if len(scan) == 0 {
		return errs
	}
	hits, err := ix.scanShared(qvs, d, scan)
	if err != nil {
		for _, j := range scanAt {
			errs[j] = err
		}
		return errs
	}
	for j, s := range scan {
		s.dn = hits[j]
	}
	return errs
}

// scanShared is the shared scan of denseShared: for each search j, the best
// s.w.Depth accepted chunks by dot product with qvs[j] (aligned and normalized), over
// every row, split over GOMAXPROCS goroutines of at least minSharedRows rows. A panic
// of a goroutine (a filter's) is returned as an error.
func (ix *Index) scanShared(qvs [][]float32, d *DenseVectors, scan []*hybridSearch) ([][]Hit, error) {
	n := ix.chunks.len()
	workers := min(runtime.GOMAXPROCS(0), n/max(minSharedRows, 1)) // parallel.Ranges: 1 or less is one call
	orders := make([]func(a, b denseCand) int, len(scan))
	for j, s := range scan {
		orders[j] = denseOrder(s.tie)
	}
	kept := make([][]denseCand, len(scan)) // each search's best of every range, in no order
	var panicked any
	var mu sync.Mutex
	parallel.Ranges(n, workers, func(lo, hi int) {
		defer func() {
			if r := recover(); r != nil {
				mu.Lock()
				panicked = r
				mu.Unlock()
			}
		}()
		part := ix.topDenseRows(qvs, d, scan, orders, lo, hi)
		mu.Lock()
		for j := range part {
			kept[j] = append(kept[j], part[j]...)
		}
		mu.Unlock()
	})
	if panicked != nil {
		return nil, fmt.Errorf("retrieve: internal error: %v", panicked)
	}
	hits := make([][]Hit, len(scan))
	for j, s := range scan {
		top := topk.Best(kept[j], s.w.Depth, orders[j]) // a total order: the ranges' order does not matter
		hits[j] = make([]Hit, len(top))
		for r, c := range top {
			hits[j][r] = Hit{ID: ix.chunks.id(c.i), Score: float64(c.s), Rank: r + 1}
		}
	}
	return hits, nil
}

// embedQuery is searchDenseIn's embedding of query, a panic of the embedder returned
// as an error.
func embedQuery(d *DenseVectors, query string, keep KeepEnd) (q []float32, err error) {
	defer func() {
		if r := recover(); r != nil {
			q, err = nil, fmt.Errorf("retrieve: embed query: internal error: %v", r)
		}
	}()
	qv, _, err := d.Embedder.Embed([]string{query}, keep)
	if err != nil {
		return nil, fmt.Errorf("retrieve: embed query: %w", err)
	}
	if len(qv) != 1 || len(qv[0]) != d.Dim {
		return nil, fmt.Errorf("retrieve: query embedder %s does not match the index's vectors: %w", d.Embedder.ID(), ErrNoEmbedder)
	}
	return qv[0], nil
}

// topDenseRows is topDense for several searches over the rows [lo, hi): each row's
// dot products with every query in qvs, each search's best s.w.Depth accepted chunks
// of those rows under orders[j], best first. It reads and writes the searches'
// filter verdicts of the rows [lo, hi) only.
func (ix *Index) topDenseRows(qvs [][]float32, d *DenseVectors, searches []*hybridSearch, orders []func(a, b denseCand) int, lo, hi int) [][]denseCand {
	heaps := make([]*topk.Heap[denseCand], len(searches))
	for j, s := range searches {
		heaps[j] = topk.New(s.w.Depth, orders[j])
	}
	for i := lo; i < hi; i++ {
		row := d.row(i)
		for j, q := range qvs {
			h := heaps[j]
			c := denseCand{i, dot(row, q)}
			if h.Len() > 0 && h.Full() && c.s < h.Worst().s || !h.Would(c) {
				continue
			}
			// The parts of the scan cover disjoint rows, so each writes its own
			// verdicts.
			if !ix.accepts(searches[j].f, i) {
				continue
			}
			h.Push(c)
		}
	}
	out := make([][]denseCand, len(searches))
	for j, h := range heaps {
		out[j] = h.Sorted()
	}
	return out
}

package retrieve

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/internal/topk"
)

// DenseKind selects the dense retriever of an index ([BuildOptions.Dense]).
type DenseKind uint8

const (
	// DenseLSA is the built-in LSA model fitted on the indexed chunks (the default),
	// or the LSA model given as [BuildOptions.Embedder].
	DenseLSA DenseKind = iota
	// DenseNone builds no dense vectors: BM25 only.
	DenseNone
	// DenseModel embeds with [BuildOptions.Embedder], a model the caller opened (for
	// example a Hugging Face sentence encoder from the retrieve/hugot package).
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

// DefaultEmbedBatch is the number of chunks per [Embedder.Embed] call during a build.
const DefaultEmbedBatch = 32

// Files of the dense part of an index directory.
const (
	vectorsFile = "vectors.f32" // chunk vectors, little-endian float32, one row per chunk in Build order
	lsaFile     = "lsa.gob.sz"  // the fitted LSA model (built-in dense model only)
)

// ErrNoDense is returned (wrapped) by [Index.Search] in [Dense] mode for an index built without
// dense vectors ([DenseNone]). A [Hybrid] search falls back to BM25 alone instead.
var ErrNoDense = errors.New("retrieve: index has no dense vectors")

// BuildOptions configures [Build], [Open] and [OpenOrBuild]. The zero value is the
// default: BM25 plus the built-in [LSA] model of dimension [DefaultLSADim].
type BuildOptions struct {
	// Dense selects the dense retriever. With an Embedder it is ignored: the vectors
	// are that model's ([DenseModel]).
	Dense DenseKind
	// Dim is the LSA dimension (default [DefaultLSADim]); other models fix their own.
	Dim int
	// Embedder, if not nil, is an opened model the vectors are computed with (and
	// queries embedded with): give the same one to the indexes of many snapshots so
	// the model is loaded once. The index never closes it.
	Embedder Embedder
	// EmbedCache is the directory of the embedding cache for models other than LSA (see
	// [EmbedCacheFile]). Empty means none for [Build], and the subdirectory
	// "embeddings" of the cache directory for [OpenOrBuild].
	EmbedCache string
	// NoEmbedCache turns the embedding cache off.
	NoEmbedCache bool
	// EmbedCacheTimeout is how long a build waits for another process's lock on the
	// embedding cache before building without it; 0 means [DefaultEmbedCacheTimeout].
	EmbedCacheTimeout time.Duration
	// BatchSize is the number of chunks per Embed call (default [DefaultEmbedBatch]);
	// with the vectors written to disk as they come, it bounds the build's memory.
	BatchSize int
}

// DenseInfo describes the dense vectors of an index (all zero for [DenseNone]). It is
// stored in the index's manifest.
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
	// Split counts the chunks longer than the model's input limit that this build
	// embedded as the mean of their pieces' vectors (see [Splitter]), Truncated ones
	// included (not those whose vectors came from the embedding cache).
	Split int `json:"split,omitempty"`
	// Embedded counts the chunks the model embedded during the build, Cached those whose
	// vectors came from the embedding cache.
	Embedded int `json:"embedded"`
	Cached   int `json:"cached"`
	// CacheError, if not empty, says why the build ran without the embedding cache.
	CacheError string `json:"cache_error,omitempty"`
	// FitMS is the LSA fitting time, EmbedMS the embedding time (cache look-ups
	// included), in milliseconds.
	FitMS   int64 `json:"fit_ms,omitempty"`
	EmbedMS int64 `json:"embed_ms"`
	// Terms is the LSA vocabulary size.
	Terms int `json:"terms,omitempty"`
}

// denseKind says which dense retriever a BuildOptions selects.
type denseKind int

const (
	kindNone denseKind = iota
	kindLSA
	kindModel
)

// denseSpec is a resolved BuildOptions.Dense.
type denseSpec struct {
	kind denseKind
	id   string // the Embedder ID, "" for none
	dim  int    // LSA dimension
}

// spec resolves the dense selection.
func (o BuildOptions) spec() (denseSpec, error) {
	if o.Embedder != nil {
		return denseSpec{kind: kindModel, id: o.Embedder.ID()}, nil
	}
	switch o.Dense {
	case DenseNone:
		return denseSpec{kind: kindNone}, nil
	case DenseLSA:
		if o.Dim < 0 {
			return denseSpec{}, fmt.Errorf("retrieve: LSA dimension %d < 0", o.Dim)
		}
		return denseSpec{kind: kindLSA, id: LSAModelID(o.Dim), dim: o.Dim}, nil
	case DenseModel:
		return denseSpec{}, errors.New("retrieve: dense model selected without an embedder")
	}
	return denseSpec{}, fmt.Errorf("retrieve: unknown dense retriever %v", o.Dense)
}

// dirName is the directory name, under a cache directory, of the index of key with the
// dense model id: [CacheDirName](key) for the default LSA model (so [OpenOrBuild] keeps
// its directories), else CacheDirName of key and id, so indexes of one snapshot with
// different models live side by side.
func dirName(key, id string) string {
	if id == LSAModelID(0) {
		return CacheDirName(key)
	}
	return CacheDirName(key + "\x00dense=" + id)
}

// IndexDirName returns the directory name, under a cache directory, that
// [OpenOrBuild] uses for key and opts (opening no model).
func IndexDirName(key string, opts BuildOptions) (string, error) {
	s, err := opts.spec()
	if err != nil {
		return "", err
	}
	return dirName(key, s.id), nil
}

// buildDense computes the dense part of an index of chunks into the build directory tmp
// and returns its description, or nil for none. emb is the model for kindModel.
func buildDense(ctx context.Context, tmp string, chunks []chunker.Chunk, s denseSpec, emb Embedder, opts BuildOptions) (*DenseInfo, error) {
	if s.kind == kindNone {
		return nil, nil
	}
	info := &DenseInfo{Model: s.id}
	var cache *embedCache
	if s.kind == kindLSA {
		start := time.Now()
		texts := make([]string, len(chunks))
		for i := range chunks {
			texts[i] = denseText(&chunks[i])
		}
		m, err := fitLSATexts(texts, s.dim)
		if err != nil {
			return nil, err
		}
		info.FitMS = time.Since(start).Milliseconds()
		info.Terms = m.Terms()
		if err := writeFileWith(filepath.Join(tmp, lsaFile), func(w io.Writer) error { _, err := m.WriteTo(w); return err }); err != nil {
			return nil, fmt.Errorf("retrieve: write LSA model: %w", err)
		}
		emb = m
	} else if l, ok := emb.(*LSA); ok {
		if err := writeFileWith(filepath.Join(tmp, lsaFile), func(w io.Writer) error { _, err := l.WriteTo(w); return err }); err != nil {
			return nil, fmt.Errorf("retrieve: write LSA model: %w", err)
		}
	} else if opts.EmbedCache != "" && !opts.NoEmbedCache && emb.Dim() > 0 {
		c, err := openEmbedCache(opts.EmbedCache, s.id, emb.Dim(), opts.EmbedCacheTimeout)
		if err != nil {
			info.CacheError = err.Error()
		} else {
			cache = c
			defer cache.close()
		}
	}
	info.Dim = emb.Dim()
	if info.Dim <= 0 {
		info.Dim = 0
		return info, nil
	}
	start := time.Now()
	if err := embedChunks(ctx, filepath.Join(tmp, vectorsFile), chunks, emb, cache, opts.BatchSize, s.kind == kindModel, info); err != nil {
		return nil, err
	}
	info.EmbedMS = time.Since(start).Milliseconds()
	info.Vectors = len(chunks)
	return info, nil
}

// denseText is the text of a chunk that dense models embed: its content.
func denseText(c *chunker.Chunk) string { return c.Text }

// writeFileWith creates path and writes it with fn.
func writeFileWith(path string, fn func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	err = fn(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// embedChunks writes the vectors of chunks to path, a row per chunk in order, taking
// what it can from cache (may be nil) and embedding the rest batch by batch (longest
// texts first when byLength, so that a batch pads little), writing each batch as it
// comes. It fills info's counters.
func embedChunks(ctx context.Context, path string, chunks []chunker.Chunk, emb Embedder, cache *embedCache, batch int, byLength bool, info *DenseInfo) error {
	if batch <= 0 {
		batch = DefaultEmbedBatch
	}
	dim := emb.Dim()
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("retrieve: %w", err)
	}
	defer f.Close()
	if err := f.Truncate(int64(len(chunks)) * int64(dim) * 4); err != nil {
		return fmt.Errorf("retrieve: %w", err)
	}
	row := make([]byte, 4*dim)
	write := func(i int, v []float32) error {
		for j, x := range v {
			binary.LittleEndian.PutUint32(row[4*j:], math.Float32bits(x))
		}
		_, err := f.WriteAt(row, int64(i)*int64(len(row)))
		return err
	}
	truncated := make([]bool, len(chunks))

	todo := make([]int, 0, len(chunks))
	if cache == nil {
		for i := range chunks {
			todo = append(todo, i)
		}
	} else {
		const lookup = 256
		keys := make([][33]byte, 0, lookup)
		for lo := 0; lo < len(chunks); lo += lookup {
			hi := min(lo+lookup, len(chunks))
			keys = keys[:0]
			for i := lo; i < hi; i++ {
				keys = append(keys, cacheKey(denseText(&chunks[i]), KeepHead))
			}
			vecs, trunc, err := cache.get(keys)
			if err != nil {
				return err
			}
			for j, v := range vecs {
				i := lo + j
				if v == nil {
					todo = append(todo, i)
					continue
				}
				if err := write(i, v); err != nil {
					return fmt.Errorf("retrieve: write vectors: %w", err)
				}
				truncated[i] = trunc[j]
				info.Cached++
			}
		}
	}
	if byLength {
		slices.SortStableFunc(todo, func(a, b int) int { return cmp.Compare(len(chunks[b].Text), len(chunks[a].Text)) })
	}
	texts := make([]string, 0, batch)
	var keys [][33]byte
	for lo := 0; lo < len(todo); lo += batch {
		if err := ctx.Err(); err != nil {
			return err
		}
		ids := todo[lo:min(lo+batch, len(todo))]
		texts = texts[:0]
		for _, i := range ids {
			texts = append(texts, denseText(&chunks[i]))
		}
		vecs, trunc, err := emb.Embed(texts, KeepHead)
		if err != nil {
			return fmt.Errorf("retrieve: embed chunks with %s: %w", emb.ID(), err)
		}
		if len(vecs) != len(texts) || len(trunc) != len(texts) {
			return fmt.Errorf("retrieve: %s returned %d vectors for %d texts", emb.ID(), len(vecs), len(texts))
		}
		for j, i := range ids {
			if len(vecs[j]) != dim {
				return fmt.Errorf("retrieve: %s returned a vector of dimension %d, want %d", emb.ID(), len(vecs[j]), dim)
			}
			if sp, ok := emb.(Splitter); ok && trunc[j] {
				if vecs[j], trunc[j], err = embedPieces(sp, texts[j]); err != nil {
					return err
				}
				info.Split++
			}
			Normalize(vecs[j])
			if err := write(i, vecs[j]); err != nil {
				return fmt.Errorf("retrieve: write vectors: %w", err)
			}
			truncated[i] = trunc[j]
		}
		info.Embedded += len(ids)
		if cache != nil {
			keys = keys[:0]
			for _, t := range texts {
				keys = append(keys, cacheKey(t, KeepHead))
			}
			if err := cache.put(keys, vecs, trunc); err != nil {
				return err
			}
		}
	}
	for i, t := range truncated {
		if t {
			info.Truncated++
			info.TruncatedIDs = append(info.TruncatedIDs, chunks[i].ID)
		}
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("retrieve: write vectors: %w", err)
	}
	return nil
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

// checkDenseFiles verifies, at Open, that the files the manifest's dense part describes
// exist with the right sizes.
func checkDenseFiles(dir string, d *DenseInfo) error {
	if d == nil || d.Dim == 0 {
		return nil
	}
	st, err := os.Stat(filepath.Join(dir, vectorsFile))
	if err != nil {
		return fmt.Errorf("retrieve: %s has no vectors: %w (%w)", dir, ErrIncomplete, err)
	}
	if want := int64(d.Vectors) * int64(d.Dim) * 4; st.Size() != want {
		return fmt.Errorf("retrieve: %s has %d bytes of vectors, want %d: %w", dir, st.Size(), want, ErrIncomplete)
	}
	return nil
}

// denseData loads the vectors (and the LSA model, when the index has one and no
// embedder was attached) on first use.
func (ix *Index) denseData() ([]float32, Embedder, error) {
	ix.denseOnce.Do(func() {
		d := ix.man.Dense
		if d == nil {
			ix.denseErr = ErrNoDense
			return
		}
		if d.Dim == 0 {
			return
		}
		vecs, err := readVectors(filepath.Join(ix.dir, vectorsFile), d.Vectors*d.Dim)
		if err != nil {
			ix.denseErr = fmt.Errorf("retrieve: read vectors of %s: %w (%v)", ix.dir, ErrIncomplete, err)
			return
		}
		ix.denseVecs = vecs
		if ix.qemb == nil {
			if _, err := os.Stat(filepath.Join(ix.dir, lsaFile)); err == nil {
				m, err := readLSAFile(filepath.Join(ix.dir, lsaFile))
				if err != nil {
					ix.denseErr = fmt.Errorf("retrieve: %s: %w", ix.dir, err)
					return
				}
				ix.qemb = m
			}
		}
	})
	if ix.denseErr != nil {
		return nil, nil, ix.denseErr
	}
	return ix.denseVecs, ix.qemb, nil
}

// readVectors reads n little-endian float32 values, the whole file path, through a
// small buffer (not a second copy of the file in memory).
func readVectors(path string, n int) ([]float32, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || st.Size() != int64(n)*4 {
		return nil, fmt.Errorf("%s: want %d bytes", path, int64(n)*4)
	}
	vecs := make([]float32, n)
	buf := make([]byte, 64<<10)
	for i := 0; i < n; {
		m := min(len(buf)/4, n-i)
		if _, err := io.ReadFull(f, buf[:4*m]); err != nil {
			return nil, err
		}
		for j := range m {
			vecs[i+j] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*j:]))
		}
		i += m
	}
	return vecs, nil
}

// LSA returns the LSA model the index's vectors were computed with, or nil when the
// index has no LSA vectors (none, or another model). It fails when the model file is
// damaged.
func (ix *Index) LSA() (*LSA, error) {
	if ix.man.Dense == nil || ix.man.Dense.Dim == 0 {
		return nil, nil
	}
	_, emb, err := ix.denseData()
	if err != nil {
		return nil, err
	}
	m, _ := emb.(*LSA)
	return m, nil
}

// DenseInfo describes the index's dense vectors; Model is "" when it has none.
func (ix *Index) DenseInfo() DenseInfo {
	if ix.man.Dense == nil {
		return DenseInfo{}
	}
	d := *ix.man.Dense
	d.TruncatedIDs = slices.Clone(d.TruncatedIDs)
	return d
}

// HasDense reports whether the index holds dense vectors.
func (ix *Index) HasDense() bool { return ix.man.Dense != nil && ix.man.Dense.Dim > 0 }

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
// It returns [ErrNoDense] for an index built without dense vectors, [ErrNoEmbedder] if
// the model is not available for the query (see [Open]), [ErrClosed] after Close,
// and the model's errors, wrapped.
func (ix *Index) searchDense(query string, k int, filter func(*chunker.Chunk) bool, keep KeepEnd) ([]Hit, error) {
	return ix.searchDenseTies(query, k, filter, keep, nil)
}

// searchDenseTies is searchDense with ties of the cosine similarity broken first by
// tie (higher first; nil: none), given a chunk's index in [Build]'s input.
func (ix *Index) searchDenseTies(query string, k int, filter func(*chunker.Chunk) bool, keep KeepEnd, tie func(int) float64) ([]Hit, error) {
	if k <= 0 {
		return nil, nil
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.closed {
		return nil, ErrClosed
	}
	vecs, emb, err := ix.denseData()
	if err != nil {
		return nil, err
	}
	d := ix.man.Dense
	if d.Dim == 0 || len(ix.chunks) == 0 {
		return nil, nil
	}
	if emb == nil {
		return nil, fmt.Errorf("retrieve: %s holds vectors of %s: %w", ix.dir, d.Model, ErrNoEmbedder)
	}
	qv, _, err := emb.Embed([]string{query}, keep)
	if err != nil {
		return nil, fmt.Errorf("retrieve: embed query: %w", err)
	}
	if len(qv) != 1 || len(qv[0]) != d.Dim {
		return nil, fmt.Errorf("retrieve: query embedder %s does not match the index's vectors: %w", emb.ID(), ErrNoEmbedder)
	}
	q := qv[0]
	if !Normalize(q) {
		return nil, nil
	}
	return ix.topDense(q, vecs, d.Dim, k, filter, tie), nil
}

// topDense returns the k best accepted chunks by dot product with q, ties broken by
// tie (higher first, when not nil), then by chunk order.
func (ix *Index) topDense(q, vecs []float32, dim, k int, filter func(*chunker.Chunk) bool, tie func(int) float64) []Hit {
	type cand struct {
		i int
		s float32
	}
	h := topk.New(k, func(a, b cand) int { // best first
		if c := cmp.Compare(b.s, a.s); c != 0 {
			return c
		}
		if tie != nil {
			if c := cmp.Compare(tie(b.i), tie(a.i)); c != 0 {
				return c
			}
		}
		return cmp.Compare(a.i, b.i)
	})
	n := len(vecs) / dim
	for i := range n {
		c := cand{i, dot(q, vecs[i*dim:(i+1)*dim])}
		if !h.Would(c) {
			continue
		}
		if filter != nil && !filter(&ix.chunks[i]) {
			continue
		}
		h.Push(c)
	}
	top := h.Sorted()
	hits := make([]Hit, len(top))
	for r, c := range top {
		hits[r] = Hit{ID: ix.chunks[c.i].ID, Score: float64(c.s), Rank: r + 1}
	}
	return hits
}

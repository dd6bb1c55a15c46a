package retrieve

import (
	"errors"
	"fmt"
	"math"
	"unsafe"

	"gonum.org/v1/gonum/blas/blas32"
)

// KeepEnd says which end of a text an [Embedder] keeps when the text is longer than the
// model's input limit.
type KeepEnd int

const (
	// KeepHead keeps the start of the text and drops its end: the choice for chunks and
	// for suffix queries (the text right after the hole comes first).
	KeepHead KeepEnd = iota
	// KeepTail keeps the end of the text and drops its start: the choice for prefix
	// queries, whose most useful part is the text just before the hole.
	KeepTail
)

func (k KeepEnd) String() string {
	switch k {
	case KeepHead:
		return "head"
	case KeepTail:
		return "tail"
	}
	return fmt.Sprintf("KeepEnd(%d)", int(k))
}

// Embedder turns texts into dense vectors for dense retrieval ([Dense] and [Hybrid]
// searches).
//
// Every vector of one embedder has [Embedder.Dim] components and is L2-normalised, so
// the dot product of two vectors is their cosine similarity; the one exception is a
// text the embedder has nothing to say about (an empty text for [LSA], or one made only
// of terms it never saw), which gets the zero vector and matches nothing.
//
// Embedders: [LSA] (built in, fitted on the repository itself) and the transformer
// sentence encoders of the retrieve/hugot package. Implementations must be safe for
// concurrent use.
type Embedder interface {
	// ID names the model and every setting that changes its vectors (weights,
	// tokenizer, token limit, pooling). Two embedders with the same ID must produce the
	// same vectors (up to floating-point noise), since indexes and the embedding cache
	// are keyed by it.
	ID() string
	// Dim is the number of components of every vector.
	Dim() int
	// Embed returns one vector per text, and for each text whether it was longer than
	// the model's input limit and was truncated (keeping the end that keep names). It
	// never fails because a text is too long. The vectors are owned by the caller.
	Embed(texts []string, keep KeepEnd) (vecs [][]float32, truncated []bool, err error)
	// Close releases the model. The embedder must not be used afterwards.
	Close() error
}

// A Splitter is an [Embedder] with an input limit that can cut a text too long for it
// into consecutive pieces that each fit. An index build embeds a chunk the model
// would truncate as the L2-normalised mean of its pieces' vectors, at most
// [MaxPieces] of them (a chunk needing more is embedded from its first MaxPieces and
// counted in [DenseInfo.Truncated]), so that the whole chunk counts, not only its
// head; the chunks themselves (what BM25 indexes and contexts show) do not change.
// Queries are still truncated to the end they keep. The Embedder's ID must change
// when its Split does.
type Splitter interface {
	Embedder
	// Split returns text's consecutive pieces, in order, each within the input limit
	// (one piece when text fits). It must be safe for concurrent use.
	Split(text string) ([]string, error)
}

// MaxPieces is the most pieces an index build embeds a long chunk from (see
// [Splitter]).
const MaxPieces = 8

// ErrNoEmbedder is returned (wrapped) by [Index.Search] (dense and hybrid) when the
// index holds vectors of a model that no embedder was attached for, or when the
// attached embedder's ID differs from the model the vectors were computed with.
var ErrNoEmbedder = errors.New("retrieve: no embedder for the index's dense vectors")

// Normalize scales v to unit L2 norm in place (accumulating in float64) and reports
// whether v was non-zero and finite. A zero or non-finite v is set to all zeros.
func Normalize(v []float32) bool {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 || math.IsNaN(s) || math.IsInf(s, 0) {
		clear(v)
		return false
	}
	inv := 1 / math.Sqrt(s)
	for i, x := range v {
		v[i] = float32(float64(x) * inv)
	}
	return true
}

// dot returns the dot product of row and q (equal lengths) in float32, with gonum's
// BLAS (blas32.Dot: SIMD on amd64). q must come from alignedQuery: gonum's amd64
// kernel sums the first values of its second operand one by one until that operand
// is 16-byte aligned, so the grouping of the sums (and the last bits of the result)
// would otherwise depend on where q lies in memory; with q aligned it depends on the
// length only, wherever the row lies (a stored segment, a reused buffer). Its sums
// are grouped differently from a plain loop's: scores may differ from one in the
// last bits.
func dot(row, q []float32) float32 {
	return blas32.Dot(blas32.Vector{N: len(q), Data: row[:len(q)], Inc: 1}, blas32.Vector{N: len(q), Data: q, Inc: 1})
}

// alignedQuery returns a copy of q starting on a 16-byte boundary (see dot).
func alignedQuery(q []float32) []float32 {
	if len(q) == 0 {
		return q
	}
	buf := make([]float32, len(q)+3)
	off := 0
	for uintptr(unsafe.Pointer(&buf[off]))%16 != 0 {
		off++
	}
	out := buf[off : off+len(q) : off+len(q)]
	copy(out, q)
	return out
}

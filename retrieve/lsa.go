package retrieve

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/internal/parallel"
)

// DefaultLSADim is the dimension of the built-in [LSA] model when none is given.
const DefaultLSADim = 128

// MaxLSATerms caps the vocabulary of an [LSA] model: the terms found in the most chunks
// are kept.
const MaxLSATerms = 50000

// MaxLSAFitChunks caps the chunks an [LSA] model is fitted on: a larger snapshot's
// model is fitted on an evenly spaced sample of that many of its chunks (every
// chunk is still embedded with it), so that the fit's memory stays bounded (about
// 150 MB at the cap, against 1 GB for the 160,800 chunks of a large repository).
// The competition's dev snapshots have at most about 5,200 chunks.
const MaxLSAFitChunks = 20000

// LSA parameters: the randomized SVD samples dim+lsaOversample directions and refines
// them with lsaPowerIters power iterations (Halko, Martinsson & Tropp 2011, §4.3-4.4);
// on real code (4,000 chunks of 5 repositories, k = 128) such settings capture over
// 99.3% of the optimal rank-k energy ‖A V_k‖²_F, against 98.8% with 10 and 2.
const (
	lsaVersion    = 1
	lsaOversample = 20
	lsaPowerIters = 3
	lsaSeed       = 0x5eed1a5a
)

// LSA is the built-in dense model: latent semantic indexing (Deerwester, Dumais, Furnas,
// Landauer & Harshman, "Indexing by Latent Semantic Analysis", Journal of the American
// Society for Information Science 41(6), 1990) fitted on the chunks of one repository
// snapshot, so hybrid retrieval works without downloading a model.
//
// # Model
//
// A chunk's terms are its code sub-tokens: [Tokens] of its text (identifiers whole and
// split on camelCase, snake_case and digits), without numbers and one-character tokens.
// The vocabulary is the terms found in at least 2 chunks (1 when there are fewer than
// 50 chunks), at most [MaxLSATerms] of them. A text is the vector of its terms' weights
// (1 + ln tf)·idf with idf = ln((1+N)/(1+df)) + 1 (N chunks, df of them containing the
// term), L2-normalised. FitLSA stacks the chunks' vectors into the N×V matrix A and
// computes its rank-k truncated SVD A ≈ U_k Σ_k V_kᵀ by randomized SVD (Halko,
// Martinsson & Tropp, "Finding Structure with Randomness", SIAM Review 53(2), 2011: a
// Gaussian sketch of k+20 columns, three power iterations with re-orthonormalisation, then
// an exact SVD of the small projected matrix, with gonum). A text's embedding is its
// tf-idf vector projected on V_k, L2-normalised; a chunk's embedding is thus its row of
// U_k Σ_k, normalised, and cosine similarity compares texts in the latent space, where
// terms that occur in the same chunks (getX / setX / x, a class and its members) point
// the same way.
//
// A snapshot of more than [MaxLSAFitChunks] chunks is fitted on an evenly spaced
// sample of that many (chunks i·N/MaxLSAFitChunks, in order): vocabulary, idf and
// SVD come from the sample, as in sampled LSA on large collections; the
// projection of every chunk is then computed batch by batch while the vectors are
// written.
//
// The fit is deterministic (a fixed random seed). k is the dimension asked for, capped
// by the rank the data allows (min(N, V) and the number of non-negligible singular
// values), so a tiny repository gets a smaller [LSA.Dim].
//
// # Caching
//
// A model is fitted per snapshot (or once per repository, for live folders); the
// index package stores it ([LSA.WriteTo], [ReadLSA]) so it is fitted once. Its
// vectors are not shared between fits: another fit changes every vector.
//
// An LSA is immutable after FitLSA or ReadLSA and safe for concurrent use.
type LSA struct {
	label     string // set by Labeled: identifies the data the model was fitted on
	requested int
	dim       int
	docs      int
	terms     []string
	index     map[string]int32
	idf       []float32
	proj      []float32 // len(terms) × dim, row-major: row t is V_k's row for term t
	// projLE, when proj is nil, holds proj as little-endian float32 (a model read by
	// DecodeLSA: rows are decoded as texts are embedded, not all when it is read).
	projLE []byte
	// fitRows holds the tf-idf rows of the texts the model was fitted on, fitRow a
	// text's row: Embed of such a text (the fitted snapshot's own chunks, embedded
	// right after the fit) reuses it instead of reading the text's terms again. The
	// rows are those tfidf gives the text, so the vectors are the same. nil for a
	// model read from bytes.
	fitRows *csr
	fitRow  map[string]int32
}

// lsaMagic starts an encoded model: then uvarints (version, requested and actual
// dimension, documents, terms), the terms (uvarint length and bytes), and idf and the
// projection as little-endian float32.
const lsaMagic = "repoctx-lsa-2\n"

// LSAModelID returns the [Embedder.ID] of an LSA model fitted with dimension dim (0 means
// [DefaultLSADim]); the fitted model's ID is the same whatever its effective [LSA.Dim].
func LSAModelID(dim int) string {
	if dim <= 0 {
		dim = DefaultLSADim
	}
	return fmt.Sprintf("lsa-v%d-d%d", lsaVersion, dim)
}

// ID implements [Embedder]: "lsa-v1-d128" for the default dimension. It does not
// identify the data the model was fitted on: an LSA model is only meaningful together
// with the index it was built with.
func (m *LSA) ID() string {
	if m.label != "" {
		return LSAModelID(m.requested) + "@" + m.label
	}
	return LSAModelID(m.requested)
}

// Labeled returns the same model (sharing its data) whose [LSA.ID] ends in "@"+label,
// so that vectors computed with it for another snapshot are
// told apart from one with its own fit. label should identify the data the model was
// fitted on, e.g. the key of the index it comes from.
func (m *LSA) Labeled(label string) *LSA {
	c := *m
	c.label = label
	return &c
}

// Label returns the label [LSA.Labeled] gave the model ("" for none).
func (m *LSA) Label() string { return m.label }

// Dim implements [Embedder]; it can be below the dimension asked for (see [LSA]) and is
// 0 when the chunks had no terms at all.
func (m *LSA) Dim() int { return m.dim }

// Terms returns the vocabulary size.
func (m *LSA) Terms() int { return len(m.terms) }

// Close implements [Embedder]; it does nothing.
func (m *LSA) Close() error { return nil }

// Embed implements [Embedder]. LSA has no input limit: every text is used whole, keep is
// ignored and no text is reported truncated. A text without vocabulary terms gets the
// zero vector.
func (m *LSA) Embed(texts []string, keep KeepEnd) ([][]float32, []bool, error) {
	vecs := make([][]float32, len(texts))
	acc := make([]float64, m.dim)
	for i, t := range texts {
		v := make([]float32, m.dim)
		if m.dim > 0 {
			var idx []int32
			var w []float64
			if r, ok := m.fitRow[t]; ok {
				lo, hi := m.fitRows.ptr[r], m.fitRows.ptr[r+1]
				idx, w = m.fitRows.idx[lo:hi], m.fitRows.val[lo:hi]
			} else {
				idx, w = m.tfidf(t)
			}
			clear(acc)
			for j, ti := range idx {
				if m.proj == nil {
					row := m.projLE[4*int(ti)*m.dim : 4*(int(ti)+1)*m.dim]
					for c := range acc {
						acc[c] += w[j] * float64(math.Float32frombits(binary.LittleEndian.Uint32(row[4*c:])))
					}
					continue
				}
				row := m.proj[int(ti)*m.dim : (int(ti)+1)*m.dim]
				for c, p := range row {
					acc[c] += w[j] * float64(p)
				}
			}
			for c, a := range acc {
				v[c] = float32(a)
			}
			Normalize(v)
		}
		vecs[i] = v
	}
	return vecs, make([]bool, len(texts)), nil
}

// lsaTerms calls f for every term of text (see [LSA]).
func lsaTerms(text string, f func(string)) {
	scan(text, func(start, end int) {
		if end-start < 2 || (text[start] >= '0' && text[start] <= '9') {
			return
		}
		if w := text[start:end]; needsLower(w) {
			f(strings.ToLower(w))
		} else {
			f(w)
		}
	})
}

// tfidf returns the vocabulary indexes of text's terms (ascending) and their normalised
// tf-idf weights.
func (m *LSA) tfidf(text string) ([]int32, []float64) {
	counts := map[int32]int{}
	lsaTerms(text, func(t string) {
		if i, ok := m.index[t]; ok {
			counts[i]++
		}
	})
	idx := make([]int32, 0, len(counts))
	for i := range counts {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	w := make([]float64, len(idx))
	m.weigh(idx, func(j int) int { return counts[idx[j]] }, w)
	return idx, w
}

// weigh sets w[j] to the normalised tf-idf weight of vocabulary term idx[j] (ascending)
// occurring tf(j) times in a text: (1 + ln tf)·idf, the row scaled to unit length. It is
// the one formula of tfidf and of the fit's matrix rows, which must agree bit for bit.
func (m *LSA) weigh(idx []int32, tf func(j int) int, w []float64) {
	var norm float64
	for j, i := range idx {
		w[j] = (1 + math.Log(float64(tf(j)))) * float64(m.idf[i])
		norm += w[j] * w[j]
	}
	if norm > 0 {
		floats.Scale(1/math.Sqrt(norm), w)
	}
}

// csr is a sparse matrix in compressed sparse row form.
type csr struct {
	rows, cols int
	ptr        []int
	idx        []int32
	val        []float64
}

// mul returns A·B for B with A.cols rows and bc columns (row-major). Large products
// are split by rows over up to GOMAXPROCS goroutines; each output row is computed as
// by one goroutine (the same operations in the same order), so the result does not
// depend on the split.
func (a *csr) mul(b []float64, bc int) []float64 {
	return a.mulTo(nil, b, bc)
}

// mulTo is mul writing A·B into out's memory when it holds a.rows·bc values (else
// into a new slice), which it returns: a fit's products reuse their buffers rather
// than touch fresh memory each round (each first touch of a page is a page fault:
// about 9 µs on the 2-core VMs of docs/performance.md).
func (a *csr) mulTo(out, b []float64, bc int) []float64 {
	if cap(out) >= a.rows*bc {
		out = out[:a.rows*bc]
		clear(out)
	} else {
		out = make([]float64, a.rows*bc)
	}
	rowsInParallel(a.rows, len(a.idx)*bc, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row := out[i*bc : (i+1)*bc]
			for p := a.ptr[i]; p < a.ptr[i+1]; p++ {
				j := int(a.idx[p])
				floats.AddScaled(row, a.val[p], b[j*bc:(j+1)*bc])
			}
		}
	})
	return out
}

// transpose returns Aᵀ in compressed sparse row form: row j of it holds column j of A,
// its entries in ascending row order of A. at.mul(B) then adds, for each output row,
// the same terms in the same order as the loop "for each row i of A, for each entry
// (i, j): out_j += a_ij · B_i" does, so Aᵀ·B comes out bit for bit the same.
func (a *csr) transpose() *csr {
	at := &csr{rows: a.cols, cols: a.rows, ptr: make([]int, a.cols+1), idx: make([]int32, len(a.idx)), val: make([]float64, len(a.val))}
	for _, j := range a.idx {
		at.ptr[j+1]++
	}
	for j := range a.cols {
		at.ptr[j+1] += at.ptr[j]
	}
	next := slices.Clone(at.ptr[:a.cols])
	for i := range a.rows {
		for p := a.ptr[i]; p < a.ptr[i+1]; p++ {
			j := a.idx[p]
			q := next[j]
			next[j]++
			at.idx[q], at.val[q] = int32(i), a.val[p]
		}
	}
	return at
}

// minParallelWork is the number of multiply-adds below which a product runs on one
// goroutine (starting more costs more than it saves).
const minParallelWork = 1 << 18

// rowsInParallel calls f on contiguous ranges [lo, hi) covering [0, rows): one range
// per workersFor(work), and returns when every call has.
func rowsInParallel(rows, work int, f func(lo, hi int)) {
	parallel.Ranges(rows, workersFor(work), f)
}

// workersFor is the number of goroutines for work multiply-adds: one below
// minParallelWork, else one per processor (GOMAXPROCS).
func workersFor(work int) int {
	if work < minParallelWork {
		return 1
	}
	return runtime.GOMAXPROCS(0)
}

// orth returns an orthonormal basis of the column space of the rows×cols row-major
// matrix m (modified Gram-Schmidt, a column projected a second time when needed for
// stability), as a row-major matrix
// of rows × c columns, c <= cols: columns that are (numerically) dependent on earlier
// ones are dropped. (Cholesky QR on gonum's BLAS was slower here: its Dsyrk and Dtrmm
// are not blocked.)
//
// Columns are taken orthBlock at a time. Each column of a block is first projected
// on the basis vectors accepted before the block, in their order, the block's columns
// side by side (on every core when the work is large: each column is one goroutine's,
// and each basis vector is read once per goroutine and block rather than once per
// column); then, one column after the other, on the block's own accepted vectors and,
// when needed, a second time on all of them. Every column thus goes through the same
// operations in the same order as in a column-by-column loop, so the basis does not
// depend on the block size or the number of goroutines, to the last bit
// (TestOrthBlockedSame).
func orth(m []float64, rows, cols int) ([]float64, int) {
	return orthTo(nil, nil, m, rows, cols)
}

// orthTo is orth with its memory lent: the basis is written into out and the columns
// are worked on in slab, each when it holds rows·cols values (else new memory is
// taken); out, slab and m must not overlap. It returns the basis (in out's memory when
// lent) and its number of columns.
func orthTo(out, slab, m []float64, rows, cols int) ([]float64, int) {
	if cap(slab) >= rows*cols {
		slab = slab[:rows*cols]
	} else {
		slab = make([]float64, rows*cols)
	}
	colv := make([][]float64, 0, cols)
	workers := workersFor(rows * cols * cols / 2)
	block := make([][]float64, 0, orthBlock)
	norms := make([]float64, 0, orthBlock)
	for c0 := 0; c0 < cols; c0 += orthBlock {
		block, norms = block[:0], norms[:0]
		for c := c0; c < min(c0+orthBlock, cols); c++ {
			v := slab[c*rows : (c+1)*rows : (c+1)*rows]
			for r := range rows {
				v[r] = m[r*cols+c]
			}
			if n0 := floats.Norm(v, 2); n0 != 0 {
				block, norms = append(block, v), append(norms, n0)
			}
		}
		// The first pass's part on the basis accepted before the block.
		before := colv
		parallel.Ranges(len(block), workers, func(lo, hi int) {
			for _, q := range before {
				for _, v := range block[lo:hi] {
					floats.AddScaled(v, -floats.Dot(q, v), q)
				}
			}
		})
		for i, v := range block {
			n0 := norms[i]
			// The first pass's rest, and a second pass only when the first removed
			// most of v (its norm fell below 1/√2 of what it was: the criterion of
			// Daniel, Gragg, Kaufman and Stewart, Math. Comp. 1976), which keeps "twice
			// is enough"'s orthogonality at half its work on well-conditioned columns.
			for _, q := range colv[len(before):] {
				floats.AddScaled(v, -floats.Dot(q, v), q)
			}
			n := floats.Norm(v, 2)
			if !(n >= n0/math.Sqrt2) {
				for _, q := range colv {
					floats.AddScaled(v, -floats.Dot(q, v), q)
				}
				n = floats.Norm(v, 2)
			}
			if n <= 1e-10*n0 || n == 0 {
				continue
			}
			floats.Scale(1/n, v)
			colv = append(colv, v)
		}
	}
	k := len(colv)
	if cap(out) >= rows*k {
		out = out[:rows*k]
	} else {
		out = make([]float64, rows*k)
	}
	for c, v := range colv {
		for r, x := range v {
			out[r*k+c] = x
		}
	}
	return out, k
}

// orthBlock is the number of columns orth projects side by side: enough to give each
// core a few, few enough that most of a column's projections fall before its block.
const orthBlock = 8

// FitLSA fits an [LSA] model of dimension dim (0 means [DefaultLSADim]) on the texts of
// chunks (a sample of [MaxLSAFitChunks] of them when there are more). It fails only for
// a negative dim; chunks without terms give a model of dimension 0.
func FitLSA(chunks []chunker.Chunk, dim int) (*LSA, error) {
	texts := make([]string, len(chunks))
	for i := range chunks {
		texts[i] = chunks[i].Text
	}
	return fitLSATexts(texts, dim)
}

func fitLSATexts(texts []string, dim int) (*LSA, error) {
	return fitLSATextsP(sampleTexts(texts, lsaFitCap), dim, lsaOversample, lsaPowerIters)
}

// lsaFitCap is MaxLSAFitChunks (tests lower it).
var lsaFitCap = MaxLSAFitChunks

// sampleTexts returns texts when it has at most max, else max of them evenly spaced:
// texts[i·len(texts)/max] for i in [0, max).
func sampleTexts(texts []string, max int) []string {
	if len(texts) <= max {
		return texts
	}
	out := make([]string, max)
	for i := range out {
		out[i] = texts[i*len(texts)/max]
	}
	return out
}

func fitLSATextsP(texts []string, dim, oversample, powerIters int) (*LSA, error) {
	if dim < 0 {
		return nil, fmt.Errorf("retrieve: LSA dimension %d < 0", dim)
	}
	if dim == 0 {
		dim = DefaultLSADim
	}
	n := len(texts)
	m := &LSA{requested: dim, docs: n, index: map[string]int32{}}

	// One scan of the texts: every distinct term gets an id in order of first sight,
	// each text keeps its terms' (id, count) pairs and each term its document
	// frequency. The matrix below is built from these, as tfidf would build each row
	// from the text again (same counts, same order of operations: the same bits).
	ids := map[string]int32{}
	var names []string
	var df []int
	type termCount struct{ id, n int32 }
	textBytes := 0
	for _, t := range texts {
		textBytes += len(t)
	}
	// Every text's pairs, text after text: about one per 16 bytes of code (distinct
	// terms of each text), so that the slice is rarely copied as it grows.
	counts := make([]termCount, 0, max(1024, textBytes/16))
	ends := make([]int, n)   // text i's pairs are counts[ends[i-1]:ends[i]]
	place := map[int32]int{} // this text's ids -> their place in counts
	for i, t := range texts {
		clear(place)
		lsaTerms(t, func(term string) {
			id, ok := ids[term]
			if !ok {
				id = int32(len(names))
				ids[term] = id
				names = append(names, term)
				df = append(df, 0)
			}
			if p, ok := place[id]; ok {
				counts[p].n++
				return
			}
			place[id] = len(counts)
			counts = append(counts, termCount{id, 1})
			df[id]++
		})
		ends[i] = len(counts)
	}
	ids, place = nil, nil
	minDF := 2
	if n < 50 {
		minDF = 1
	}
	var vocabIDs []int32 // ids of the vocabulary, in its order
	for id, d := range df {
		if d >= minDF {
			vocabIDs = append(vocabIDs, int32(id))
		}
	}
	slices.SortFunc(vocabIDs, func(a, b int32) int {
		if c := cmp.Compare(df[b], df[a]); c != 0 {
			return c
		}
		return cmp.Compare(names[a], names[b])
	})
	if len(vocabIDs) > MaxLSATerms {
		vocabIDs = vocabIDs[:MaxLSATerms]
	}
	vocab := make([]int32, len(names)) // id -> vocabulary index, or -1
	for i := range vocab {
		vocab[i] = -1
	}
	m.terms = make([]string, len(vocabIDs))
	m.idf = make([]float32, len(vocabIDs))
	for i, id := range vocabIDs {
		t := names[id]
		m.terms[i] = t
		m.index[t] = int32(i)
		vocab[id] = int32(i)
		m.idf[i] = float32(math.Log(float64(1+n)/float64(1+df[id])) + 1)
	}
	names, df, vocabIDs = nil, nil, nil
	v := len(m.terms)
	if v == 0 || n == 0 {
		return m, nil
	}

	// The tf-idf matrix (the rows tfidf gives).
	a := &csr{rows: n, cols: v, ptr: make([]int, 1, n+1), idx: make([]int32, 0, len(counts)), val: make([]float64, 0, len(counts))}
	var row []termCount
	lo := 0
	for i := range n {
		row = row[:0]
		for _, tc := range counts[lo:ends[i]] {
			if vi := vocab[tc.id]; vi >= 0 {
				row = append(row, termCount{vi, tc.n})
			}
		}
		lo = ends[i]
		slices.SortFunc(row, func(x, y termCount) int { return cmp.Compare(x.id, y.id) })
		base := len(a.idx)
		for _, tc := range row {
			a.idx = append(a.idx, tc.id)
		}
		a.val = append(a.val, make([]float64, len(row))...)
		m.weigh(a.idx[base:], func(j int) int { return int(row[j].n) }, a.val[base:])
		a.ptr = append(a.ptr, len(a.idx))
	}
	counts, vocab = nil, nil
	if len(a.idx) == 0 {
		return m, nil
	}
	fitRows, fitRow := a, make(map[string]int32, n)
	for i, t := range texts {
		if _, ok := fitRow[t]; !ok {
			fitRow[t] = int32(i)
		}
	}

	// Randomized SVD.
	k := min(dim, n, v)
	l := min(k+oversample, n, v)
	rng := rand.New(rand.NewPCG(lsaSeed, uint64(n)))
	omega := make([]float64, v*l)
	for i := range omega {
		omega[i] = rng.NormFloat64()
	}
	// Four buffers serve every round (a product or basis of c <= l columns fits the
	// one of l): omega's memory takes the v-row products, y the n-row ones, slab
	// orth's columns and q its basis.
	y := a.mul(omega, l) // n × l
	zBuf, qBuf, slab := omega, make([]float64, n*l), make([]float64, n*l)
	q, c := orthTo(qBuf, slab, y, n, l)
	// Subspace iteration (Halko, Martinsson and Tropp 2011, Algorithm 4.4) with the
	// orthonormalisation of the v × c side left out: span(A·Aᵀ·Q) does not depend on
	// whether Aᵀ·Q is orthonormalised first, and neither does orth's result (Gram-Schmidt
	// of Y·T, T upper triangular with a positive diagonal, gives the Q of Y), so only
	// rounding differs. One A·Aᵀ between orthonormalisations loses nothing above
	// σ₁·1e-8. This halves the Gram-Schmidt work, most of a fit.
	at := a.transpose()
	for range powerIters {
		z := at.mulTo(zBuf, q, c) // Aᵀ·Q, v × c
		y = a.mulTo(y, z, c)      // n × c
		q, c = orthTo(qBuf, slab, y, n, c)
	}
	if c == 0 {
		return m, nil
	}
	bt := mat.NewDense(v, c, at.mul(q, c)) // Bᵀ = Aᵀ Q, v × c
	var svd mat.SVD
	if !svd.Factorize(bt, mat.SVDThinU) {
		return nil, errors.New("retrieve: LSA: SVD did not converge")
	}
	sv := svd.Values(nil)
	keep := 0
	for keep < min(k, len(sv)) && sv[keep] > 1e-8*sv[0] {
		keep++
	}
	var u mat.Dense
	svd.UTo(&u) // v × c: the left singular vectors of Bᵀ are the right ones of A
	m.dim = keep
	m.proj = make([]float32, v*keep)
	for t := range v {
		for j := range keep {
			m.proj[t*keep+j] = float32(u.At(t, j))
		}
	}
	m.fitRows, m.fitRow = fitRows, fitRow
	return m, nil
}

// WriteTo writes the model in a compact binary form (see lsaMagic) and returns the
// number of bytes written; [ReadLSA] reads it back.
func (m *LSA) WriteTo(w io.Writer) (int64, error) {
	cw := &countWriter{w: w}
	bw := bufio.NewWriterSize(cw, 1<<16)
	var vb [binary.MaxVarintLen64]byte
	put := func(n int) { bw.Write(vb[:binary.PutUvarint(vb[:], uint64(n))]) }
	bw.WriteString(lsaMagic)
	for _, n := range []int{lsaVersion, m.requested, m.dim, m.docs, len(m.terms)} {
		put(n)
	}
	for _, t := range m.terms {
		put(len(t))
		bw.WriteString(t)
	}
	var fb [4]byte
	for i, vals := range [][]float32{m.idf, m.proj} {
		if i == 1 && m.proj == nil {
			bw.Write(m.projLE)
			break
		}
		for _, x := range vals {
			binary.LittleEndian.PutUint32(fb[:], math.Float32bits(x))
			bw.Write(fb[:])
		}
	}
	err := bw.Flush()
	return cw.n, err
}

// ReadLSA reads a model written by [LSA.WriteTo].
func ReadLSA(r io.Reader) (*LSA, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	magic := make([]byte, len(lsaMagic))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != lsaMagic {
		return nil, fmt.Errorf("retrieve: read LSA model: not a model: %w", ErrIncomplete)
	}
	var hdr [5]uint64
	for i := range hdr {
		v, err := binary.ReadUvarint(br)
		if err != nil {
			return nil, fmt.Errorf("retrieve: read LSA model: %w (%w)", ErrIncomplete, err)
		}
		hdr[i] = v
	}
	if hdr[0] != lsaVersion {
		return nil, fmt.Errorf("retrieve: LSA model version %d, want %d: %w", hdr[0], lsaVersion, ErrFormat)
	}
	nterms, dim := hdr[4], hdr[2]
	if nterms > 1<<24 || dim > 1<<16 {
		return nil, fmt.Errorf("retrieve: damaged LSA model: %w", ErrIncomplete)
	}
	m := &LSA{requested: int(hdr[1]), dim: int(dim), docs: int(hdr[3]), terms: make([]string, nterms),
		index: make(map[string]int32, nterms)}
	for i := range m.terms {
		n, err := binary.ReadUvarint(br)
		if err != nil || n > MaxTokenBytes*4 {
			return nil, fmt.Errorf("retrieve: damaged LSA model: %w", ErrIncomplete)
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(br, b); err != nil {
			return nil, fmt.Errorf("retrieve: damaged LSA model: %w", ErrIncomplete)
		}
		m.terms[i] = string(b)
		m.index[m.terms[i]] = int32(i)
	}
	// read reads n float32 in pieces, so a damaged count fails at the end of the data
	// instead of allocating it all up front.
	read := func(n int) ([]float32, error) {
		out := make([]float32, 0, min(n, 1<<16))
		var raw [4 << 10]byte
		for len(out) < n {
			k := min(n-len(out), len(raw)/4)
			if _, err := io.ReadFull(br, raw[:4*k]); err != nil {
				return nil, err
			}
			for i := range k {
				out = append(out, math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])))
			}
		}
		return out, nil
	}
	var err error
	if m.idf, err = read(int(nterms)); err == nil {
		m.proj, err = read(int(nterms) * int(dim))
	}
	if err != nil {
		return nil, fmt.Errorf("retrieve: damaged LSA model: %w", ErrIncomplete)
	}
	return m, nil
}

// DecodeLSA reads a model written by [LSA.WriteTo] from b, as [ReadLSA] does (bytes
// after the model are ignored): for a store that holds the model in memory. The
// projection is not copied: the rows a text needs are decoded from b when it is
// embedded (the same float32 values, so the same vectors), so b must not change while
// the model is used; a process that embeds a few texts with a large model (an index
// update after an edit) pays for the vocabulary only. It returns an error wrapping
// [ErrIncomplete] for damaged or truncated data and [ErrFormat] for another format
// version; the counts are checked against len(b) before anything is allocated.
func DecodeLSA(b []byte) (*LSA, error) {
	damaged := fmt.Errorf("retrieve: damaged LSA model: %w", ErrIncomplete)
	if len(b) < len(lsaMagic) || string(b[:len(lsaMagic)]) != lsaMagic {
		return nil, fmt.Errorf("retrieve: read LSA model: not a model: %w", ErrIncomplete)
	}
	pos := len(lsaMagic)
	uvarint := func() (uint64, bool) {
		v, n := binary.Uvarint(b[pos:])
		if n <= 0 {
			return 0, false
		}
		pos += n
		return v, true
	}
	var hdr [5]uint64
	for i := range hdr {
		v, ok := uvarint()
		if !ok {
			return nil, fmt.Errorf("retrieve: read LSA model: %w", ErrIncomplete)
		}
		hdr[i] = v
	}
	if hdr[0] != lsaVersion {
		return nil, fmt.Errorf("retrieve: LSA model version %d, want %d: %w", hdr[0], lsaVersion, ErrFormat)
	}
	nterms, dim := hdr[4], hdr[2]
	if nterms > 1<<24 || dim > 1<<16 || nterms > uint64(len(b)-pos) {
		return nil, damaged
	}
	// The terms: find where each one's bytes are, then copy them all into one string.
	start := pos
	spans := make([][2]int, nterms) // start and end of each term's bytes in b
	for i := range spans {
		n, ok := uvarint()
		if !ok || n > MaxTokenBytes*4 || n > uint64(len(b)-pos) {
			return nil, damaged
		}
		spans[i] = [2]int{pos, pos + int(n)}
		pos += int(n)
	}
	floats := nterms * (1 + dim)
	if floats > uint64(len(b)-pos)/4 {
		return nil, damaged
	}
	all := string(b[start:pos])
	m := &LSA{requested: int(hdr[1]), dim: int(dim), docs: int(hdr[3]), terms: make([]string, nterms),
		index: make(map[string]int32, nterms)}
	for i, sp := range spans {
		m.terms[i] = all[sp[0]-start : sp[1]-start]
		m.index[m.terms[i]] = int32(i)
	}
	m.idf = make([]float32, nterms)
	for i := range m.idf {
		m.idf[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[pos+4*i:]))
	}
	pos += 4 * int(nterms)
	m.projLE = b[pos : pos+4*int(nterms*dim) : pos+4*int(nterms*dim)]
	return m, nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

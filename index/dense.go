package index

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/internal/parallel"
	"github.com/repoctx/repoctx/retrieve"
	"github.com/repoctx/repoctx/store"
)

// dense returns the dense part of the view ords (nil for retrieve.DenseNone): vectors
// under opts.Embedder, or under the view's own LSA model, fitted on the view's chunks
// (in view order) unless the store has it; each chunk text's vector is computed once
// per model and kept in the store.
func (ix *Index) dense(ctx context.Context, key string, ords []int32, opts Options, st *Stats) (*retrieve.DenseVectors, error) {
	if opts.Dense == retrieve.DenseNone && opts.Embedder == nil {
		return nil, nil
	}
	emb := opts.Embedder
	if emb == nil {
		fitKey, label := key, key
		if opts.RepoLSA {
			fitKey, label = repoFitKey(ix.repo), ""
		}
		m, err := ix.viewLSA(fitKey, label, ords, opts, st)
		if err != nil {
			return nil, err
		}
		emb = m
	}
	d := &retrieve.DenseVectors{Dim: emb.Dim(), Embedder: emb}
	if d.Dim <= 0 {
		d.Dim = 0
		return d, nil
	}
	id := emb.ID()
	ix.mu.Lock()
	mv := ix.vecs[id]
	if mv == nil {
		mv = &ordVectors{}
		ix.vecs[id] = mv
	}
	var todo []int32
	var todoSums [][32]byte
	for _, o := range ords {
		if !mv.has(o) {
			todo = append(todo, o)
			var sum [32]byte
			if int(o) < len(ix.sums) {
				sum = ix.sums[o]
			}
			todoSums = append(todoSums, sum)
		}
	}
	ix.mu.Unlock()
	// From the store, else embedded now. The stored vectors are read on every core,
	// each core decoding into blocks of its own that only the vectors found use up (a
	// cold view finds none: an arena for every row would be as large as the vectors
	// embedded next, touched for nothing); then taken in todo's order.
	var texts []string
	var textSums [][32]byte
	var missing []int32
	var got []int32
	var gotVecs [][]float32
	var gotStatus []retrieve.EmbedStatus
	stored := make([][]float32, len(todo)) // todo[i]'s stored vector, nil when not found
	status := make([]retrieve.EmbedStatus, len(todo))
	inParallel(len(todo), func(lo, hi int) {
		var rec []byte      // a stored vector's record, read into the same memory each time
		var block []float32 // room for this core's next stored vectors
		for i := lo; i < hi; i++ {
			if todoSums[i] == ([32]byte{}) {
				todoSums[i] = sha256.Sum256([]byte(ix.corpus.Chunk(todo[i]).Text))
			}
			if len(block) < d.Dim {
				block = make([]float32, d.Dim*min(hi-i, vectorBlock))
			}
			dst := block[:d.Dim:d.Dim]
			var found bool
			if status[i], found = ix.storedVector(id, dst, todoSums[i], &rec); found {
				stored[i] = dst
				block = block[d.Dim:]
			}
		}
	})
	for i, o := range todo {
		if stored[i] != nil {
			got, gotVecs, gotStatus = append(got, o), append(gotVecs, stored[i]), append(gotStatus, status[i])
			d.Info.Cached++
			continue
		}
		texts = append(texts, ix.corpus.Chunk(o).Text)
		textSums = append(textSums, todoSums[i])
		missing = append(missing, o)
	}
	if len(missing) > 0 {
		_, isLSA := emb.(*retrieve.LSA)
		vecs, trunc, err := retrieve.EmbedTexts(ctx, emb, texts, 0, !isLSA)
		if err != nil {
			return nil, err
		}
		got, gotVecs, gotStatus = append(got, missing...), append(gotVecs, vecs...), append(gotStatus, trunc...)
		for i := range missing {
			putVector(ix.recs, id, textSums[i], vecs[i], trunc[i])
		}
		d.Info.Embedded += len(missing)
		st.Built = true
	}
	d.Info.Cached += len(ords) - len(todo) // vectors already in memory
	d.Rows = make([][]float32, len(ords))  // the repository's vectors, not copied
	ix.mu.Lock()
	for i, o := range got {
		mv.set(o, gotVecs[i], gotStatus[i])
	}
	for i, o := range ords {
		d.Rows[i] = mv.vecs[o]
		if s := mv.status[o]; s != 0 {
			d.Info.Count(s, ix.corpus.Chunk(o).ID)
		}
	}
	ix.mu.Unlock()
	return d, nil
}

// vectorBlock is the number of stored vectors a core decodes into one allocation.
const vectorBlock = 256

// ordVectors holds one model's vectors of corpus chunks, by corpus ordinal (nil: not
// known yet), and how each chunk's text was embedded (Index.mu guards it).
type ordVectors struct {
	vecs   [][]float32
	status []retrieve.EmbedStatus
}

func (v *ordVectors) has(o int32) bool { return int(o) < len(v.vecs) && v.vecs[o] != nil }

func (v *ordVectors) set(o int32, vec []float32, s retrieve.EmbedStatus) {
	if n := int(o) + 1; n > len(v.vecs) {
		v.vecs = slices.Grow(v.vecs, n-len(v.vecs))[:n]
		v.status = slices.Grow(v.status, n-len(v.status))[:n]
	}
	v.vecs[o], v.status[o] = vec, s
}

// setSum records the SHA-256 of the text of the chunk of corpus ordinal o (ix.mu held).
func (ix *Index) setSum(o int32, sum [32]byte) {
	if n := int(o) + 1; n > len(ix.sums) {
		ix.sums = slices.Grow(ix.sums, n-len(ix.sums))[:n]
	}
	ix.sums[o] = sum
}

// viewLSA returns the LSA model named by fitKey (a view key, or the repository's one
// model): from memory, from the store, else fitted on the view's chunk texts in view
// order and stored. Its ID is labelled with label (the view key; for the repository's
// model, the key of the view it was fitted on, kept with it), so that vectors of
// different fits never mix.
func (ix *Index) viewLSA(fitKey, label string, ords []int32, opts Options, st *Stats) (*retrieve.LSA, error) {
	ix.mu.Lock()
	m := ix.fits[fitKey]
	ix.mu.Unlock()
	if m != nil {
		return m, nil
	}
	mk := lsaKey(opts.LSADim, fitKey)
	if b, ok := ix.recs.Get(mk); ok {
		if got, l, err := readLabeledLSA(b); err == nil {
			m = got.Labeled(l)
		}
	}
	if m == nil {
		chunks := make([]chunker.Chunk, len(ords))
		for i, o := range ords {
			chunks[i] = *ix.corpus.Chunk(o)
		}
		fit, err := retrieve.FitLSA(chunks, opts.LSADim)
		if err != nil {
			return nil, err
		}
		if label == "" {
			sum := sha256.Sum256([]byte(fitKey))
			label = "fit-" + hex.EncodeToString(sum[:8])
		}
		if b, err := writeLabeledLSA(fit, label); err == nil {
			ix.recs.Put(mk, b)
		}
		m = fit.Labeled(label)
		st.Built = true
	}
	ix.mu.Lock()
	ix.fits[fitKey] = m
	ix.mu.Unlock()
	return m, nil
}

// writeLabeledLSA encodes a model with its label (uvarint length, label, model).
func writeLabeledLSA(m *retrieve.LSA, label string) ([]byte, error) {
	var buf bytes.Buffer
	var vb [binary.MaxVarintLen64]byte
	buf.Write(vb[:binary.PutUvarint(vb[:], uint64(len(label)))])
	buf.WriteString(label)
	_, err := m.WriteTo(&buf)
	return buf.Bytes(), err
}

// readLabeledLSA decodes what writeLabeledLSA wrote.
func readLabeledLSA(b []byte) (*retrieve.LSA, string, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return nil, "", fmt.Errorf("index: damaged model record")
	}
	label := string(b[k : k+int(n)])
	m, err := retrieve.DecodeLSA(b[k+int(n):])
	return m, label, err
}

// vectorKey is the store key of the vector under model id of the chunk text whose
// SHA-256 is textSum (chunks are embedded keeping their head).
func vectorKey(id string, textSum [32]byte) store.Key {
	// The SHA-256 of store.Version, "vec", id and KeepHead (decimal), each followed by
	// a NUL byte, then textSum (built without fmt: it is computed per chunk of a view).
	var arr [192]byte // on the stack for the usual model IDs
	buf := append(arr[:0], store.Version...)
	buf = append(buf, "\x00vec\x00"...)
	buf = append(buf, id...)
	buf = append(buf, 0)
	buf = strconv.AppendInt(buf, int64(retrieve.KeepHead), 10)
	buf = append(buf, 0)
	buf = append(buf, textSum[:]...)
	return store.Key{Kind: store.KindVector, Hash: sha256.Sum256(buf)}
}

// storedVector decodes into v (of the model's dimension) the vector under model id of
// the chunk text whose SHA-256 is textSum from the store; ok is false when it is not
// stored (or not of that dimension). The record is read into *rec's memory (see
// store.Records.GetTo), and *rec set to it for the next call.
func (ix *Index) storedVector(id string, v []float32, textSum [32]byte, rec *[]byte) (retrieve.EmbedStatus, bool) {
	b, ok := ix.recs.GetTo(vectorKey(id, textSum), *rec)
	if ok {
		*rec = b
	}
	if !ok || len(b) != 1+4*len(v) {
		return 0, false
	}
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[1+4*i:]))
	}
	return retrieve.EmbedStatus(b[0]), true
}

// putVector stores the vector under model id of the chunk text whose SHA-256 is
// textSum (a status byte, then the vector).
func putVector(rs *store.Records, id string, textSum [32]byte, v []float32, status retrieve.EmbedStatus) {
	b := make([]byte, 1+4*len(v))
	b[0] = byte(status)
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[1+4*i:], math.Float32bits(x))
	}
	rs.Put(vectorKey(id, textSum), b)
}

// minParallel is the number of items below which inParallel runs on one goroutine.
const minParallel = 1024

// inParallel calls f on contiguous ranges [lo, hi) covering [0, n): one range when n
// is below minParallel, else one per processor up to one per minParallel items, and
// returns when every call has. f must only write what its range owns.
func inParallel(n int, f func(lo, hi int)) {
	parallel.Ranges(n, min(runtime.GOMAXPROCS(0), n/minParallel+1), f)
}

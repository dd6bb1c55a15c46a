package retrieve

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/repoctx/repoctx/chunker"
)

// imageMagic starts an image of WriteImage (8 bytes); it names the format below.
const imageMagic = "rcimg2\n\x00"

// ErrImage is returned (wrapped) by [LoadImage] for an image it cannot use: damaged,
// of another format, for other chunks or another embedder.
var ErrImage = errors.New("retrieve: unusable index image")

// imageHeader is the image's fixed header after imageMagic, as little-endian uint64s.
type imageHeader struct {
	chunks, terms, termBytes uint64
	docs, tokens, postings   [numFields]uint64
	dense, dim, model, info  uint64 // dense: 1 when the image has vectors; model, info: lengths
}

const imageHeaderWords = 3 + 3*numFields + 4

// WriteImage writes to w an image of the index's search structures, laid out so
// that [LoadImage] uses it in place (no tokenising, no postings built, the big arrays
// not even copied): the BM25 terms the index holds (sorted, so that a query term is
// found by binary search) with their postings in each field, the chunks' field
// lengths, the fields' statistics, and the dense vectors with their model's ID and
// [DenseInfo]. The chunks themselves are not in it: the caller keeps them and gives
// them back to LoadImage. It writes through a buffer of its own (the image is never
// whole in memory). Format, every number little-endian, every section starting at a
// multiple of 8 bytes from the image's start (zero padding): imageMagic; the header
// (uint64s: chunk count, term count, term bytes, per field the chunks with tokens,
// the tokens and the postings, then the dense flag, the dimension and the lengths of
// the model ID and of the DenseInfo JSON); the field lengths (3 int32 per chunk); the
// term offsets (uint32, terms+1) and the terms' bytes; per field the postings
// offsets (uint32 per term, +1) and the postings (chunk position uint32, term
// frequency int32, in chunk order per term); the model ID, the DenseInfo JSON, and
// the vectors (float32, row after row). It returns the bytes written and w's error,
// or [ErrClosed] after Close.
func (ix *Index) WriteImage(w io.Writer) (int64, error) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.closed {
		return 0, ErrClosed
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	var n int64
	var scratch [8]byte
	put := func(b []byte) {
		m, _ := bw.Write(b) // the error sticks in bw: returned by Flush
		n += int64(m)
	}
	pad := func() {
		for n%8 != 0 {
			bw.WriteByte(0)
			n++
		}
	}
	u32 := func(v uint32) { binary.LittleEndian.PutUint32(scratch[:], v); put(scratch[:4]) }
	u64 := func(v uint64) { binary.LittleEndian.PutUint64(scratch[:], v); put(scratch[:8]) }
	// The terms the view holds, sorted; their postings by field.
	nterms := ix.nterms()
	var ids []int32
	for t := range int32(nterms) {
		if ix.holds(t) {
			ids = append(ids, t)
		}
	}
	term := ix.termTable(nterms)
	slices.SortFunc(ids, func(x, y int32) int { return strings.Compare(term(x), term(y)) })
	h := imageHeader{chunks: uint64(ix.chunks.len()), terms: uint64(len(ids))}
	for _, t := range ids {
		h.termBytes += uint64(len(term(t)))
	}
	for f := range numFields {
		h.docs[f], h.tokens[f], h.postings[f] = uint64(ix.stats[f].Docs), uint64(ix.stats[f].Tokens), uint64(len(ix.post[f].flat))
	}
	var info []byte
	if d := ix.dense; d != nil {
		var err error
		if info, err = json.Marshal(d.Info); err != nil {
			return 0, err
		}
		h.dense, h.dim, h.model, h.info = 1, uint64(d.Dim), uint64(len(d.Info.Model)), uint64(len(info))
	}
	put([]byte(imageMagic))
	for _, w := range h.words() {
		u64(w)
	}
	for i := range ix.lens {
		for f := range numFields {
			u32(uint32(ix.lens[i][f]))
		}
	}
	pad()
	off := uint32(0)
	u32(0)
	for _, t := range ids {
		off += uint32(len(term(t)))
		u32(off)
	}
	for _, t := range ids {
		m, _ := bw.WriteString(term(t))
		n += int64(m)
	}
	pad()
	for f := range numFields {
		off := uint32(0)
		u32(0)
		for _, t := range ids {
			off += uint32(len(ix.termPostings(t, f)))
			u32(off)
		}
		pad()
		for _, t := range ids {
			for _, p := range ix.termPostings(t, f) {
				u32(p.doc)
				u32(uint32(p.tf))
			}
		}
	}
	if d := ix.dense; d != nil {
		m, _ := bw.WriteString(d.Info.Model)
		n += int64(m)
		put(info)
		pad()
		for i := range ix.chunks.len() {
			for _, x := range d.row(i) {
				u32(math.Float32bits(x))
			}
		}
	}
	return n, bw.Flush()
}

// words returns the header's fields in their order in the image.
func (h *imageHeader) words() []uint64 {
	w := []uint64{h.chunks, h.terms, h.termBytes}
	for f := range numFields {
		w = append(w, h.docs[f], h.tokens[f], h.postings[f])
	}
	return append(w, h.dense, h.dim, h.model, h.info)
}

// nterms returns the number of term IDs the index's postings offsets cover.
func (ix *Index) nterms() int {
	if ix.img != nil {
		return len(ix.img.offs) - 1
	}
	return len(ix.post[0].offs) - 1
}

// termTable returns the term of each ID below n (see nterms), read without a lock per
// call: the corpus's first n terms never change once added.
func (ix *Index) termTable(n int) func(t int32) string {
	if ix.img != nil {
		return func(t int32) string { return ix.img.term(int(t)) }
	}
	ix.corpus.mu.RLock()
	terms := ix.corpus.terms[:n]
	ix.corpus.mu.RUnlock()
	return func(t int32) string { return terms[t] }
}

// termID returns the ID of term in the index's postings, or -1 when it has none.
func (ix *Index) termID(term string) int32 {
	if ix.img != nil {
		return ix.img.find(term)
	}
	return ix.corpus.termID(term)
}

// holds reports whether term ID t has postings in any field of the index.
func (ix *Index) holds(t int32) bool {
	for f := range numFields {
		if len(ix.termPostings(t, f)) > 0 {
			return true
		}
	}
	return false
}

// row returns chunk i's vector (d.Dim values).
func (d *DenseVectors) row(i int) []float32 {
	if d.Vectors != nil || d.Rows == nil {
		return d.Vectors[i*d.Dim : (i+1)*d.Dim]
	}
	return d.Rows[i]
}

// imageTerms are the sorted terms of an index loaded from an image: term i is
// blob[offs[i]:offs[i+1]].
type imageTerms struct {
	offs []uint32
	blob string
}

func (it *imageTerms) term(i int) string { return it.blob[it.offs[i]:it.offs[i+1]] }

// find returns the position of term, or -1.
func (it *imageTerms) find(term string) int32 {
	lo, hi := 0, len(it.offs)-1
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if it.term(m) < term {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(it.offs)-1 && it.term(lo) == term {
		return int32(lo)
	}
	return -1
}

// LoadImage returns the index of chunks (in the order they were indexed in) that the
// image img describes (see [Index.WriteImage]), named key: its searches rank as the
// index the image was made of did; its [DenseInfo] counts every vector as cached,
// none embedded, and no fitting or embedding time. The index uses img in place (its
// terms, postings, field lengths and vectors are img's bytes) when img starts at an
// address that is a multiple of 8 on a little-endian machine, else a copy; it keeps
// chunks. Neither img nor chunks may change while the index is used (a read-only
// mapping of a file that is never rewritten in place, as the index package's stored
// views are, is such memory). emb embeds queries when the image holds dense vectors;
// its ID must be the one they were computed with, and an image without vectors takes
// none. The image's offsets are checked (lists within their arrays, terms sorted), so
// that a damaged image fails here rather than in a search; a postings list is checked
// (positions within the chunks, increasing, frequencies above 0) when a search first
// reads it, a damaged one then matching nothing (the store's checksum keeps damaged
// images away: checking every list at load touched every page of a big image). It returns an error
// wrapping [ErrImage] for an image it cannot use (damaged, another format, chunks of
// another count, an embedder of another ID or dimension, none, or one for an image
// without vectors), and an error when
// two chunks have the same ID.
func LoadImage(key string, chunks []*chunker.Chunk, img []byte, emb Embedder) (*Index, error) {
	return loadImage(key, chunkList{ptrs: chunks}, nil, img, emb)
}

// loadImage is LoadImage of chunks; byPath, when not nil, gives each file's first
// position (the chunks being lazy: their IDs are not read to find it).
func loadImage(key string, chunks chunkList, byPath map[string]int, img []byte, emb Embedder) (*Index, error) {
	damaged := func(what string) error { return fmt.Errorf("%w: damaged %s", ErrImage, what) }
	if len(img) < len(imageMagic)+8*imageHeaderWords || string(img[:len(imageMagic)]) != imageMagic {
		return nil, fmt.Errorf("%w: not an index image", ErrImage)
	}
	if uintptr(unsafe.Pointer(&img[0]))%8 != 0 || binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		// Aligned memory of its own (the slices below are made over it).
		buf := make([]uint64, (len(img)+7)/8)
		cp := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), len(img))
		copy(cp, img)
		img = cp
		if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
			return nil, fmt.Errorf("%w: images are little-endian, this machine is not", ErrImage)
		}
	}
	pos := len(imageMagic)
	var h imageHeader
	w := make([]uint64, imageHeaderWords)
	for i := range w {
		w[i] = binary.LittleEndian.Uint64(img[pos:])
		pos += 8
	}
	h.chunks, h.terms, h.termBytes = w[0], w[1], w[2]
	for f := range numFields {
		h.docs[f], h.tokens[f], h.postings[f] = w[3+3*f], w[4+3*f], w[5+3*f]
	}
	h.dense, h.dim, h.model, h.info = w[3+3*numFields], w[4+3*numFields], w[5+3*numFields], w[6+3*numFields]
	if h.chunks != uint64(chunks.len()) {
		return nil, fmt.Errorf("%w: %d chunks given for an image of %d", ErrImage, chunks.len(), h.chunks)
	}
	// take returns the next n bytes (aligned to 8 first when align), or nil past the end.
	rest := uint64(len(img))
	take := func(n uint64, align bool) []byte {
		if align {
			pos = (pos + 7) &^ 7
		}
		if pos > len(img) || n > rest || n > uint64(len(img)-pos) {
			return nil
		}
		b := img[pos : pos+int(n) : pos+int(n)]
		pos += int(n)
		return b
	}
	u32s := func(n uint64, align bool) []uint32 {
		if n > rest/4 {
			return nil
		}
		b := take(4*n, align)
		if b == nil || n == 0 {
			return []uint32{}
		}
		return unsafe.Slice((*uint32)(unsafe.Pointer(&b[0])), n)
	}
	ix := &Index{key: key, chunks: chunks}
	for f := range numFields {
		if h.docs[f] > h.chunks || h.tokens[f] > math.MaxInt64 {
			return nil, damaged("statistics")
		}
		ix.stats[f] = fieldStats{Docs: int(h.docs[f]), Tokens: int64(h.tokens[f])}
	}
	lens := u32s(3*h.chunks, false)
	if uint64(len(lens)) != 3*h.chunks {
		return nil, damaged("field lengths")
	}
	if h.chunks > 0 {
		ix.lens = unsafe.Slice((*[numFields]int32)(unsafe.Pointer(&lens[0])), h.chunks)
	}
	toffs := u32s(h.terms+1, true)
	blob := take(h.termBytes, false)
	if uint64(len(toffs)) != h.terms+1 || blob == nil || toffs[0] != 0 || uint64(toffs[h.terms]) != h.termBytes {
		return nil, damaged("terms")
	}
	it := &imageTerms{offs: toffs}
	if len(blob) > 0 {
		it.blob = unsafe.String(&blob[0], len(blob))
	}
	for i := range h.terms {
		if toffs[i+1] <= toffs[i] || uint64(toffs[i+1]) > h.termBytes || i > 0 && it.term(int(i-1)) >= it.term(int(i)) {
			return nil, damaged("terms (not sorted)")
		}
	}
	ix.img = it
	for f := range numFields {
		offs := u32s(h.terms+1, true)
		if uint64(len(offs)) != h.terms+1 || offs[0] != 0 || uint64(offs[h.terms]) != h.postings[f] {
			return nil, damaged("postings offsets")
		}
		for i := range h.terms {
			if offs[i+1] < offs[i] {
				return nil, damaged("postings offsets")
			}
		}
		raw := u32s(2*h.postings[f], true)
		if uint64(len(raw)) != 2*h.postings[f] {
			return nil, damaged("postings")
		}
		var flat []posting
		if len(raw) > 0 {
			flat = unsafe.Slice((*posting)(unsafe.Pointer(&raw[0])), h.postings[f])
		}
		// Each list is checked when a search first reads it (termPostings).
		ix.post[f] = postings{offs: offs, flat: flat, checked: make([]atomic.Uint64, (h.terms+63)/64)}
	}
	var dense *DenseVectors
	switch h.dense {
	case 0:
		if emb != nil {
			return nil, fmt.Errorf("%w: no vectors, embedder %s", ErrImage, emb.ID())
		}
	case 1:
		model := take(h.model, false)
		info := take(h.info, false)
		if model == nil || info == nil || h.dim > rest/4 {
			return nil, damaged("dense vectors")
		}
		d := &DenseVectors{Dim: int(h.dim), Embedder: emb}
		if err := json.Unmarshal(info, &d.Info); err != nil {
			return nil, damaged("dense information")
		}
		// Nothing is embedded or fitted to load it: every vector counts as cached.
		d.Info.Cached += d.Info.Embedded
		d.Info.Embedded, d.Info.FitMS, d.Info.EmbedMS = 0, 0, 0
		if id := string(model); id != "" && (emb == nil || emb.ID() != id) {
			got := "none"
			if emb != nil {
				got = emb.ID()
			}
			return nil, fmt.Errorf("%w: vectors of model %s, embedder %s", ErrImage, id, got)
		}
		n := h.dim * h.chunks
		if h.chunks > 0 && n/h.chunks != h.dim {
			return nil, damaged("dense vectors")
		}
		vec := u32s(n, true)
		if uint64(len(vec)) != n {
			return nil, damaged("dense vectors")
		}
		d.Vectors = []float32{}
		if n > 0 {
			d.Vectors = unsafe.Slice((*float32)(unsafe.Pointer(&vec[0])), n)
		}
		dense = d
	default:
		return nil, damaged("dense flag")
	}
	if (pos+7)&^7 < len(img) || pos > len(img) {
		return nil, damaged("end")
	}
	if byPath != nil {
		ix.byPath = byPath
	} else if err := ix.setPositions(); err != nil {
		return nil, err
	}
	if dense != nil {
		if err := ix.setDense(dense); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrImage, err)
		}
	}
	return ix, nil
}

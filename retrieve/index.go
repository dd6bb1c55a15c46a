package retrieve

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/repoctx/repoctx/chunker"
)

// Errors returned (wrapped); test with errors.Is.
var (
	// ErrClosed is returned by [Index.Search] after [Index.Close].
	ErrClosed = errors.New("retrieve: index is closed")
	// ErrFormat is returned by [ReadLSA] for a model of another format version.
	ErrFormat = errors.New("retrieve: format version mismatch")
	// ErrIncomplete is returned by [ReadLSA] for damaged model data.
	ErrIncomplete = errors.New("retrieve: damaged data")
)

// Indexed fields, in a fixed order (see fieldValues).
const (
	fieldText = iota
	fieldHeader
	fieldPath
	numFields
)

// fieldStats are the collection statistics BM25 needs for one field.
type fieldStats struct {
	// Docs is the number of chunks whose field has at least one token.
	Docs int
	// Tokens is the total number of tokens of the field over all chunks.
	Tokens int64
}

// Index is a searchable set of chunks: the view of one snapshot over a [Corpus] (see
// [Corpus.NewIndex]), with BM25 over its own statistics and, optionally, dense vectors.
//
// All methods are safe for concurrent use.
type Index struct {
	corpus *Corpus
	key    string
	chunks chunkList // the corpus's chunks (shared, never modified), in view order, or a loaded image's
	// byPath gives the position of each file's first chunk when every file's chunks
	// are consecutive, in order, with the IDs chunker.ChunkID gives them ("path#n" for
	// the file's n-th): what a snapshot's view always is, found by position (see
	// position) with a map of files, not of chunks. Otherwise (chunks of any other
	// making) byID maps every chunk ID to its position, and byPath is nil.
	byPath map[string]int
	byID   map[string]int
	// flat is Chunks' copy of the chunks, made on its first call.
	flatOnce sync.Once
	flat     []chunker.Chunk
	lens     [][numFields]int32  // field lengths by view position
	post     [numFields]postings // by corpus term ID
	stats    [numFields]fieldStats

	mu     sync.RWMutex // guards closed against Close during Search
	closed bool

	// texts caches FileText's results (textBytes: their total length).
	textMu    sync.Mutex
	texts     map[string]string
	textBytes int

	// Dense retrieval (dense.go).
	dense *DenseVectors

	// img, for an index loaded from an image (LoadImage), holds its sorted terms:
	// term IDs are positions in it, corpus is nil, and the postings, field lengths and
	// vectors are the image's memory (read-only, never given back to a corpus).
	img *imageTerms
	// checkBytes, when set (CheckPostings), checks a loaded image's postings list
	// before a search first reads it.
	checkBytes func([]byte) bool
}

// fieldValues returns the text indexed for each field: the chunk's text, its header
// lines joined by "\n", its path.
func fieldValues(c *chunker.Chunk) [numFields]string {
	return [numFields]string{c.Text, strings.Join(c.Header, "\n"), c.Path}
}

// Chunks returns the indexed chunks in index order. The slice is shared with the index
// and must not be modified. (A view holds pointers to its corpus's chunks; the slice
// is made on the first call.)
func (ix *Index) Chunks() []chunker.Chunk {
	ix.flatOnce.Do(func() {
		ix.flat = make([]chunker.Chunk, ix.chunks.len())
		for i := range ix.flat {
			ix.flat[i] = *ix.chunks.at(i)
		}
	})
	return ix.flat
}

// ChunkAt returns the chunk at position i of the index's order (0 <= i < Len), shared
// with the index: it must not be modified.
func (ix *Index) ChunkAt(i int) *chunker.Chunk { return ix.chunks.at(i) }

// Len returns the number of chunks indexed.
func (ix *Index) Len() int { return ix.chunks.len() }

// Chunk returns the chunk with the given ID, or false if the index has none. The chunk
// is shared with the index and must not be modified.
func (ix *Index) Chunk(id string) (*chunker.Chunk, bool) {
	i, ok := ix.position(id)
	if !ok {
		return nil, false
	}
	return ix.chunks.at(i), true
}

// position returns the view position of the chunk with the given ID.
func (ix *Index) position(id string) (int, bool) {
	if ix.byPath == nil {
		i, ok := ix.byID[id]
		return i, ok
	}
	path, n, ok := chunker.SplitChunkID(id)
	if !ok {
		return 0, false
	}
	start, ok := ix.byPath[path]
	if !ok || n >= ix.chunks.len()-start || !ix.chunks.isID(start+n, id) {
		return 0, false
	}
	return start + n, true
}

// isChunkID reports whether id is chunker.ChunkID(path, n).
func isChunkID(id, path string, n int) bool {
	p, m, ok := chunker.SplitChunkID(id)
	return ok && p == path && m == n
}

// FileTextCacheBytes bounds the file texts an [Index] keeps for [Index.FileText]
// (bytes): a text that would pass it empties the cache first.
const FileTextCacheBytes = 64 << 20

// FileText returns the text of the file at path as indexed: its chunks
// (chunker.ChunkID(path, 0), 1, ...) joined in order, the bytes of a chunk that
// overlap its predecessor's left out; "" when the index has no chunk of path. Texts
// are cached in the index (up to FileTextCacheBytes), so that the requests of a
// long-lived view do not rebuild the same files.
func (ix *Index) FileText(path string) string {
	ix.textMu.Lock()
	t, ok := ix.texts[path]
	ix.textMu.Unlock()
	if ok {
		return t
	}
	// The parts first, then the text in memory of its size (a builder growing by
	// doubling allocated about twice the text, per file and view).
	var parts []string
	size, end := 0, 0
	for i := 0; ; i++ {
		c, ok := ix.Chunk(chunker.ChunkID(path, i))
		if !ok {
			break
		}
		if c.EndByte > end {
			part := c.Text[max(0, end-c.StartByte):]
			parts = append(parts, part)
			size += len(part)
			end = c.EndByte
		}
	}
	var sb strings.Builder
	sb.Grow(size)
	for _, part := range parts {
		sb.WriteString(part)
	}
	t = sb.String()
	ix.textMu.Lock()
	defer ix.textMu.Unlock()
	if ix.texts == nil || ix.textBytes+len(t) > FileTextCacheBytes {
		ix.texts, ix.textBytes = map[string]string{}, 0
	}
	if _, ok := ix.texts[path]; !ok && len(t) <= FileTextCacheBytes {
		ix.texts[path] = t
		ix.textBytes += len(t)
	}
	return t
}

// Key returns the key the index was made with (for a snapshot, a hash of its files and
// the settings that shaped its chunks).
func (ix *Index) Key() string { return ix.key }

// Close marks the index closed: searches running concurrently finish first, later
// ones return [ErrClosed]. Closing twice is a no-op. It never fails; the corpus and an
// embedder given in [DenseVectors] are not closed. The memory of its postings goes
// back to the corpus for the next index made (only searches read them, under ix.mu).
func (ix *Index) Close() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.closed {
		return nil
	}
	ix.closed = true
	for f := range ix.post {
		if ix.img == nil {
			ix.corpus.putSpare(ix.post[f].flat)
		}
		ix.post[f] = postings{}
	}
	return nil
}

// New returns the index of chunks alone, in their order, in a corpus of its own: the
// index a snapshot with those chunks has. dense may be nil. Chunk IDs must be unique.
func New(chunks []chunker.Chunk, dense *DenseVectors) (*Index, error) {
	c := NewCorpus()
	ords := c.Add(chunks)
	return c.NewIndex("", ords, dense)
}

// String describes the index for messages.
func (ix *Index) String() string {
	return fmt.Sprintf("index %q of %d chunks", ix.key, ix.chunks.len())
}

// termPostings returns the postings of term in field f, nil when the view has none.
// A loaded image's list is checked the first time it is read (see postings.checked).
func (ix *Index) termPostings(id int32, f int) []posting {
	p := &ix.post[f]
	if id < 0 || int(id)+1 >= len(p.offs) {
		return nil
	}
	lo, hi := p.offs[id], p.offs[id+1]
	if lo == hi {
		return nil
	}
	l := p.flat[lo:hi:hi]
	if p.checked != nil {
		w, bit := &p.checked[id/64], uint64(1)<<(id%64)
		if w.Load()&bit == 0 {
			if ix.checkBytes != nil && !ix.checkBytes(postingBytes(l)) || !validPostings(l, ix.chunks.len()) {
				return nil // damaged: the term matches nothing (checked again next time)
			}
			w.Or(bit)
		}
	}
	return l
}

// postingBytes returns the memory of l.
func postingBytes(l []posting) []byte {
	if len(l) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&l[0])), len(l)*int(unsafe.Sizeof(l[0])))
}

// CheckPostings makes an index loaded from an image (LoadImage, LoadImageLazy) check
// each postings list's bytes with check (false: damaged) before a search first reads
// it, beside its own checks of the list: for an image whose postings the caller's
// checksum does not cover when it is loaded (see ImagePostings). Call it before the
// index is used; it does nothing for an index that was not loaded from an image.
func (ix *Index) CheckPostings(check func(b []byte) bool) {
	if ix.img != nil {
		ix.checkBytes = check
	}
}

// ImagePostings returns the memory of the postings lists of an index loaded from an
// image, one part of the image per field (nil for an index not loaded from one): the
// part of an image the searches of one query read least of, for a caller that checks
// it as it is read (CheckPostings).
func (ix *Index) ImagePostings() [][]byte {
	if ix.img == nil {
		return nil
	}
	var out [][]byte
	for f := range numFields {
		out = append(out, postingBytes(ix.post[f].flat))
	}
	return out
}

// validPostings reports whether l is a postings list of an index of n chunks:
// positions below n, increasing, term frequencies above 0.
func validPostings(l []posting, n int) bool {
	for j, p := range l {
		if uint64(p.doc) >= uint64(n) || p.tf <= 0 || j > 0 && p.doc <= l[j-1].doc {
			return false
		}
	}
	return true
}

// postings holds a field's postings lists, by corpus term ID: term t's list is
// flat[offs[t]:offs[t+1]], in view order. (Offsets rather than a slice per term: a
// view costs 8 bytes per corpus term and field instead of 28, and nothing the garbage
// collector scans.)
type postings struct {
	offs []uint32 // len: corpus terms + 1
	flat []posting
	// checked, for a loaded image (LoadImage), has a bit per term set once its list
	// is found valid (validPostings): a list is checked when a search first reads it,
	// not every list when the image is loaded (reading them all touched every page of
	// a big image's postings). nil: every list is valid (built by the index).
	checked []atomic.Uint64
}

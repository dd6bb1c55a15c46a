package retrieve

import (
	"fmt"
	"sort"
	"sync/atomic"

	"github.com/repoctx/repoctx/chunker"
)

// LazyFile is one file's chunks in an index loaded by [LoadImageLazy]: N (> 0)
// consecutive chunks of the file at Path, in language Lang, with the IDs chunker.ChunkID(Path, 0) to
// chunker.ChunkID(Path, N-1), kept encoded in Record until one of them is first
// needed (a search that ranks one of them, a Chunk or FileText of the file).
type LazyFile struct {
	Path   string
	Lang   string // the chunks' language (chunker.Chunk.Lang)
	N      int
	Record []byte
}

// ChunkDecoder decodes a [LazyFile]'s Record into the file's chunks, in order. The
// chunks may point into the record's bytes, which never change. It is called at most
// a few times per file (concurrent searches that first need the same file may each
// decode it; one result is kept) and must be safe for concurrent use.
type ChunkDecoder func(record []byte) ([]chunker.Chunk, error)

// chunkList is an index's chunks by position: pointers (an index made of a corpus,
// or of chunks given whole), or files decoded on demand (lazy).
type chunkList struct {
	ptrs []*chunker.Chunk
	lazy *lazyChunks
}

// lazyChunks holds the files of an index loaded by LoadImageLazy.
type lazyChunks struct {
	files  []LazyFile
	starts []int // position of each file's first chunk, then the chunk count
	decode ChunkDecoder
	got    []atomic.Pointer[[]chunker.Chunk] // a file's chunks once decoded
}

// len returns the number of chunks.
func (l *chunkList) len() int {
	if l.lazy != nil {
		return l.lazy.starts[len(l.lazy.files)]
	}
	return len(l.ptrs)
}

// at returns the chunk at position i (0 <= i < len), decoding its file first when
// the list is lazy and the file was never needed.
func (l *chunkList) at(i int) *chunker.Chunk {
	z := l.lazy
	if z == nil {
		return l.ptrs[i]
	}
	f := z.file(i)
	cs := z.got[f].Load()
	if cs == nil {
		dec := z.decodeFile(f)
		z.got[f].CompareAndSwap(nil, &dec)
		cs = z.got[f].Load()
	}
	return &(*cs)[i-z.starts[f]]
}

// pathLang returns the path and language of the chunk at position i (0 <= i < len),
// decoding nothing.
func (l *chunkList) pathLang(i int) (path, lang string) {
	z := l.lazy
	if z == nil {
		return l.ptrs[i].Path, l.ptrs[i].Lang
	}
	f := z.file(i)
	return z.files[f].Path, z.files[f].Lang
}

// id returns the ID of the chunk at position i (0 <= i < len), decoding nothing.
func (l *chunkList) id(i int) string {
	z := l.lazy
	if z == nil {
		return l.ptrs[i].ID
	}
	f := z.file(i)
	return chunker.ChunkID(z.files[f].Path, i-z.starts[f])
}

// isID reports whether the chunk at position i (0 <= i < len) has ID id, decoding
// nothing.
func (l *chunkList) isID(i int, id string) bool {
	z := l.lazy
	if z == nil {
		return l.ptrs[i].ID == id
	}
	f := z.file(i)
	return isChunkID(id, z.files[f].Path, i-z.starts[f])
}

// file returns the file of the chunk at position i.
func (z *lazyChunks) file(i int) int {
	return sort.Search(len(z.files), func(f int) bool { return z.starts[f+1] > i })
}

// decodeFile decodes file f's chunks. A record that does not decode into the file's
// chunks (the decoder's error, such as a damaged record's checksum, or not N chunks
// of its path and language with its IDs) gives chunks with an ID, a path, a language
// and an ordinal and nothing else: a search must not fail in the middle of a request
// (the decoder may take note of the damage: the index package's makes the stored view
// unknown, so that the next run makes it again).
func (z *lazyChunks) decodeFile(f int) []chunker.Chunk {
	lf := z.files[f]
	cs, err := z.decode(lf.Record)
	if err == nil && len(cs) != lf.N {
		err = fmt.Errorf("%d chunks, %d expected", len(cs), lf.N)
	}
	for j := 0; err == nil && j < len(cs); j++ {
		if cs[j].Path != lf.Path || cs[j].Lang != lf.Lang || !isChunkID(cs[j].ID, lf.Path, j) {
			err = fmt.Errorf("chunk %d is %q", j, cs[j].ID)
		}
	}
	if err != nil {
		cs = make([]chunker.Chunk, lf.N)
		for j := range cs {
			cs[j] = chunker.Chunk{ID: chunker.ChunkID(lf.Path, j), Path: lf.Path, Lang: lf.Lang, Ordinal: j}
		}
	}
	return cs
}

// LoadImageLazy is [LoadImage] for chunks kept encoded, file by file, and decoded by
// decode when first needed: loading then costs a few bytes per file instead of every
// chunk's decoding and memory, and a search decodes only the files of the chunks it
// ranks or its filter is asked about. files are the index's files in its order (their
// chunk counts add up to the image's), each path once; their records must not change
// while the index is used. A record that does not decode gives its file's chunks
// with an ID, a path, a language and an ordinal only. It returns an error wrapping
// [ErrImage] for files that do not fit the image (another chunk count, a file without
// chunks, a path twice) and LoadImage's errors.
func LoadImageLazy(key string, files []LazyFile, decode ChunkDecoder, img []byte, emb Embedder) (*Index, error) {
	z := &lazyChunks{files: files, starts: make([]int, len(files)+1), decode: decode, got: make([]atomic.Pointer[[]chunker.Chunk], len(files))}
	byPath := make(map[string]int, len(files))
	for f, lf := range files {
		if lf.N <= 0 {
			return nil, fmt.Errorf("%w: file %s without chunks", ErrImage, lf.Path)
		}
		if _, dup := byPath[lf.Path]; dup {
			return nil, fmt.Errorf("%w: file %s twice", ErrImage, lf.Path)
		}
		byPath[lf.Path] = z.starts[f]
		z.starts[f+1] = z.starts[f] + lf.N
	}
	return loadImage(key, chunkList{lazy: z}, byPath, img, emb)
}

package workspace

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/internal/atomicfile"
)

// StoreDir is the subdirectory of the cache directory that holds the
// content-addressed store ([Store]).
const StoreDir = "store"

// storeVersion is part of every store key; bump it when a stored record changes
// meaning (chunker.Chunk or symbols.File fields, or how they are computed).
const storeVersion = "store-1"

// Store is a content-addressed cache of per-file results, shared by all snapshots
// (of all repositories) that use the same cache directory: the chunks of a file
// and its symbols ([symbols.File]). A record's key is the SHA-256 of the store
// version, the record kind, the settings that shape it (strategy and chunker
// options for chunks), the file's grammar version, its path and the SHA-256 of its
// raw bytes; so when a repository moves to a new revision, only the files whose
// content changed are chunked and parsed again.
//
// The path is part of the key because chunk IDs and links name the file. Records
// are gob files under dir/{kind}/{2 hex}/{62 hex}, written to a temporary file and
// renamed into place, so concurrent builds (threads or processes) never see a
// partial record; an unreadable record counts as a miss and is rewritten. The store
// only grows: delete the folder to empty it.
type Store struct {
	dir string
}

// OpenStore returns the store in cacheDir/[StoreDir]; the folder is created on the
// first write. It never fails: a store that cannot be written only costs time.
func OpenStore(cacheDir string) *Store {
	return &Store{dir: filepath.Join(cacheDir, StoreDir)}
}

// Dir returns the store's folder.
func (s *Store) Dir() string { return s.dir }

// storeKey returns the key of a record of kind for the file at path whose raw
// bytes hash to sum, under settings.
func storeKey(kind, settings, path string, sum [32]byte) [32]byte {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00", storeVersion, kind, settings)
	if g := grammars.ForPath(path); g != nil {
		fmt.Fprintf(h, "%s", g.Version)
	}
	fmt.Fprintf(h, "\x00%s\x00%x", path, sum)
	var k [32]byte
	h.Sum(k[:0])
	return k
}

func (s *Store) file(kind string, key [32]byte) string {
	x := hex.EncodeToString(key[:])
	return filepath.Join(s.dir, kind, x[:2], x[2:])
}

// get decodes the record of kind and key into v and reports whether it was found
// intact (see readRecord).
func (s *Store) get(kind string, key [32]byte, v any) bool {
	return readRecord(s.file(kind, key), key, v)
}

// put stores v as the record of kind and key (atomically; errors are dropped: a
// failed write only costs a later build the work again).
func (s *Store) put(kind string, key [32]byte, v any) {
	_ = writeRecord(s.file(kind, key), key, v)
}

// recordMagic starts every record file; recordHeader is its length plus the key
// and the SHA-256 of the payload.
const (
	recordMagic  = "repoctx-record-1\n"
	recordHeader = len(recordMagic) + 32 + 32
)

// writeRecord writes v gob-encoded to path atomically (a temporary file in the same
// folder, created if needed, renamed into place; on error nothing is left behind),
// behind a header holding key and the SHA-256 of the encoded bytes, so that
// readRecord can tell a damaged or misplaced record from a good one.
func writeRecord(path string, key [32]byte, v any) error {
	var payload bytes.Buffer
	if err := gob.NewEncoder(&payload).Encode(v); err != nil {
		return err
	}
	sum := sha256.Sum256(payload.Bytes())
	return atomicfile.Write(path, func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		bw.WriteString(recordMagic)
		bw.Write(key[:])
		bw.Write(sum[:])
		bw.Write(payload.Bytes())
		return bw.Flush()
	}, atomicfile.Options{MkdirAll: true})
}

// readRecord decodes the record at path into v and reports success. Anything but a
// regular file (a FIFO, a device, a folder, a symbolic link) is not opened; a
// record whose header does not name key, whose payload does not match its checksum
// or does not decode counts as missing (the caller rebuilds and rewrites it).
func readRecord(path string, key [32]byte, v any) bool {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() < int64(recordHeader) {
		return false
	}
	b, err := os.ReadFile(path)
	if err != nil || len(b) < recordHeader || string(b[:len(recordMagic)]) != recordMagic {
		return false
	}
	h := b[len(recordMagic):]
	if !bytes.Equal(h[:32], key[:]) {
		return false
	}
	payload := b[recordHeader:]
	if sum := sha256.Sum256(payload); !bytes.Equal(h[32:64], sum[:]) {
		return false
	}
	return gob.NewDecoder(bytes.NewReader(payload)).Decode(v) == nil
}

// chunkRecord is a stored chunking result. Files that could not be decoded or
// chunked are not stored (their errors may depend on limits, and they are rare).
type chunkRecord struct {
	Chunks   []chunker.Chunk
	Lossy    bool   // decoded lossily (see chunker.File.Lossy)
	Encoding string // the encoding it was decoded from
}

package retrieve

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/mapping"
	bleveindex "github.com/blevesearch/bleve_index_api"
	"github.com/golang/snappy"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/chunker"
)

// FormatVersion is the on-disk format version written to the manifest. It changes
// whenever the layout, the mapping or the analyzer changes; [Open] refuses other
// versions with [ErrFormat]. Version 2 added the dense vectors (manifest "dense",
// vectors.f32, lsa.gob.sz).
const FormatVersion = 2

// BatchSize is the number of documents bleve's offline builder analyses and writes as one
// segment before starting the next, bounding the memory [Build] needs (segments are
// merged into one when the build finishes).
const BatchSize = 1000

// Errors returned (wrapped) by [Open] and [OpenOrBuild]; test with errors.Is.
var (
	// ErrIncomplete means the directory holds no complete index: the manifest is
	// missing or unreadable (a half-written or foreign directory), or the files it
	// describes are missing or damaged. A missing directory is reported as ErrIncomplete
	// too (errors.Is(err, fs.ErrNotExist) also holds then).
	ErrIncomplete = errors.New("retrieve: incomplete index")
	// ErrKeyMismatch means the directory holds a complete index built for another key,
	// i.e. of another snapshot.
	ErrKeyMismatch = errors.New("retrieve: index key mismatch")
	// ErrFormat means the directory holds an index of another [FormatVersion].
	ErrFormat = errors.New("retrieve: index format version mismatch")
	// ErrClosed is returned by [Index.Search] after [Index.Close].
	ErrClosed = errors.New("retrieve: index is closed")
)

// File and field names of the on-disk layout.
const (
	manifestFile = "manifest.json"
	chunksFile   = "chunks.gob.sz"
	bleveDir     = "bleve"
	tmpInfix     = ".tmp-"
	oldInfix     = ".old-"

	fieldText   = "text"
	fieldHeader = "header"
	fieldPath   = "path"
)

// fields lists the indexed fields in a fixed order (see fieldValues).
var fields = [...]string{fieldText, fieldHeader, fieldPath}

// fieldStats are the collection statistics BM25 needs for one field.
type fieldStats struct {
	// Docs is the number of chunks whose field has at least one token.
	Docs int `json:"docs"`
	// Tokens is the total number of tokens of the field over all chunks.
	Tokens int64 `json:"tokens"`
}

// manifest is the small JSON file whose presence marks a complete index.
type manifest struct {
	Format  int                   `json:"format"`
	Key     string                `json:"key"`
	Chunks  int                   `json:"chunks"`
	BuiltAt time.Time             `json:"built_at"`
	BuildMS int64                 `json:"build_ms"`
	Fields  map[string]fieldStats `json:"fields"`
	// Dense describes the dense vectors; nil for a BM25-only index.
	Dense *DenseInfo `json:"dense,omitempty"`
}

// Index is a built, opened BM25 index of one snapshot plus the chunks it was built from.
//
// All methods are safe for concurrent use. The index is opened read-only, so any number of
// goroutines and processes can search the same directory at once.
type Index struct {
	dir    string
	man    manifest
	chunks []chunker.Chunk
	byID   map[string]int
	// docChunk maps bleve's document number to the chunk's index in chunks.
	docChunk []int32
	bidx     bleve.Index
	adv      bleveindex.Index
	stats    [len(fields)]fieldStats
	pool     sync.Pool // of *accum

	mu     sync.RWMutex // guards closed against Close during Search
	closed bool

	// Dense retrieval (dense.go): the vectors and, for LSA, the model are loaded on
	// first use. qemb embeds queries (the caller's embedder, or the index's own LSA
	// model); the index never closes it.
	denseOnce sync.Once
	denseVecs []float32
	denseErr  error
	qemb      Embedder
}

// Chunks returns the indexed chunks in the order given to [Build]. The slice is shared
// with the index and must not be modified.
func (ix *Index) Chunks() []chunker.Chunk { return ix.chunks }

// Chunk returns the chunk with the given ID, or false if the index has none. The chunk is
// shared with the index and must not be modified.
func (ix *Index) Chunk(id string) (*chunker.Chunk, bool) {
	i, ok := ix.byID[id]
	if !ok {
		return nil, false
	}
	return &ix.chunks[i], true
}

// Dir returns the directory the index was opened from.
func (ix *Index) Dir() string { return ix.dir }

// Key returns the key the index was built for.
func (ix *Index) Key() string { return ix.man.Key }

// BuiltAt returns when the index was built (UTC, as recorded in its manifest).
func (ix *Index) BuiltAt() time.Time { return ix.man.BuiltAt }

// Close releases the bleve index. Searches running concurrently finish first; later ones
// return [ErrClosed]. Closing twice is a no-op. It returns bleve's close error, if any.
// An embedder given in [BuildOptions] is not closed.
func (ix *Index) Close() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.closed {
		return nil
	}
	ix.closed = true
	if err := ix.bidx.Close(); err != nil {
		return fmt.Errorf("retrieve: close %s: %w", ix.dir, err)
	}
	return nil
}

// indexMapping is the bleve mapping of a chunk document: three text fields analysed with
// the code analyzer, neither stored nor with term vectors (only postings with frequencies
// and field lengths are needed), no _all field, BM25 as bleve's scoring model.
func indexMapping() *mapping.IndexMappingImpl {
	im := bleve.NewIndexMapping()
	im.ScoringModel = bleveindex.BM25Scoring
	im.DefaultAnalyzer = AnalyzerName
	im.IndexDynamic = false
	im.StoreDynamic = false
	im.DocValuesDynamic = false
	dm := bleve.NewDocumentStaticMapping()
	for _, f := range fields {
		fm := bleve.NewTextFieldMapping()
		fm.Analyzer = AnalyzerName
		fm.Store = false
		fm.IncludeTermVectors = false
		fm.IncludeInAll = false
		fm.DocValues = false
		dm.AddFieldMappingsAt(f, fm)
	}
	dm.AddSubDocumentMapping("_all", bleve.NewDocumentDisabledMapping())
	im.DefaultMapping = dm
	return im
}

// fieldValues returns the text indexed for each of fields.
func fieldValues(c *chunker.Chunk) [len(fields)]string {
	return [len(fields)]string{c.Text, strings.Join(c.Header, "\n"), c.Path}
}

// Build writes the index of chunks into dir atomically.
//
// It builds in a temporary directory beside dir (named ".<base>.tmp-*"): the bleve index
// (written by bleve's offline builder in segments of [BatchSize] documents, then merged),
// the chunks (gob, snappy-compressed), the dense part selected by opts (the fitted LSA
// model and/or one vector per chunk, see [BuildOptions] and [DenseInfo]) and last the
// manifest (format version, key, chunk count, build time, field statistics, dense
// model and counts). It fsyncs every file and directory, then renames the temporary
// directory to dir and fsyncs dir's parent.
//
// The key names the content: if dir already holds a complete index for key when Build is
// ready to rename (another process or goroutine won the race), Build discards its own
// build and returns nil. Any other existing dir (stale, incomplete, or of another key) is
// renamed aside and removed once the new index is in place, provided it holds nothing but
// index files (manifest.json, chunks.gob.sz, bleve/, vectors.f32, lsa.gob.sz) — otherwise
// Build returns an error rather than touch it. Processes still reading the old index keep
// working on Unix, where open files outlive their names.
//
// Chunk IDs must be non-empty and unique, else Build returns an error before writing
// anything. When ctx is cancelled the build stops between batches of documents or
// vectors, removes its temporary directory and returns ctx's error. Other errors are
// I/O, bleve or model errors, wrapped; a fault of the machine (a full disk, a
// read-only or unwritable cache, too many open files) is a *repoctx.EnvironmentError,
// also when bleve's builder lost the I/O error or panicked on it (see
// classifyBuildError). A panic during the build is returned as an error.
func Build(ctx context.Context, dir string, key string, chunks []chunker.Chunk, opts BuildOptions) error {
	spec, err := opts.spec()
	if err != nil {
		return err
	}
	return build(ctx, dir, key, chunks, spec, opts.Embedder, opts)
}

// build is Build with the model resolved.
func build(ctx context.Context, dir, key string, chunks []chunker.Chunk, spec denseSpec, emb Embedder, opts BuildOptions) (err error) {
	start := time.Now()
	if err := ctx.Err(); err != nil {
		return err
	}
	seen := make(map[string]struct{}, len(chunks))
	for i := range chunks {
		id := chunks[i].ID
		if id == "" {
			return fmt.Errorf("retrieve: chunk %d has an empty id", i)
		}
		if _, dup := seen[id]; dup {
			return fmt.Errorf("retrieve: duplicate chunk id %q", id)
		}
		seen[id] = struct{}{}
	}
	seen = nil

	dir = filepath.Clean(dir)
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return writeFault(parent, fmt.Errorf("retrieve: %w", err))
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+tmpInfix)
	if err != nil {
		return writeFault(parent, fmt.Errorf("retrieve: %w", err))
	}
	defer os.RemoveAll(tmp) // a no-op once renamed into place
	// Runs before the removal, while a failed build still holds its space.
	defer func() {
		if r := recover(); r != nil {
			err = repoctx.Recovered("retrieve: build index", r)
		}
		if err != nil && ctx.Err() == nil {
			err = classifyBuildError(parent, err)
		}
	}()

	man := manifest{Format: FormatVersion, Key: key, Chunks: len(chunks), Fields: map[string]fieldStats{}}
	// The dense part (LSA fit or model inference) runs beside the BM25 part.
	denseDone := make(chan error, 1)
	go func() {
		var err error
		defer func() {
			if r := recover(); r != nil {
				err = repoctx.Recovered("retrieve: build dense vectors", r)
			}
			denseDone <- err
		}()
		man.Dense, err = buildDense(ctx, tmp, chunks, spec, emb, opts)
	}()
	stats, err := buildBleve(ctx, filepath.Join(tmp, bleveDir), tmp, chunks)
	if err == nil {
		err = writeChunks(filepath.Join(tmp, chunksFile), chunks)
	}
	if derr := <-denseDone; err == nil {
		err = derr
	}
	if err != nil {
		return err
	}
	for i, f := range fields {
		man.Fields[f] = stats[i]
	}
	man.BuiltAt = time.Now().UTC()
	man.BuildMS = time.Since(start).Milliseconds()
	if err := writeManifest(filepath.Join(tmp, manifestFile), &man); err != nil {
		return err
	}
	if err := syncTree(tmp); err != nil {
		return err
	}
	return install(tmp, dir, key, &spec)
}

// buildBleve indexes chunks into path with bleve's offline builder and returns the field
// statistics. scratch is where the builder keeps its intermediate segments.
func buildBleve(ctx context.Context, path, scratch string, chunks []chunker.Chunk) (_ [len(fields)]fieldStats, err error) {
	var stats [len(fields)]fieldStats
	im := indexMapping()
	if len(chunks) == 0 {
		// bleve's offline builder cannot finish an empty index; create a regular one.
		bidx, err := bleve.New(path, im)
		if err != nil {
			return stats, fmt.Errorf("retrieve: create bleve index: %w", err)
		}
		if err := bidx.Close(); err != nil {
			return stats, fmt.Errorf("retrieve: close bleve index: %w", err)
		}
		return stats, nil
	}
	b, err := bleve.NewBuilder(path, im, map[string]interface{}{
		"batchSize":       BatchSize,
		"buildPathPrefix": scratch,
	})
	if err != nil {
		return stats, fmt.Errorf("retrieve: create bleve builder: %w", err)
	}
	defer func() {
		// bleve's builder has panicked on a failed flush (a full disk) in Close; build
		// tells a full disk from a bug (classifyBuildError).
		if r := recover(); r != nil {
			err = repoctx.Recovered("retrieve: bleve index builder failed", r)
		}
	}()
	doc := make(map[string]interface{}, len(fields))
	for i := range chunks {
		if i%BatchSize == 0 {
			if err := ctx.Err(); err != nil {
				_ = b.Close()
				return stats, err
			}
		}
		vals := fieldValues(&chunks[i])
		for j, f := range fields {
			doc[f] = vals[j]
			if n := countTokens(vals[j]); n > 0 {
				stats[j].Docs++
				stats[j].Tokens += int64(n)
			}
		}
		if err := b.Index(chunks[i].ID, doc); err != nil {
			_ = b.Close()
			return stats, fmt.Errorf("retrieve: index chunk %q: %w", chunks[i].ID, err)
		}
	}
	if err := b.Close(); err != nil {
		return stats, fmt.Errorf("retrieve: finish bleve index: %w", err)
	}
	return stats, nil
}

// probeBytes is the size of the file classifyBuildError writes to tell a full disk.
const probeBytes = 1 << 20

// classifyBuildError returns the error of a failed build in the cache folder dir as a
// fault of the environment ([repoctx.EnvironmentError]) when it is one: when err
// wraps an error of the machine (a full disk, a read-only file system, too many open
// files, permission denied: the build only writes into the cache), or when a test
// write of [probeBytes] into dir (synced, then removed) fails so, as after bleve's
// builder has lost the I/O error it failed with (it formats errors with %v) or
// panicked on it. Other errors are returned unchanged.
func classifyBuildError(dir string, err error) error {
	if repoctx.IsEnvironment(err) || errors.Is(err, fs.ErrPermission) {
		return writeFault(dir, err)
	}
	perr := probeWrite(dir)
	if perr == nil {
		return err
	}
	if e := writeFault(dir, perr); repoctx.IsEnvironment(e) {
		return &repoctx.EnvironmentError{Op: writeOp(dir), Err: fmt.Errorf("%w (the index build failed: %v)", perr, err)}
	}
	return err
}

// writeOp describes writing into the cache folder dir, for EnvironmentError.Op.
func writeOp(dir string) string { return "cannot write the index cache in " + dir }

// writeFault marks err, from writing into the cache folder dir, with
// repoctx.WriteFault.
func writeFault(dir string, err error) error { return repoctx.WriteFault(writeOp(dir), err) }

// probeWrite writes, syncs and removes a file of probeBytes in dir.
func probeWrite(dir string) error {
	f, err := os.CreateTemp(dir, ".write-probe-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	_, err = f.Write(make([]byte, probeBytes))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeChunks writes chunks to path gob-encoded (the count, then each chunk) and
// compressed with snappy's framing format, which decompresses several times faster than
// gzip (decompression dominated Open with gzip).
func writeChunks(path string, chunks []chunker.Chunk) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("retrieve: %w", err)
	}
	bw := bufio.NewWriterSize(f, 1<<16)
	zw := snappy.NewBufferedWriter(bw)
	// The count, then one value per chunk: gob buffers each value whole, so encoding
	// the slice at once would hold a second copy of every chunk's text in memory.
	enc := gob.NewEncoder(zw)
	err = enc.Encode(len(chunks))
	for i := 0; err == nil && i < len(chunks); i++ {
		err = enc.Encode(&chunks[i])
	}
	if err == nil {
		err = zw.Close()
	}
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("retrieve: write chunks: %w", err)
	}
	return nil
}

// readChunks reads what writeChunks wrote.
func readChunks(path string) ([]chunker.Chunk, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	dec := gob.NewDecoder(bufio.NewReaderSize(snappy.NewReader(f), 1<<16))
	var n int
	if err := dec.Decode(&n); err != nil {
		return nil, err
	}
	if n < 0 || n > 1<<28 {
		return nil, fmt.Errorf("implausible chunk count %d", n)
	}
	chunks := make([]chunker.Chunk, n)
	for i := range chunks {
		if err := dec.Decode(&chunks[i]); err != nil {
			return nil, err
		}
	}
	return chunks, nil
}

func writeManifest(path string, m *manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("retrieve: encode manifest: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("retrieve: write manifest: %w", err)
	}
	return nil
}

// readManifest reads and checks dir's manifest against key.
func readManifest(dir, key string) (manifest, error) {
	var m manifest
	b, err := os.ReadFile(filepath.Join(dir, manifestFile))
	if err != nil {
		return m, fmt.Errorf("retrieve: %s has no manifest: %w (%w)", dir, ErrIncomplete, err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("retrieve: %s has a damaged manifest: %w (%v)", dir, ErrIncomplete, err)
	}
	if m.Format != FormatVersion {
		return m, fmt.Errorf("retrieve: %s has format %d, want %d: %w", dir, m.Format, FormatVersion, ErrFormat)
	}
	if m.Key != key {
		return m, fmt.Errorf("retrieve: %s was built for key %q, not %q: %w", dir, m.Key, key, ErrKeyMismatch)
	}
	if m.Chunks < 0 || m.Fields == nil {
		return m, fmt.Errorf("retrieve: %s has a damaged manifest: %w", dir, ErrIncomplete)
	}
	if d := m.Dense; d != nil && (d.Model == "" || d.Dim < 0 || (d.Dim > 0 && d.Vectors != m.Chunks)) {
		return m, fmt.Errorf("retrieve: %s has a damaged manifest (dense part): %w", dir, ErrIncomplete)
	}
	return m, nil
}

// syncTree fsyncs every regular file and directory under root, children before parents.
func syncTree(root string) error {
	var dirs []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, path)
			return nil
		}
		if d.Type().IsRegular() {
			return syncPath(path)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0 && err == nil; i-- {
		err = syncPath(dirs[i])
	}
	if err != nil {
		return fmt.Errorf("retrieve: sync %s: %w", root, err)
	}
	return nil
}

func syncPath(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// install renames the finished build tmp to dir (see [Build] for the rules when dir
// exists; an index counts as the same when it has the same key and dense model).
func install(tmp, dir, key string, spec *denseSpec) error {
	for attempt := 0; ; attempt++ {
		err := os.Rename(tmp, dir)
		if err == nil {
			break
		}
		if _, serr := os.Stat(dir); serr != nil || attempt >= 4 {
			return fmt.Errorf("retrieve: install index: %w", err)
		}
		// dir exists. If it is already a complete index for key, we lost a race: keep it.
		if _, merr := readManifestFor(dir, key, spec); merr == nil {
			return nil
		}
		// Otherwise move the stale directory aside and try again, but only if it looks
		// like an index of ours: Build must never delete someone else's directory.
		if !looksLikeIndex(dir) {
			return fmt.Errorf("retrieve: %s exists and is not an index directory", dir)
		}
		old := filepath.Join(filepath.Dir(dir), "."+filepath.Base(dir)+oldInfix+randomSuffix())
		if rerr := os.Rename(dir, old); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			return fmt.Errorf("retrieve: move stale index aside: %w", rerr)
		}
		defer os.RemoveAll(old)
	}
	if err := syncPath(filepath.Dir(dir)); err != nil {
		return fmt.Errorf("retrieve: sync %s: %w", filepath.Dir(dir), err)
	}
	return nil
}

// looksLikeIndex reports whether dir holds nothing but entries an index directory has.
func looksLikeIndex(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		switch e.Name() {
		case manifestFile, chunksFile, bleveDir, vectorsFile, lsaFile:
		default:
			return false
		}
	}
	return true
}

func randomSuffix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Open opens the index in dir, which must have been built for key with the dense
// retriever opts selects (else [ErrKeyMismatch]). An index with the built-in LSA model
// embeds queries with the model stored in it; one built with an embedder needs the same
// embedder in opts to embed queries (the index does not close it).
//
// It returns an error wrapping [ErrIncomplete] if dir is missing, has no valid manifest
// (a half-written index) or its files are damaged, [ErrKeyMismatch] if it was built for
// another key or model, and [ErrFormat] if it has another [FormatVersion]. The bleve index
// is opened read-only (bleve's scorch "read_only" option: no background merging or
// persisting, a shared lock on root.bolt), waiting at most 10 s for a writer's lock. The
// chunks are read into memory; the dense vectors on first use.
func Open(dir string, key string, opts BuildOptions) (*Index, error) {
	spec, err := opts.spec()
	if err != nil {
		return nil, err
	}
	return open(dir, key, &spec, opts.Embedder)
}

// readManifestFor is readManifest that also checks the dense model against spec (if not
// nil).
func readManifestFor(dir, key string, spec *denseSpec) (manifest, error) {
	man, err := readManifest(filepath.Clean(dir), key)
	if err != nil || spec == nil {
		return man, err
	}
	got := ""
	if man.Dense != nil {
		got = man.Dense.Model
	}
	if got != spec.id {
		return man, fmt.Errorf("retrieve: %s was built with dense model %q, not %q: %w", dir, got, spec.id, ErrKeyMismatch)
	}
	return man, nil
}

// open opens dir for key, checking the dense model against spec if not nil, with emb
// (may be nil) attached for queries.
func open(dir, key string, spec *denseSpec, emb Embedder) (*Index, error) {
	dir = filepath.Clean(dir)
	man, err := readManifestFor(dir, key, spec)
	if err != nil {
		return nil, err
	}
	if err := checkDenseFiles(dir, man.Dense); err != nil {
		return nil, err
	}
	chunks, err := readChunks(filepath.Join(dir, chunksFile))
	if err != nil {
		return nil, fmt.Errorf("retrieve: read chunks of %s: %w (%w)", dir, ErrIncomplete, err)
	}
	if len(chunks) != man.Chunks {
		return nil, fmt.Errorf("retrieve: %s holds %d chunks, manifest says %d: %w", dir, len(chunks), man.Chunks, ErrIncomplete)
	}
	byID := make(map[string]int, len(chunks))
	for i := range chunks {
		byID[chunks[i].ID] = i
	}
	bpath := filepath.Join(dir, bleveDir)
	if _, err := os.Stat(filepath.Join(bpath, "index_meta.json")); err != nil {
		// Without this check bleve would report a generic open error.
		return nil, fmt.Errorf("retrieve: %s has no bleve index: %w (%w)", dir, ErrIncomplete, err)
	}
	bidx, err := bleve.OpenUsing(bpath, map[string]interface{}{
		"read_only":    true,
		"bolt_timeout": "10s",
	})
	if err != nil {
		return nil, fmt.Errorf("retrieve: open bleve index in %s: %w", dir, err)
	}
	ix := &Index{dir: dir, man: man, chunks: chunks, byID: byID, bidx: bidx}
	if emb != nil && man.Dense != nil {
		if emb.ID() != man.Dense.Model || (man.Dense.Dim > 0 && emb.Dim() != man.Dense.Dim) {
			_ = bidx.Close()
			return nil, fmt.Errorf("retrieve: %s holds vectors of %s (dim %d), not of %s (dim %d): %w",
				dir, man.Dense.Model, man.Dense.Dim, emb.ID(), emb.Dim(), ErrKeyMismatch)
		}
		ix.qemb = emb
	}
	fail := func(err error) (*Index, error) {
		_ = bidx.Close()
		return nil, err
	}
	if ix.adv, err = bidx.Advanced(); err != nil {
		return fail(fmt.Errorf("retrieve: open bleve index in %s: %w", dir, err))
	}
	n, err := bidx.DocCount()
	if err != nil {
		return fail(fmt.Errorf("retrieve: count documents in %s: %w", dir, err))
	}
	if int(n) != len(chunks) {
		return fail(fmt.Errorf("retrieve: %s indexes %d documents for %d chunks: %w", dir, n, len(chunks), ErrIncomplete))
	}
	for i, f := range fields {
		ix.stats[i] = man.Fields[f]
	}
	if ix.docChunk, err = mapDocs(ix.adv, byID); err != nil {
		return fail(fmt.Errorf("retrieve: map documents of %s: %w", dir, err))
	}
	return ix, nil
}

// mapDocs returns the table from bleve document number to chunk index (about 0.1 µs per
// document).
func mapDocs(adv bleveindex.Index, byID map[string]int) ([]int32, error) {
	r, err := adv.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	it, err := r.DocIDReaderAll()
	if err != nil {
		return nil, err
	}
	defer it.Close()
	table := make([]int32, len(byID))
	for i := range table {
		table[i] = -1
	}
	seen := 0
	for {
		id, err := it.Next()
		if err != nil {
			return nil, err
		}
		if id == nil {
			break
		}
		ext, err := r.ExternalID(id)
		if err != nil {
			return nil, err
		}
		ci, ok := byID[ext]
		if !ok {
			return nil, fmt.Errorf("document %q has no chunk: %w", ext, ErrIncomplete)
		}
		n := id.Value()
		if n > math.MaxInt32 {
			return nil, fmt.Errorf("document number %d out of range", n)
		}
		for uint64(len(table)) <= n {
			table = append(table, -1)
		}
		table[n] = int32(ci)
		seen++
	}
	if seen != len(byID) {
		return nil, fmt.Errorf("%d documents for %d chunks: %w", seen, len(byID), ErrIncomplete)
	}
	return table, nil
}

// dirLocks serialises OpenOrBuild calls for the same directory within this process, so
// racing goroutines build once; other processes still race through the rename in Build.
var dirLocks sync.Map // directory -> *sync.Mutex

// CacheDirName returns the name of the directory, under a cache directory, that
// [OpenOrBuild] uses for key: the first 32 hex digits of the key's SHA-256, so any key is
// a safe file name. [OpenOrBuild] uses it too for the default dense model, and
// CacheDirName(key + "\x00dense=" + model ID) for the others (see [IndexDirName]).
func CacheDirName(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:16])
}

// OpenOrBuild opens cacheDir/[IndexDirName](key, opts) if it holds a complete index
// for key built with the dense model opts selects, else calls chunks, builds the index
// with [Build] and opens it. built reports whether this call built an index (it is
// true even when another process installed an equivalent index first and that one was
// opened). The dense model's ID is part of the directory name and is checked against
// the manifest, so changing the model (or the LSA dimension) builds a new index.
//
// Unless opts.NoEmbedCache, the embedding cache defaults to cacheDir/embeddings, so the
// index of a new snapshot embeds only the chunks that no earlier snapshot had.
//
// Goroutines of one process calling it for the same key take turns, so only the first
// builds. Processes racing for the same key may each build; the rename loser discards
// its build and opens the winner's (see [Build]), so all end with a usable index.
// Leftover temporary directories of this key older than a day (from crashed builds) are
// removed. It returns the error of chunks (a panic of chunks as an error), of [Build]
// or of [Open], wrapped, and ctx's error when it is cancelled.
func OpenOrBuild(ctx context.Context, cacheDir, key string, chunks func(context.Context) ([]chunker.Chunk, error), opts BuildOptions) (ix *Index, built bool, err error) {
	spec, err := opts.spec()
	if err != nil {
		return nil, false, err
	}
	if opts.EmbedCache == "" && !opts.NoEmbedCache {
		opts.EmbedCache = filepath.Join(cacheDir, "embeddings")
	}
	dir := filepath.Join(cacheDir, dirName(key, spec.id))
	mu, _ := dirLocks.LoadOrStore(dir, new(sync.Mutex))
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()

	if ix, err := open(dir, key, &spec, opts.Embedder); err == nil {
		return ix, false, nil
	}
	removeStaleTemps(dir, 24*time.Hour)
	cs, err := collect(ctx, chunks)
	if err != nil {
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		return nil, false, fmt.Errorf("retrieve: collect chunks for %q: %w", key, err)
	}
	// Another process may replace dir between our Build and Open (it moves a stale dir
	// aside just as we install ours); retry a few times before giving up.
	for attempt := 0; ; attempt++ {
		if err := build(ctx, dir, key, cs, spec, opts.Embedder, opts); err != nil {
			return nil, false, err
		}
		ix, err = open(dir, key, &spec, opts.Embedder)
		if err == nil || attempt >= 2 {
			return ix, err == nil, err
		}
	}
}

// collect calls chunks, turning a panic into an error.
func collect(ctx context.Context, chunks func(context.Context) ([]chunker.Chunk, error)) (cs []chunker.Chunk, err error) {
	defer func() {
		if r := recover(); r != nil {
			cs, err = nil, repoctx.Recovered("collect chunks", r)
		}
	}()
	return chunks(ctx)
}

// removeStaleTemps removes temporary and moved-aside siblings of dir older than age.
func removeStaleTemps(dir string, age time.Duration) {
	parent, base := filepath.Dir(dir), filepath.Base(dir)
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, "."+base+tmpInfix) && !strings.HasPrefix(name, "."+base+oldInfix) {
			continue
		}
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > age {
			_ = os.RemoveAll(filepath.Join(parent, name))
		}
	}
}

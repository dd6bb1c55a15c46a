package assemble

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/dataset"
	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/retrieve"
	"github.com/repoctx/repoctx/symbols"
	sitter "github.com/smacker/go-tree-sitter"
)

// FormatVersion is part of every cache key; bump it when chunk records or the index
// layout change meaning.
const FormatVersion = "repoctx-index-1"

// IndexOptions configures IndexSnapshot.
type IndexOptions struct {
	// Strategy is "structural" (default) or "fixed".
	Strategy string
	// Chunk holds the chunker options.
	Chunk chunker.Options
	// CacheDir is where indexes are kept; default retrieve.DefaultCacheDir().
	CacheDir string
	// MaxFileBytes skips larger source files; default chunker.DefaultMaxFileBytes.
	MaxFileBytes int
	// Log, if not nil, receives one line per skipped file with the reason.
	Log io.Writer
	// Dense selects the dense retriever (retrieve.BuildOptions.Dense): "" for the
	// built-in LSA model, "none" for BM25 only, or a Hugging Face model folder.
	Dense string
	// Embedder, if not nil, is an opened model shared by all snapshots' indexes
	// (retrieve.BuildOptions.Embedder); it overrides Dense.
	Embedder retrieve.Embedder
	// LSAPerSnapshot makes Predict fit the built-in LSA model on every snapshot
	// instead of once per repository (see Predict). IndexSnapshot ignores it: it
	// fits its own model unless Embedder is set.
	LSAPerSnapshot bool
	// Symbols makes IndexSnapshot also extract the symbols of every file it parses
	// (structural strategy) from the same syntax tree and keep them in the Store,
	// where CachedSymbols finds them: the file is parsed once, not twice.
	Symbols bool
}

// IndexStats describes one IndexSnapshot call.
type IndexStats struct {
	Files       int  // source files chunked (or found in the cache)
	Skipped     int  // files skipped: unreadable, binary, over the size limit
	Lossy       int  // files decoded lossily (invalid bytes for their encoding)
	Chunks      int  // chunks in the index
	ParseErrors int  // files with ERROR or MISSING nodes
	Built       bool // whether the index was built (false: reused from the cache)
	// Chunked counts the files chunked by this call; Reused those whose chunks came
	// from the content-addressed store (Store) because an earlier snapshot had the
	// same file. Both are 0 when the whole index came from the cache.
	Chunked, Reused int
	// ParseErrorPaths are the paths of the ParseErrors files, in index order.
	ParseErrorPaths []string
}

// sourceFile is a file read from a snapshot, before chunking.
type sourceFile struct {
	path string
	raw  []byte
	sum  [32]byte // SHA-256 of raw
}

// IndexSnapshot returns the retrieval index of a snapshot's source files (those of
// a registered language), building it unless the cache holds one for the same
// content and options. The cache key hashes every indexed file's path and content,
// the chunker options, the grammar versions and FormatVersion, so a changed file
// or setting means a new index and an unchanged snapshot is never re-indexed.
//
// ch must be the chunker for opts.Strategy and is only used by the calling
// goroutine. Unreadable, binary and oversized files are skipped and logged; an
// error is returned only if the index cannot be built or opened.
func IndexSnapshot(snap *dataset.Snapshot, ch chunker.Chunker, opts IndexOptions) (*retrieve.Index, IndexStats, error) {
	var st IndexStats
	if opts.CacheDir == "" {
		opts.CacheDir = retrieve.DefaultCacheDir()
	}
	if opts.Strategy == "" {
		opts.Strategy = "structural"
	}
	logf := func(format string, a ...any) {
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, format+"\n", a...)
		}
	}
	var files []sourceFile
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n", FormatVersion, opts.Chunk.Key(opts.Strategy))
	for _, name := range grammars.Names() {
		fmt.Fprintf(h, "%s\n", grammars.Lookup(name).Version)
	}
	paths := snap.Paths()
	sort.Strings(paths)
	for _, p := range paths {
		if grammars.ForPath(p) == nil {
			continue
		}
		raw, err := snap.ReadFile(p)
		if err != nil {
			st.Skipped++
			logf("skip %s/%s: %v", snap.Name(), p, err)
			continue
		}
		sum := sha256.Sum256(raw)
		fmt.Fprintf(h, "%s\x00%x\n", p, sum)
		files = append(files, sourceFile{p, raw, sum})
	}
	key := snap.Name() + "@" + hex.EncodeToString(h.Sum(nil))[:32]
	bopts := retrieve.BuildOptions{Dense: opts.Dense, Embedder: opts.Embedder}
	store := OpenStore(opts.CacheDir)
	settings := opts.Chunk.Key(opts.Strategy)
	ix, built, err := retrieve.OpenOrBuildWith(opts.CacheDir, key, func() ([]chunker.Chunk, error) {
		var all []chunker.Chunk
		for _, sf := range files {
			skey := storeKey("chunks", settings, sf.path, sf.sum)
			var rec chunkRecord
			if fits(sf.raw, opts.MaxFileBytes) && store.get("chunks", skey, &rec) {
				st.Reused++
			} else {
				f, err := chunker.Decode(sf.path, sf.raw, opts.MaxFileBytes)
				if err != nil {
					st.Skipped++
					logf("skip %s/%s: %v", snap.Name(), sf.path, err)
					continue
				}
				var cs []chunker.Chunk
				if sc, ok := ch.(*chunker.Structural); ok && opts.Symbols {
					symKey := symbolKey(sf.path, sf.sum)
					cs, err = sc.ChunkTree(f, func(root *sitter.Node, parsed []byte) {
						if sym, err := symbols.ExtractTree(f, root, parsed); err == nil {
							store.put("symbols", symKey, sym)
						}
					})
				} else {
					cs, err = ch.Chunk(f)
				}
				if err != nil {
					st.Skipped++
					logf("skip %s/%s: %v", snap.Name(), sf.path, err)
					continue
				}
				rec = chunkRecord{Chunks: cs, Lossy: f.Lossy, Encoding: f.Encoding}
				store.put("chunks", skey, &rec)
				st.Chunked++
			}
			if rec.Lossy {
				st.Lossy++
				logf("lossy %s/%s: bytes not valid %s, decoded as Windows-1252", snap.Name(), sf.path, rec.Encoding)
			}
			all = append(all, rec.Chunks...)
		}
		return all, nil
	}, bopts)
	if err != nil {
		return nil, st, err
	}
	st.Files, st.Built, st.Chunks = len(files), built, len(ix.Chunks())
	// Files with parse errors, from the index's chunks (in file order), whether it
	// was built now or reused (Skipped and Lossy are only known when it is built).
	last := ""
	for _, c := range ix.Chunks() {
		if c.ParseError && c.Path != last {
			st.ParseErrors++
			st.ParseErrorPaths = append(st.ParseErrorPaths, c.Path)
			last = c.Path
		}
	}
	return ix, st, nil
}

// oneLine replaces line breaks so an error fits one log line.
func oneLine(s string) string { return strings.ReplaceAll(s, "\n", "; ") }

// BuildSymbols extracts the definitions and imports of a snapshot's source files
// (those of a registered language) into a symbol table. Files that cannot be read,
// decoded or parsed are left out (IndexSnapshot's log already names them). ex is used
// by the calling goroutine only. CachedSymbols keeps the result across runs.
func BuildSymbols(snap *dataset.Snapshot, ex *symbols.Extractor, maxFileBytes int) *symbols.Table {
	return symbols.NewTable(symbolFiles(snap, ex, "", maxFileBytes))
}

func symbolFiles(snap *dataset.Snapshot, ex *symbols.Extractor, cacheDir string, maxFileBytes int) []*symbols.File {
	var store *Store
	if cacheDir != "" {
		store = OpenStore(cacheDir)
	}
	var files []*symbols.File
	for _, p := range snap.Paths() {
		if grammars.ForPath(p) == nil {
			continue
		}
		raw, err := snap.ReadFile(p)
		if err != nil || !fits(raw, maxFileBytes) {
			continue
		}
		var skey [32]byte
		if store != nil {
			skey = symbolKey(p, sha256.Sum256(raw))
			var sf symbols.File
			if store.get("symbols", skey, &sf) {
				files = append(files, &sf)
				continue
			}
		}
		f, err := chunker.Decode(p, raw, maxFileBytes)
		if err != nil {
			continue
		}
		sf, err := ex.Extract(f)
		if err != nil {
			continue
		}
		if store != nil {
			store.put("symbols", skey, sf)
		}
		files = append(files, sf)
	}
	return files
}

// fits reports whether raw is within the file size limit maxBytes (<= 0: the
// default, chunker.DefaultMaxFileBytes).
func fits(raw []byte, maxBytes int) bool {
	if maxBytes <= 0 {
		maxBytes = chunker.DefaultMaxFileBytes
	}
	return len(raw) <= maxBytes
}

// symbolsCacheVersion is part of the symbol cache's file name and of the store
// keys of symbol records; bump it when symbols.File changes meaning.
const symbolsCacheVersion = "sym1"

// symbolKey is the Store key of the symbols of the file at path whose raw bytes
// hash to sum; IndexSnapshot (from the chunker's parse) and symbolFiles must agree on it.
func symbolKey(path string, sum [32]byte) [32]byte {
	return storeKey("symbols", symbolsCacheVersion, path, sum)
}

// CachedSymbols returns the symbol table of a snapshot whose index is ix, from
// cacheDir/symbols/ when an earlier run stored it for the same index key, else built
// with BuildSymbols and stored (atomically: temp file + rename; a failed write only
// costs the next run a rebuild). cacheDir "" means retrieve.DefaultCacheDir().
func CachedSymbols(snap *dataset.Snapshot, ix *retrieve.Index, ex *symbols.Extractor, cacheDir string, maxFileBytes int) *symbols.Table {
	if cacheDir == "" {
		cacheDir = retrieve.DefaultCacheDir()
	}
	dir := filepath.Join(cacheDir, "symbols")
	path := filepath.Join(dir, symbolsCacheVersion+"-"+retrieve.CacheDirName(ix.Key())+".gob")
	key := sha256.Sum256([]byte(filepath.Base(path)))
	var files []*symbols.File
	if readRecord(path, key, &files) {
		return symbols.NewTable(files)
	}
	files = symbolFiles(snap, ex, cacheDir, maxFileBytes)
	t := symbols.NewTable(files)
	_ = writeRecord(path, key, files)
	return t
}

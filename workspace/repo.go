package workspace

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	sitter "github.com/smacker/go-tree-sitter"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/retrieve"
	"github.com/repoctx/repoctx/symbols"
)

// FormatVersion is part of every index cache key; bump it when chunk records or the
// index layout change meaning.
const FormatVersion = "repoctx-index-1"

// Options configures [Open]. Start from [DefaultOptions]; zero fields of Chunk and
// Build mean their packages' defaults.
type Options struct {
	// Strategy is the chunking strategy.
	Strategy chunker.Strategy
	// Chunk holds the chunker options (zero fields: chunker.DefaultOptions).
	Chunk chunker.Options
	// CacheDir is where indexes, the content-addressed store and symbol tables are
	// kept; "" means [DefaultCacheDir].
	CacheDir string
	// MaxFileBytes skips larger source files (bytes); 0 means
	// chunker.DefaultMaxFileBytes.
	MaxFileBytes int
	// Build configures the retrieval index: the dense retriever (LSA by default, none,
	// or an opened [retrieve.Embedder] shared by every snapshot), the LSA dimension and
	// the embedding cache.
	Build retrieve.BuildOptions
	// Symbols makes Open extract every parsed file's definitions and imports from the
	// chunker's syntax tree (the file is parsed once) and give the repository a symbol
	// table ([Repo.Symbols]), for the definitions source of context assembly.
	Symbols bool
	// Languages are the grammar names (grammars.Names) whose files are indexed and
	// given symbols; files of other languages are left out. Empty means every
	// registered language. Batch runs over a dataset set it to the family of the
	// dataset's language (grammars.Family), so that registering a language does not
	// change what another language's snapshots index.
	Languages []string
	// Log, if not nil, receives one line per skipped or lossily decoded file.
	Log io.Writer
}

// languageFilter returns a predicate telling whether a path is of one of langs (a
// registered language when langs is empty), or a *repoctx.OptionError naming the
// first unknown language (option "langs").
func languageFilter(langs []string) (func(path string) bool, error) {
	if len(langs) == 0 {
		return func(p string) bool { return grammars.ForPath(p) != nil }, nil
	}
	want := map[string]bool{}
	for _, l := range langs {
		if grammars.Lookup(l) == nil {
			return nil, &repoctx.OptionError{Option: "langs", Value: strconv.Quote(l),
				Want: "a registered language (" + strings.Join(grammars.Names(), ", ") + ")"}
		}
		want[l] = true
	}
	return func(p string) bool {
		s := grammars.ForPath(p)
		return s != nil && want[s.Name]
	}, nil
}

// languageNames returns the sorted grammar names that langs stands for (every
// registered one when empty), for cache keys.
func languageNames(langs []string) []string {
	if len(langs) == 0 {
		return grammars.Names()
	}
	out := slices.Clone(langs)
	slices.Sort(out)
	return slices.Compact(out)
}

// DefaultOptions returns the defaults: structural chunking with the chunker's
// default options, hybrid retrieval with the built-in LSA model, symbols on, the
// cache in [DefaultCacheDir].
func DefaultOptions() Options {
	return Options{Strategy: chunker.StrategyStructural, CacheDir: DefaultCacheDir(), Symbols: true}
}

// DefaultCacheDir returns the directory indexes are kept in by default:
// os.UserCacheDir()/repoctx, or os.TempDir()/repoctx-cache when the user has no cache
// directory (e.g. $HOME unset). It does not create the directory.
func DefaultCacheDir() string {
	if d, err := os.UserCacheDir(); err == nil && d != "" {
		return filepath.Join(d, "repoctx")
	}
	return filepath.Join(os.TempDir(), "repoctx-cache")
}

// Stats describes how [Open] obtained a repository's index.
type Stats struct {
	Files       int  // source files chunked (or found in the cache)
	Skipped     int  // files skipped: unreadable, binary, over the size limit
	Lossy       int  // files decoded lossily (invalid bytes for their encoding)
	Chunks      int  // chunks in the index
	ParseErrors int  // files with ERROR or MISSING nodes
	Built       bool // whether the index was built (false: reused from the cache)
	// Chunked counts the files chunked by this call; Reused those whose chunks came
	// from the content-addressed store because an earlier snapshot had the same file.
	// Both are 0 when the whole index came from the cache.
	Chunked, Reused int
	// ParseErrorFiles lists the files with parse errors, in path order.
	ParseErrorFiles []string
}

// Repo is one opened repository snapshot: its retrieval index and, with
// [Options.Symbols], its symbol table. It is safe for concurrent use; Close it when
// done.
type Repo struct {
	snap  Snapshot
	ix    *retrieve.Index
	syms  *symbols.Table
	stats Stats
}

// Snapshot returns the snapshot the repository was opened from.
func (r *Repo) Snapshot() Snapshot { return r.snap }

// Index returns the repository's retrieval index.
func (r *Repo) Index() *retrieve.Index { return r.ix }

// Symbols returns the repository's symbol table, or nil when it was opened without
// [Options.Symbols].
func (r *Repo) Symbols() *symbols.Table { return r.syms }

// Stats returns how the index was obtained.
func (r *Repo) Stats() Stats { return r.stats }

// Close releases the index. The repository must not be used afterwards.
func (r *Repo) Close() error { return r.ix.Close() }

// sourceFile is a file read from a snapshot, before chunking.
type sourceFile struct {
	path string
	raw  []byte
	sum  [32]byte // SHA-256 of raw
}

// Open returns the repository of a snapshot: the retrieval index of its source files
// (those of opts.Languages, or of every registered language), built unless the cache holds one for the same
// content and options, and with opts.Symbols its symbol table. The cache key hashes
// every indexed file's path and content, the chunker options, the grammar versions
// and [FormatVersion], so a changed file or setting means a new index and an
// unchanged snapshot is never re-indexed; per-file chunks and symbols come from the
// content-addressed [Store] when another snapshot had the same file.
//
// Unreadable, binary and oversized files are skipped and logged. It returns a
// *repoctx.OptionError for an unknown language in opts.Languages, ctx's error when
// ctx is cancelled (no partial index is left behind), and an error when the index
// cannot be built or opened.
func Open(ctx context.Context, snap Snapshot, opts Options) (*Repo, error) {
	if opts.CacheDir == "" {
		opts.CacheDir = DefaultCacheDir()
	}
	if opts.Strategy == "" {
		opts.Strategy = chunker.StrategyStructural
	}
	if _, err := languageFilter(opts.Languages); err != nil {
		return nil, err
	}
	ch, err := chunker.New(opts.Strategy, opts.Chunk)
	if err != nil {
		return nil, err
	}
	defer ch.Close()
	ix, st, err := openIndex(ctx, snap, ch, opts)
	if err != nil {
		return nil, err
	}
	r := &Repo{snap: snap, ix: ix, stats: st}
	if opts.Symbols {
		r.syms = cachedSymbols(snap, ix, opts)
	}
	if err := ctx.Err(); err != nil {
		ix.Close()
		return nil, err
	}
	return r, nil
}

// indexKey returns the cache key of the snapshot's index and the files it indexes
// (read whole, in path order).
func indexKey(ctx context.Context, snap Snapshot, opts Options, logf func(string, ...any)) (string, []sourceFile, int, error) {
	var files []sourceFile
	skipped := 0
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n", FormatVersion, opts.Chunk.Key(opts.Strategy))
	if len(opts.Languages) > 0 {
		fmt.Fprintf(h, "languages %s\n", strings.Join(languageNames(opts.Languages), ","))
	}
	for _, name := range languageNames(opts.Languages) {
		fmt.Fprintf(h, "%s\n", grammars.Lookup(name).Version)
	}
	keep, err := languageFilter(opts.Languages)
	if err != nil {
		return "", nil, 0, err
	}
	paths := snap.Paths()
	sort.Strings(paths)
	for i, p := range paths {
		if !keep(p) {
			continue
		}
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return "", nil, 0, err
			}
		}
		raw, err := snap.ReadFile(p)
		if err != nil {
			skipped++
			logf("skip %s/%s: %v", snap.Name(), p, err)
			continue
		}
		sum := sha256.Sum256(raw)
		fmt.Fprintf(h, "%s\x00%x\n", p, sum)
		files = append(files, sourceFile{p, raw, sum})
	}
	return snap.Name() + "@" + hex.EncodeToString(h.Sum(nil))[:32], files, skipped, nil
}

// openIndex is Open's index part; ch is the chunker for opts.Strategy.
func openIndex(ctx context.Context, snap Snapshot, ch chunker.Chunker, opts Options) (*retrieve.Index, Stats, error) {
	var st Stats
	logf := func(format string, a ...any) {
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, format+"\n", a...)
		}
	}
	key, files, skipped, err := indexKey(ctx, snap, opts, logf)
	if err != nil {
		return nil, st, err
	}
	st.Skipped = skipped
	store := OpenStore(opts.CacheDir)
	ix, built, err := retrieve.OpenOrBuild(ctx, opts.CacheDir, key, func(ctx context.Context) ([]chunker.Chunk, error) {
		return chunkFiles(ctx, snap.Name(), files, ch, store, opts, &st, logf)
	}, opts.Build)
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
			st.ParseErrorFiles = append(st.ParseErrorFiles, c.Path)
			last = c.Path
		}
	}
	return ix, st, nil
}

// chunkFiles returns the chunks of files, from the store or chunked with ch (and, with
// opts.Symbols and a structural chunker, with their symbols stored from the same
// parse). It counts into st and logs skips.
func chunkFiles(ctx context.Context, snapName string, files []sourceFile, ch chunker.Chunker, store *Store, opts Options, st *Stats, logf func(string, ...any)) ([]chunker.Chunk, error) {
	settings := opts.Chunk.Key(opts.Strategy)
	var all []chunker.Chunk
	for i, sf := range files {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		skey := storeKey("chunks", settings, sf.path, sf.sum)
		var rec chunkRecord
		if fits(sf.raw, opts.MaxFileBytes) && store.get("chunks", skey, &rec) {
			st.Reused++
		} else {
			f, err := chunker.Decode(sf.path, sf.raw, opts.MaxFileBytes)
			if err != nil {
				st.Skipped++
				logf("skip %s/%s: %v", snapName, sf.path, err)
				continue
			}
			cs, err := chunkOne(f, sf, ch, store, opts.Symbols)
			if err != nil {
				st.Skipped++
				logf("skip %s/%s: %v", snapName, sf.path, err)
				continue
			}
			rec = chunkRecord{Chunks: cs, Lossy: f.Lossy, Encoding: f.Encoding}
			store.put("chunks", skey, &rec)
			st.Chunked++
		}
		if rec.Lossy {
			st.Lossy++
			logf("lossy %s/%s: bytes not valid %s, decoded as Windows-1252", snapName, sf.path, rec.Encoding)
		}
		all = append(all, rec.Chunks...)
	}
	return all, nil
}

// chunkOne chunks one decoded file; with withSymbols and a structural chunker its
// symbols are extracted from the same syntax tree and stored.
func chunkOne(f *chunker.File, sf sourceFile, ch chunker.Chunker, store *Store, withSymbols bool) ([]chunker.Chunk, error) {
	sc, ok := ch.(*chunker.Structural)
	if !ok || !withSymbols {
		return ch.Chunk(f)
	}
	symKey := symbolKey(sf.path, sf.sum)
	return sc.ChunkTree(f, func(root *sitter.Node, parsed []byte) {
		if sym, err := symbols.ExtractTree(f, root, parsed); err == nil {
			store.put("symbols", symKey, sym)
		}
	})
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
// hash to sum; chunkOne (from the chunker's parse) and symbolFiles must agree on it.
func symbolKey(path string, sum [32]byte) [32]byte {
	return storeKey("symbols", symbolsCacheVersion, path, sum)
}

// extractors lends symbol extractors (each holds tree-sitter parsers, usable by one
// goroutine at a time) to symbolFiles.
var extractors = sync.Pool{New: func() any { return symbols.NewExtractor(0) }}

// symbolFiles extracts the definitions and imports of a snapshot's source files, from
// store (nil: none) when an earlier parse stored them; keep selects the files by path
// (nil: those of every registered language). Files that cannot be read,
// decoded or parsed are left out (the index's log already names them).
func symbolFiles(snap Snapshot, store *Store, maxFileBytes int, keep func(path string) bool) []*symbols.File {
	var ex *symbols.Extractor
	defer func() {
		if ex != nil {
			extractors.Put(ex)
		}
	}()
	if keep == nil {
		keep = func(p string) bool { return grammars.ForPath(p) != nil }
	}
	var files []*symbols.File
	for _, p := range snap.Paths() {
		if !keep(p) {
			continue
		}
		raw, err := snap.ReadFile(p)
		if err != nil || !fits(raw, maxFileBytes) {
			continue
		}
		skey := symbolKey(p, sha256.Sum256(raw))
		var sf symbols.File
		if store != nil && store.get("symbols", skey, &sf) {
			files = append(files, &sf)
			continue
		}
		f, err := chunker.Decode(p, raw, maxFileBytes)
		if err != nil {
			continue
		}
		if ex == nil {
			ex = extractors.Get().(*symbols.Extractor)
		}
		got, err := ex.Extract(f)
		if err != nil {
			continue
		}
		if store != nil {
			store.put("symbols", skey, got)
		}
		files = append(files, got)
	}
	return files
}

// cachedSymbols returns the symbol table of a snapshot whose index is ix (of the
// files of opts.Languages), from opts.CacheDir/symbols/ when an earlier run stored
// it for the same index key, else built from symbolFiles and stored (atomically; a
// failed write only costs the next run a rebuild).
func cachedSymbols(snap Snapshot, ix *retrieve.Index, opts Options) *symbols.Table {
	keep, err := languageFilter(opts.Languages)
	if err != nil {
		return symbols.NewTable(nil) // Open checked the languages
	}
	cacheDir, maxFileBytes := opts.CacheDir, opts.MaxFileBytes
	dir := filepath.Join(cacheDir, "symbols")
	path := filepath.Join(dir, symbolsCacheVersion+"-"+retrieve.CacheDirName(ix.Key())+".gob")
	key := sha256.Sum256([]byte(filepath.Base(path)))
	var files []*symbols.File
	if readRecord(path, key, &files) {
		return symbols.NewTable(files)
	}
	files = symbolFiles(snap, OpenStore(cacheDir), maxFileBytes, keep)
	t := symbols.NewTable(files)
	_ = writeRecord(path, key, files)
	return t
}

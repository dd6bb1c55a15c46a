package index

import (
	"crypto/sha256"
	"errors"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/retrieve"
	"github.com/repoctx/repoctx/snapshot"
	"github.com/repoctx/repoctx/store"
	"github.com/repoctx/repoctx/symbols"
)

// FormatVersion is part of every view key; bump it when chunk records or what a view
// is made of change meaning.
const FormatVersion = "repoctx-index-2"

// Options configures an [Index] ([Open]). Start from [DefaultOptions]; zero fields of
// Chunk mean the chunker's defaults.
type Options struct {
	// Strategy is the chunking strategy.
	Strategy chunker.Strategy
	// Chunk holds the chunker options (zero fields: chunker.DefaultOptions).
	Chunk chunker.Options
	// MaxFileBytes skips larger source files (bytes); 0 means
	// chunker.DefaultMaxFileBytes.
	MaxFileBytes int
	// Dense selects the dense retriever: the built-in LSA model (the default), none,
	// or the model Embedder (retrieve.DenseModel).
	Dense retrieve.DenseKind
	// Embedder, if not nil, computes the dense vectors and embeds queries: a model
	// opened by the caller and shared by every view (for example all-MiniLM-L6-v2
	// from the retrieve/hugot package). The index never closes it. Without it, an LSA
	// model is fitted on each view (and kept in the store, so a view is fitted once),
	// unless RepoLSA or SharedLSA say otherwise.
	Embedder retrieve.Embedder
	// LSADim is the LSA dimension; 0 means retrieve.DefaultLSADim.
	LSADim int
	// RepoLSA fits the LSA model once per repository, on the first view made, keeps
	// it in the store and embeds every later view (a later revision, the working tree
	// after an edit) with it, so that a view only embeds its new chunks and never
	// refits: what an editor wants. Without it each view has its own fit (deterministic
	// whatever was viewed before).
	RepoLSA bool
	// SharedLSA, if not nil (and Embedder is nil), makes the views share the LSA model
	// fitted on one named snapshot's view, whichever view is made first: what a batch
	// over a dataset wants (deterministic, and each snapshot embeds only its new chunks).
	SharedLSA *SharedLSA
	// Symbols makes a view extract every parsed file's definitions and imports from the
	// chunker's syntax tree (the file is parsed once) and give the view a symbol
	// table ([View.Symbols]), for the definitions source of context assembly.
	Symbols bool
	// Extra, if not nil, returns for the snapshot named name other snapshots (other
	// revisions) whose file versions join its view: each version that the snapshot
	// itself (or an earlier extra) does not hold is searched under the path
	// "{path}@{revision}" (revision: the extra's name after its last "-", at most 7
	// characters), so a later revision's finished code can be retrieved. The
	// definitions source uses the snapshot's own files only.
	Extra func(name string) []snapshot.Snapshot
	// Languages are the grammar names (grammars.Names) whose files are indexed and
	// given symbols; files of other languages are left out. Empty means every
	// registered language. Batch runs over a dataset set it to the family of the
	// dataset's language (grammars.Family), so that registering a language does not
	// change what another language's snapshots index.
	Languages []string
	// Log, if not nil, receives one line per skipped or lossily decoded file.
	Log io.Writer
	// Progress, if not nil, is called while a view is made, as files are handed to the
	// chunkers (or taken from the store) and once at the end, with the files started
	// and the total, from the goroutine that called View.
	Progress func(done, total int)
	// DeferFlush leaves the store records a view makes (the chunks, symbols and vectors
	// of new file versions) in memory, where every later view of the store finds them,
	// instead of writing them as a new segment file when the view is made; the next
	// view without it, [store.Store.Flush] or [Index.Close] writes them (or the store
	// itself, once they hold [store.AutoFlushBytes]). A process that
	// makes a view per edit (repoctx serve) sets it so that each edit does not leave a
	// segment file (and an open file) behind.
	DeferFlush bool
	// StoreViews says when a view is kept whole in the store (store.Records.PutView:
	// one per snapshot name, replaced when the snapshot's files or these settings
	// change), to be read back, instead of made from its files' chunk records, by a
	// later view of that snapshot with the same files: the same view (chunks, BM25
	// statistics and postings, vectors, symbols, statistics and log lines), used in
	// place from the mapped file. For processes that make one view of a folder
	// (`repoctx query`); a stored view takes about as much disk as its chunk records
	// and vectors. Views with Extra snapshots or SharedLSA are neither stored nor
	// read; nor are views of files chunked under a limit of the machine
	// (chunker.Limit.Transient), nor those whose LSA model is no longer stored.
	StoreViews ViewStoring
}

// ViewStoring says when views are stored whole ([Options.StoreViews]); every value but
// ViewsNotStored reads a stored view back when one matches.
type ViewStoring uint8

const (
	// ViewsNotStored neither stores nor reads views (the default).
	ViewsNotStored ViewStoring = iota
	// ViewsStoredOnRepeat stores a view when the last view made of its snapshot had
	// the same files (the store remembers each snapshot's last view key): a folder
	// queried again unchanged is read back from its third command on, while each
	// version of an edit loop, seen once, costs no write of its whole view.
	ViewsStoredOnRepeat
	// ViewsStored stores every view (`repoctx index`, after which `query` reads it).
	ViewsStored
	// ViewsPrepared stores no view and reads one back only for the view that
	// [Index.PrepareView] prepared: a server makes its first view of a folder from
	// the view `repoctx index` stored, and every later one (an edit's) from the
	// index's memory, as without stored views.
	ViewsPrepared
)

// SharedLSA names the snapshot whose view's own LSA fit embeds every view of an
// index ([Options.SharedLSA]).
type SharedLSA struct {
	// Snapshot is the name of the snapshot the model is fitted on, such as the
	// repository's first snapshot in name order among those a dataset holds.
	Snapshot string
	// Open opens the snapshot named Snapshot, once, when the first view needs the
	// model (a [snapshot.Source]'s Open). When it fails (other than by a fault of the
	// machine), or the view cannot be made, each view fits its own model, with a
	// warning in Options.Log.
	Open func(name string) (snapshot.Snapshot, error)
	// Prefetch names other snapshots of the index's repository (opened with Open) that
	// views will be made of, in the order to chunk them: a view that has chunked its
	// own files and waits for the model being fitted by another goroutine chunks the
	// files of these meanwhile (each snapshot once, until the model is ready), so that
	// no core idles during the fit. Their chunks and symbols wait in the index (and the
	// store) for their own views; a view's output does not depend on what was
	// prefetched.
	Prefetch []string
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
// default options, hybrid retrieval with the built-in LSA model, symbols on.
func DefaultOptions() Options {
	return Options{Strategy: chunker.StrategyStructural, Symbols: true}
}

// snapshotRepo matches the competition's snapshot names, "{owner}__{repo}-{revision}".
var snapshotRepo = regexp.MustCompile(`^([A-Za-z0-9._-]+)__([A-Za-z0-9._-]+)-[0-9a-fA-F]{7,64}$`)

// RepoID returns the repository a snapshot named name is a revision of: "owner/repo"
// for the competition's "{owner}__{repo}-{revision}", else name itself.
func RepoID(name string) string {
	if m := snapshotRepo.FindStringSubmatch(name); m != nil {
		return m[1] + "/" + m[2]
	}
	return name
}

// FolderRepo returns the repository name of the folder dir that `repoctx index`,
// `query` and `serve` give [Open]: "owner/repo" for a folder named
// "owner__repo-REVISION", else the folder's absolute path (two unrelated folders with
// the same base name do not share an index).
func FolderRepo(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	if id := RepoID(filepath.Base(abs)); id != filepath.Base(abs) {
		return id
	}
	return abs
}

// Stats describes what [Index.View] did for one snapshot.
type Stats struct {
	Files       int  // source files of the view
	Skipped     int  // files skipped: unreadable, binary, over the size limit
	Lossy       int  // files decoded lossily (invalid bytes for their encoding)
	Chunks      int  // chunks in the view
	ParseErrors int  // files with ERROR or MISSING nodes
	Built       bool // whether anything was computed (chunked, embedded, fitted) for the view
	// Chunked counts the files chunked by this call; Reused those whose chunks came
	// from the index or the store because another snapshot (or an earlier run) had
	// the same file.
	Chunked, Reused int
	// ParseErrorFiles lists the files with parse errors, in path order.
	ParseErrorFiles []string
	// Limited counts the files windowed under a limit of the machine (a parse over
	// its CPU time limit, chunker.Limit.Transient; among ParseErrors): not stored,
	// chunked again by the next run.
	Limited int
	// CacheWriteFailures counts the store records that could not be written (each
	// only costs a later run the work again). A fault of the machine (a full or
	// read-only cache disk) is an error of View instead.
	CacheWriteFailures int
	// SharedLSA reports that the view was embedded with the model of
	// [Options.SharedLSA] (not its own fit).
	SharedLSA bool
	// StoredView reports that the view was read back from the store whole
	// ([Options.StoreViews]), not made from its files' chunk records.
	StoredView bool
	// ViewWritten reports that this View call wrote the view whole to the store
	// ([Options.StoreViews]) for later runs to read back.
	ViewWritten bool
}

// Index is one repository's index in this process: the corpus of every file version
// its views hold (chunked, parsed and tokenised once, when the first view holding it
// is made), the store records of its files, and the chunks' vectors by model. Views
// ([Index.View]) of the repository's snapshots draw on it, so later snapshots, later
// edits and later runs pay only for the files that changed. The caller holds it as
// long as it makes views (an index only grows: a long-running caller opens a new one
// now and then) and closes it. Its methods are safe for concurrent use.
type Index struct {
	repo   string
	opts   Options
	keep   func(path string) bool // the files of Options.Languages
	recs   *store.Records
	corpus *retrieve.Corpus
	// chunkSettings is the settings part of its chunk records' keys (see chunkKey).
	chunkSettings string

	mu    sync.Mutex
	files map[[32]byte]*corpusFile // by chunk record key
	vecs  map[string]*ordVectors   // model ID -> the vectors by corpus ordinal
	fits  map[string]*retrieve.LSA // view key -> its LSA model
	// prepared holds PrepareView's reads by snapshot name until a View takes them;
	// stopped those a View dropped, for Close to wait for.
	prepared map[string]*preparedView
	stopped  []*preparedView
	sums     [][32]byte // corpus ordinal -> SHA-256 of the chunk's text (zero: unknown)
	shared   *sharedFit // Options.SharedLSA's model, fitted on first use
	// sharedKey is the key of the view Options.SharedLSA's model is fitted on
	// (sharedFitKey), once sharedKeyDone; sharedKeyMu guards both.
	sharedKeyMu   sync.Mutex
	sharedKey     string
	sharedKeyDone bool
	// prefetched counts the names of SharedLSA.Prefetch taken by a waiting view.
	prefetched int
	// rawSums holds, by raw digest (snapshot.RawDigester), what reading each file of
	// an inner zip found, at most maxRawSums of them: a file stored alike in another
	// snapshot of the repository is not decompressed again to learn its hash. rawMu
	// guards it.
	rawMu   sync.Mutex
	rawSums map[[32]byte]rawFile
	closed  bool // set by Close: View and Update refuse (ErrClosed)
}

// ErrClosed is the error of View and Update on an index after its Close.
var ErrClosed = errors.New("index: used after Close")

// Open returns the index of the repository named repo ("owner/name", [RepoID] of a
// snapshot name, [FolderRepo] of a folder: anything that stays the same across the
// repository's revisions) over the store st, with opts for every view. It fails on
// invalid options (an unknown language, an unknown chunking strategy) and an empty
// repo.
func Open(st *store.Store, repo string, opts Options) (*Index, error) {
	if repo == "" {
		return nil, &repoctx.OptionError{Option: "repo", Value: `""`, Want: "a repository name"}
	}
	if opts.Strategy == "" {
		opts.Strategy = chunker.StrategyStructural
	}
	keep, err := languageFilter(opts.Languages)
	if err != nil {
		return nil, err
	}
	ch, err := chunker.New(opts.Strategy, opts.Chunk)
	if err != nil {
		return nil, err
	}
	ch.Close()
	return &Index{repo: repo, opts: opts, keep: keep, recs: st.Records(repo), corpus: retrieve.NewCorpus(),
		chunkSettings: chunkSettings(opts), files: map[[32]byte]*corpusFile{}, vecs: map[string]*ordVectors{},
		fits: map[string]*retrieve.LSA{}}, nil
}

// isClosed reports whether Close was called.
func (ix *Index) isClosed() bool {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.closed
}

// Repository returns the name of the index's repository.
func (ix *Index) Repository() string { return ix.repo }

// Close writes the store records its views left pending ([Options.DeferFlush]) and
// closes the view the shared model was fitted on if no View took it. Views already
// made stay usable until they are closed; View and Update then return [ErrClosed].
func (ix *Index) Close() error {
	ix.mu.Lock()
	sh := ix.shared
	ix.closed = true
	reads := ix.stopped
	for _, p := range ix.prepared {
		reads = append(reads, p)
	}
	ix.prepared, ix.stopped = nil, nil
	ix.mu.Unlock()
	for _, p := range reads { // PrepareView's reads
		p.stop.Store(true)
		<-p.done
	}
	if sh != nil {
		sh.mu.Lock()
		if sh.view != nil {
			sh.view.Close()
			sh.view = nil
		}
		sh.mu.Unlock()
	}
	_, err := ix.recs.Flush()
	return err
}

// View is the view of one snapshot over its repository's [Index]: the snapshot's
// retrieval index (its own BM25 statistics, so it ranks exactly as an index of that
// snapshot alone would, and its dense vectors) and, with [Options.Symbols], its symbol
// table. It is safe for concurrent use; Close it when done.
type View struct {
	snap  snapshot.Snapshot
	ix    *retrieve.Index
	syms  *symbols.Table
	stats Stats
	repo  string
	recs  *store.Records // the repository's records (TextSymbols)
	once  sync.Once
}

// TextSymbols returns the symbols of text, a version of the file path of language
// lang (a grammar name) that the view need not hold (a completion file as the user
// has it): read from the repository's records, where an earlier call with the same
// path, language and text (keyed by its SHA-256, the grammar's version and the
// symbols' format) stored them, else extracted with extract and stored (written with
// the records' next segment). It returns extract's error. For batch runs over
// datasets, whose completion files are the same run after run; a live server's texts
// change with every keystroke and would fill the store with them.
func (v *View) TextSymbols(path, lang, text string, extract func() (*symbols.File, error)) (*symbols.File, error) {
	if v.recs == nil {
		return extract()
	}
	k := store.Key{Kind: store.KindSymbols, Hash: storeKey("text-symbols", symbolsCacheVersion+"\x00"+lang, path, sha256.Sum256([]byte(text)))}
	if b, ok := v.recs.Get(k); ok {
		if f, err := decodeSymbols(b); err == nil {
			return f, nil // a damaged record is a miss: extracted again
		}
	}
	f, err := extract()
	if err == nil && f != nil {
		v.recs.Put(k, encodeSymbols(f))
	}
	return f, err
}

// Snapshot returns the snapshot the view is of.
func (v *View) Snapshot() snapshot.Snapshot { return v.snap }

// Repository returns the name of the snapshot's repository ([Index.Repository]).
func (v *View) Repository() string { return v.repo }

// Retriever returns the snapshot's retrieval index (BM25 and dense search).
func (v *View) Retriever() *retrieve.Index { return v.ix }

// Symbols returns the snapshot's symbol table, or nil when the index was opened
// without [Options.Symbols].
func (v *View) Symbols() *symbols.Table { return v.syms }

// Stats returns what making the view did.
func (v *View) Stats() Stats { return v.stats }

// Close releases the view. The View must not be used afterwards.
func (v *View) Close() error {
	v.once.Do(func() { v.ix.Close() })
	return nil
}

// chunkKey is the store key of the chunk record of file version sf.
func chunkKey(opts Options, sf sourceFile) [32]byte {
	return storeKey("chunks", chunkSettings(opts), sf.path, sf.sum)
}

// chunkSettings is the settings part of the keys of chunk records made with opts.
func chunkSettings(opts Options) string {
	return opts.Chunk.CacheKey(opts.Strategy) + "\x00" + chunkCodec
}

// fitsSize reports whether a file of size bytes is within the file size limit
// maxBytes (<= 0: the default, chunker.DefaultMaxFileBytes).
func fitsSize(size, max int) bool { return size <= maxBytes(max) }

// maxBytes returns the file size limit max, or chunker.DefaultMaxFileBytes for <= 0.
func maxBytes(max int) int {
	if max <= 0 {
		return chunker.DefaultMaxFileBytes
	}
	return max
}

// symbolsCacheVersion is part of the store keys of symbol records; bump it when
// symbols.File changes meaning or the record format (encodeSymbols) changes. "sym1"
// records were gob-encoded; a cache holding them is never read under "sym2" keys (the
// symbols are extracted again), and decodeSymbols refuses a record without its magic.
// "sym3": JavaScript and TypeScript files list their re-exports among their imports.
const symbolsCacheVersion = "sym3"

// symbolKey is the store key of the symbols of the file at path whose raw bytes hash
// to sum.
func symbolKey(path string, sum [32]byte) [32]byte {
	return storeKey("symbols", symbolsCacheVersion, path, sum)
}

// extractors lends symbol extractors (each holds tree-sitter parsers, usable by one
// goroutine at a time).
var extractors = sync.Pool{New: func() any { return symbols.NewExtractor(0) }}

// extractorT is the type extractors lends.
type extractorT = symbols.Extractor

package index

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"runtime"
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
	// view without it, [store.Store.Flush] or [Index.Close] writes them. A process that
	// makes a view per edit (repoctx serve) sets it so that each edit does not leave a
	// segment file (and an open file) behind.
	DeferFlush bool
}

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
	// CacheWriteFailures counts the store records that could not be written (each
	// only costs a later run the work again). A fault of the machine (a full or
	// read-only cache disk) is an error of View instead.
	CacheWriteFailures int
	// SharedLSA reports that the view was embedded with the model of
	// [Options.SharedLSA] (not its own fit).
	SharedLSA bool
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

	mu     sync.Mutex
	files  map[[32]byte]*corpusFile // by chunk record key
	vecs   map[string]*ordVectors   // model ID -> the vectors by corpus ordinal
	fits   map[string]*retrieve.LSA // view key -> its LSA model
	sums   [][32]byte               // corpus ordinal -> SHA-256 of the chunk's text (zero: unknown)
	shared *sharedFit               // Options.SharedLSA's model, fitted on first use
}

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

// Repository returns the name of the index's repository.
func (ix *Index) Repository() string { return ix.repo }

// Close writes the store records its views left pending ([Options.DeferFlush]) and
// closes the view the shared model was fitted on if no View took it. Views already
// made stay usable until they are closed; the index must not make views afterwards.
func (ix *Index) Close() error {
	ix.mu.Lock()
	sh := ix.shared
	ix.mu.Unlock()
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
	once  sync.Once
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

// sourceFile is a file read from a snapshot, before chunking.
type sourceFile struct {
	path  string
	raw   []byte            // nil until read (see content) when the hash came from a manifest
	size  int               // len(raw)
	sum   [32]byte          // SHA-256 of raw
	vpath string            // the path a file of another revision is searched under, or ""
	snap  snapshot.Snapshot // where raw is read from
}

// content returns the file's bytes, reading them when the view's file list came from
// the store (a snapshot manifest); an error when they no longer hash to sum.
func (sf *sourceFile) content() ([]byte, error) {
	if sf.raw != nil || sf.size == 0 {
		return sf.raw, nil
	}
	raw, err := sf.snap.ReadFile(sf.path)
	if err != nil {
		return nil, err
	}
	if sha256.Sum256(raw) != sf.sum {
		return nil, fmt.Errorf("index: %s changed while it was indexed", sf.path)
	}
	return raw, nil
}

// View makes the view of a snapshot of the index's repository: the files the index
// does not hold yet are chunked (or their chunks read from the store), embedded and
// stored; the others cost nothing but their hash. Unreadable, binary and oversized
// files are skipped and logged. It returns ctx's error when ctx is cancelled (nothing
// half-written is left in the cache), and an error when the view cannot be made (a
// model failing, a fault of the machine).
func (ix *Index) View(ctx context.Context, snap snapshot.Snapshot) (*View, error) {
	var embedder func(context.Context) (retrieve.Embedder, error)
	if sh := ix.opts.SharedLSA; sh != nil && ix.opts.Embedder == nil {
		if snap.Name() == sh.Snapshot {
			if _, err := ix.sharedModel(ctx); err != nil {
				return nil, err
			}
			if v := ix.takeModelView(); v != nil {
				return v, nil
			}
		} else {
			// Chunk while the model is fitted (possibly by another goroutine), then wait.
			embedder = func(ctx context.Context) (retrieve.Embedder, error) {
				lsa, err := ix.sharedModel(ctx)
				if err != nil || lsa == nil {
					return nil, err
				}
				return lsa, nil
			}
		}
	}
	return ix.view(ctx, snap, embedder)
}

// view makes the view of snap; embedder, if not nil, is called once its files are
// chunked, and its embedder (when not nil) is used as Options.Embedder.
func (ix *Index) view(ctx context.Context, snap snapshot.Snapshot, embedder func(context.Context) (retrieve.Embedder, error)) (*View, error) {
	opts := ix.opts
	logf := func(format string, a ...any) {
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, format+"\n", a...)
		}
	}
	var st Stats
	key, files, skipped, err := ix.viewKey(ctx, snap, logf)
	if err != nil {
		return nil, err
	}
	st.Skipped = skipped
	if opts.Extra != nil {
		if extra := opts.Extra(snap.Name()); len(extra) > 0 {
			var extraKey string
			files, extraKey, err = ix.addExtra(ctx, files, extra, logf)
			if err != nil {
				return nil, err
			}
			key += "+" + extraKey
		}
	}
	entries, err := ix.chunkFiles(ctx, snap, files, opts, &st, logf)
	if err != nil {
		return nil, err
	}
	var ords []int32
	var syms []*symbols.File
	for i, e := range entries {
		if e == nil {
			continue
		}
		ords = append(ords, e.ords...)
		if opts.Symbols && files[i].vpath == "" {
			if s := ix.symbols(files[i], e, opts); s != nil {
				syms = append(syms, s)
			}
		}
	}
	if embedder != nil {
		emb, err := embedder(ctx)
		if err != nil {
			return nil, err
		}
		if emb != nil {
			opts.Embedder = emb
			st.SharedLSA = true
		}
	}
	st.Files = len(files)
	dense, err := ix.dense(ctx, key, ords, opts, &st)
	if err != nil {
		return nil, err
	}
	rix, err := ix.corpus.NewIndex(key, ords, dense)
	if err != nil {
		return nil, err
	}
	st.Chunks = len(ords)
	last := ""
	for _, o := range ords { // the view's chunks, in its order (rix.Chunks would copy them)
		if c := ix.corpus.Chunk(o); c.ParseError && c.Path != last {
			st.ParseErrors++
			st.ParseErrorFiles = append(st.ParseErrorFiles, c.Path)
			last = c.Path
		}
	}
	if opts.DeferFlush {
		// Written by a later view, Store.Flush or Index.Close.
	} else if n, err := ix.recs.Flush(); err != nil {
		st.CacheWriteFailures += n
		if repoctx.IsEnvironment(err) {
			// Every later snapshot would fail the same way: stop (see repoctx.EnvironmentError).
			return nil, err
		}
		logf("warning: cache write failed (%v); the next run recomputes what was lost", err)
	}
	v := &View{snap: snap, ix: rix, stats: st, repo: ix.repo}
	if opts.Symbols {
		v.syms = symbols.NewTable(syms)
	}
	return v, nil
}

// sharedFit is the bookkeeping of Options.SharedLSA: the model, fitted once, and the
// view it was fitted on until a View of that snapshot takes it.
type sharedFit struct {
	once sync.Once
	lsa  *retrieve.LSA // nil: none (each view fits its own)
	err  error

	mu   sync.Mutex
	view *View
}

// sharedModel returns the model of Options.SharedLSA, fitting it on first use (nil
// when its snapshot cannot be opened or viewed: each view then fits its own). A fit
// that was cancelled, or that a fault of the machine stopped, is tried again by a
// later call.
func (ix *Index) sharedModel(ctx context.Context) (*retrieve.LSA, error) {
	ix.mu.Lock()
	sh := ix.shared
	if sh == nil {
		sh = &sharedFit{}
		ix.shared = sh
	}
	ix.mu.Unlock()
	sh.once.Do(func() {
		var v *View
		sh.lsa, v, sh.err = ix.fitShared(ctx)
		sh.mu.Lock()
		sh.view = v
		sh.mu.Unlock()
	})
	if sh.err != nil && (ctx.Err() != nil || repoctx.IsEnvironment(sh.err)) {
		// Not the model's fault: let a later call try again.
		ix.mu.Lock()
		if ix.shared == sh {
			ix.shared = nil
		}
		ix.mu.Unlock()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, sh.err
	}
	return sh.lsa, nil
}

// takeModelView hands over the view the shared model was fitted on, once (nil when
// there is none or it was taken).
func (ix *Index) takeModelView() *View {
	ix.mu.Lock()
	sh := ix.shared
	ix.mu.Unlock()
	if sh == nil {
		return nil
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	v := sh.view
	sh.view = nil
	return v
}

// fitShared views the snapshot of Options.SharedLSA with its own LSA fit and returns
// that model (labelled with the view's key, so that the views embedded with it never
// mix with other fits) and the view (for the snapshot's own requests).
func (ix *Index) fitShared(ctx context.Context) (*retrieve.LSA, *View, error) {
	name := ix.opts.SharedLSA.Snapshot
	if name == "" {
		return nil, nil, nil
	}
	warn := func(err error) {
		if ix.opts.Log != nil {
			fmt.Fprintf(ix.opts.Log, "warning: %s: %s; its repository's snapshots fit their own LSA models\n", name, strings.ReplaceAll(err.Error(), "\n", "; "))
		}
	}
	snap, err := ix.opts.SharedLSA.Open(name)
	if err != nil {
		if repoctx.IsEnvironment(err) {
			return nil, nil, err
		}
		warn(err)
		return nil, nil, nil
	}
	v, err := ix.view(ctx, snap, nil)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		if repoctx.IsEnvironment(err) {
			return nil, nil, fmt.Errorf("fit the repository's LSA model on snapshot %s: %w", name, err)
		}
		warn(err)
		return nil, nil, nil
	}
	lsa, err := v.Retriever().LSA()
	if err != nil {
		warn(err)
		v.Close()
		return nil, nil, nil
	}
	if lsa == nil {
		v.Close()
		return nil, nil, nil
	}
	return lsa, v, nil
}

// viewKey returns the key of the snapshot's view and the files it indexes (in path
// order): a hash of every indexed file's path and content, the chunker settings, the
// grammar versions and FormatVersion. A snapshot with a content digest (an inner zip)
// takes its files' hashes from the store's manifest of that digest when an earlier
// run left one, without reading the files (they are read later only if their chunks
// are not in the store).
func (ix *Index) viewKey(ctx context.Context, snap snapshot.Snapshot, logf func(string, ...any)) (string, []sourceFile, int, error) {
	opts, keep := ix.opts, ix.keep
	var mk store.Key
	useManifest := false
	if d, ok := snap.(snapshot.Digester); ok {
		if digest, ok := d.ContentDigest(); ok {
			useManifest = true
			mk = store.Key{Kind: store.KindManifest, Hash: sha256.Sum256([]byte(fmt.Sprintf("%s\x00manifest\x00%x\x00%s", store.Version, digest, grammarVersions(opts.Languages))))}
			if b, ok := ix.recs.Get(mk); ok {
				if files, skipped, err := decodeManifest(b, snap); err == nil {
					return manifestKey(snap, opts, files), files, skipped, nil
				}
			}
		}
	}
	var files []sourceFile
	skipped := 0
	hasher, _ := snap.(snapshot.Hasher)
	// What earlier views learnt of a folder snapshot's files (nil for other snapshots).
	known := snapshot.LoadFolderHashes(ix.recs, snap, languageNames(opts.Languages))
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
		if hasher != nil {
			// Known hash: the bytes are read later, only if the file must be chunked.
			sum, ok := hasher.SHA256(p)
			size, ok2 := snap.Size(p)
			if ok && ok2 && size <= int64(maxBytes(opts.MaxFileBytes)) {
				files = append(files, sourceFile{path: p, size: int(size), sum: sum, snap: snap})
				continue
			}
		}
		// Unchanged metadata since a view read it (as git's index trusts a file's stat
		// data): its hash holds; the bytes are read later, only if the file must be
		// chunked, and checked against the hash then.
		if sum, size, ok := known.Known(p); ok {
			files = append(files, sourceFile{path: p, size: int(size), sum: sum, snap: snap})
			continue
		}
		raw, err := snap.ReadFile(p)
		if err != nil {
			skipped++
			logf("skip %s/%s: %v", snap.Name(), p, err)
			continue
		}
		sum := sha256.Sum256(raw)
		known.Add(p, int64(len(raw)), sum)
		files = append(files, sourceFile{path: p, raw: raw, size: len(raw), sum: sum, snap: snap})
	}
	if useManifest && skipped == 0 {
		ix.recs.Put(mk, encodeManifest(files))
	}
	known.Save()
	return manifestKey(snap, opts, files), files, skipped, nil
}

// grammarVersions names the languages indexed (langs, every registered one when
// empty) and their grammars' versions.
func grammarVersions(langs []string) string {
	var sb strings.Builder
	if len(langs) > 0 {
		fmt.Fprintf(&sb, "languages %s\n", strings.Join(languageNames(langs), ","))
	}
	for _, name := range languageNames(langs) {
		fmt.Fprintf(&sb, "%s\n", grammars.Lookup(name).Version)
	}
	return sb.String()
}

// manifestKey returns the view key of files.
func manifestKey(snap snapshot.Snapshot, opts Options, files []sourceFile) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s", FormatVersion, opts.Chunk.CacheKey(opts.Strategy), grammarVersions(opts.Languages))
	for _, f := range files {
		fmt.Fprintf(h, "%s\x00%x\n", f.path, f.sum)
	}
	return snap.Name() + "@" + hex.EncodeToString(h.Sum(nil))[:32]
}

// encodeManifest writes the paths, sizes and hashes of files.
func encodeManifest(files []sourceFile) []byte {
	var b bytes.Buffer
	var vb [binary.MaxVarintLen64]byte
	put := func(n int) { b.Write(vb[:binary.PutUvarint(vb[:], uint64(n))]) }
	put(len(files))
	for _, f := range files {
		put(len(f.path))
		b.WriteString(f.path)
		put(f.size)
		b.Write(f.sum[:])
	}
	return b.Bytes()
}

// decodeManifest reads what encodeManifest wrote; the files are read from snap when
// needed. Files the snapshot no longer lists make it an error (the manifest is then
// rebuilt).
func decodeManifest(b []byte, snap snapshot.Snapshot) ([]sourceFile, int, error) {
	br := bytes.NewReader(b)
	bad := fmt.Errorf("index: damaged manifest")
	n, err := binary.ReadUvarint(br)
	if err != nil || n > uint64(len(b)) {
		return nil, 0, bad
	}
	files := make([]sourceFile, 0, n)
	for range n {
		l, err := binary.ReadUvarint(br)
		if err != nil || l > uint64(br.Len()) {
			return nil, 0, bad
		}
		p := make([]byte, l)
		io.ReadFull(br, p)
		size, err := binary.ReadUvarint(br)
		if err != nil {
			return nil, 0, bad
		}
		f := sourceFile{path: string(p), size: int(size), snap: snap}
		if _, err := io.ReadFull(br, f.sum[:]); err != nil {
			return nil, 0, bad
		}
		if got, ok := snap.Size(f.path); !ok || got != int64(size) {
			return nil, 0, bad
		}
		files = append(files, f)
	}
	return files, 0, nil
}

// chunkFiles returns the corpus entries of files (nil for a file skipped), in order, chunking
// the new ones on up to GOMAXPROCS goroutines (one chunker each).
func (ix *Index) chunkFiles(ctx context.Context, snap snapshot.Snapshot, files []sourceFile, opts Options, st *Stats, logf func(string, ...any)) ([]*corpusFile, error) {
	entries := make([]*corpusFile, len(files))
	stats := make([]Stats, len(files))
	errs := make([]error, len(files))
	workers := min(runtime.GOMAXPROCS(0), max(1, len(files)/8))
	next := make(chan int)
	var wg sync.WaitGroup
	var chErr error
	var once sync.Once
	for range workers {
		ch, err := chunker.New(opts.Strategy, opts.Chunk)
		if err != nil {
			once.Do(func() { chErr = err })
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer ch.Close()
			for i := range next {
				entries[i], errs[i] = ix.file(files[i], ch, opts, &stats[i])
			}
		}()
	}
	if chErr != nil && workers > 0 {
		close(next)
		wg.Wait()
		return nil, chErr
	}
	var cancelled error
	for i := range files {
		if err := ctx.Err(); err != nil {
			cancelled = err
			break
		}
		if opts.Progress != nil && i%16 == 0 {
			opts.Progress(i, len(files))
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if cancelled != nil {
		return nil, cancelled
	}
	if opts.Progress != nil {
		opts.Progress(len(files), len(files))
	}
	for i, e := range entries {
		st.Chunked += stats[i].Chunked
		st.Reused += stats[i].Reused
		st.Built = st.Built || stats[i].Built
		if errs[i] != nil {
			entries[i] = nil
			st.Skipped++
			logf("skip %s/%s: %v", snap.Name(), files[i].path, errs[i])
			continue
		}
		if e.lossy {
			st.Lossy++
			logf("lossy %s/%s: bytes not valid %s, decoded as Windows-1252", snap.Name(), files[i].path, e.encoding)
		}
	}
	return entries, nil
}

// sourceFile.vpath, when not "", is the path a file of another revision is searched
// under (see Options.Extra); path is its real path.

// addExtra appends to files the versions of the extra snapshots' files that no
// earlier file holds, under their revision paths, and returns the key of what was
// added.
func (ix *Index) addExtra(ctx context.Context, files []sourceFile, extra []snapshot.Snapshot, logf func(string, ...any)) ([]sourceFile, string, error) {
	seen := map[string]bool{}
	for _, f := range files {
		seen[f.path+"\x00"+string(f.sum[:])] = true
	}
	h := sha256.New()
	for _, x := range extra {
		_, xf, _, err := ix.viewKey(ctx, x, logf)
		if err != nil {
			return nil, "", err
		}
		rev := x.Name()[strings.LastIndexByte(x.Name(), '-')+1:]
		rev = rev[:min(7, len(rev))]
		for _, f := range xf {
			k := f.path + "\x00" + string(f.sum[:])
			if seen[k] {
				continue
			}
			seen[k] = true
			f.vpath = f.path + "@" + rev
			fmt.Fprintf(h, "%s\x00%x\n", f.vpath, f.sum)
			files = append(files, f)
		}
	}
	return files, hex.EncodeToString(h.Sum(nil))[:16], nil
}

// corpusFile is one file version in the corpus.
type corpusFile struct {
	ready    chan struct{} // closed when the fields below are set
	err      error
	ords     []int32
	lossy    bool
	encoding string
	syms     *symbols.File // from the chunker's parse, if any
	symsDone bool
}

// file returns the corpus entry of one file version: from memory, else from the store's
// chunk record, else chunked now (with its symbols from the same parse when asked) and
// stored. Concurrent callers for the same version wait for the first.
func (ix *Index) file(sf sourceFile, ch chunker.Chunker, opts Options, st *Stats) (*corpusFile, error) {
	if sf.vpath != "" {
		return ix.foreign(sf, ch, opts, st)
	}
	skey := storeKey("chunks", ix.chunkSettings, sf.path, sf.sum) // = chunkKey(opts, sf)
	ix.mu.Lock()
	e := ix.files[skey]
	if e != nil {
		ix.mu.Unlock()
		<-e.ready
		if e.err == nil {
			st.Reused++
		}
		return e, e.err
	}
	e = &corpusFile{ready: make(chan struct{})}
	ix.files[skey] = e
	ix.mu.Unlock()
	defer close(e.ready)
	var rec *chunkRecord
	if b, ok := ix.recs.Get(store.Key{Kind: store.KindChunks, Hash: skey}); ok && fitsSize(sf.size, opts.MaxFileBytes) {
		rec, _ = decodeChunkRecord(b) // a damaged record is a miss
	}
	if rec != nil {
		st.Reused++
	} else {
		raw, err := sf.content()
		if err != nil {
			e.err = err
			ix.forget(skey, e)
			return e, err
		}
		f, err := chunker.Decode(sf.path, raw, opts.MaxFileBytes)
		if err != nil {
			e.err = err
			ix.forget(skey, e)
			return e, err
		}
		cs, syms, err := chunkOne(f, ch, opts.Symbols)
		if err != nil {
			e.err = err
			ix.forget(skey, e)
			return e, err
		}
		rec = newChunkRecord(cs, f.Lossy, f.Encoding)
		ix.recs.Put(store.Key{Kind: store.KindChunks, Hash: skey}, rec.encode())
		if syms != nil {
			e.syms, e.symsDone = syms, true
			ix.recs.Put(store.Key{Kind: store.KindSymbols, Hash: symbolKey(sf.path, sf.sum)}, encodeSymbols(syms))
		}
		st.Chunked++
		st.Built = true
	}
	ords, err := ix.corpus.AddEncoded(rec.Chunks, rec.Terms)
	if err != nil {
		ords = ix.corpus.Add(rec.Chunks) // damaged terms: tokenise again
	}
	e.ords = ords
	e.lossy, e.encoding = rec.Lossy, rec.Encoding
	ix.mu.Lock()
	for i, o := range ords {
		ix.setSum(o, rec.Sums[i])
	}
	ix.mu.Unlock()
	return e, nil
}

// foreign returns the corpus entry of a file of another revision (sf.vpath): the chunks
// of its real version, copied under the revision path (IDs and links renamed).
func (ix *Index) foreign(sf sourceFile, ch chunker.Chunker, opts Options, st *Stats) (*corpusFile, error) {
	real := sf
	real.vpath = ""
	var rst Stats
	e, err := ix.file(real, ch, opts, &rst)
	st.Chunked += rst.Chunked
	st.Built = st.Built || rst.Built
	if err != nil {
		return nil, err
	}
	k := sha256.Sum256([]byte("foreign\x00" + sf.vpath + "\x00" + string(sf.sum[:])))
	ix.mu.Lock()
	fe := ix.files[k]
	if fe != nil {
		ix.mu.Unlock()
		<-fe.ready
		return fe, fe.err
	}
	fe = &corpusFile{ready: make(chan struct{}), lossy: e.lossy, encoding: e.encoding, symsDone: true}
	ix.files[k] = fe
	ix.mu.Unlock()
	defer close(fe.ready)
	rename := func(id string) string {
		if id == "" {
			return ""
		}
		return sf.vpath + id[strings.LastIndexByte(id, '#'):]
	}
	cs := make([]chunker.Chunk, len(e.ords))
	for i, o := range e.ords {
		c := *ix.corpus.Chunk(o)
		c.Path, c.ID, c.Prev, c.Next, c.Parent = sf.vpath, rename(c.ID), rename(c.Prev), rename(c.Next), rename(c.Parent)
		cs[i] = c
	}
	fe.ords = ix.corpus.Add(cs)
	ix.mu.Lock()
	for i, o := range fe.ords {
		ix.setSum(o, ix.sums[e.ords[i]])
	}
	ix.mu.Unlock()
	st.Reused++
	return fe, nil
}

// forget drops a failed entry so that a later call tries again.
func (ix *Index) forget(k [32]byte, e *corpusFile) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.files[k] == e {
		delete(ix.files, k)
	}
}

// symbols returns a file version's symbols: from the chunker's parse, else the store,
// else extracted now (and stored); nil when the file cannot be parsed.
func (ix *Index) symbols(sf sourceFile, e *corpusFile, opts Options) *symbols.File {
	ix.mu.Lock()
	if e.symsDone {
		s := e.syms
		ix.mu.Unlock()
		return s
	}
	ix.mu.Unlock()
	k := store.Key{Kind: store.KindSymbols, Hash: symbolKey(sf.path, sf.sum)}
	var got *symbols.File
	if b, ok := ix.recs.Get(k); ok {
		got, _ = decodeSymbols(b) // a damaged record is a miss: extracted again
	}
	if got == nil {
		if raw, err := sf.content(); err != nil {
			// Unreadable now: no symbols.
		} else if f, err := chunker.Decode(sf.path, raw, opts.MaxFileBytes); err == nil {
			ex := extractors.Get().(*symbols.Extractor)
			if s, err := ex.Extract(f); err == nil {
				got = s
				ix.recs.Put(k, encodeSymbols(s))
			}
			extractors.Put(ex)
		}
	}
	ix.mu.Lock()
	e.syms, e.symsDone = got, true
	ix.mu.Unlock()
	return got
}

// chunkOne chunks one decoded file; with withSymbols and a structural chunker its
// symbols are extracted from the same syntax tree.
func chunkOne(f *chunker.File, ch chunker.Chunker, withSymbols bool) ([]chunker.Chunk, *symbols.File, error) {
	sc, ok := ch.(*chunker.Structural)
	if !ok || !withSymbols {
		cs, err := ch.Chunk(f)
		return cs, nil, err
	}
	var syms *symbols.File
	cs, err := sc.ChunkTree(f, func(root *sitter.Node, parsed []byte) {
		if s, err := symbols.ExtractTree(f, root, parsed); err == nil {
			syms = s
		}
	})
	return cs, syms, err
}

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
			fitKey, label = "repo\x00"+ix.repo, ""
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
	// From the store, else embedded now.
	var texts []string
	var textSums [][32]byte
	var missing []int32
	var got []int32
	var gotVecs [][]float32
	var gotStatus []retrieve.EmbedStatus
	var arena []float32 // where the stored vectors are decoded
	for i, o := range todo {
		text := ix.corpus.Chunk(o).Text
		sum := todoSums[i]
		if sum == ([32]byte{}) {
			sum = sha256.Sum256([]byte(text))
		}
		if len(arena) < d.Dim {
			arena = make([]float32, (len(todo)-i)*d.Dim) // one allocation for the stored vectors
		}
		if tr, ok := ix.storedVector(id, arena[:d.Dim:d.Dim], sum); ok {
			got, gotVecs, gotStatus = append(got, o), append(gotVecs, arena[:d.Dim:d.Dim]), append(gotStatus, tr)
			arena = arena[d.Dim:]
			d.Info.Cached++
			continue
		}
		texts = append(texts, text)
		textSums = append(textSums, sum)
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
	mk := store.Key{Kind: store.KindModel, Hash: sha256.Sum256([]byte(fmt.Sprintf("lsa\x00%d\x00%s", opts.LSADim, fitKey)))}
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
	buf := make([]byte, 0, 96+len(id))
	buf = append(buf, store.Version...)
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
// stored (or not of that dimension).
func (ix *Index) storedVector(id string, v []float32, textSum [32]byte) (retrieve.EmbedStatus, bool) {
	b, ok := ix.recs.Get(vectorKey(id, textSum))
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
const symbolsCacheVersion = "sym2"

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

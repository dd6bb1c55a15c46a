package workspace

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"os"
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
	"github.com/repoctx/repoctx/symbols"
)

// FormatVersion is part of every view key; bump it when chunk records or what a view
// is made of change meaning.
const FormatVersion = "repoctx-index-2"

// Options configures [Open]. Start from [DefaultOptions]; zero fields of Chunk mean the
// chunker's defaults.
type Options struct {
	// Repo names the repository the snapshot is a revision of ("owner/name"; for a
	// folder, anything that stays the same across its revisions): the snapshots of one
	// repository share one index (see [Open]) and one group of cache records. "" means
	// [FolderRepo] of a folder's snapshot, [RepoID] of the snapshot's name otherwise.
	Repo string
	// Strategy is the chunking strategy.
	Strategy chunker.Strategy
	// Chunk holds the chunker options (zero fields: chunker.DefaultOptions).
	Chunk chunker.Options
	// CacheDir is where the store keeps chunks, symbols, vectors and models; ""
	// means [DefaultCacheDir].
	CacheDir string
	// MaxFileBytes skips larger source files (bytes); 0 means
	// chunker.DefaultMaxFileBytes.
	MaxFileBytes int
	// Dense selects the dense retriever: the built-in LSA model (the default), none,
	// or the model Embedder (retrieve.DenseModel).
	Dense retrieve.DenseKind
	// Embedder, if not nil, computes the dense vectors and embeds queries: a model
	// opened by the caller and shared by every snapshot (for example all-MiniLM-L6-v2
	// from the retrieve/hugot package, or a repository's shared LSA model). The
	// repository never closes it. Without it, an LSA model is fitted on each view
	// (and kept in the store, so a view is fitted once).
	Embedder retrieve.Embedder
	// EmbedderFunc, if not nil, is called once the snapshot's files are chunked, and
	// its embedder (when not nil) is used as Embedder: a caller can let a snapshot
	// chunk while the model it is to be embedded with is still being fitted elsewhere.
	EmbedderFunc func(context.Context) (retrieve.Embedder, error)
	// LSADim is the LSA dimension; 0 means retrieve.DefaultLSADim.
	LSADim int
	// RepoLSA fits the LSA model once per repository, on the first view opened, keeps
	// it in the store and embeds every later view (a later revision, the working tree
	// after an edit) with it, so that a view only embeds its new chunks and never
	// refits: what an editor wants. Without it each view has its own fit (deterministic
	// whatever was opened before; predict shares one model per repository explicitly
	// through Embedder).
	RepoLSA bool
	// Symbols makes Open extract every parsed file's definitions and imports from the
	// chunker's syntax tree (the file is parsed once) and give the repository a symbol
	// table ([Repo.Symbols]), for the definitions source of context assembly.
	Symbols bool
	// Extra are other snapshots (other revisions) whose file versions join the view:
	// each version that the snapshot itself (or an earlier extra) does not hold is
	// searched under the path "{path}@{revision}" (revision: the extra's name after its
	// last "-", at most 7 characters), so a later revision's finished code can be
	// retrieved. The definitions source uses the snapshot's own files only.
	Extra []Snapshot
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
	// and the total, from the goroutine that called Open.
	Progress func(done, total int)
	// DeferFlush leaves the store records Open makes (the chunks, symbols and vectors
	// of new file versions) in memory, where every later Open of the process finds
	// them, instead of writing them as a new segment file when Open ends; the next
	// Open without it, or [Store.Flush], writes them. A process that opens a view per
	// edit (repoctx serve) sets it so that each edit does not leave a segment file (and
	// an open file) behind.
	DeferFlush bool
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

// DefaultCacheDir returns the directory the cache is kept in by default:
// os.UserCacheDir()/repoctx, or os.TempDir()/repoctx-cache when the user has no cache
// directory (e.g. $HOME unset). It does not create the directory.
func DefaultCacheDir() string {
	if d, err := os.UserCacheDir(); err == nil && d != "" {
		return filepath.Join(d, "repoctx")
	}
	return filepath.Join(os.TempDir(), "repoctx-cache")
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

// FolderRepo returns the repository name of the folder dir that [Open] and [Update]
// use when Options.Repo is empty, and so do `repoctx index`, `query` and `serve`:
// "owner/repo" for a folder named "owner__repo-REVISION", else the folder's absolute
// path (two unrelated folders with the same base name do not share an index).
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

// defaultRepo is the repository name of snap when Options.Repo is empty: [FolderRepo]
// of a folder's snapshot, [RepoID] of its name otherwise (a zip's, a caller's own).
func defaultRepo(snap Snapshot) string {
	if s, ok := snap.(*snapshot); ok && s.dir != "" {
		return FolderRepo(s.dir)
	}
	return RepoID(snap.Name())
}

// Stats describes what [Open] did for one snapshot.
type Stats struct {
	Files       int  // source files of the view
	Skipped     int  // files skipped: unreadable, binary, over the size limit
	Lossy       int  // files decoded lossily (invalid bytes for their encoding)
	Chunks      int  // chunks in the view
	ParseErrors int  // files with ERROR or MISSING nodes
	Built       bool // whether anything was computed (chunked, embedded, fitted) for the view
	// Chunked counts the files chunked by this call; Reused those whose chunks came
	// from the repository's index or the store because another snapshot (or an earlier
	// run) had the same file.
	Chunked, Reused int
	// ParseErrorFiles lists the files with parse errors, in path order.
	ParseErrorFiles []string
	// Limited counts the files windowed under a limit of the machine (a parse over
	// its CPU time limit, chunker.Limit.Transient; among ParseErrors): not stored,
	// chunked again by the next run.
	Limited int
	// CacheWriteFailures counts the store records that could not be written (each
	// only costs a later run the work again). A fault of the machine (a full or
	// read-only cache disk) is an error of Open instead.
	CacheWriteFailures int
}

// Repo is one opened repository snapshot: a view of its repository's index and, with
// [Options.Symbols], its symbol table. It is safe for concurrent use; Close it when
// done.
type Repo struct {
	snap  Snapshot
	ix    *retrieve.Index
	syms  *symbols.Table
	stats Stats
	rep   *repository
	once  sync.Once
}

// Snapshot returns the snapshot the repository was opened from.
func (r *Repo) Snapshot() Snapshot { return r.snap }

// ID returns the repository's name ([Options.Repo]).
func (r *Repo) ID() string { return r.rep.rs.id }

// Index returns the snapshot's view of the repository's retrieval index.
func (r *Repo) Index() *retrieve.Index { return r.ix }

// Symbols returns the repository's symbol table, or nil when it was opened without
// [Options.Symbols].
func (r *Repo) Symbols() *symbols.Table { return r.syms }

// Stats returns what Open did.
func (r *Repo) Stats() Stats { return r.stats }

// Close releases the view. The Repo must not be used afterwards.
func (r *Repo) Close() error {
	r.once.Do(func() {
		r.ix.Close()
		r.rep.release()
	})
	return nil
}

// sourceFile is a file read from a snapshot, before chunking.
type sourceFile struct {
	path  string
	raw   []byte   // nil until read (see content) when the hash came from a manifest
	size  int      // len(raw)
	sum   [32]byte // SHA-256 of raw
	vpath string   // the path a file of another revision is searched under, or ""
	snap  Snapshot // where raw is read from
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
		return nil, fmt.Errorf("workspace: %s changed while it was indexed", sf.path)
	}
	return raw, nil
}

// Open returns the view of a snapshot over its repository's index. Every snapshot of a
// repository ([Options.Repo]) opened by a process shares one in-memory index
// (retrieve.Corpus): a file version is chunked, parsed and tokenised once, when the
// first snapshot holding it is opened, and its chunks, symbols and vectors are kept in
// the store, so later snapshots, later edits and later runs pay only for the files
// that changed. The view's BM25 statistics are the snapshot's own, so it ranks exactly
// as an index of that snapshot alone would.
//
// Unreadable, binary and oversized files are skipped and logged. It returns ctx's
// error when ctx is cancelled (nothing half-written is left in the cache), and an error
// when the view cannot be made (a model failing).
func Open(ctx context.Context, snap Snapshot, opts Options) (*Repo, error) {
	if opts.CacheDir == "" {
		opts.CacheDir = DefaultCacheDir()
	}
	if opts.Strategy == "" {
		opts.Strategy = chunker.StrategyStructural
	}
	if opts.Repo == "" {
		opts.Repo = defaultRepo(snap)
	}
	logf := func(format string, a ...any) {
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, format+"\n", a...)
		}
	}
	var st Stats
	key, files, skipped, err := viewKey(ctx, snap, opts, logf)
	if err != nil {
		return nil, err
	}
	st.Skipped = skipped
	if len(opts.Extra) > 0 {
		var extraKey string
		files, extraKey, err = addExtra(ctx, files, opts, logf)
		if err != nil {
			return nil, err
		}
		key += "+" + extraKey
	}
	rep, err := acquireRepository(opts)
	if err != nil {
		return nil, err
	}
	r, err := openView(ctx, rep, snap, key, files, opts, &st, logf)
	if err != nil {
		rep.release()
		return nil, err
	}
	return r, nil
}

// openView makes the view of files over rep.
func openView(ctx context.Context, rep *repository, snap Snapshot, key string, files []sourceFile, opts Options, st *Stats, logf func(string, ...any)) (*Repo, error) {
	entries, err := rep.chunkFiles(ctx, snap, files, opts, st, logf)
	if err != nil {
		return nil, err
	}
	var ords []int32
	var syms []*symbols.File
	transient := sha256.New() // the files chunked under a transient limit
	for i, e := range entries {
		if e == nil {
			continue
		}
		if e.transient {
			fmt.Fprintf(transient, "%s\x00", files[i].path)
		}
		ords = append(ords, e.ords...)
		if opts.Symbols && files[i].vpath == "" {
			if s := rep.symbols(files[i], e, opts); s != nil {
				syms = append(syms, s)
			}
		}
	}
	if opts.EmbedderFunc != nil {
		emb, err := opts.EmbedderFunc(ctx)
		if err != nil {
			return nil, err
		}
		if emb != nil {
			opts.Embedder = emb
		}
	}
	st.Files = len(files)
	if transient.Size() > 0 {
		// What is fitted on these chunks (an LSA model) is stored under another key.
		key += "+limit-" + hex.EncodeToString(transient.Sum(nil)[:8])
	}
	dense, err := rep.dense(ctx, key, ords, opts, st)
	if err != nil {
		return nil, err
	}
	ix, err := rep.corpus.NewIndex(key, ords, dense)
	if err != nil {
		return nil, err
	}
	st.Chunks = len(ords)
	last := ""
	for _, o := range ords { // the view's chunks, in its order (ix.Chunks would copy them)
		if c := rep.corpus.Chunk(o); c.ParseError && c.Path != last {
			if c.Limit.Transient() {
				st.Limited++
			}
			st.ParseErrors++
			st.ParseErrorFiles = append(st.ParseErrorFiles, c.Path)
			last = c.Path
		}
	}
	if opts.DeferFlush {
		// Written by a later Open or Store.Flush.
	} else if n, err := rep.rs.flush(); err != nil {
		st.CacheWriteFailures += n
		if repoctx.IsEnvironment(err) {
			// Every later snapshot would fail the same way: stop (see repoctx.EnvironmentError).
			return nil, err
		}
		logf("warning: cache write failed (%v); the next run recomputes what was lost", err)
	}
	r := &Repo{snap: snap, ix: ix, stats: *st, rep: rep}
	if opts.Symbols {
		r.syms = symbols.NewTable(syms)
	}
	return r, nil
}

// viewKey returns the key of the snapshot's view and the files it indexes (in path
// order): a hash of every indexed file's path and content, the chunker settings, the
// grammar versions and FormatVersion. A snapshot with a content digest (an inner zip)
// takes its files' hashes from the store's manifest of that digest when an earlier
// run left one, without reading the files (they are read later only if their chunks
// are not in the store).
func viewKey(ctx context.Context, snap Snapshot, opts Options, logf func(string, ...any)) (string, []sourceFile, int, error) {
	keep, err := languageFilter(opts.Languages)
	if err != nil {
		return "", nil, 0, err
	}
	var rs *repoStore
	var mk recKey
	if d, ok := snap.(interface{ contentDigest() ([32]byte, bool) }); ok {
		if digest, ok := d.contentDigest(); ok {
			rs = OpenStore(opts.CacheDir).repo(opts.Repo)
			mk = recKey{kindManifest, sha256.Sum256([]byte(fmt.Sprintf("%s\x00manifest\x00%x\x00%s", storeVersion, digest, grammarVersions(opts.Languages))))}
			if b, ok := rs.get(mk); ok {
				if files, skipped, err := decodeManifest(b, snap); err == nil {
					return manifestKey(snap, opts, files), files, skipped, nil
				}
			}
		}
	}
	var files []sourceFile
	skipped := 0
	hasher, _ := snap.(Hasher)
	stamper, _ := snap.(interface {
		folderStamp(string) (string, fileStamp, bool)
		fileLimit() int64
	})
	var state *folderState // what earlier views learnt of a folder snapshot's files
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
		var stamp fileStamp
		stamped := false
		if stamper != nil {
			var dir string
			if dir, stamp, stamped = stamper.folderStamp(p); stamped {
				if state == nil {
					state = loadSnapshotState(OpenStore(opts.CacheDir).repo(opts.Repo), dir, languageNames(opts.Languages))
				}
				// Unchanged metadata since a view read it (as git's index trusts a
				// file's stat data): its hash holds; the bytes are read later, only if
				// the file must be chunked, and checked against the hash then.
				if sum, ok := state.knownStamp(p, stamp); ok && stamp.size <= stamper.fileLimit() {
					stamp.sum = sum
					state.cur[p] = stamp
					files = append(files, sourceFile{path: p, size: int(stamp.size), sum: sum, snap: snap})
					continue
				}
			}
		}
		raw, err := snap.ReadFile(p)
		if err != nil {
			skipped++
			logf("skip %s/%s: %v", snap.Name(), p, err)
			continue
		}
		sum := sha256.Sum256(raw)
		if stamped && int64(len(raw)) == stamp.size {
			stamp.sum = sum
			state.cur[p] = stamp
		}
		files = append(files, sourceFile{path: p, raw: raw, size: len(raw), sum: sum, snap: snap})
	}
	if rs != nil && skipped == 0 {
		rs.put(mk, encodeManifest(files))
	}
	if state != nil {
		state.save()
	}
	return manifestKey(snap, opts, files), files, skipped, nil
}

// Hasher is an optional interface of a [Snapshot] that already knows the SHA-256 of
// its files' raw bytes, such as an in-memory snapshot that hashed each file once when
// it stored it: [Open] and [Update] then take a listed file's hash from SHA256 instead
// of hashing its bytes again (on a 1,000-file repository, about 10 MB hashed per view).
// SHA256 must return the digest of exactly the bytes ReadFile returns for path, and ok
// false for a path it has no hash of (that file is hashed as usual).
type Hasher interface {
	SHA256(path string) (sum [32]byte, ok bool)
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
func manifestKey(snap Snapshot, opts Options, files []sourceFile) string {
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
func decodeManifest(b []byte, snap Snapshot) ([]sourceFile, int, error) {
	br := bytes.NewReader(b)
	bad := fmt.Errorf("workspace: damaged manifest")
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
func (rep *repository) chunkFiles(ctx context.Context, snap Snapshot, files []sourceFile, opts Options, st *Stats, logf func(string, ...any)) ([]*corpusFile, error) {
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
				entries[i], errs[i] = rep.file(files[i], ch, opts, &stats[i])
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

// addExtra appends to files the versions of opts.Extra's files that no earlier file
// holds, under their revision paths, and returns the key of what was added.
func addExtra(ctx context.Context, files []sourceFile, opts Options, logf func(string, ...any)) ([]sourceFile, string, error) {
	seen := map[string]bool{}
	for _, f := range files {
		seen[f.path+"\x00"+string(f.sum[:])] = true
	}
	h := sha256.New()
	for _, x := range opts.Extra {
		_, xf, _, err := viewKey(ctx, x, opts, logf)
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

// repository is one repository's index in this process: the corpus of every file
// version its opened snapshots hold, the store records of its files, and vectors by
// model.
type repository struct {
	regKey string
	rs     *repoStore
	corpus *retrieve.Corpus
	// chunkSettings is the settings part of its chunk records' keys (see chunkKey):
	// the repository's chunk options are part of regKey.
	chunkSettings string

	mu    sync.Mutex
	files map[[32]byte]*corpusFile // by chunk record key
	vecs  map[string]*ordVectors   // model ID -> the vectors by corpus ordinal
	fits  map[string]*retrieve.LSA // view key -> its LSA model
	sums  [][32]byte               // corpus ordinal -> SHA-256 of the chunk's text (zero: unknown)
	users int
	// forgotten: dropped from the registry by Forget (registry's lock).
	forgotten bool
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
	// transient: chunked under a limit of the machine (chunker.Limit.Transient), so
	// neither stored nor kept for later views: the next one chunks the file again.
	transient bool
}

// The repositories of this process, by store, repository and chunk settings; unused ones
// stay in memory (most recently used last) up to keepRepositories.
var registry = struct {
	sync.Mutex
	m    map[string]*repository
	idle []string
}{m: map[string]*repository{}}

const keepRepositories = 4

// acquireRepository returns the in-memory repository for opts, making it on first use.
func acquireRepository(opts Options) (*repository, error) {
	st := OpenStore(opts.CacheDir)
	regKey := st.dir + "\x00" + opts.Repo + "\x00" + opts.Chunk.CacheKey(opts.Strategy)
	registry.Lock()
	defer registry.Unlock()
	rep := registry.m[regKey]
	if rep == nil {
		rep = &repository{regKey: regKey, rs: st.repo(opts.Repo), corpus: retrieve.NewCorpus(), chunkSettings: chunkSettings(opts),
			files: map[[32]byte]*corpusFile{}, vecs: map[string]*ordVectors{}, fits: map[string]*retrieve.LSA{}}
		registry.m[regKey] = rep
	}
	for i, k := range registry.idle {
		if k == regKey {
			registry.idle = append(registry.idle[:i], registry.idle[i+1:]...)
			break
		}
	}
	rep.users++
	return rep, nil
}

// Forget drops this process's in-memory index of the repository opts.Repo (under opts'
// cache directory and chunk settings; nothing when opts.Repo is ""): the next [Open]
// makes a new one from the store, holding only the file versions it needs, while the
// views open now keep the old one until they are closed. The in-memory index keeps
// every file version any view held (chunks are never removed), so a long-lived process
// whose files keep changing (repoctx serve) forgets it now and then. The store is not
// touched.
func Forget(opts Options) {
	if opts.Repo == "" {
		return
	}
	if opts.CacheDir == "" {
		opts.CacheDir = DefaultCacheDir()
	}
	if opts.Strategy == "" {
		opts.Strategy = chunker.StrategyStructural
	}
	regKey := OpenStore(opts.CacheDir).dir + "\x00" + opts.Repo + "\x00" + opts.Chunk.CacheKey(opts.Strategy)
	registry.Lock()
	defer registry.Unlock()
	if rep := registry.m[regKey]; rep != nil {
		rep.forgotten = true
		delete(registry.m, regKey)
		registry.idle = slices.DeleteFunc(registry.idle, func(k string) bool { return k == regKey })
	}
}

// release ends one use of the repository; unused repositories beyond keepRepositories
// are dropped from memory (their store records stay).
func (rep *repository) release() {
	registry.Lock()
	defer registry.Unlock()
	rep.users--
	if rep.users > 0 || rep.forgotten {
		return
	}
	registry.idle = append(registry.idle, rep.regKey)
	for len(registry.idle) > keepRepositories {
		old := registry.idle[0]
		registry.idle = registry.idle[1:]
		delete(registry.m, old)
	}
}

// file returns the corpus entry of one file version: from memory, else from the store's
// chunk record, else chunked now (with its symbols from the same parse when asked) and
// stored. Concurrent callers for the same version wait for the first.
func (rep *repository) file(sf sourceFile, ch chunker.Chunker, opts Options, st *Stats) (*corpusFile, error) {
	if sf.vpath != "" {
		return rep.foreign(sf, ch, opts, st)
	}
	skey := storeKey("chunks", rep.chunkSettings, sf.path, sf.sum) // = chunkKey(opts, sf)
	rep.mu.Lock()
	e := rep.files[skey]
	if e != nil {
		rep.mu.Unlock()
		<-e.ready
		if e.err == nil {
			st.Reused++
		}
		return e, e.err
	}
	e = &corpusFile{ready: make(chan struct{})}
	rep.files[skey] = e
	rep.mu.Unlock()
	defer close(e.ready)
	var rec *chunkRecord
	if b, ok := rep.rs.get(recKey{kindChunks, skey}); ok && fitsSize(sf.size, opts.MaxFileBytes) {
		rec, _ = decodeChunkRecord(b) // a damaged record is a miss
	}
	if rec != nil {
		st.Reused++
	} else {
		raw, err := sf.content()
		if err != nil {
			e.err = err
			rep.forget(skey, e)
			return e, err
		}
		f, err := chunker.Decode(sf.path, raw, opts.MaxFileBytes)
		if err != nil {
			e.err = err
			rep.forget(skey, e)
			return e, err
		}
		cs, syms, err := chunkOne(f, ch, opts.Symbols)
		if err != nil {
			e.err = err
			rep.forget(skey, e)
			return e, err
		}
		rec = newChunkRecord(cs, f.Lossy, f.Encoding)
		if e.transient = chunker.FileLimit(cs).Transient(); e.transient {
			defer rep.forget(skey, e)
		} else {
			rep.rs.put(recKey{kindChunks, skey}, rec.encode())
		}
		if syms != nil {
			e.syms, e.symsDone = syms, true
			if !e.transient {
				rep.rs.put(recKey{kindSymbols, symbolKey(sf.path, sf.sum)}, encodeSymbols(syms))
			}
		}
		st.Chunked++
		st.Built = true
	}
	ords, err := rep.corpus.AddEncoded(rec.Chunks, rec.Terms)
	if err != nil {
		ords = rep.corpus.Add(rec.Chunks) // damaged terms: tokenise again
	}
	e.ords = ords
	e.lossy, e.encoding = rec.Lossy, rec.Encoding
	rep.mu.Lock()
	for i, o := range ords {
		rep.setSum(o, rec.Sums[i])
	}
	rep.mu.Unlock()
	return e, nil
}

// foreign returns the corpus entry of a file of another revision (sf.vpath): the chunks
// of its real version, copied under the revision path (IDs and links renamed).
func (rep *repository) foreign(sf sourceFile, ch chunker.Chunker, opts Options, st *Stats) (*corpusFile, error) {
	real := sf
	real.vpath = ""
	var rst Stats
	e, err := rep.file(real, ch, opts, &rst)
	st.Chunked += rst.Chunked
	st.Built = st.Built || rst.Built
	if err != nil {
		return nil, err
	}
	k := sha256.Sum256([]byte("foreign\x00" + sf.vpath + "\x00" + string(sf.sum[:])))
	rep.mu.Lock()
	fe := rep.files[k]
	if fe != nil {
		rep.mu.Unlock()
		<-fe.ready
		return fe, fe.err
	}
	fe = &corpusFile{ready: make(chan struct{}), lossy: e.lossy, encoding: e.encoding, symsDone: true, transient: e.transient}
	rep.files[k] = fe
	rep.mu.Unlock()
	defer close(fe.ready)
	if fe.transient {
		defer rep.forget(k, fe)
	}
	rename := func(id string) string {
		if id == "" {
			return ""
		}
		return sf.vpath + id[strings.LastIndexByte(id, '#'):]
	}
	cs := make([]chunker.Chunk, len(e.ords))
	for i, o := range e.ords {
		c := *rep.corpus.Chunk(o)
		c.Path, c.ID, c.Prev, c.Next, c.Parent = sf.vpath, rename(c.ID), rename(c.Prev), rename(c.Next), rename(c.Parent)
		cs[i] = c
	}
	fe.ords = rep.corpus.Add(cs)
	rep.mu.Lock()
	for i, o := range fe.ords {
		rep.setSum(o, rep.sums[e.ords[i]])
	}
	rep.mu.Unlock()
	st.Reused++
	return fe, nil
}

// forget drops a failed entry so that a later call tries again.
func (rep *repository) forget(k [32]byte, e *corpusFile) {
	rep.mu.Lock()
	defer rep.mu.Unlock()
	if rep.files[k] == e {
		delete(rep.files, k)
	}
}

// symbols returns a file version's symbols: from the chunker's parse, else the store,
// else extracted now (and stored); nil when the file cannot be parsed.
func (rep *repository) symbols(sf sourceFile, e *corpusFile, opts Options) *symbols.File {
	rep.mu.Lock()
	if e.symsDone {
		s := e.syms
		rep.mu.Unlock()
		return s
	}
	rep.mu.Unlock()
	k := recKey{kindSymbols, symbolKey(sf.path, sf.sum)}
	var got *symbols.File
	if b, ok := rep.rs.get(k); ok {
		got, _ = decodeSymbols(b) // a damaged record is a miss: extracted again
	}
	if got == nil {
		if raw, err := sf.content(); err != nil {
			// Unreadable now: no symbols.
		} else if f, err := chunker.Decode(sf.path, raw, opts.MaxFileBytes); err == nil {
			ex := extractors.Get().(*symbols.Extractor)
			if s, err := ex.Extract(f); err == nil {
				got = s
				rep.rs.put(k, encodeSymbols(s))
			}
			extractors.Put(ex)
		}
	}
	rep.mu.Lock()
	e.syms, e.symsDone = got, true
	rep.mu.Unlock()
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
func (rep *repository) dense(ctx context.Context, key string, ords []int32, opts Options, st *Stats) (*retrieve.DenseVectors, error) {
	if opts.Dense == retrieve.DenseNone && opts.Embedder == nil {
		return nil, nil
	}
	emb := opts.Embedder
	if emb == nil {
		fitKey, label := key, key
		if opts.RepoLSA {
			fitKey, label = "repo\x00"+opts.Repo, ""
		}
		m, err := rep.viewLSA(fitKey, label, ords, opts, st)
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
	rep.mu.Lock()
	mv := rep.vecs[id]
	if mv == nil {
		mv = &ordVectors{}
		rep.vecs[id] = mv
	}
	var todo []int32
	var todoSums [][32]byte
	for _, o := range ords {
		if !mv.has(o) {
			todo = append(todo, o)
			var sum [32]byte
			if int(o) < len(rep.sums) {
				sum = rep.sums[o]
			}
			todoSums = append(todoSums, sum)
		}
	}
	rep.mu.Unlock()
	// From the store, else embedded now.
	var texts []string
	var textSums [][32]byte
	var missing []int32
	var got []int32
	var gotVecs [][]float32
	var gotStatus []retrieve.EmbedStatus
	var arena []float32 // where the stored vectors are decoded
	for i, o := range todo {
		text := rep.corpus.Chunk(o).Text
		sum := todoSums[i]
		if sum == ([32]byte{}) {
			sum = sha256.Sum256([]byte(text))
		}
		if len(arena) < d.Dim {
			arena = make([]float32, (len(todo)-i)*d.Dim) // one allocation for the stored vectors
		}
		if tr, ok := rep.storedVector(id, arena[:d.Dim:d.Dim], sum); ok {
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
			putVector(rep.rs, id, textSums[i], vecs[i], trunc[i])
		}
		d.Info.Embedded += len(missing)
		st.Built = true
	}
	d.Info.Cached += len(ords) - len(todo) // vectors already in memory
	d.Rows = make([][]float32, len(ords))  // the repository's vectors, not copied
	rep.mu.Lock()
	for i, o := range got {
		mv.set(o, gotVecs[i], gotStatus[i])
	}
	for i, o := range ords {
		d.Rows[i] = mv.vecs[o]
		if s := mv.status[o]; s != 0 {
			d.Info.Count(s, rep.corpus.Chunk(o).ID)
		}
	}
	rep.mu.Unlock()
	return d, nil
}

// ordVectors holds one model's vectors of corpus chunks, by corpus ordinal (nil: not
// known yet), and how each chunk's text was embedded (repository.mu guards it).
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

// setSum records the SHA-256 of the text of the chunk of corpus ordinal o (rep.mu held).
func (rep *repository) setSum(o int32, sum [32]byte) {
	if n := int(o) + 1; n > len(rep.sums) {
		rep.sums = slices.Grow(rep.sums, n-len(rep.sums))[:n]
	}
	rep.sums[o] = sum
}

// viewLSA returns the LSA model named by fitKey (a view key, or the repository's one
// model): from memory, from the store, else fitted on the view's chunk texts in view
// order and stored. Its ID is labelled with label (the view key; for the repository's
// model, the key of the view it was fitted on, kept with it), so that vectors of
// different fits never mix.
func (rep *repository) viewLSA(fitKey, label string, ords []int32, opts Options, st *Stats) (*retrieve.LSA, error) {
	rep.mu.Lock()
	m := rep.fits[fitKey]
	rep.mu.Unlock()
	if m != nil {
		return m, nil
	}
	mk := recKey{kindModel, sha256.Sum256([]byte(fmt.Sprintf("lsa\x00%d\x00%s", opts.LSADim, fitKey)))}
	if b, ok := rep.rs.get(mk); ok {
		if got, l, err := readLabeledLSA(b); err == nil {
			m = got.Labeled(l)
		}
	}
	if m == nil {
		chunks := make([]chunker.Chunk, len(ords))
		for i, o := range ords {
			chunks[i] = *rep.corpus.Chunk(o)
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
			rep.rs.put(mk, b)
		}
		m = fit.Labeled(label)
		st.Built = true
	}
	rep.mu.Lock()
	rep.fits[fitKey] = m
	rep.mu.Unlock()
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
		return nil, "", fmt.Errorf("workspace: damaged model record")
	}
	label := string(b[k : k+int(n)])
	m, err := retrieve.DecodeLSA(b[k+int(n):])
	return m, label, err
}

// vectorKey is the store key of the vector under model id of the chunk text whose
// SHA-256 is textSum (chunks are embedded keeping their head).
func vectorKey(id string, textSum [32]byte) recKey {
	// The SHA-256 of storeVersion, "vec", id and KeepHead (decimal), each followed by
	// a NUL byte, then textSum (built without fmt: it is computed per chunk of a view).
	buf := make([]byte, 0, 96+len(id))
	buf = append(buf, storeVersion...)
	buf = append(buf, "\x00vec\x00"...)
	buf = append(buf, id...)
	buf = append(buf, 0)
	buf = strconv.AppendInt(buf, int64(retrieve.KeepHead), 10)
	buf = append(buf, 0)
	buf = append(buf, textSum[:]...)
	return recKey{kind: kindVector, key: sha256.Sum256(buf)}
}

// storedVector decodes into v (of the model's dimension) the vector under model id of
// the chunk text whose SHA-256 is textSum from the store; ok is false when it is not
// stored (or not of that dimension).
func (rep *repository) storedVector(id string, v []float32, textSum [32]byte) (retrieve.EmbedStatus, bool) {
	b, ok := rep.rs.get(vectorKey(id, textSum))
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
func putVector(rs *repoStore, id string, textSum [32]byte, v []float32, status retrieve.EmbedStatus) {
	b := make([]byte, 1+4*len(v))
	b[0] = byte(status)
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[1+4*i:], math.Float32bits(x))
	}
	rs.put(vectorKey(id, textSum), b)
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

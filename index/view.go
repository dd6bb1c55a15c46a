package index

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"runtime"
	"sort"
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
// files are skipped and logged. It returns [ErrClosed] after Close, ctx's error when ctx is cancelled (nothing
// half-written is left in the cache), and an error when the view cannot be made (a
// model failing, a fault of the machine).
func (ix *Index) View(ctx context.Context, snap snapshot.Snapshot) (*View, error) {
	if ix.isClosed() {
		return nil, ErrClosed
	}
	var embedder func(context.Context) (retrieve.Embedder, error)
	if sh := ix.opts.SharedLSA; sh != nil && ix.opts.Embedder == nil {
		if snap.Name() == sh.Snapshot {
			ix.prefetch(ctx, snap.Name()) // when another goroutine fits the model
			if _, err := ix.sharedModel(ctx); err != nil {
				return nil, err
			}
			if v := ix.takeModelView(); v != nil {
				return v, nil
			}
		} else {
			// Chunk while the model is fitted (possibly by another goroutine), then wait.
			embedder = func(ctx context.Context) (retrieve.Embedder, error) {
				ix.prefetch(ctx, snap.Name())
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
	hasExtra := false
	if opts.Extra != nil {
		if extra := opts.Extra(snap.Name()); len(extra) > 0 {
			hasExtra = true
			var extraKey string
			files, extraKey, err = ix.addExtra(ctx, files, extra, logf)
			if err != nil {
				return nil, err
			}
			key += "+" + extraKey
		}
	}
	stored := storesViews(opts, hasExtra)
	// A view embedded with the shared model is stored and read back under that model's
	// key too (sharedStamp): read back only when the key is known without making the
	// model's view.
	sharedKey := ""
	if stored && embedder != nil {
		sharedKey = ix.sharedFitKey(ctx)
	}
	if stored && (embedder == nil || sharedKey != "") {
		// A stored view holds no file chunked under a transient limit.
		full := limitKey(key, sha256.New())
		if sharedKey != "" {
			full = sharedStamp(full, sharedKey)
		}
		if p := ix.takePrepared(snap.Name()); p != nil {
			if p.stamp == ix.viewStamp(full) {
				<-p.done
				if p.rv != nil {
					return ix.finishView(snap, p.rv, skipped, logf), nil
				}
			} else {
				p.stop.Store(true) // of other files: it ends on its own (Close waits)
				ix.mu.Lock()
				ix.stopped = append(ix.stopped, p)
				ix.mu.Unlock()
			}
		} else if opts.StoreViews != ViewsPrepared {
			if v := ix.loadView(snap, full, skipped, logf); v != nil {
				return v, nil
			}
		}
	}
	var logs []string // what chunkFiles logs, for the stored view
	chunkLog := logf
	if stored {
		chunkLog = func(format string, a ...any) {
			l := fmt.Sprintf(format, a...)
			logs = append(logs, l)
			logf("%s", l)
		}
	}
	entries, err := ix.chunkFiles(ctx, snap, files, opts, &st, chunkLog)
	if err != nil {
		return nil, err
	}
	var ords []int32
	transient := sha256.New() // the files chunked under a transient limit
	nTransient := 0
	for i, e := range entries {
		if e == nil {
			continue
		}
		if e.transient {
			fmt.Fprintf(transient, "%s\x00", files[i].path)
			nTransient++
		}
		ords = append(ords, e.ords...)
	}
	// The symbol table is made beside the dense vectors and the BM25 postings (it
	// needs neither), in the files' order.
	var table *symbols.Table
	var syms []*symbols.File
	tableDone := make(chan struct{})
	symOpts := opts // its own copy: opts changes below (the shared model's Embedder)
	go func() {
		defer close(tableDone)
		if !symOpts.Symbols {
			return
		}
		for i, e := range entries {
			if e != nil && files[i].vpath == "" {
				if s := ix.symbols(files[i], e, symOpts); s != nil {
					syms = append(syms, s)
				}
			}
		}
		table = symbols.NewTable(syms)
	}()
	defer func() { <-tableDone }() // an error return below still waits for it
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
	key = limitKey(key, transient)
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
			if c.Limit.Transient() {
				st.Limited++
			}
			st.ParseErrors++
			st.ParseErrorFiles = append(st.ParseErrorFiles, c.Path)
			last = c.Path
		}
	}
	<-tableDone // its symbol records are put before the flush, as the view's others
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
	v := &View{snap: snap, ix: rix, stats: st, repo: ix.repo, syms: table, recs: ix.recs}
	if stored && nTransient == 0 && opts.StoreViews != ViewsPrepared {
		if embedder == nil {
			ix.storeView(v, key, skipped, logs, syms, logf)
		} else if lsa, ok := opts.Embedder.(*retrieve.LSA); ok && st.SharedLSA && lsa.Label() != "" {
			// Under the key of the view the model was fitted on (its label); not a
			// view that fitted its own model after the shared fit failed.
			ix.storeView(v, sharedStamp(key, lsa.Label()), skipped, logs, syms, logf)
		}
	}
	return v, nil
}

// sharedSep separates a view's key from the key of the view whose LSA model embedded
// it (Options.SharedLSA) in the key a stored view is known by (sharedStamp).
const sharedSep = "\x00shared-lsa\x00"

// sharedStamp returns the key a view of key embedded with the shared LSA model fitted
// on the view of fitKey is stored under: readView finds the model by fitKey.
func sharedStamp(key, fitKey string) string { return key + sharedSep + fitKey }

// sharedFitKey returns the key of the view of Options.SharedLSA's snapshot, the label
// of the shared model when no file of that snapshot was chunked under a transient
// limit, without making that view: for an inner zip from the manifest an earlier run
// stored ("" when there is none, so no earlier run stored a view under it, or when it
// is damaged), for a folder from its files' hashes. It is worked out once per index;
// "" also when the snapshot cannot be opened or listed (no view is read back under
// the shared model then, and the snapshot is not opened again).
func (ix *Index) sharedFitKey(ctx context.Context) string {
	ix.sharedKeyMu.Lock()
	defer ix.sharedKeyMu.Unlock()
	if ix.sharedKeyDone {
		return ix.sharedKey
	}
	sh := ix.opts.SharedLSA
	if sh == nil || sh.Snapshot == "" {
		ix.sharedKeyDone = true
		return ""
	}
	snap, err := sh.Open(sh.Snapshot)
	if err != nil {
		ix.sharedKeyDone = true // not opened again for every view
		return ""
	}
	var key string
	if mk, ok := ix.manifestRecord(snap); ok {
		// Not listed yet (or damaged): its files are not read twice.
		if key, _, _, ok = ix.readManifest(snap, mk); !ok {
			ix.sharedKeyDone = true
			return ""
		}
	} else if key, _, _, err = ix.viewKey(ctx, snap, func(string, ...any) {}); err != nil {
		ix.sharedKeyDone = ctx.Err() == nil // a cancelled listing may be tried again
		return ""
	}
	ix.sharedKey, ix.sharedKeyDone = limitKey(key, sha256.New()), true
	return ix.sharedKey
}

// limitKey returns the key of a view of key whose files chunked under a transient
// limit are those transient hashed (their paths, each followed by a NUL byte): what is
// fitted on its chunks (an LSA model) is stored under it, so that a view with fewer
// files windowed is fitted anew. Every key carries the suffix, that of no file when
// none was.
func limitKey(key string, transient hash.Hash) string {
	return key + "+limit-" + hex.EncodeToString(transient.Sum(nil)[:8])
}

// sharedFit is the bookkeeping of Options.SharedLSA: the model, fitted once, and the
// view it was fitted on until a View of that snapshot takes it.
type sharedFit struct {
	once sync.Once
	done chan struct{} // closed when the fit (once) returned
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
		sh = &sharedFit{done: make(chan struct{})}
		ix.shared = sh
	}
	ix.mu.Unlock()
	sh.once.Do(func() {
		defer close(sh.done)
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

// prefetch chunks the files of the snapshots of Options.SharedLSA.Prefetch (not self
// nor the model's snapshot; each taken by one caller) while another goroutine fits the
// shared model, and returns once the fit has returned (or ctx is done, or no snapshot
// is left). It returns at once when no fit is under way. What it chunks is kept in the
// index and the store as any view's files are; failures are left to the snapshots' own
// views.
func (ix *Index) prefetch(ctx context.Context, self string) {
	sh := ix.opts.SharedLSA
	ix.mu.Lock()
	fit := ix.shared
	ix.mu.Unlock()
	if sh == nil || fit == nil {
		return
	}
	select {
	case <-fit.done:
		return
	default:
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-fit.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	opts := ix.opts
	opts.Progress, opts.Log = nil, nil // another snapshot's: reported by its own view
	discard := func(string, ...any) {}
	for ctx.Err() == nil {
		ix.mu.Lock()
		if ix.prefetched >= len(sh.Prefetch) {
			ix.mu.Unlock()
			return
		}
		name := sh.Prefetch[ix.prefetched]
		ix.prefetched++
		ix.mu.Unlock()
		if name == self || name == sh.Snapshot {
			continue
		}
		snap, err := sh.Open(name)
		if err != nil {
			continue
		}
		_, files, _, err := ix.viewKey(ctx, snap, discard)
		if err != nil {
			continue
		}
		var st Stats
		ix.chunkFiles(ctx, snap, files, opts, &st, discard) // stops at ctx's end
	}
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

// manifestRecord returns the store key of the manifest of a snapshot with a content
// digest (an inner zip), and false for other snapshots.
func (ix *Index) manifestRecord(snap snapshot.Snapshot) (store.Key, bool) {
	d, ok := snap.(snapshot.Digester)
	if !ok {
		return store.Key{}, false
	}
	digest, ok := d.ContentDigest()
	if !ok {
		return store.Key{}, false
	}
	return store.Key{Kind: store.KindManifest, Hash: sha256.Sum256([]byte(fmt.Sprintf("%s\x00manifest\x00%x\x00%s", store.Version, digest, grammarVersions(ix.opts.Languages))))}, true
}

// readManifest returns the view key of snap and its files from the manifest stored
// under mk (manifestRecord), and false when there is none or it is damaged.
func (ix *Index) readManifest(snap snapshot.Snapshot, mk store.Key) (string, []sourceFile, int, bool) {
	b, ok := ix.recs.Get(mk)
	if !ok {
		return "", nil, 0, false
	}
	files, skipped, err := decodeManifest(b, snap)
	if err != nil {
		return "", nil, 0, false
	}
	return manifestKey(snap, ix.opts, files), files, skipped, true
}

// viewKey returns the key of the snapshot's view and the files it indexes (in path
// order): a hash of every indexed file's path and content, the chunker settings, the
// grammar versions and FormatVersion. A snapshot with a content digest (an inner zip)
// takes its files' hashes from the store's manifest of that digest when an earlier
// run left one, without reading the files (they are read later only if their chunks
// are not in the store).
func (ix *Index) viewKey(ctx context.Context, snap snapshot.Snapshot, logf func(string, ...any)) (string, []sourceFile, int, error) {
	opts, keep := ix.opts, ix.keep
	mk, useManifest := ix.manifestRecord(snap)
	if useManifest {
		if key, files, skipped, ok := ix.readManifest(snap, mk); ok {
			return key, files, skipped, nil
		}
	}
	skipped := 0
	hasher, _ := snap.(snapshot.Hasher)
	rawDigester, _ := snap.(snapshot.RawDigester)
	// What earlier views learnt of a folder snapshot's files (nil for other snapshots).
	known := snapshot.LoadFolderHashes(ix.recs, snap, languageNames(opts.Languages))
	paths := snap.Paths()
	sort.Strings(paths)
	files := make([]sourceFile, 0, len(paths)) // not grown by doubling (16 copies of a growing list at 50,000 files)
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
		// A file of an inner zip stored as the same compressed bytes as one this
		// index read before (the same file in another snapshot): its hash holds, and
		// its bytes are read later, only if the file must be chunked.
		var rd [32]byte
		hasRD := false
		if rawDigester != nil {
			if rd, hasRD = rawDigester.RawDigest(p); hasRD {
				if f, ok := ix.rawSum(rd); ok {
					files = append(files, sourceFile{path: p, size: f.size, sum: f.sum, snap: snap})
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
		known.Add(p, int64(len(raw)), sum)
		if hasRD {
			ix.putRawSum(rd, rawFile{sum: sum, size: len(raw)})
		}
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
	// transient: chunked under a limit of the machine (chunker.Limit.Transient), so
	// neither stored nor kept for later views: the next one chunks the file again.
	transient bool
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
	// A stored record is read into reused memory: its chunks' strings are copied out
	// (ownStrings), its terms read by AddEncoded below, then the memory goes back.
	buf := recordBufs.Get().(*[]byte)
	defer recordBufs.Put(buf)
	if b, ok := ix.recs.GetTo(store.Key{Kind: store.KindChunks, Hash: skey}, *buf); ok && fitsSize(sf.size, opts.MaxFileBytes) {
		*buf = b
		if rec, _ = decodeChunkRecord(b); rec != nil { // a damaged record is a miss
			rec.ownStrings()
		}
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
		if e.transient = chunker.FileLimit(cs).Transient(); e.transient {
			defer ix.forget(skey, e)
		} else {
			ix.recs.Put(store.Key{Kind: store.KindChunks, Hash: skey}, rec.encode())
		}
		if syms != nil {
			e.syms, e.symsDone = syms, true
			if !e.transient {
				ix.recs.Put(store.Key{Kind: store.KindSymbols, Hash: symbolKey(sf.path, sf.sum)}, encodeSymbols(syms))
			}
		}
		st.Chunked++
		st.Built = true
	}
	ords, err := ix.corpus.AddEncoded(rec.Chunks, rec.Table, rec.Terms)
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
	fe = &corpusFile{ready: make(chan struct{}), lossy: e.lossy, encoding: e.encoding, symsDone: true, transient: e.transient}
	ix.files[k] = fe
	ix.mu.Unlock()
	defer close(fe.ready)
	if fe.transient {
		defer ix.forget(k, fe)
	}
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
	buf := recordBufs.Get().(*[]byte)
	if b, ok := ix.recs.GetTo(k, *buf); ok {
		got, _ = decodeSymbols(b) // a damaged record is a miss: extracted again; b is copied
		*buf = b
	}
	recordBufs.Put(buf)
	if got == nil {
		if raw, err := sf.content(); err != nil {
			// Unreadable now (a lazy read that failed: the file changed since its
			// hash was taken): no symbols for this view, and nothing kept, so that a
			// later view of the same version reads it again.
			return nil
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

// recordBufs lends the memory store records that are decoded into copies (symbols)
// are read into (store.Records.GetTo), so that reading one costs no allocation.
var recordBufs = sync.Pool{New: func() any { return new([]byte) }}

// chunkOne chunks one decoded file; with withSymbols and a structural chunker its
// symbols are extracted from the same syntax tree.
func chunkOne(f *chunker.File, ch chunker.Chunker, withSymbols bool) ([]chunker.Chunk, *symbols.File, error) {
	sc, ok := ch.(chunker.TreeChunker)
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

// rawFile is what reading a file of an inner zip found: its bytes' SHA-256 and length.
type rawFile struct {
	sum  [32]byte
	size int
}

// maxRawSums caps Index.rawSums (about 100 bytes an entry: 100 MB at the cap); past
// it, files are read as if none had been seen.
const maxRawSums = 1 << 20

// rawSum returns what this index found reading the inner-zip file of raw digest rd
// (snapshot.RawDigester), if it read one.
func (ix *Index) rawSum(rd [32]byte) (rawFile, bool) {
	ix.rawMu.Lock()
	defer ix.rawMu.Unlock()
	f, ok := ix.rawSums[rd]
	return f, ok
}

// putRawSum records what reading the inner-zip file of raw digest rd found.
func (ix *Index) putRawSum(rd [32]byte, f rawFile) {
	ix.rawMu.Lock()
	defer ix.rawMu.Unlock()
	if ix.rawSums == nil {
		ix.rawSums = map[[32]byte]rawFile{}
	}
	if len(ix.rawSums) < maxRawSums {
		ix.rawSums[rd] = f
	}
}

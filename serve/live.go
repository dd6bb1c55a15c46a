package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/crossrepo"
	"github.com/repoctx/repoctx/index"
	"github.com/repoctx/repoctx/snapshot"
	"github.com/repoctx/repoctx/store"
)

// Folder is one workspace folder to serve.
type Folder struct {
	// Dir is the folder.
	Dir string
	// Repo names the repository its index is kept under in the cache (the name
	// `repoctx query` and `index` use for the same folder, so that they share the
	// stored chunks and the LSA model); "" means [index.FolderRepo](Dir).
	Repo string
}

// Update describes one change of a workspace's view: what the watcher reported, what
// the walk found, and what making the new view cost.
type Update struct {
	// Workspace is the workspace's name.
	Workspace string
	// Time is when the new view was swapped in.
	Time time.Time
	// Paths is the number of changed paths (files or folders) the update looked at.
	Paths int
	// Added, Changed and Removed count the files of the view that are new, whose
	// bytes changed, and that are gone (deleted, renamed, newly ignored).
	Added, Changed, Removed int
	// Walk is the time spent walking the changed paths (reading and hashing their
	// files); View the time index.Index.View took to make the new view.
	Walk, View time.Duration
	// Files and Chunks are the new view's sizes; Chunked counts the files chunked for
	// it, Embedded the chunk texts embedded for it (the rest came from memory or the
	// store).
	Files, Chunks, Chunked, Embedded int
}

// Status is the state of one workspace, as GET /v1/status reports it.
type Status struct {
	// Name is the folder's base name (what a request's "workspace" may give).
	Name string `json:"name"`
	// Root is the folder's absolute path.
	Root string `json:"root"`
	// Repo is the repository name its index is kept under.
	Repo string `json:"repo"`
	// Files and Chunks are the current view's sizes.
	Files  int `json:"files"`
	Chunks int `json:"chunks"`
	// Updates counts the views made since the server started (the first included).
	Updates int `json:"updates"`
	// LastUpdate is when the current view was swapped in; LastUpdateMS is how long
	// making it took (walk and view, in milliseconds).
	LastUpdate   time.Time `json:"last_update"`
	LastUpdateMS float64   `json:"last_update_ms"`
	// SearchIndex describes the workspace's bleve index (documents, size on disk,
	// last update) when the server runs with Config.CrossRepo.
	SearchIndex *crossrepo.Status `json:"search_index,omitempty"`
	// Pending counts the changed paths reported and not yet in the view.
	Pending int `json:"pending"`
	// Watch says how changes are found: "fsnotify" or "polling".
	Watch string `json:"watch"`
}

// Workspace is one folder kept live: an in-memory snapshot of the files the walker
// lets through, updated file by file as the folder changes, and the current view
// (the view of that snapshot over the workspace's index) that answers requests. Its methods are safe for
// concurrent use.
type Workspace struct {
	name, root, repo string
	cfg              *Config
	opts             index.Options
	st               *store.Store
	osRoot           *os.Root
	fsys             fs.FS // osRoot's
	logf             func(string, ...any)

	mu         sync.Mutex
	files      map[string]*memFile  // the current files; replaced, never modified, once a view holds it
	dirs       map[string]time.Time // folders walked into (watched), with their mtimes
	ignores    map[string]stat      // ignore files read, for polling
	cur        *view
	pending    map[string]bool
	lastNote   time.Time
	inflight   int
	updates    int
	ix         *index.Index     // the repository's index (the update loop's, and Close's)
	bix        *crossrepo.Index // its bleve index (Config.CrossRepo), else nil
	churn      int              // chunks of file versions added to the index since it was opened
	flushed    time.Time        // when the store was last written
	last       Update
	fsw        *fsnotify.Watcher // nil when polling
	watched    map[string]bool   // folders fsw watches
	startWatch []string          // the first walk's folders, watched once the server listens

	wake   chan struct{}
	cancel context.CancelFunc
	wg     sync.WaitGroup
	closed bool
}

// wrapFS, if not nil, wraps the folder's file system (tests make files unreadable
// with it).
var wrapFS func(fs.FS) fs.FS

// afterStateWalk, if not nil, is called after a walk that used the folder's walk
// state, before the view is made (tests change a file there).
var afterStateWalk func()

// stat is what a stat says of a file, for polling.
type stat struct {
	size int64
	mod  time.Time
}

// racyWindow is how old a modification time must be, when the stat that read it was taken,
// for polling to trust it. File systems stamp times from a coarse clock (a few milliseconds
// on Linux, up to 2 s on FAT), so a file read, or a folder listed, just after its stat can
// change again within the same tick and keep its time: polling would never see the change.
// stamp records such a time as zero, which the next poll sees as a change and checks against
// the content (Git's "racily clean" index entries, Documentation/technical/racy-git.txt).
const racyWindow = 2 * time.Second

// stamp returns mod as polling records it: zero when it is less than racyWindow older than
// now, the time of the stat that read it (or in the future).
func stamp(mod, now time.Time) time.Time {
	if now.Sub(mod) < racyWindow {
		return time.Time{}
	}
	return mod
}

// view is one index.View with the requests using it.
type view struct {
	iv      *index.View
	refs    int  // requests using it (Workspace.mu)
	retired bool // replaced: closed when refs drops to 0
}

// openWorkspace reads the folder, makes the first view and starts watching.
func openWorkspace(ctx context.Context, f Folder, cfg *Config, st *store.Store, logf func(string, ...any)) (*Workspace, error) {
	abs, err := filepath.Abs(f.Dir)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("serve: workspace %s: %w", f.Dir, err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("serve: workspace %s: not a folder", f.Dir)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("serve: workspace %s: %w", f.Dir, err)
	}
	w := &Workspace{name: filepath.Base(abs), root: abs, repo: f.Repo, cfg: cfg, st: st, osRoot: root, fsys: root.FS(),
		files: map[string]*memFile{}, dirs: map[string]time.Time{}, ignores: map[string]stat{},
		pending: map[string]bool{}, watched: map[string]bool{}, wake: make(chan struct{}, 1)}
	if w.repo == "" {
		w.repo = index.FolderRepo(abs)
	}
	if wrapFS != nil {
		w.fsys = wrapFS(w.fsys)
	}
	w.logf = func(format string, a ...any) { logf("%s: "+format, append([]any{w.name}, a...)...) }
	w.opts = cfg.Index
	w.opts.RepoLSA = true // one model per repository: an edit embeds its new chunks only
	w.opts.Symbols = true
	w.opts.DeferFlush = true // the store is written every flushEvery, not once per edit
	// The first view is read back from the view `repoctx index` stored, when the walk
	// finds the same files (the read starts now, beside the walk); later views are
	// made in memory, and none is stored.
	w.opts.StoreViews = index.ViewsPrepared
	if w.ix, err = index.Open(st, w.repo, w.opts); err != nil {
		root.Close()
		return nil, err
	}
	w.ix.PrepareView(w.name)
	if cfg.CrossRepo {
		if w.bix, err = crossrepo.Open(st, w.repo, w.name, "live"); err != nil {
			w.ix.Close()
			root.Close()
			return nil, fmt.Errorf("serve: workspace %s: %w", f.Dir, err)
		}
	}
	if cfg.Watch != WatchPoll {
		if fw, err := fsnotify.NewWatcher(); err != nil {
			w.logf("cannot watch the folder (%v): polling every %v instead", err, cfg.PollInterval)
		} else {
			w.fsw = fw
		}
	}
	if _, err := w.apply(ctx, []string{fullScan}, true); err != nil {
		w.shut()
		w.ix.Close()
		if w.bix != nil {
			w.bix.Close()
		}
		root.Close()
		return nil, err
	}
	wctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	w.wg.Add(2)
	go func() {
		defer w.wg.Done()
		// What changed while the first view was made: the stats taken before reading
		// tell. Off the start's path: the update loop takes what it notes. The
		// folders are watched first, so that no change falls between the two.
		w.watch(w.startWatch)
		w.startWatch = nil
		w.poll()
		w.updateLoop(wctx)
	}()
	go func() { defer w.wg.Done(); w.watchLoop(wctx) }()
	return w, nil
}

// Name returns the workspace's name (the folder's base name).
func (w *Workspace) Name() string { return w.name }

// Root returns the folder's absolute path.
func (w *Workspace) Root() string { return w.root }

// Status returns the workspace's state.
func (w *Workspace) Status() Status {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := Status{Name: w.name, Root: w.root, Repo: w.repo, Updates: w.updates, LastUpdate: w.last.Time,
		LastUpdateMS: float64((w.last.Walk + w.last.View).Microseconds()) / 1000, Pending: len(w.pending) + w.inflight, Watch: "polling"}
	if w.cur != nil {
		st.Files, st.Chunks = w.cur.iv.Stats().Files, w.cur.iv.Stats().Chunks
	}
	if w.fsw != nil {
		st.Watch = "fsnotify"
	}
	if w.bix != nil {
		bs := w.bix.Status()
		st.SearchIndex = &bs
	}
	return st
}

// Acquire returns the current view and the function that ends its use; the view stays
// open until then even if a newer one replaces it. It returns nil after Close.
func (w *Workspace) Acquire() (*index.View, func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	v := w.cur
	if v == nil {
		return nil, func() {}
	}
	v.refs++
	var once sync.Once
	return v.iv, func() { once.Do(func() { w.release(v) }) }
}

func (w *Workspace) release(v *view) {
	w.mu.Lock()
	v.refs--
	done := v.retired && v.refs == 0
	w.mu.Unlock()
	if done {
		v.iv.Close()
	}
}

// swap makes iv the current view; the old one is closed once its requests end.
func (w *Workspace) swap(iv *index.View) {
	w.mu.Lock()
	old := w.cur
	w.cur = &view{iv: iv}
	done := false
	if old != nil {
		old.retired = true
		done = old.refs == 0
	}
	w.mu.Unlock()
	if done {
		old.iv.Close()
	}
}

// note records changed paths (slash paths relative to the root) and wakes the update
// loop.
func (w *Workspace) note(paths ...string) {
	if len(paths) == 0 {
		return
	}
	w.mu.Lock()
	for _, p := range paths {
		if isIgnoreFile(p) {
			p = fullScan
		}
		w.pending[p] = true
	}
	w.lastNote = time.Now()
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// maxDelay bounds how long a steady stream of changes can hold an update back.
const maxDelay = time.Second

// updateLoop applies the changes noted, once they have been quiet for the debounce
// interval (a save is often several events: write, chmod, rename).
func (w *Workspace) updateLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.wake:
		}
		deadline := time.Now().Add(maxDelay)
		for {
			w.mu.Lock()
			wait := w.cfg.Debounce - time.Since(w.lastNote)
			w.mu.Unlock()
			if left := time.Until(deadline); wait > left {
				wait = left
			}
			if wait <= 0 {
				break
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		}
		w.mu.Lock()
		targets := slices.Sorted(maps.Keys(w.pending))
		clear(w.pending)
		w.inflight = len(targets)
		w.mu.Unlock()
		if len(targets) > 0 {
			if _, err := w.apply(ctx, targets, false); err != nil && ctx.Err() == nil {
				w.logf("update failed, the previous view stays: %v", err)
			}
		}
		w.mu.Lock()
		w.inflight = 0
		w.mu.Unlock()
	}
}

// apply walks targets, brings the in-memory files up to date and, when any file of the
// view changed (or first), makes and swaps in the new view. It reports whether it made
// one.
func (w *Workspace) apply(ctx context.Context, targets []string, first bool) (bool, error) {
	t0 := time.Now()
	// The walk opens files through the folders it keeps open (one openat per file, not
	// one per path component); closed after the walk, so that no folder renamed later
	// is read under its old path.
	rfs := snapshot.NewRootFS(w.osRoot)
	var fsys fs.FS = rfs
	if wrapFS != nil {
		fsys = wrapFS(fsys)
	}
	// The first walk (of the whole folder) takes the files the folder's walk state
	// (in the store) vouches for unread: their bytes are read when first needed (a
	// view whose chunks are not stored, locate, the inspector). One that changed
	// before that is left out of the view (its read fails) and found by the poll after
	// the first view.
	var state *snapshot.FolderState
	if first {
		state = snapshot.LoadFolderState(w.st.Records(w.repo), w.root, w.cfg.Walk)
	}
	sc, err := walkTargets(ctx, fsys, w.cfg.Walk, targets, state, w.lazyRead)
	rfs.Close()
	if err == nil && state != nil {
		state.Save() // written with the store's next segment (flush, below)
		if afterStateWalk != nil {
			afterStateWalk()
		}
	}
	if err != nil {
		return false, fmt.Errorf("serve: workspace %s: %w", w.root, err)
	}
	targets = sc.targets // "." when there were too many
	for _, p := range sc.unreadable {
		w.logf("skip %s: unreadable", p)
	}
	walked := time.Since(t0)
	if add := w.track(sc, targets); first {
		// Watched off the start's path (26,000 folders took a third of a second),
		// before the poll that finds what changed since this walk.
		w.startWatch = add
	} else {
		w.watch(add)
	}
	w.mu.Lock()
	cur := w.files
	w.mu.Unlock()
	next := maps.Clone(cur)
	u := Update{Workspace: w.name, Paths: len(targets), Walk: walked}
	for p := range cur {
		if covered(p, targets) && sc.files[p] == nil {
			delete(next, p)
			u.Removed++
		}
	}
	for p, f := range sc.files {
		switch old := cur[p]; {
		case old == nil:
			next[p] = f
			u.Added++
		case old.Sum != f.Sum || old.Lazy != nil && old.Lazy.Failed():
			// A failed lazy read (the file changed, then changed back before this walk)
			// may have left the file out of the view, and would fail again.
			next[p] = f
			u.Changed++
		case old.size != f.size || !old.mod.Equal(f.mod):
			next[p] = &memFile{MemFile: old.MemFile, size: f.size, mod: f.mod} // touched only
		}
	}
	if !first && u.Added+u.Changed+u.Removed == 0 {
		w.mu.Lock()
		w.files = next
		w.mu.Unlock()
		return false, nil
	}
	t1 := time.Now()
	nv, err := w.ix.View(ctx, memSnapshot(w.name, next))
	if err != nil {
		return false, err
	}
	if !first {
		w.churn += changedChunks(nv, sc.files, cur)
		if w.churn > max(compactMin, compactAfter*nv.Retriever().Len()) {
			// The index holds as many chunks of old file versions as the view has: open
			// a new one, made from the store (requests go on with the old one's views).
			t := time.Now()
			ix, err := index.Open(w.st, w.repo, w.opts)
			if err != nil {
				nv.Close()
				return false, err
			}
			fresh, err := ix.View(ctx, memSnapshot(w.name, next))
			if err != nil {
				ix.Close()
				nv.Close()
				return false, err
			}
			nv.Close()
			nv = fresh
			w.ix.Close()
			w.ix = ix
			w.logf("dropped %d chunks of old file versions from memory (the index was made again from the store in %.0f ms)", w.churn, ms(time.Since(t)))
			w.churn = 0
		}
	}
	u.View = time.Since(t1)
	st := nv.Stats()
	u.Files, u.Chunks, u.Chunked, u.Embedded = st.Files, st.Chunks, st.Chunked, nv.Retriever().DenseInfo().Embedded
	if w.bix != nil {
		// Before the swap: a request that sees the new view sees its chunks in the
		// bleve index too. A failed update leaves the last one (logged, retried with
		// the next change, which compares against what the index holds).
		if bs, err := w.bix.Sync(nv.Retriever().Chunks()); err != nil {
			w.logf("bleve index not updated: %v", err)
		} else if bs.Added+bs.Deleted > 0 && !first {
			w.logf("bleve index: %d chunks added, %d deleted in %.0f ms", bs.Added, bs.Deleted, ms(bs.Took))
		}
	}
	w.swap(nv)
	if first || time.Since(w.flushed) > flushEvery {
		w.flush()
	}
	u.Time = time.Now()
	w.mu.Lock()
	w.files = next
	w.updates++
	w.last = u
	w.mu.Unlock()
	if first && st.StoredView {
		w.logf("%d files, %d chunks (the view stored by the last index) in %.2fs", u.Files, u.Chunks, (u.Walk + u.View).Seconds())
	} else if first {
		w.logf("%d files, %d chunks (%d files chunked, %d chunk texts embedded) in %.2fs", u.Files, u.Chunks, u.Chunked, u.Embedded, (u.Walk + u.View).Seconds())
	} else {
		w.logf("+%d ~%d -%d files: walk %.1f ms, view %.1f ms (%d chunked, %d embedded); %d files, %d chunks",
			u.Added, u.Changed, u.Removed, ms(u.Walk), ms(u.View), u.Chunked, u.Embedded, u.Files, u.Chunks)
	}
	if w.cfg.OnUpdate != nil {
		w.cfg.OnUpdate(u)
	}
	return true, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// lazyRead returns the read of the file at path (slash, relative to the folder) for a
// file the walk state vouched for: its bytes, at most the walk's size limit. A path
// that is no longer a regular file is refused (opened without blocking: a named pipe
// put in its place would block the open until a writer came).
func (w *Workspace) lazyRead(path string) func() ([]byte, error) {
	return func() ([]byte, error) {
		f, err := w.osRoot.OpenFile(filepath.FromSlash(path), os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if fi, err := f.Stat(); err != nil {
			return nil, err
		} else if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%s is no longer a regular file", path)
		}
		limit := w.cfg.Walk.MaxFileBytes
		if limit <= 0 {
			limit = chunker.DefaultMaxFileBytes
		}
		b, err := io.ReadAll(io.LimitReader(f, limit+1))
		if err == nil && int64(len(b)) > limit {
			err = fmt.Errorf("%s grew over the size limit", path)
		}
		return b, err
	}
}

// flushEvery is how often the store records of edits are written (a killed server
// loses at most that much: it is recomputed at the next start).
const flushEvery = time.Minute

// compactAfter: the in-memory index is made again once the chunks of old file versions
// it holds are this many times the view's.
var compactAfter = 1

// compactMin is the fewest chunks of old file versions worth a new index (a small
// workspace's take little memory).
var compactMin = 5000

// flush writes the store records of the edits so far.
func (w *Workspace) flush() {
	if err := w.st.Flush(); err != nil {
		w.logf("warning: cache write failed (%v); a restart recomputes what was lost", err)
	}
	w.flushed = time.Now()
}

// changedChunks counts the chunks in v of the files of sc that are new or changed
// against cur: what the update added to the in-memory index.
func changedChunks(v *index.View, found, cur map[string]*memFile) int {
	n := 0
	rix := v.Retriever()
	for i := range rix.Len() { // not Chunks: a copy of every chunk per update
		c := rix.ChunkAt(i)
		if f := found[c.Path]; f != nil && (cur[c.Path] == nil || cur[c.Path].Sum != f.Sum) {
			n++
		}
	}
	return n
}

// Close stops watching and closes the view once its requests end.
func (w *Workspace) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	w.mu.Unlock()
	if w.cancel != nil {
		w.cancel()
	}
	w.shut()
	w.wg.Wait()
	w.flush()
	w.ix.Close()
	if w.bix != nil {
		w.bix.Close()
	}
	w.mu.Lock()
	v := w.cur
	w.cur = nil
	done := false
	if v != nil {
		v.retired = true
		done = v.refs == 0
	}
	w.mu.Unlock()
	if done {
		v.iv.Close()
	}
	return w.osRoot.Close()
}

// shut closes the watcher.
func (w *Workspace) shut() {
	w.mu.Lock()
	fw := w.fsw
	w.mu.Unlock()
	if fw != nil {
		fw.Close()
	}
}

// memFile is one file of a live workspace: its bytes and their SHA-256 (as an
// in-memory snapshot holds them), and what a stat said just before the bytes were
// read (the polling fallback compares it). A memFile is never modified once made: a
// changed file gets a new one.
type memFile struct {
	snapshot.MemFile
	size int64     // bytes, from the stat before reading
	mod  time.Time // modification time, from the stat before reading
}

// memSnapshot freezes files (which must not be modified afterwards) as an in-memory
// snapshot, which is also a snapshot.Hasher: a view of it reads and hashes no file.
func memSnapshot(name string, files map[string]*memFile) snapshot.Snapshot {
	m := make(map[string]*snapshot.MemFile, len(files))
	for p, f := range files {
		m[p] = &f.MemFile
	}
	return snapshot.NewMem(name, m)
}

// errClosed is returned for requests to a closed server.
var errClosed = errors.New("serve: the server is shutting down")

package index

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/retrieve"
	"github.com/repoctx/repoctx/snapshot"
	"github.com/repoctx/repoctx/store"
)

// TestStoredView checks that a view read back from the store (Options.StoreViews)
// is the view made from the files: same chunks, statistics, log lines, symbols and
// rankings; that a changed file makes the view again; and that a damaged stored view
// is a miss.
func TestStoredView(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"cache.py":   "class Cache:\n    \"\"\"A bounded cache.\"\"\"\n\n    def get(self, key):\n        return self.items.get(key)\n\n    def evict(self, eldest):\n        del self.items[eldest]\n",
		"retry.py":   "import cache\n\ndef backoff(n):\n    return 2 ** n\n\ndef retry(f, times=3):\n    for i in range(times):\n        try:\n            return f()\n        except IOError:\n            backoff(i)\n",
		"sub/app.kt": "package app\n\nclass App(val name: String) {\n    fun start() = println(name)\n}\n",
		"bad.py":     "def broken(:\n    pass\n",
		"latin.py":   "s = '\xe9t\xe9'\n",
	}
	writeFiles(t, root, files)
	cache := t.TempDir()
	ctx := context.Background()
	opts := DefaultOptions()
	opts.RepoLSA, opts.StoreViews = true, ViewsStored
	view := func(o Options) (*View, string) {
		t.Helper()
		var log strings.Builder
		o.Log = &log
		return folderView(t, root, cache, o), log.String()
	}
	made, madeLog := view(opts)
	if made.Stats().Chunked == 0 {
		t.Fatal("the first view chunked nothing")
	}
	same := func(what string, v *View, log string) {
		t.Helper()
		a, b := v.Stats(), made.Stats()
		b.Reused, b.Chunked, b.Built = b.Reused+b.Chunked, 0, false
		b.StoredView = a.StoredView   // where it came from: checked below
		b.ViewWritten = a.ViewWritten // whether it was written: checked below
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: stats %+v, made %+v", what, a, b)
		}
		if log != madeLog {
			t.Errorf("%s: log %q, made %q", what, log, madeLog)
		}
		if !reflect.DeepEqual(v.Retriever().Chunks(), made.Retriever().Chunks()) {
			t.Errorf("%s: chunks differ", what)
		}
		if v.Retriever().Key() != made.Retriever().Key() {
			t.Errorf("%s: key %s, made %s", what, v.Retriever().Key(), made.Retriever().Key())
		}
		for _, p := range []string{"cache.py", "retry.py", "sub/app.kt", "bad.py", "latin.py"} {
			if g, w := v.Symbols().File(p), made.Symbols().File(p); !reflect.DeepEqual(g, w) {
				t.Errorf("%s: symbols of %s: %+v, made %+v", what, p, g, w)
			}
		}
		if g, w := v.Symbols().Resolve("backoff", "retry.py", nil, 5), made.Symbols().Resolve("backoff", "retry.py", nil, 5); !reflect.DeepEqual(g, w) || len(w) == 0 {
			t.Errorf("%s: resolve backoff: %v, made %v", what, g, w)
		}
		for _, q := range []string{"evict eldest", "def retry(f", "fun start", "backoff(i)"} {
			for _, mode := range []retrieve.Mode{retrieve.BM25, retrieve.Dense, retrieve.Hybrid} {
				qq := retrieve.Query{Text: q, K: 5, Mode: mode}
				g, err1 := v.Retriever().Search(ctx, qq)
				w, err2 := made.Retriever().Search(ctx, qq)
				if err1 != nil || err2 != nil || !reflect.DeepEqual(g, w) {
					t.Errorf("%s: %q %v: %v %v, made %v %v", what, q, mode, g, err1, w, err2)
				}
			}
		}
	}
	loaded, log := view(opts)
	if loaded.Stats().Chunked != 0 || loaded.Stats().Built || !loaded.Stats().StoredView || made.Stats().StoredView {
		t.Fatalf("the second view was made again: %+v", loaded.Stats())
	}
	if !made.Stats().ViewWritten || loaded.Stats().ViewWritten {
		t.Errorf("ViewWritten: made %v, read back %v; want true, false", made.Stats().ViewWritten, loaded.Stats().ViewWritten)
	}
	same("stored", loaded, log)

	// Without StoreViews: made from the records, the same view.
	plain := opts
	plain.StoreViews = ViewsNotStored
	v, log := view(plain)
	same("from records", v, log)

	// A changed file: made again (and stored anew), then read back.
	writeFiles(t, root, map[string]string{"retry.py": files["retry.py"] + "\ndef giveup():\n    pass\n"})
	made, madeLog = view(opts)
	if made.Stats().Chunked != 1 {
		t.Fatalf("after an edit chunked %d files, want 1", made.Stats().Chunked)
	}
	if len(made.Symbols().Resolve("giveup", "retry.py", nil, 5)) == 0 {
		t.Fatal("the edit's definition is missing")
	}
	loaded, log = view(opts)
	if loaded.Stats().Chunked != 0 {
		t.Fatalf("the view after the edit was not read back: %+v", loaded.Stats())
	}
	same("stored after an edit", loaded, log)

	// Damaged: a miss, made again.
	damaged := firstView(t, cache)
	b, _ := os.ReadFile(damaged)
	b[len(b)/2] ^= 0xff
	os.WriteFile(damaged, b, 0o644)
	if v, _ := view(opts); v.Stats().Reused != made.Stats().Reused+made.Stats().Chunked {
		t.Errorf("after damage: %+v", v.Stats())
	}
	again, log := view(opts)
	if again.Stats().Chunked != 0 {
		t.Errorf("the view made after damage was not stored: %+v", again.Stats())
	}
	same("stored after damage", again, log)
}

// TestStoredViewOnRepeat checks ViewsStoredOnRepeat: a view is stored the second time
// in a row its files are viewed, and read back from the third; an edit's version,
// viewed once, is not stored.
func TestStoredViewOnRepeat(t *testing.T) {
	root := alphaBetaFolder(t)
	cache := t.TempDir()
	opts := DefaultOptions()
	opts.RepoLSA, opts.StoreViews = true, ViewsStoredOnRepeat
	view := func() Stats {
		t.Helper()
		return folderView(t, root, cache, opts).Stats()
	}
	stored := func() int { return len(storedViews(cache)) }
	view()
	if stored() != 0 {
		t.Fatal("a view seen once was stored")
	}
	if st := view(); st.Reused != 2 || stored() != 1 {
		t.Fatalf("the second view of the same files: %+v, %d stored", st, stored())
	}
	writeFiles(t, root, map[string]string{"b.py": "def beta():\n    return 2\n"})
	view()
	if b, _ := os.ReadFile(firstView(t, cache)); len(b) == 0 {
		t.Fatal("no stored view")
	}
	before, _ := os.Stat(firstView(t, cache))
	view() // the edit's version a second time: stored now
	after, _ := os.Stat(firstView(t, cache))
	if os.SameFile(before, after) {
		t.Error("the edit's version was not stored on its second view")
	}
	if st := view(); st.Chunked != 0 || st.Built {
		t.Errorf("the third view was made: %+v", st)
	}
}

// alphaBetaFolder returns a new folder holding a.py (alpha) and b.py (beta, calling
// alpha), the two-file repository of the stored-view tests.
func alphaBetaFolder(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"a.py": "def alpha():\n    return 1\n", "b.py": "def beta():\n    return alpha()\n"})
	return root
}

// firstView returns the path of the one stored view under cache.
func firstView(t *testing.T, cache string) string {
	t.Helper()
	views := storedViews(cache)
	if len(views) != 1 {
		t.Fatalf("stored views %v, want one", views)
	}
	return views[0]
}

// TestPrepareView checks PrepareView: a View of the same files takes the stored view
// read ahead; one of other files drops it and is made from the files; a read no View
// takes is waited for by Close.
func TestPrepareView(t *testing.T) {
	root := alphaBetaFolder(t)
	cache := t.TempDir()
	opts := DefaultOptions()
	opts.RepoLSA, opts.StoreViews = true, ViewsStored
	view := func(prepare bool, o Options) *View {
		t.Helper()
		return preparedFolderView(t, root, cache, o, prepare)
	}
	made := view(true, opts) // nothing stored yet: made
	if made.Stats().Chunked != 2 {
		t.Fatalf("first view: %+v", made.Stats())
	}
	got := view(true, opts)
	if got.Stats().Chunked != 0 || !reflect.DeepEqual(got.Retriever().Chunks(), made.Retriever().Chunks()) {
		t.Fatalf("the view read ahead was not taken: %+v", got.Stats())
	}
	writeFiles(t, root, map[string]string{"b.py": "def beta():\n    return 2\n"})
	if v := view(true, opts); v.Stats().Chunked != 1 {
		t.Fatalf("after an edit: %+v, want b.py chunked", v.Stats())
	}
	// Read ahead and never taken: Close waits for the read.
	st := store.Open(cache)
	ix, err := Open(st, "o/r", opts)
	if err != nil {
		t.Fatal(err)
	}
	ix.PrepareView(snapshot.FolderName(root))
	ix.PrepareView(snapshot.FolderName(root)) // a second call for the name does nothing
	ix.Close()
	st.Close()
	ix.PrepareView("other") // after Close: nothing
}

// TestViewsPrepared: under ViewsPrepared a view reads back the stored view only when
// PrepareView asked for it, and no view is stored or recorded as the last one.
func TestViewsPrepared(t *testing.T) {
	root := alphaBetaFolder(t)
	cache := t.TempDir()
	opts := DefaultOptions()
	opts.RepoLSA, opts.Symbols, opts.StoreViews = true, true, ViewsStored
	made := folderView(t, root, cache, opts) // as `repoctx index`
	view0, before := oneStoredView(t, cache)
	opts.StoreViews = ViewsPrepared
	view := func(prepare bool) *View {
		t.Helper()
		return preparedFolderView(t, root, cache, opts, prepare)
	}
	if v := view(false); v.Stats().StoredView {
		t.Errorf("a view not prepared was read back: %+v", v.Stats())
	}
	v := view(true)
	if !v.Stats().StoredView || !reflect.DeepEqual(v.Retriever().Chunks(), made.Retriever().Chunks()) {
		t.Errorf("the prepared view was not read back: %+v", v.Stats())
	}
	writeFiles(t, root, map[string]string{"b.py": "def beta():\n    return 2\n"})
	if v := view(true); v.Stats().StoredView || v.Stats().Chunked != 1 {
		t.Errorf("after an edit: %+v, want b.py chunked, no stored view", v.Stats())
	}
	view(true)
	after, err := os.Stat(view0)
	if err != nil || !after.ModTime().Equal(before.ModTime()) || len(storedViews(cache)) != 1 {
		t.Errorf("a view was stored under ViewsPrepared (%v)", err)
	}
	// The files of the stored view again: still read back (no last view was recorded).
	writeFiles(t, root, map[string]string{"b.py": "def beta():\n    return alpha()\n"})
	if v := view(true); !v.Stats().StoredView {
		t.Errorf("the stored view's files again: %+v, want it read back", v.Stats())
	}
}

// TestViewsPreparedAfterOtherView: under ViewsPrepared (a server's start) the stored
// view is read back when it is of the files, even when the last view made of the
// folder was another (a one-shot query of other files or settings since the index).
func TestViewsPreparedAfterOtherView(t *testing.T) {
	root := alphaBetaFolder(t)
	cache := t.TempDir()
	opts := DefaultOptions()
	opts.RepoLSA, opts.Symbols, opts.StoreViews = true, true, ViewsStored
	folderView(t, root, cache, opts) // as `repoctx index`
	other := opts
	other.StoreViews, other.Chunk.MaxChars = ViewsStoredOnRepeat, 40
	folderView(t, root, cache, other) // as `repoctx query --max-chars 40`, once
	opts.StoreViews = ViewsPrepared
	if v := preparedFolderView(t, root, cache, opts, true); !v.Stats().StoredView {
		t.Errorf("the stored view of these files and settings was not read back: %+v", v.Stats())
	}
}

// TestStoredViewMaxFileBytes checks that a view stored under one file size limit
// (Options.MaxFileBytes) is not read back under another: the files it left out (or
// kept) differ.
func TestStoredViewMaxFileBytes(t *testing.T) {
	root := t.TempDir()
	big := "def big():\n" + strings.Repeat("    x = 'padding padding padding'\n", 60)
	writeFiles(t, root, map[string]string{"a.py": "def alpha():\n    return 1\n", "big.py": big})
	cache := t.TempDir()
	paths := func(maxBytes int) map[string]bool {
		t.Helper()
		opts := DefaultOptions()
		opts.RepoLSA, opts.StoreViews, opts.MaxFileBytes = true, ViewsStored, maxBytes
		got := map[string]bool{}
		for _, c := range folderView(t, root, cache, opts).Retriever().Chunks() {
			got[c.Path] = true
		}
		return got
	}
	if got := paths(len(big) / 2); got["big.py"] || !got["a.py"] {
		t.Fatalf("under a limit below big.py: files %v", got)
	}
	if got := paths(0); !got["big.py"] {
		t.Errorf("under the default limit: files %v, want big.py (a view stored under a smaller limit was read back)", got)
	}
	if got := paths(len(big) / 2); got["big.py"] {
		t.Errorf("under a limit below big.py again: files %v", got)
	}
}

// TestStoredViewWriteFault checks that a fault of the machine while a view is stored
// (a full or read-only cache disk) does not fail the view: it is counted, logged and
// returned, as the view made from the files.
func TestStoredViewWriteFault(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"a.py": "def alpha():\n    return 1\n"})
	cache := t.TempDir()
	defer func(f func(*store.Records, string, func(io.Writer) error) error) { putView = f }(putView)
	putView = func(*store.Records, string, func(io.Writer) error) error {
		return repoctx.WriteFault("write a stored view", &os.PathError{Op: "open", Path: "x.view", Err: syscall.ENOSPC})
	}
	opts := DefaultOptions()
	opts.RepoLSA, opts.StoreViews = true, ViewsStored
	var log strings.Builder
	opts.Log = &log
	for i := range 2 {
		if v := folderView(t, root, cache, opts); v.Stats().CacheWriteFailures != 1 || len(v.Retriever().Chunks()) == 0 {
			t.Errorf("view %d: %+v", i, v.Stats())
		}
	}
	if !strings.Contains(log.String(), "could not store the view") {
		t.Errorf("log %q", log.String())
	}
}

// TestStoredViewOtherDense checks that a stored view made without dense vectors
// (--dense none) put in the place of one with them (a cache file copied or renamed)
// is not read back as a view with them: its searches would leave the dense retriever
// out.
func TestStoredViewOtherDense(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"a.py": "def alpha():\n    return beta() + 1\n",
		"b.py": "def beta():\n    return 2\n\ndef gamma():\n    return alpha()\n",
	})
	cache := t.TempDir()
	view := func(dense retrieve.DenseKind) *View {
		t.Helper()
		opts := DefaultOptions()
		opts.RepoLSA, opts.StoreViews, opts.Dense = true, ViewsStored, dense
		return folderView(t, root, cache, opts)
	}
	if v := view(retrieve.DenseNone); v.Retriever().DenseInfo().Model != "" {
		t.Fatal("--dense none made vectors")
	}
	// The view without vectors, put back in the place of the one with them.
	none, err := os.ReadFile(firstView(t, cache))
	if err != nil {
		t.Fatal(err)
	}
	made := view(retrieve.DenseLSA)
	if made.Retriever().DenseInfo().Model == "" {
		t.Fatal("no vectors with LSA")
	}
	if err := os.WriteFile(firstView(t, cache), none, 0o644); err != nil {
		t.Fatal(err)
	}
	if v := view(retrieve.DenseLSA); v.Retriever().DenseInfo().Model != made.Retriever().DenseInfo().Model {
		t.Errorf("a view without vectors was read back for LSA: model %q, made %q", v.Retriever().DenseInfo().Model, made.Retriever().DenseInfo().Model)
	}
}

// TestStoredViewOnePerSnapshot checks that a snapshot keeps one stored view whatever
// the settings: one made under other settings replaces it, and is never read back
// under these.
func TestStoredViewOnePerSnapshot(t *testing.T) {
	root := alphaBetaFolder(t)
	cache := t.TempDir()
	view := func(o Options) Stats {
		t.Helper()
		return folderView(t, root, cache, o).Stats()
	}
	a := DefaultOptions()
	a.RepoLSA, a.StoreViews = true, ViewsStored
	b := a
	b.Dense, b.Symbols = retrieve.DenseNone, false
	view(a)
	if st := view(a); st.Built {
		t.Fatalf("not read back: %+v", st)
	}
	view(b) // stored in a's place
	if n := len(storedViews(cache)); n != 1 {
		t.Fatalf("%d stored views, want 1", n)
	}
	// Under a again: b's view is not a's, so a's is made and stored in its place; then
	// read back (the file stays).
	stat := func() os.FileInfo {
		fi, err := os.Stat(storedViews(cache)[0])
		if err != nil {
			t.Fatal(err)
		}
		return fi
	}
	before := stat()
	view(a)
	after := stat()
	if os.SameFile(before, after) {
		t.Error("b's stored view was taken for a's")
	}
	view(a)
	if !os.SameFile(after, stat()) || len(storedViews(cache)) != 1 {
		t.Error("a's stored view was not read back")
	}
}

// folderView makes the view of the folder root over a new index of "o/r" in the cache
// directory cache with opts (as a new process would).
func folderView(t *testing.T, root, cache string, opts Options) *View {
	t.Helper()
	snap, err := snapshot.OpenDir(root, snapshot.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := openView(context.Background(), snap, cache, "o/r", opts)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// preparedFolderView is folderView by an index of repository "o/r" that, when
// prepare is set, first asks for the folder's stored view to be read ahead
// (Index.PrepareView).
func preparedFolderView(t *testing.T, root, cache string, opts Options, prepare bool) (v *View) {
	t.Helper()
	withFolderIndex(t, cache, opts, func(ix *Index) {
		if prepare {
			ix.PrepareView(snapshot.FolderName(root))
		}
		var err error
		if v, err = ix.View(context.Background(), dirSnapshot(t, root)); err != nil {
			t.Fatal(err)
		}
	})
	return v
}

// updateFolder runs Index.Update of repository "o/r" on the folder root, as
// `repoctx index` does.
func updateFolder(t *testing.T, root, cache string, opts Options) (us UpdateStats) {
	t.Helper()
	withFolderIndex(t, cache, opts, func(ix *Index) {
		var err error
		if us, err = ix.Update(context.Background(), dirSnapshot(t, root)); err != nil {
			t.Fatal(err)
		}
	})
	return us
}

// withFolderIndex calls fn with the index of repository "o/r" in the store of cache,
// closed after.
func withFolderIndex(t *testing.T, cache string, opts Options, fn func(*Index)) {
	t.Helper()
	st := store.Open(cache)
	defer st.Close()
	ix, err := Open(st, "o/r", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	fn(ix)
}

// oneStoredView returns the one stored view file under cache and its stat (fatal
// when there is not exactly one).
func oneStoredView(t *testing.T, cache string) (string, os.FileInfo) {
	t.Helper()
	p := firstView(t, cache)
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return p, fi
}

// dirSnapshot opens the folder root as a snapshot.
func dirSnapshot(t *testing.T, root string) snapshot.Snapshot {
	t.Helper()
	snap, err := snapshot.OpenDir(root, snapshot.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// storedViews returns the stored view files under cache.
func storedViews(cache string) []string {
	views, _ := filepath.Glob(filepath.Join(cache, "*", "repos", "*", "*.view"))
	return views
}

// TestUpdateStoresView: Update under ViewsStored (`repoctx index`) keeps the stored
// view of the snapshot's files: after an edit its fast path (the repository's model
// stored) stores the new files' view, which a later view reads back; on unchanged
// files it stores nothing again.
func TestUpdateStoresView(t *testing.T) {
	root := alphaBetaFolder(t)
	cache := t.TempDir()
	opts := DefaultOptions()
	opts.RepoLSA, opts.Symbols, opts.StoreViews = true, true, ViewsStored
	update := func() UpdateStats {
		t.Helper()
		return updateFolder(t, root, cache, opts)
	}
	if us := update(); !us.Full {
		t.Fatalf("first update: %+v, want a full one", us)
	}
	writeFiles(t, root, map[string]string{"b.py": "def beta():\n    return 2\n"})
	if us := update(); us.Full || us.Chunked != 1 {
		t.Fatalf("after an edit: %+v, want the fast path", us)
	}
	view0, before := oneStoredView(t, cache)
	v := folderView(t, root, cache, opts)
	text := ""
	for _, c := range v.Retriever().Chunks() {
		text += c.Text
	}
	if !v.Stats().StoredView || !strings.Contains(text, "return 2") {
		t.Errorf("the view after the fast path's update was not read back: %+v", v.Stats())
	}
	update()
	if after, err := os.Stat(view0); err != nil || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("an update of unchanged files wrote the view again (%v)", err)
	}
}

// TestUpdateStoresMissingView: Update under ViewsStored stores the view again when
// the store says it is stored but its file is gone or is not that view (deleted,
// replaced by a damaged one): readers then make the view from the files on every
// run, and only `repoctx index` could put it back.
func TestUpdateStoresMissingView(t *testing.T) {
	root := alphaBetaFolder(t)
	cache := t.TempDir()
	opts := DefaultOptions()
	opts.RepoLSA, opts.Symbols, opts.StoreViews = true, true, ViewsStored
	update := func() {
		t.Helper()
		updateFolder(t, root, cache, opts)
	}
	update()
	view0 := firstView(t, cache)
	for _, damage := range []string{"deleted", "emptied", "other bytes"} {
		switch damage {
		case "deleted":
			os.Remove(view0)
		case "emptied":
			os.WriteFile(view0, nil, 0o644)
		case "other bytes":
			os.WriteFile(view0, make([]byte, 4096), 0o644)
		}
		update()
		if v := folderView(t, root, cache, opts); !v.Stats().StoredView {
			t.Errorf("view file %s: Update did not store the view again", damage)
		}
	}
}

// TestDecodeViewDamagedCount: a damaged run count in a stored view is refused before
// memory is asked for it (the checksum is checked beside the decoding, not before).
func TestDecodeViewDamagedCount(t *testing.T) {
	b := []byte(viewMagic)
	b = binary.AppendUvarint(b, 3)
	b = append(b, "key"...)
	for range 6 {
		b = binary.AppendUvarint(b, 1)
	}
	b = binary.AppendUvarint(b, 0) // parse error files
	b = binary.AppendUvarint(b, 0) // log lines
	// The table of files: its count damaged, 100,000 entries follow (600 KB), each a
	// record length, a chunk count, a path and a language; the count passes the bound
	// of 4 bytes per entry.
	b = binary.AppendUvarint(b, 140_000)
	for range 100_000 {
		b = append(b, 5, 1, 1, 'a', 1, 'k')
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := decodeView(b); err == nil {
		t.Fatal("a view with a damaged count was decoded")
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Errorf("decoding the damaged view allocated %d bytes", grew)
	}
}

// TestWriteViewChunkIDs checks that writeView refuses chunks whose IDs are not their
// files' chunker.ChunkID by position: a stored view's chunks are read back by position.
func TestWriteViewChunkIDs(t *testing.T) {
	ok := []chunker.Chunk{
		{ID: "a.py#0", Path: "a.py", Lang: "python", Text: "x = 1\n"},
		{ID: "a.py#1", Path: "a.py", Lang: "python", Text: "y = 2\n"},
		{ID: "b.py#0", Path: "b.py", Lang: "python", Text: "z = 3\n"},
	}
	for name, id := range map[string]string{"": "", "another ordinal": "a.py#2", "another path": "b.py#1", "no ordinal": "a.py"} {
		cs := slices.Clone(ok)
		if id != "" {
			cs[1].ID = id
		}
		rix, err := retrieve.New(cs, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = writeView(io.Discard, "k", Stats{}, nil, rix, nil)
		if (err == nil) != (id == "") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// viewer returns a function that opens the index of repository "o/r" in cache with
// opts, calls check with the view of the folder root, and closes the index.
func viewer(t *testing.T, root, cache string, opts Options) func(check func(v *View)) {
	return func(check func(v *View)) {
		t.Helper()
		withFolderIndex(t, cache, opts, func(ix *Index) {
			v, err := ix.View(context.Background(), dirSnapshot(t, root))
			if err != nil {
				t.Fatal(err)
			}
			check(v)
		})
	}
}

// fillerPython returns n small Python functions named after tag (about 40 bytes each).
func fillerPython(tag string, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "def %s%d(x):\n    return x + %d\n\n", tag, i, i)
	}
	return b.String()
}

// TestStoredViewDamagedRecord: a chunk record of a stored view is left out of the
// view's checksum and checked when it is decoded: a byte of one changed (in a block of
// the view's checksums that holds records only), the view is still read back, that
// file's chunks come without text, the others' with theirs, and the next view is made
// again from the records (then stored anew, the damage gone).
func TestStoredViewDamagedRecord(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"cache.py": "class Cache:\n    def get(self, key):\n        return self.items.get(key)\n",
		"retry.py": fillerPython("before", 800) + "def backoff(n):\n    return 2 ** n\n\ndef retry(f, times=3):\n    return f()\n\n" +
			fillerPython("after", 800),
	})
	cache := t.TempDir()
	opts := DefaultOptions()
	opts.RepoLSA, opts.StoreViews = true, ViewsStored
	view := viewer(t, root, cache, opts)
	view(func(v *View) {}) // made, stored
	path := firstView(t, cache)
	b, _ := os.ReadFile(path)
	at := bytes.Index(b, []byte("return 2 ** n"))
	if at < 0 {
		t.Fatal("no record text in the view file")
	}
	b[at+7] = '3'
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	view(func(v *View) {
		if !v.Stats().StoredView {
			t.Fatalf("a damaged record failed the whole view: %+v", v.Stats())
		}
		rix := v.Retriever()
		if c, ok := rix.Chunk("retry.py#0"); !ok || c.Text != "" || c.Path != "retry.py" {
			t.Errorf("the damaged record's chunk: %v %+v", ok, c)
		}
		if !strings.Contains(rix.FileText("cache.py"), "self.items.get") {
			t.Error("another file's record lost its text")
		}
	})
	view(func(v *View) {
		if v.Stats().StoredView {
			t.Fatal("the view with a damaged record was read back again")
		}
		if !strings.Contains(v.Retriever().FileText("retry.py"), "return 2 ** n") {
			t.Error("the view made again lacks the file's text")
		}
	})
	view(func(v *View) {
		if !v.Stats().StoredView || !strings.Contains(v.Retriever().FileText("retry.py"), "return 2 ** n") {
			t.Errorf("the view stored anew: %+v", v.Stats())
		}
	})
}

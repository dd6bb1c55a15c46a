package index

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/internal/atomicfile"
	"github.com/repoctx/repoctx/internal/ziptest"
	"github.com/repoctx/repoctx/retrieve"
	"github.com/repoctx/repoctx/snapshot"
	"github.com/repoctx/repoctx/store"
)

const sampleDir = "../testdata/sample"

// TestCachedSymbols: the symbols are stored and a new process reads back an equal table.
func TestCachedSymbols(t *testing.T) {
	src, err := snapshot.OpenDirSource(filepath.Join(sampleDir, "repositories-python-sample"), snapshot.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := src.Open(src.Names()[0])
	if err != nil {
		t.Fatal(err)
	}
	opts, cache := Options{Dense: retrieve.DenseNone, Symbols: true}, t.TempDir()
	a, err := openView(context.Background(), snap, cache, "", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := openView(context.Background(), snap, cache, "", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ra := a.Symbols().Resolve("parse_amount", "invoicing/importers.py", nil, 1)
	rb := b.Symbols().Resolve("parse_amount", "invoicing/importers.py", nil, 1)
	if len(ra) != 1 || len(rb) != 1 || *ra[0].Def != *rb[0].Def {
		t.Errorf("cached table differs: %+v vs %+v", ra, rb)
	}
	if b.Stats().Built || !a.Stats().Built {
		t.Errorf("built: first %v, second %v; want true, false", a.Stats().Built, b.Stats().Built)
	}
}

// TestOpenCancelled: a cancelled Open returns the context's error promptly and leaves
// no temporary file in the cache.
func TestOpenCancelled(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for i := range 400 {
		files[fmt.Sprintf("pkg/m%03d.py", i)] = strings.Repeat("def f(x):\n    return x + 1\n\n", 30)
	}
	writeFiles(t, dir, files)
	snap, err := snapshot.OpenDir(dir, snapshot.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	start := time.Now()
	r, err := openView(ctx, snap, cache, "", Options{})
	if err == nil {
		r.Close()
		t.Skip("the index was built before the cancel")
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Open after cancel: %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Open took %v after a cancel at 50ms", d)
	}
	assertNoTemps(t, cache)
}

// assertNoTemps fails if a temporary file or folder of a build or a store write is
// left under dir.
func assertNoTemps(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && (atomicfile.IsTemp(d.Name()) || strings.Contains(d.Name(), ".tmp-")) {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
}

// TestNewIndexAndDeferFlush: with DeferFlush, views write no segment until
// Store.Flush; a new index of the repository makes the next view from the store, the
// same as before, while the view of the old index keeps working.
func TestNewIndexAndDeferFlush(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.py": "def alpha():\n    return 1\n", "b.py": "def beta():\n    return alpha()\n"})
	snap, err := snapshot.OpenDir(dir, snapshot.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	st := store.Open(t.TempDir())
	defer st.Close()
	opts := Options{RepoLSA: true, Symbols: true, DeferFlush: true}
	segments := func() int {
		m, _ := filepath.Glob(filepath.Join(st.Records("x/new").Dir(), "*.seg"))
		return len(m)
	}
	ix, err := Open(st, "x/new", opts)
	if err != nil {
		t.Fatal(err)
	}
	a, err := ix.View(context.Background(), snap)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if n := segments(); n != 0 {
		t.Fatalf("%d segments written with DeferFlush", n)
	}
	if err := st.Flush(); err != nil || segments() != 1 {
		t.Fatalf("Flush: %v, %d segments, want 1", err, segments())
	}
	ix2, err := Open(st, "x/new", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer ix2.Close()
	b, err := ix2.View(context.Background(), snap)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.Stats().Chunked != 0 || b.Stats().Reused != 2 {
		t.Fatalf("a new index: chunked %d, reused %d; want every file from the store", b.Stats().Chunked, b.Stats().Reused)
	}
	ix.Close() // the old index's view stays usable
	ha, _ := a.Retriever().Search(context.Background(), retrieve.Query{Text: "alpha", K: 2, Mode: retrieve.Hybrid})
	hb, _ := b.Retriever().Search(context.Background(), retrieve.Query{Text: "alpha", K: 2, Mode: retrieve.Hybrid})
	if fmt.Sprint(ha) != fmt.Sprint(hb) || len(ha) == 0 {
		t.Fatalf("hits differ in a new index:\n%v\n%v", ha, hb)
	}
}

// TestChunkKeyGrammarVersion checks that a file's cached chunks are made again when
// its language's Spec.Version changes (a grammar or rewrite change), and only its.
func TestChunkKeyGrammarVersion(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.py": "def alpha():\n    return 1\n", "b.go": "package b\n\nfunc Beta() int { return 2 }\n"})
	snap, err := snapshot.OpenDir(dir, snapshot.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	opts, cache := Options{Languages: []string{"python", "go"}}, t.TempDir()
	open := func() Stats {
		t.Helper()
		r, err := openView(context.Background(), snap, cache, "x/grammar-version", opts) // a new index: from the store
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		return r.Stats()
	}
	if st := open(); st.Chunked != 2 {
		t.Fatalf("first open: chunked %d, want 2", st.Chunked)
	}
	if st := open(); st.Chunked != 0 || st.Reused != 2 {
		t.Fatalf("second open: chunked %d, reused %d; want 0, 2", st.Chunked, st.Reused)
	}
	spec := grammars.Lookup("go")
	old := spec.Version
	spec.Version = old + "+test"
	defer func() { spec.Version = old }()
	if st := open(); st.Chunked != 1 || st.Reused != 1 {
		t.Fatalf("after the Go spec's version changed: chunked %d, reused %d; want 1 (b.go), 1", st.Chunked, st.Reused)
	}
}

// TestSharedLSA: with Options.SharedLSA, a view of another snapshot made first waits
// for the model fitted on the named snapshot's own view and is embedded with it; the
// named snapshot's view is the one the model was fitted on, handed over once.
func TestSharedLSA(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, filepath.Join(root, "o__r-1111111"), map[string]string{"a.py": "def alpha(x):\n    return x + 1\n", "b.py": "def beta():\n    return alpha(2)\n"})
	writeFiles(t, filepath.Join(root, "o__r-2222222"), map[string]string{"a.py": "def alpha(x):\n    return x + 2\n", "c.py": "def gamma():\n    return 3\n"})
	src, err := snapshot.OpenDirSource(root, snapshot.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	st := store.Open(t.TempDir())
	defer st.Close()
	ix, err := Open(st, "o/r", Options{SharedLSA: &SharedLSA{Snapshot: "o__r-1111111", Open: src.Open}})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	second, _ := src.Open("o__r-2222222")
	v2, err := ix.View(context.Background(), second)
	if err != nil {
		t.Fatal(err)
	}
	defer v2.Close()
	first, _ := src.Open("o__r-1111111")
	v1, err := ix.View(context.Background(), first)
	if err != nil {
		t.Fatal(err)
	}
	defer v1.Close()
	if !v2.Stats().SharedLSA || v1.Stats().SharedLSA {
		t.Errorf("shared: second %v, first %v; want true, false (the first is the fit's own view)", v2.Stats().SharedLSA, v1.Stats().SharedLSA)
	}
	m1, m2 := v1.Retriever().DenseInfo().Model, v2.Retriever().DenseInfo().Model
	if m1 == "" || m1 != m2 {
		t.Errorf("models %q and %q, want the same", m1, m2)
	}
	again, err := ix.View(context.Background(), first)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if again == v1 || again.Retriever().DenseInfo().Model != m1 {
		t.Errorf("a second view of the model snapshot: same view %v, model %q", again == v1, again.Retriever().DenseInfo().Model)
	}
}

// TestSharedLSAPrefetch: a view waiting for the shared model chunks the snapshots of
// SharedLSA.Prefetch meanwhile (not its own nor the model's, each once), stopping once
// the fit returned; the prefetched snapshot's own view then reuses every file and
// equals the view of an index that prefetched nothing.
func TestSharedLSAPrefetch(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, filepath.Join(root, "o__r-1111111"), map[string]string{"a.py": "def alpha(x):\n    return x + 1\n", "b.py": "def beta():\n    return alpha(2)\n"})
	writeFiles(t, filepath.Join(root, "o__r-2222222"), map[string]string{"a.py": "def alpha(x):\n    return x + 2\n", "c.py": "def gamma():\n    return 3\n"})
	writeFiles(t, filepath.Join(root, "o__r-3333333"), map[string]string{"a.py": "def alpha(x):\n    return x + 3\n", "d.py": "class Delta:\n    def run(self):\n        return gamma()\n"})
	src, err := snapshot.OpenDirSource(root, snapshot.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"o__r-1111111", "o__r-2222222", "o__r-3333333"}
	open := func(prefetch []string) *Index {
		st := store.Open(t.TempDir())
		t.Cleanup(func() { st.Close() })
		ix, err := Open(st, "o/r", Options{Symbols: true, SharedLSA: &SharedLSA{Snapshot: names[0], Open: src.Open, Prefetch: prefetch}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
		return ix
	}
	ix := open(names)
	ix.prefetch(context.Background(), names[1]) // no fit under way: nothing
	if ix.prefetched != 0 || len(ix.files) != 0 {
		t.Fatalf("prefetched %d snapshots, %d files without a fit under way", ix.prefetched, len(ix.files))
	}
	fit := &sharedFit{done: make(chan struct{})} // a fit under way
	ix.shared = fit
	ix.prefetch(context.Background(), names[1])
	if ix.prefetched != 3 || len(ix.files) != 2 {
		t.Fatalf("prefetched %d names, %d files; want 3 names, the 2 files of %s", ix.prefetched, len(ix.files), names[2])
	}
	ix.shared = nil
	third, _ := src.Open(names[2])
	v, err := ix.View(context.Background(), third)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if st := v.Stats(); st.Chunked != 0 || st.Reused < 2 {
		t.Errorf("view of a prefetched snapshot: %d files chunked, %d reused; want 0 and its 2", st.Chunked, st.Reused)
	}
	plain := open(nil)
	w, err := plain.View(context.Background(), third)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	got, want := v.Retriever().Chunks(), w.Retriever().Chunks()
	if len(got) != len(want) {
		t.Fatalf("%d chunks, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i].ID != want[i].ID || got[i].Text != want[i].Text {
			t.Errorf("chunk %d: %s, want %s", i, got[i].ID, want[i].ID)
		}
	}
	if a, b := v.Symbols().File("d.py"), w.Symbols().File("d.py"); a == nil || b == nil || len(a.Defs) != len(b.Defs) || len(a.Defs) == 0 {
		t.Errorf("symbols of d.py: %v, want %v (definitions)", a, b)
	}
	close(fit.done)
}

// TestSharedLSAStoredView: under SharedLSA a stored view (Options.StoreViews) of a
// snapshot embedded with the shared model is read back by a later index over the same
// store, without fitting or viewing the model's snapshot, and is the view made from
// the files (chunks, model, rankings); after the model snapshot's files change it is
// a miss (its vectors are of the old fit). With folder snapshots and with inner zips
// (whose model key comes from the manifest an earlier run stored).
func TestSharedLSAStoredView(t *testing.T) {
	snaps := map[string]map[string]string{
		"o__r-1111111": {"a.py": "def alpha(x):\n    return x + 1\n", "b.py": "def beta():\n    return alpha(2)\n"},
		"o__r-2222222": {"a.py": "def alpha(x):\n    return x + 2\n", "c.py": "def gamma(items):\n    return sorted(items)\n"},
	}
	for _, layout := range []string{"folders", "zip"} {
		t.Run(layout, func(t *testing.T) {
			root := t.TempDir()
			for name, files := range snaps {
				writeFiles(t, filepath.Join(root, name), files)
			}
			source := func() snapshot.Source {
				t.Helper()
				var src snapshot.Source
				var err error
				if layout == "zip" {
					out := filepath.Join(t.TempDir(), "snaps.zip")
					ziptest.WriteZipOfFolders(t, root, out)
					src, err = snapshot.OpenZipSource(out, snapshot.Limits{})
				} else {
					src, err = snapshot.OpenDirSource(root, snapshot.Limits{})
				}
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { src.Close() })
				return src
			}
			cache := t.TempDir()
			// run views the second snapshot, then the model's, with a new index over
			// the cache (as a new process does).
			run := func(src snapshot.Source, storing ViewStoring) (second, first *View) {
				t.Helper()
				st := store.Open(cache)
				defer st.Close()
				ix, err := Open(st, "o/r", Options{Symbols: true, StoreViews: storing,
					SharedLSA: &SharedLSA{Snapshot: "o__r-1111111", Open: src.Open}})
				if err != nil {
					t.Fatal(err)
				}
				defer ix.Close() // its views stay usable
				vs := viewEach(t, ix, src, "o__r-2222222", "o__r-1111111")
				return vs[0], vs[1]
			}
			same := func(what string, got, want *View) {
				t.Helper()
				if !reflect.DeepEqual(got.Retriever().Chunks(), want.Retriever().Chunks()) {
					t.Errorf("%s: chunks differ", what)
				}
				if g, w := got.Retriever().DenseInfo().Model, want.Retriever().DenseInfo().Model; g != w || w == "" {
					t.Errorf("%s: model %q, made %q", what, g, w)
				}
				for _, q := range []string{"alpha", "sorted items", "def beta"} {
					for _, mode := range []retrieve.Mode{retrieve.Dense, retrieve.Hybrid} {
						qq := retrieve.Query{Text: q, K: 3, Mode: mode}
						g, err1 := got.Retriever().Search(context.Background(), qq)
						w, err2 := want.Retriever().Search(context.Background(), qq)
						if err1 != nil || err2 != nil || !reflect.DeepEqual(g, w) {
							t.Errorf("%s: %q %v: %v %v, made %v %v", what, q, mode, g, err1, w, err2)
						}
					}
				}
			}
			src := source()
			made, madeFirst := run(src, ViewsStoredOnRepeat)
			if !made.Stats().SharedLSA || made.Stats().StoredView || len(storedViews(cache)) != 0 {
				t.Fatalf("first run: %+v, %d stored views", made.Stats(), len(storedViews(cache)))
			}
			run(src, ViewsStoredOnRepeat) // the second run in a row stores both views
			if n := len(storedViews(cache)); n != 2 {
				t.Fatalf("%d views stored by the second run, want 2", n)
			}
			loaded, loadedFirst := run(src, ViewsStoredOnRepeat)
			if st := loaded.Stats(); !st.StoredView || !st.SharedLSA || st.Chunked != 0 {
				t.Fatalf("third run, second snapshot: %+v; want read back", st)
			}
			if !loadedFirst.Stats().StoredView {
				t.Errorf("third run, model snapshot: %+v; want read back", loadedFirst.Stats())
			}
			same("second snapshot", loaded, made)
			same("model snapshot", loadedFirst, madeFirst)

			// The model's snapshot changes: its fit is another, the stored view of the
			// second snapshot a miss.
			writeFiles(t, filepath.Join(root, "o__r-1111111"), map[string]string{"d.py": "def delta(items):\n    return items\n"})
			src = source()
			changed, _ := run(src, ViewsStored)
			if changed.Stats().StoredView {
				t.Fatal("a view embedded with the old fit was read back")
			}
			if changed.Retriever().DenseInfo().Model == made.Retriever().DenseInfo().Model {
				t.Error("the changed model snapshot's fit has the old model's ID")
			}
			if again, _ := run(src, ViewsStored); !again.Stats().StoredView {
				t.Errorf("the view embedded with the new fit was not read back: %+v", again.Stats())
			}
		})
	}
}

// TestSharedFitKeyOpenFails: when the model snapshot of SharedLSA cannot be opened,
// the views of the others (each fitting its own model) do not open it again one by
// one to work out the stored-view key.
func TestSharedFitKeyOpenFails(t *testing.T) {
	root := t.TempDir()
	names := []string{"o__r-2222222", "o__r-3333333", "o__r-4444444"}
	for i, n := range names {
		writeFiles(t, filepath.Join(root, n), map[string]string{"a.py": fmt.Sprintf("def alpha(x):\n    return x + %d\n", i)})
	}
	src, err := snapshot.OpenDirSource(root, snapshot.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	opened := 0
	open := func(name string) (snapshot.Snapshot, error) {
		if name == "o__r-1111111" {
			opened++
			return nil, fmt.Errorf("%s: %w", name, snapshot.ErrNoSnapshot)
		}
		return src.Open(name)
	}
	st := store.Open(t.TempDir())
	defer st.Close()
	ix, err := Open(st, "o/r", Options{StoreViews: ViewsStoredOnRepeat, SharedLSA: &SharedLSA{Snapshot: "o__r-1111111", Open: open}})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	viewEach(t, ix, src, names...)
	if opened > 2 { // once for the stored-view key, once for the fit
		t.Errorf("the model snapshot was opened %d times for %d views, want at most 2", opened, len(names))
	}
}

// viewEach makes ix's view of each of src's snapshots named, in order; they are
// closed when the test ends.
func viewEach(t *testing.T, ix *Index, src snapshot.Source, names ...string) []*View {
	t.Helper()
	var out []*View
	for _, name := range names {
		snap, err := src.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		v, err := ix.View(context.Background(), snap)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { v.Close() })
		out = append(out, v)
	}
	return out
}

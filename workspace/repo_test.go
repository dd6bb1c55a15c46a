package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/internal/atomicfile"
	"github.com/repoctx/repoctx/retrieve"
)

const sampleDir = "../testdata/sample"

// TestCachedSymbols: the symbols are stored and a new process reads back an equal table.
func TestCachedSymbols(t *testing.T) {
	src, err := OpenDirSource(filepath.Join(sampleDir, "repositories-python-sample"), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := src.Open(src.Names()[0])
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{CacheDir: t.TempDir(), Dense: retrieve.DenseNone, Symbols: true}
	a, err := Open(context.Background(), snap, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	newProcess()
	b, err := Open(context.Background(), snap, opts)
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

// TestSnapshotFS: both kinds of snapshot are file systems that fstest accepts, holding
// exactly the listed files with their contents.
func TestSnapshotFS(t *testing.T) {
	files := map[string]string{"a.py": "print(1)\n", "pkg/b.kt": "fun b() = 2\n", "pkg/sub/c.py": "c = 3\n", "pkg.txt": "x"}
	dir := t.TempDir()
	writeFiles(t, dir, files)
	var ents []zent
	for p, body := range files {
		ents = append(ents, zent{name: p, body: []byte(body)})
	}
	zsrc, _ := openZipData(t, buildOuter(t, inner{"o__r-1", buildZip(t, ents...)}), Limits{})
	zs, err := zsrc.Open("o__r-1")
	if err != nil {
		t.Fatal(err)
	}
	ds, err := OpenDir(dir, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []Snapshot{zs, ds} {
		if err := fstest.TestFS(s, "a.py", "pkg/b.kt", "pkg/sub/c.py", "pkg.txt"); err != nil {
			t.Errorf("%s: %v", s.Name(), err)
		}
		b, err := s.ReadFile("pkg/sub/c.py")
		if err != nil || string(b) != files["pkg/sub/c.py"] {
			t.Errorf("%s: ReadFile = %q, %v", s.Name(), b, err)
		}
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
	snap, err := OpenDir(dir, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	start := time.Now()
	r, err := Open(ctx, snap, Options{CacheDir: cache})
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

// TestForgetAndDeferFlush: with DeferFlush, views write no segment until Store.Flush;
// after Forget the next view comes from a new in-memory index (read from the store),
// the same as before, while the view opened earlier keeps working.
func TestForgetAndDeferFlush(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.py": "def alpha():\n    return 1\n", "b.py": "def beta():\n    return alpha()\n"})
	snap, err := OpenDir(dir, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{CacheDir: t.TempDir(), Repo: "x/forget", RepoLSA: true, Symbols: true, DeferFlush: true}
	segments := func() int {
		m, _ := filepath.Glob(filepath.Join(OpenStore(opts.CacheDir).repoDir(opts.Repo), "*"+segExt))
		return len(m)
	}
	a, err := Open(context.Background(), snap, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if n := segments(); n != 0 {
		t.Fatalf("%d segments written with DeferFlush", n)
	}
	if err := OpenStore(opts.CacheDir).Flush(); err != nil || segments() != 1 {
		t.Fatalf("Flush: %v, %d segments, want 1", err, segments())
	}
	Forget(opts)
	b, err := Open(context.Background(), snap, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if a.rep == b.rep || b.Stats().Chunked != 0 || b.Stats().Reused != 2 {
		t.Fatalf("after Forget: same index %v, chunked %d, reused %d; want a new index from the store", a.rep == b.rep, b.Stats().Chunked, b.Stats().Reused)
	}
	ha, _ := a.Index().Search(context.Background(), retrieve.Query{Text: "alpha", K: 2, Mode: retrieve.Hybrid})
	hb, _ := b.Index().Search(context.Background(), retrieve.Query{Text: "alpha", K: 2, Mode: retrieve.Hybrid})
	if fmt.Sprint(ha) != fmt.Sprint(hb) || len(ha) == 0 {
		t.Fatalf("hits differ after Forget:\n%v\n%v", ha, hb)
	}
	a.Close() // the forgotten index's last view: the registry keeps b's
	registry.Lock()
	kept := registry.m[b.rep.regKey] == b.rep
	registry.Unlock()
	if !kept {
		t.Fatal("closing a view of the forgotten index dropped the new one")
	}
}

// TestChunkKeyGrammarVersion checks that a file's cached chunks are made again when
// its language's Spec.Version changes (a grammar or rewrite change), and only its.
func TestChunkKeyGrammarVersion(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.py": "def alpha():\n    return 1\n", "b.go": "package b\n\nfunc Beta() int { return 2 }\n"})
	snap, err := OpenDir(dir, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{CacheDir: t.TempDir(), Repo: "x/grammar-version", Languages: []string{"python", "go"}}
	open := func() Stats {
		t.Helper()
		Forget(opts) // from the store, not the process's index
		r, err := Open(context.Background(), snap, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if err := OpenStore(opts.CacheDir).Flush(); err != nil {
			t.Fatal(err)
		}
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

package index

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/repoctx/repoctx/retrieve"
	"github.com/repoctx/repoctx/snapshot"
	"github.com/repoctx/repoctx/store"
)

// writeRepo writes files (path -> content) under dir and opens it.
func writeRepo(t *testing.T, dir string, files map[string]string) snapshot.Snapshot {
	t.Helper()
	for p, text := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := snapshot.OpenDir(dir, snapshot.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

var storeV1 = map[string]string{
	"pkg/a.py": "def alpha(x):\n    return x + 1\n",
	"pkg/b.py": "class Beta:\n    def one(self):\n        return 1\n\n    def two(self):\n        return 2\n",
	"pkg/c.py": "import os\n\nPATH = os.getcwd()\n",
}

var storeV2 = map[string]string{
	"pkg/a.py": storeV1["pkg/a.py"],
	"pkg/b.py": "class Beta:\n    def one(self):\n        return 10\n\n    def two(self):\n        return 2\n",
	"pkg/c.py": storeV1["pkg/c.py"],
	"pkg/d.py": "from pkg.a import alpha\n\nprint(alpha(2))\n",
}

// open opens snap as a revision of repository "o/r" with cache and opts' other fields.
func open(t *testing.T, snap snapshot.Snapshot, cache string, symbols bool) *View {
	t.Helper()
	r, err := openView(context.Background(), snap, cache, "o/r", Options{Symbols: symbols})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestStoreReuse: a second snapshot of a repository chunks only the files that
// changed, in the same process (from the repository's index) and in a new one (from
// the store); its chunks, symbols and vectors equal those of a build with an empty
// cache.
func TestStoreReuse(t *testing.T) {
	cache := t.TempDir()
	r1 := open(t, writeRepo(t, filepath.Join(t.TempDir(), "r-1"), storeV1), cache, true)
	if st := r1.Stats(); st.Chunked != 3 || st.Reused != 0 || !st.Built {
		t.Errorf("first snapshot: %+v", st)
	}
	snap2 := writeRepo(t, filepath.Join(t.TempDir(), "r-2"), storeV2)
	r2 := open(t, snap2, cache, true)
	if st := r2.Stats(); st.Chunked != 2 || st.Reused != 2 {
		t.Errorf("second snapshot: chunked %d, reused %d; want 2 (b.py changed, d.py new), 2", st.Chunked, st.Reused)
	}
	again := open(t, snap2, cache, true)
	if st := again.Stats(); st.Chunked != 0 || st.Reused != 4 || st.Built {
		t.Errorf("a new process: %+v, want every file and the model from the store", st)
	}
	if d := again.Retriever().DenseInfo(); d.Embedded != 0 || d.Cached != d.Vectors {
		t.Errorf("a new process embedded %d of %d chunks", d.Embedded, d.Vectors)
	}
	fresh := open(t, snap2, t.TempDir(), true)
	for _, r := range []*View{r2, again} {
		if !reflect.DeepEqual(r.Retriever().Chunks(), fresh.Retriever().Chunks()) {
			t.Errorf("chunks differ from a fresh build")
		}
		got := r.Symbols().Resolve("alpha", "pkg/d.py", nil, 2)
		want := fresh.Symbols().Resolve("alpha", "pkg/d.py", nil, 2)
		if len(got) != 1 || !reflect.DeepEqual(got, want) {
			t.Errorf("symbols differ from a fresh build: %+v vs %+v", got, want)
		}
		q := retrieve.Query{Text: "def one(self): return", K: 4}
		h1, _ := r.Retriever().Search(context.Background(), q)
		h2, _ := fresh.Retriever().Search(context.Background(), q)
		if !reflect.DeepEqual(h1, h2) {
			t.Errorf("hybrid hits differ from a fresh build: %v vs %v", h1, h2)
		}
	}
}

// segments returns the segment files of the cache.
func segments(t *testing.T, cache string) []string {
	t.Helper()
	segs, _ := filepath.Glob(filepath.Join(cache, store.DirName, "repos", "*", "*.seg"))
	return segs
}

// TestStoreDamage: a damaged segment is never misread: a flipped payload byte is a
// miss for that record, a torn or garbage segment is ignored, and a FIFO named like a
// segment is not opened (it would block); the files are rebuilt.
func TestStoreDamage(t *testing.T) {
	cache := t.TempDir()
	snap := writeRepo(t, filepath.Join(t.TempDir(), "r-1"), storeV1)
	want := open(t, snap, cache, false).Retriever().Chunks()
	segs := segments(t, cache)
	if len(segs) != 1 {
		t.Fatalf("segments %v", segs)
	}
	b, _ := os.ReadFile(segs[0])
	for i := len("repoctx-segment-2\n") + 200; i < len(b)/2; i += 97 {
		b[i] ^= 0x20
	}
	os.WriteFile(segs[0], b, 0o644)
	dir := filepath.Dir(segs[0])
	os.WriteFile(filepath.Join(dir, "seg-torn.seg"), b[:len(b)/2], 0o644)
	os.WriteFile(filepath.Join(dir, "seg-garbage.seg"), []byte("not a segment at all"), 0o644)
	if err := syscall.Mkfifo(filepath.Join(dir, "seg-fifo.seg"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := open(t, snap, cache, false)
	if !reflect.DeepEqual(r.Retriever().Chunks(), want) {
		t.Errorf("chunks after damage differ from the original build")
	}
	if st := r.Stats(); st.Chunked == 0 {
		t.Errorf("no file was rebuilt after damage: %+v", st)
	}
	// cache stats counts the torn and the garbage segment (the one with flipped
	// payload bytes has an intact footer: its records fail their own checksums).
	cs, err := store.Stat(cache)
	if err != nil || len(cs.Repos) != 1 || cs.Repos[0].Damaged != 2 {
		t.Errorf("Stat after damage: %+v, %v; want one repository with 2 damaged segments", cs.Repos, err)
	}
}

// TestDeadTempsRemoved: a temporary segment file a killed run left is removed when
// the repository is next opened; one a live writer holds is kept.
func TestDeadTempsRemoved(t *testing.T) {
	cache := t.TempDir()
	snap := writeRepo(t, filepath.Join(t.TempDir(), "r-1"), storeV1)
	open(t, snap, cache, false)
	dir := filepath.Dir(segments(t, cache)[0])
	dead := filepath.Join(dir, ".seg-1.seg.tmp-111")
	live := filepath.Join(dir, ".seg-2.seg.tmp-222")
	os.WriteFile(dead, []byte("half"), 0o644)
	os.WriteFile(live, []byte("half"), 0o644)
	f, err := os.Open(live)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
	if cs, _ := store.Stat(cache); cs.Temps != 2 {
		t.Errorf("Stat counts %d temporary files, want 2", cs.Temps)
	}
	open(t, snap, cache, false)
	if _, err := os.Stat(dead); err == nil {
		t.Errorf("a dead temporary file was kept")
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live writer's temporary file was removed")
	}
}

// TestGCEvictsLeastRecentlyUsed: under a cap, whole repositories are evicted least
// recently used first, never one a process has open; Clear removes all unused.
func TestGCEvictsLeastRecentlyUsed(t *testing.T) {
	cache := t.TempDir()
	var sizes []int64
	var open []*store.Store
	for i, name := range []string{"o/first", "o/second", "o/third"} {
		files := map[string]string{}
		for f := range 30 {
			files[fmt.Sprintf("m%02d.py", f)] = strings.Repeat(fmt.Sprintf("def f%d_%d(x):\n    return x + %d\n\n", i, f, f), 40)
		}
		st := store.Open(cache)
		open = append(open, st)
		ix, err := Open(st, name, Options{})
		if err != nil {
			t.Fatal(err)
		}
		r, err := ix.View(context.Background(), writeRepo(t, filepath.Join(t.TempDir(), fmt.Sprint("r-", i)), files))
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
		ix.Close()
		cs, _ := store.Stat(cache)
		sizes = append(sizes, cs.Bytes)
		// Distinct "used" times, oldest first.
		when := time.Now().Add(-time.Duration(3-i) * time.Hour)
		os.Chtimes(filepath.Join(st.Records(name).Dir(), "used"), when, when)
	}
	// This process holds all three open (their stores are open): nothing can go.
	res, err := store.GC(cache, sizes[2]/2)
	if err != nil || len(res.Evicted) != 0 || len(res.Kept) == 0 {
		t.Fatalf("GC with every repository open: %+v %v", res, err)
	}
	for _, st := range open {
		st.Close()
	}
	res, err = store.GC(cache, sizes[2]-sizes[0]/2)
	if err != nil || len(res.Evicted) != 1 || res.Evicted[0] != "o/first" {
		t.Fatalf("GC: %+v %v, want o/first evicted", res, err)
	}
	if cs, _ := store.Stat(cache); cs.Bytes > sizes[2]-sizes[0]/2 || len(cs.Repos) != 2 {
		t.Errorf("after GC: %d bytes, %d repositories", cs.Bytes, len(cs.Repos))
	}
	if res, _ := store.Clear(cache); len(res.Evicted) != 2 {
		t.Errorf("Clear evicted %v", res.Evicted)
	}
}

// TestTwoProcesses: two processes fill one cache directory at once (the same
// repository, different snapshots) and both finish; a third reads everything from the
// store.
func TestTwoProcesses(t *testing.T) {
	if os.Getenv("REPOCTX_STORE_CHILD") != "" {
		return
	}
	cache := t.TempDir()
	dirs := []string{filepath.Join(t.TempDir(), "r-1"), filepath.Join(t.TempDir(), "r-2")}
	writeRepo(t, dirs[0], storeV1)
	writeRepo(t, dirs[1], storeV2)
	var cmds []*exec.Cmd
	outs := make([]bytes.Buffer, len(dirs))
	for i, d := range dirs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestStoreChild$", "-test.v")
		cmd.Env = append(os.Environ(), "REPOCTX_STORE_CHILD="+d, "REPOCTX_STORE_CACHE="+cache)
		cmd.Stdout, cmd.Stderr = &outs[i], &outs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("child %d: %v\n%s", i, err, outs[i].String())
		}
	}
	defer func() {
		if t.Failed() {
			for i := range outs {
				t.Logf("child %d:\n%s", i, outs[i].String())
			}
			ents, _ := os.ReadDir(store.Open(cache).Records("o/r").Dir())
			for _, e := range ents {
				if fi, err := e.Info(); err == nil {
					t.Logf("store file %s %d bytes", e.Name(), fi.Size())
				}
			}
		}
	}()
	for i, d := range dirs {
		snap, _ := snapshot.OpenDir(d, snapshot.Limits{})
		r := open(t, snap, cache, true)
		if st := r.Stats(); st.Chunked != 0 {
			t.Errorf("snapshot %d: %d files chunked after the two processes stored them", i, st.Chunked)
		}
	}
}

// TestStoreChild is the child process of TestTwoProcesses.
func TestStoreChild(t *testing.T) {
	dir := os.Getenv("REPOCTX_STORE_CHILD")
	if dir == "" {
		t.Skip("child of TestTwoProcesses only")
	}
	snap, err := snapshot.OpenDir(dir, snapshot.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := openView(context.Background(), snap, os.Getenv("REPOCTX_STORE_CACHE"), "o/r", Options{Symbols: true, Log: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("stats: %+v", r.Stats())
	r.Close()
}

// TestStoredVectorsInPart: with the repository's LSA model (Options.RepoLSA), a new
// process viewing a later snapshot reads the vectors of its unchanged chunks from the
// store and embeds the others; its dense ranking equals that of the same two
// snapshots viewed in one process from an empty cache.
func TestStoredVectorsInPart(t *testing.T) {
	ctx := context.Background()
	opts := Options{RepoLSA: true, StoreViews: ViewsNotStored}
	snap1 := writeRepo(t, filepath.Join(t.TempDir(), "r-1"), storeV1)
	snap2 := writeRepo(t, filepath.Join(t.TempDir(), "r-2"), storeV2)
	cache := t.TempDir()
	r1, err := openView(ctx, snap1, cache, "o/r", opts)
	if err != nil {
		t.Fatal(err)
	}
	r1.Close()
	r2, err := openView(ctx, snap2, cache, "o/r", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if d := r2.Retriever().DenseInfo(); d.Cached == 0 || d.Embedded == 0 {
		t.Fatalf("%d vectors from the store and %d embedded; want some of each", d.Cached, d.Embedded)
	}
	st := store.Open(t.TempDir())
	defer st.Close()
	ix, err := Open(st, "o/r", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.View(ctx, snap1); err != nil {
		t.Fatal(err)
	}
	want, err := ix.View(ctx, snap2)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"def one(self): return", "alpha", "import os PATH", "class Beta"} {
		query := retrieve.Query{Text: q, K: 8, Mode: retrieve.Dense}
		h1, _ := r2.Retriever().Search(ctx, query)
		h2, _ := want.Retriever().Search(ctx, query)
		if len(h1) == 0 || !reflect.DeepEqual(h1, h2) {
			t.Fatalf("query %q: %v, want %v", q, h1, h2)
		}
	}
}

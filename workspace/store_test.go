package workspace

import (
	"bytes"
	"cmp"
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
)

// writeRepo writes files (path -> content) under dir and opens it.
func writeRepo(t *testing.T, dir string, files map[string]string) Snapshot {
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
	snap, err := OpenDir(dir, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// newProcess forgets this process's repositories and stores, as if a new process
// started (the cache directory on disk stays).
func newProcess() {
	registry.Lock()
	registry.m, registry.idle = map[string]*repository{}, nil
	registry.Unlock()
	storeSet.Lock()
	for _, s := range storeSet.m {
		for _, r := range s.repos {
			if r.lock != nil {
				r.lock.Close()
			}
			for _, seg := range r.segs {
				seg.f.Close()
			}
		}
	}
	storeSet.m = map[string]*Store{}
	storeSet.Unlock()
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
func open(t *testing.T, snap Snapshot, cache string, symbols bool) *Repo {
	t.Helper()
	r, err := Open(context.Background(), snap, Options{Repo: "o/r", CacheDir: cache, Symbols: symbols})
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
	newProcess()
	again := open(t, snap2, cache, true)
	if st := again.Stats(); st.Chunked != 0 || st.Reused != 4 || st.Built {
		t.Errorf("a new process: %+v, want every file and the model from the store", st)
	}
	if d := again.Index().DenseInfo(); d.Embedded != 0 || d.Cached != d.Vectors {
		t.Errorf("a new process embedded %d of %d chunks", d.Embedded, d.Vectors)
	}
	newProcess()
	fresh := open(t, snap2, t.TempDir(), true)
	for _, r := range []*Repo{r2, again} {
		if !reflect.DeepEqual(r.Index().Chunks(), fresh.Index().Chunks()) {
			t.Errorf("chunks differ from a fresh build")
		}
		got := r.Symbols().Resolve("alpha", "pkg/d.py", nil, 2)
		want := fresh.Symbols().Resolve("alpha", "pkg/d.py", nil, 2)
		if len(got) != 1 || !reflect.DeepEqual(got, want) {
			t.Errorf("symbols differ from a fresh build: %+v vs %+v", got, want)
		}
		q := retrieve.Query{Text: "def one(self): return", K: 4}
		h1, _ := r.Index().Search(context.Background(), q)
		h2, _ := fresh.Index().Search(context.Background(), q)
		if !reflect.DeepEqual(h1, h2) {
			t.Errorf("hybrid hits differ from a fresh build: %v vs %v", h1, h2)
		}
	}
}

// segments returns the segment files of the cache.
func segments(t *testing.T, cache string) []string {
	t.Helper()
	segs, _ := filepath.Glob(filepath.Join(cache, StoreDir, "repos", "*", "*"+segExt))
	return segs
}

// TestStoreDamage: a damaged segment is never misread: a flipped payload byte is a
// miss for that record, a torn or garbage segment is ignored, and a FIFO named like a
// segment is not opened (it would block); the files are rebuilt.
func TestStoreDamage(t *testing.T) {
	cache := t.TempDir()
	snap := writeRepo(t, filepath.Join(t.TempDir(), "r-1"), storeV1)
	want := open(t, snap, cache, false).Index().Chunks()
	segs := segments(t, cache)
	if len(segs) != 1 {
		t.Fatalf("segments %v", segs)
	}
	b, _ := os.ReadFile(segs[0])
	for i := len(segMagic) + 200; i < len(b)/2; i += 97 {
		b[i] ^= 0x20
	}
	os.WriteFile(segs[0], b, 0o644)
	dir := filepath.Dir(segs[0])
	os.WriteFile(filepath.Join(dir, "seg-torn"+segExt), b[:len(b)/2], 0o644)
	os.WriteFile(filepath.Join(dir, "seg-garbage"+segExt), []byte("not a segment at all"), 0o644)
	if err := syscall.Mkfifo(filepath.Join(dir, "seg-fifo"+segExt), 0o644); err != nil {
		t.Fatal(err)
	}
	newProcess()
	r := open(t, snap, cache, false)
	if !reflect.DeepEqual(r.Index().Chunks(), want) {
		t.Errorf("chunks after damage differ from the original build")
	}
	if st := r.Stats(); st.Chunked == 0 {
		t.Errorf("no file was rebuilt after damage: %+v", st)
	}
	// cache stats counts the torn and the garbage segment (the one with flipped
	// payload bytes has an intact footer: its records fail their own checksums).
	cs, err := Stat(cache)
	if err != nil || len(cs.Repos) != 1 || cs.Repos[0].Damaged != 2 {
		t.Errorf("Stat after damage: %+v, %v; want one repository with 2 damaged segments", cs.Repos, err)
	}
}

// TestOldFormatsRemoved: a cache written by an older version (per-snapshot index
// folders, the one-file-per-record store) is removed, never read.
func TestOldFormatsRemoved(t *testing.T) {
	cache := t.TempDir()
	old := []string{"store/chunks/ab/cdef", "symbols/sym1-x.gob", "embeddings/embeddings.bolt",
		"0123456789abcdef0123456789abcdef/manifest.json", ".0123456789abcdef0123456789abcdef.tmp-1/bleve/x"}
	for _, p := range old {
		full := filepath.Join(cache, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		os.WriteFile(full, []byte("old"), 0o644)
	}
	os.WriteFile(filepath.Join(cache, "keep.txt"), []byte("not ours"), 0o644)
	os.MkdirAll(filepath.Join(cache, "models", "x"), 0o755)
	if cs, _ := Stat(cache); cs.OldBytes == 0 {
		t.Errorf("Stat does not see the old formats")
	}
	newProcess()
	open(t, writeRepo(t, filepath.Join(t.TempDir(), "r-1"), storeV1), cache, false)
	for _, p := range old {
		if _, err := os.Stat(filepath.Join(cache, strings.Split(p, "/")[0])); err == nil {
			t.Errorf("%s is still there", p)
		}
	}
	for _, p := range []string{"keep.txt", "models/x"} {
		if _, err := os.Stat(filepath.Join(cache, p)); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
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
	if cs, _ := Stat(cache); cs.Temps != 2 {
		t.Errorf("Stat counts %d temporary files, want 2", cs.Temps)
	}
	newProcess()
	open(t, snap, cache, false)
	if _, err := os.Stat(dead); err == nil {
		t.Errorf("a dead temporary file was kept")
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live writer's temporary file was removed")
	}
}

// TestTempBeforeItsLock: a cleaner that removes a segment writer's temporary file
// between its creation and its writer's lock (another process's start or gc) costs
// the writer a new temporary file, not the segment; an empty file nobody has locked is
// removed at once.
func TestTempBeforeItsLock(t *testing.T) {
	dir := t.TempDir()
	defer func() { afterTempCreated = nil }()
	cleaned := 0
	afterTempCreated = func(string) {
		if cleaned < 2 {
			cleaned++
			removeDeadTemps(dir)
		}
	}
	k := recKey{kindWalk, [32]byte{1}}
	if err := writeSegment(filepath.Join(dir, "seg-1.seg"), []recKey{k}, map[recKey][]byte{k: []byte("state")}, map[recKey]recLoc{}); err != nil {
		t.Fatalf("a segment write with a cleaner before its lock, twice: %v", err)
	}
	if cleaned != 2 {
		t.Fatalf("the cleaner ran %d times, want 2", cleaned)
	}
	if _, _, err := openSegment(filepath.Join(dir, "seg-1.seg")); err != nil {
		t.Fatal(err)
	}
	afterTempCreated = nil
	empty := filepath.Join(dir, ".seg-2.seg.tmp-333")
	os.WriteFile(empty, nil, 0o644)
	removeDeadTemps(dir)
	if _, err := os.Stat(empty); err == nil {
		t.Error("an empty temporary file nobody has locked was kept")
	}
}

// TestSegmentWritesBesideACleaner: segment writes never lose their file to a cleaner
// removing dead temporary files at the same time (another process's start or gc):
// the writer's lock covers its file from creation to rename.
func TestSegmentWritesBesideACleaner(t *testing.T) {
	dir := t.TempDir()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				removeDeadTemps(dir)
			}
		}
	}()
	k := recKey{kindWalk, [32]byte{1}}
	recs := map[recKey][]byte{k: []byte("state")}
	failed := 0
	var first error
	for i := range 1000 {
		if err := writeSegment(filepath.Join(dir, fmt.Sprintf("seg-%d.seg", i)), []recKey{k}, recs, map[recKey]recLoc{}); err != nil {
			failed++
			first = cmp.Or(first, err)
		}
	}
	close(stop)
	<-done
	if failed > 0 {
		t.Errorf("%d of 1000 segment writes failed beside a cleaner; the first: %v", failed, first)
	}
}

// TestGCEvictsLeastRecentlyUsed: under a cap, whole repositories are evicted least
// recently used first, never one a process has open; Clear removes all unused.
func TestGCEvictsLeastRecentlyUsed(t *testing.T) {
	cache := t.TempDir()
	var sizes []int64
	for i, name := range []string{"o/first", "o/second", "o/third"} {
		files := map[string]string{}
		for f := range 30 {
			files[fmt.Sprintf("m%02d.py", f)] = strings.Repeat(fmt.Sprintf("def f%d_%d(x):\n    return x + %d\n\n", i, f, f), 40)
		}
		r, err := Open(context.Background(), writeRepo(t, filepath.Join(t.TempDir(), fmt.Sprint("r-", i)), files), Options{Repo: name, CacheDir: cache})
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
		cs, _ := Stat(cache)
		sizes = append(sizes, cs.Bytes)
		// Distinct "used" times, oldest first.
		dir := filepath.Join(cache, StoreDir, "repos", repoDirName(name))
		when := time.Now().Add(-time.Duration(3-i) * time.Hour)
		os.Chtimes(filepath.Join(dir, "used"), when, when)
	}
	// This process holds all three open (its registry keeps them): nothing can go.
	res, err := GC(cache, sizes[2]/2)
	if err != nil || len(res.Evicted) != 0 || len(res.Kept) == 0 {
		t.Fatalf("GC with every repository open: %+v %v", res, err)
	}
	newProcess()
	res, err = GC(cache, sizes[2]-sizes[0]/2)
	if err != nil || len(res.Evicted) != 1 || res.Evicted[0] != "o/first" {
		t.Fatalf("GC: %+v %v, want o/first evicted", res, err)
	}
	if cs, _ := Stat(cache); cs.Bytes > sizes[2]-sizes[0]/2 || len(cs.Repos) != 2 {
		t.Errorf("after GC: %d bytes, %d repositories", cs.Bytes, len(cs.Repos))
	}
	if res, _ := Clear(cache); len(res.Evicted) != 2 {
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
			ents, _ := os.ReadDir(OpenStore(cache).repoDir("o/r"))
			for _, e := range ents {
				if fi, err := e.Info(); err == nil {
					t.Logf("store file %s %d bytes", e.Name(), fi.Size())
				}
			}
		}
	}()
	newProcess()
	for i, d := range dirs {
		snap, _ := OpenDir(d, Limits{})
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
	snap, err := OpenDir(dir, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Open(context.Background(), snap, Options{Repo: "o/r", CacheDir: os.Getenv("REPOCTX_STORE_CACHE"), Symbols: true, Log: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("stats: %+v", r.Stats())
	r.Close()
}

// TestCompactKeepsLatest: merging a repository's segments keeps the latest payload of
// a record written again under its key (a folder's state), the one readers saw.
func TestCompactKeepsLatest(t *testing.T) {
	cache := t.TempDir()
	rs := OpenStore(cache).repo("o/r")
	k := recKey{kindWalk, [32]byte{7}}
	for i := range compactLimit + 2 {
		rs.put(k, []byte(fmt.Sprintf("state %d", i)))
		if _, err := rs.flush(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond) // distinct segment names
	}
	want := fmt.Sprintf("state %d", compactLimit+1)
	newProcess()
	if b, _ := OpenStore(cache).repo("o/r").get(k); string(b) != want {
		t.Fatalf("before compaction: %q, want %q", b, want)
	}
	if !compactRepo(OpenStore(cache).repoDir("o/r")) {
		t.Fatal("not compacted")
	}
	newProcess()
	if b, _ := OpenStore(cache).repo("o/r").get(k); string(b) != want {
		t.Errorf("after compaction: %q, want %q", b, want)
	}
}

// TestMappedSegmentTruncated: a segment truncated under a process that has it mapped
// (another program's doing: repoctx never rewrites a segment) makes its records
// misses, not a SIGBUS; a payload read before keeps its bytes when the file's are
// overwritten in place.
func TestMappedSegmentTruncated(t *testing.T) {
	cache := t.TempDir()
	rs := OpenStore(cache).repo("o/t")
	k1, k2 := recKey{kindWalk, [32]byte{1}}, recKey{kindWalk, [32]byte{2}}
	rs.put(k1, bytes.Repeat([]byte("a"), 10000))
	rs.put(k2, bytes.Repeat([]byte("b"), 10000))
	if _, err := rs.flush(); err != nil {
		t.Fatal(err)
	}
	newProcess()
	r := OpenStore(cache).repo("o/t")
	got, ok := r.get(k1)
	if !ok || len(got) != 10000 {
		t.Fatalf("get before the damage: %d bytes, %v", len(got), ok)
	}
	segs, _ := filepath.Glob(filepath.Join(OpenStore(cache).repoDir("o/t"), "*"+segExt))
	if len(segs) != 1 {
		t.Fatalf("%d segments, want 1", len(segs))
	}
	f, err := os.OpenFile(segs[0], os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(bytes.Repeat([]byte("z"), 20000), 0); err != nil { // overwritten in place
		t.Fatal(err)
	}
	if string(got) != strings.Repeat("a", 10000) {
		t.Error("a payload read before changed with the file's bytes")
	}
	if err := f.Truncate(0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if b, ok := r.get(k2); ok {
		t.Fatalf("get after the truncation: %d bytes, found", len(b))
	}
}

package store

import (
	"bytes"
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"
)

// TestOldFormatsRemoved: a cache written by an older version (per-snapshot index
// folders, the one-file-per-record store) is removed when a store of its directory is
// opened, never read.
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
	Open(cache).Close() // a process opening the cache directory removes them
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
	k := Key{Kind: KindWalk, Hash: [32]byte{1}}
	written, err := writeSegment(filepath.Join(dir, "seg-1.seg"), []Key{k}, func(Key) ([]byte, bool) { return []byte("state"), true }, map[Key]recLoc{})
	if err != nil {
		t.Fatalf("a segment write with a cleaner before its lock, twice: %v", err)
	}
	written.Close()
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
	k := Key{Kind: KindWalk, Hash: [32]byte{1}}
	recs := map[Key][]byte{k: []byte("state")}
	failed := 0
	var first error
	for i := range 1000 {
		written, err := writeSegment(filepath.Join(dir, fmt.Sprintf("seg-%d.seg", i)), []Key{k}, func(k Key) ([]byte, bool) { return recs[k], true }, map[Key]recLoc{})
		if err != nil {
			failed++
			first = cmp.Or(first, err)
			continue
		}
		written.Close()
	}
	close(stop)
	<-done
	if failed > 0 {
		t.Errorf("%d of 1000 segment writes failed beside a cleaner; the first: %v", failed, first)
	}
}

// TestCompactKeepsLatest: merging a repository's segments keeps the latest payload of
// a record written again under its key (a folder's state), the one readers saw.
func TestCompactKeepsLatest(t *testing.T) {
	cache := t.TempDir()
	rs := Open(cache).Records("o/r")
	k := Key{Kind: KindWalk, Hash: [32]byte{7}}
	for i := range compactLimit + 2 {
		rs.Put(k, []byte(fmt.Sprintf("state %d", i)))
		if _, err := rs.Flush(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond) // distinct segment names
	}
	want := fmt.Sprintf("state %d", compactLimit+1)
	if b, _ := Open(cache).Records("o/r").Get(k); string(b) != want {
		t.Fatalf("before compaction: %q, want %q", b, want)
	}
	if !compactRepo(Open(cache).repoDir("o/r")) {
		t.Fatal("not compacted")
	}
	if b, _ := Open(cache).Records("o/r").Get(k); string(b) != want {
		t.Errorf("after compaction: %q, want %q", b, want)
	}
}

// TestMappedSegmentTruncated: a segment truncated under a process that has it mapped
// (another program's doing: repoctx never rewrites a segment) makes its records
// misses, not a SIGBUS, whether its footer (read in place from the mapping) is looked
// through or read into the index; a payload read before keeps its bytes when the
// file's are overwritten in place.
func TestMappedSegmentTruncated(t *testing.T) {
	cache := t.TempDir()
	rs := Open(cache).Records("o/t")
	k1, k2 := Key{Kind: KindWalk, Hash: [32]byte{1}}, Key{Kind: KindWalk, Hash: [32]byte{2}}
	rs.Put(k1, bytes.Repeat([]byte("a"), 10000))
	rs.Put(k2, bytes.Repeat([]byte("b"), 10000))
	if _, err := rs.Flush(); err != nil {
		t.Fatal(err)
	}
	r := Open(cache).Records("o/t")
	got, ok := r.Get(k1)
	if !ok || len(got) != 10000 {
		t.Fatalf("get before the damage: %d bytes, %v", len(got), ok)
	}
	segs, _ := filepath.Glob(filepath.Join(Open(cache).repoDir("o/t"), "*"+segExt))
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
	if b, ok := r.Get(k2); ok {
		t.Fatalf("get after the truncation: %d bytes, found", len(b))
	}
	// Past lazyLookups the footer, read in place from the truncated mapping, is read
	// into the index: its entries end at the fault, and every read misses.
	for i := range 2 * lazyLookups {
		if b, ok := r.Get([]Key{k1, k2}[i%2]); ok {
			t.Fatalf("read %d after the truncation: %d bytes, found", i, len(b))
		}
	}
	if !r.indexed {
		t.Error("the index was never built")
	}
}

// TestGetTo: GetTo reads a segment's record, and a pending one, into the memory it is
// given when it is large enough, returns what Get returns, and misses as Get does.
func TestGetTo(t *testing.T) {
	cache := t.TempDir()
	rs := Open(cache).Records("o/t")
	k1, k2, k3 := Key{Kind: KindVector, Hash: [32]byte{1}}, Key{Kind: KindVector, Hash: [32]byte{2}}, Key{Kind: KindVector, Hash: [32]byte{3}}
	rs.Put(k1, []byte("first payload"))
	rs.Put(k2, []byte("second"))
	if _, err := rs.Flush(); err != nil {
		t.Fatal(err)
	}
	rs.Put(k3, []byte("pending"))
	buf := make([]byte, 64)
	for _, k := range []Key{k1, k2, k3} {
		want, _ := rs.Get(k)
		got, ok := rs.GetTo(k, buf)
		if !ok || string(got) != string(want) {
			t.Errorf("GetTo(%x) = %q, %v; Get = %q", k.Hash[0], got, ok, want)
		}
		if &got[0] != &buf[0] {
			t.Errorf("GetTo(%x) did not read into the memory given", k.Hash[0])
		}
	}
	if got, ok := rs.GetTo(k1, buf[:2:2]); !ok || string(got) != "first payload" {
		t.Errorf("GetTo into too little memory = %q, %v", got, ok)
	}
	if got, ok := rs.GetTo(Key{Kind: KindVector, Hash: [32]byte{4}}, buf); ok {
		t.Errorf("GetTo of a missing record = %q, found", got)
	}
	if p, _ := rs.Get(k3); string(p) != "pending" {
		t.Errorf("a pending record changed: %q", p)
	}
}

// autoKey and autoPayload are record i's key and payload in the automatic-write tests.
func autoKey(i int) Key { return Key{Kind: KindChunks, Hash: [32]byte{byte(i), byte(i >> 8), 7}} }

func autoPayload(i int) []byte { return bytes.Repeat([]byte{byte(i), byte(i >> 8)}, 50+i%13) }

// segmentFiles counts the segment files in dir.
func segmentFiles(t *testing.T, dir string) int {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), segExt) {
			n++
		}
	}
	return n
}

// TestAutoFlush: once the pending payloads reach autoFlushBytes, Put writes them as a
// segment; every record stays readable, in this process and the next. A failed
// automatic write keeps its records pending (readable) and leaves the next writes to
// Flush, which reports the error, and writes them once it can.
func TestAutoFlush(t *testing.T) {
	defer func(n int64) { autoFlushBytes = n }(autoFlushBytes)
	autoFlushBytes = 1000
	cache := t.TempDir()
	st := Open(cache)
	rs := st.Records("o/a")
	check := func(rs *Records, n int) {
		t.Helper()
		for i := range n {
			if p, ok := rs.Get(autoKey(i)); !ok || !bytes.Equal(p, autoPayload(i)) {
				t.Fatalf("record %d: found %v, %d bytes", i, ok, len(p))
			}
		}
	}
	for i := range 30 {
		rs.Put(autoKey(i), autoPayload(i))
	}
	if n := segmentFiles(t, rs.Dir()); n < 2 {
		t.Fatalf("%d segments after 30 records of 100-124 bytes with a 1,000-byte threshold", n)
	}
	rs.mu.RLock()
	left := rs.pendSize
	rs.mu.RUnlock()
	if left >= autoFlushBytes {
		t.Errorf("%d bytes still pending", left)
	}
	check(rs, 30)

	// The repository's folder replaced by a file: the automatic write fails.
	dir := rs.Dir()
	if err := os.Rename(dir, dir+".away"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for i := 30; i < 60; i++ {
		rs.Put(autoKey(i), autoPayload(i))
	}
	check(rs, 60)
	rs.mu.RLock()
	noAuto := rs.noAuto
	rs.mu.RUnlock()
	if !noAuto {
		t.Error("a failed automatic write did not leave the next writes to Flush")
	}
	if n, err := rs.Flush(); err == nil || n == 0 {
		t.Errorf("Flush into a file: %d records not written, error %v", n, err)
	}
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dir+".away", dir); err != nil {
		t.Fatal(err)
	}
	if n, err := rs.Flush(); err != nil || n != 0 {
		t.Fatalf("Flush: %d records not written, error %v", n, err)
	}
	check(rs, 60)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st2 := Open(cache)
	defer st2.Close()
	check(st2.Records("o/a"), 60)
}

// TestAutoFlushConcurrent: Put, Get and Has on several goroutines while Put writes
// segments: every record put is read back whole at once and at the end (run it with
// -race: the writes run outside the records' lock).
func TestAutoFlushConcurrent(t *testing.T) {
	defer func(n int64) { autoFlushBytes = n }(autoFlushBytes)
	autoFlushBytes = 4096
	st := Open(t.TempDir())
	defer st.Close()
	rs := st.Records("o/c")
	const goroutines, each = 4, 300
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				n := g*each + i
				rs.Put(autoKey(n), autoPayload(n))
				for _, m := range []int{n, g*each + i/2} {
					if p, ok := rs.Get(autoKey(m)); !ok || !bytes.Equal(p, autoPayload(m)) || !rs.Has(autoKey(m)) {
						t.Errorf("record %d after putting %d: found %v, %d bytes", m, n, ok, len(p))
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	// About 130 KB put at a 4 KB threshold: written as it accumulated, in more than one
	// segment. How many depends on how many puts land while a write runs (they wait
	// for the next), so only that is checked (a loaded machine under -race made 4).
	if n := segmentFiles(t, rs.Dir()); n < 2 {
		t.Errorf("%d segments", n)
	}
	for n := range goroutines * each {
		if p, ok := rs.Get(autoKey(n)); !ok || !bytes.Equal(p, autoPayload(n)) {
			t.Fatalf("record %d: found %v", n, ok)
		}
	}
}

// TestCompactCountsSmallSegments: the segments a run wrote as its records accumulated
// (at least autoFlushBytes each) do not count toward compactLimit, so a first index of
// a big repository is not merged at once; more than compactLimit small ones are, with
// the big ones, and every record stays readable.
func TestCompactCountsSmallSegments(t *testing.T) {
	defer func(n int64) { autoFlushBytes = n }(autoFlushBytes)
	autoFlushBytes = 2000
	cache := t.TempDir()
	rs := Open(cache).Records("o/s")
	n := 0
	for ; n < 25*(compactLimit+4); n++ { // big segments, written by Put
		rs.Put(autoKey(n), autoPayload(n))
	}
	if _, err := rs.Flush(); err != nil { // and one small: the rest
		t.Fatal(err)
	}
	dir := rs.Dir()
	if got := segmentFiles(t, dir); got <= compactLimit {
		t.Fatalf("%d segments", got)
	}
	if compactRepo(dir) {
		t.Fatal("segments of at least autoFlushBytes were merged")
	}
	for range compactLimit + 1 { // small ones
		rs.Put(autoKey(n), autoPayload(n))
		n++
		if _, err := rs.Flush(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond) // distinct segment names
	}
	if !compactRepo(dir) {
		t.Fatal("more than compactLimit small segments were not merged")
	}
	if got := segmentFiles(t, dir); got != 1 {
		t.Errorf("%d segments after the merge", got)
	}
	fresh := Open(cache).Records("o/s")
	for i := range n {
		if p, ok := fresh.Get(autoKey(i)); !ok || !bytes.Equal(p, autoPayload(i)) {
			t.Fatalf("record %d after the merge: found %v", i, ok)
		}
	}
}

// TestPutDuringFlush: while a Flush writes its records, they are read from memory, and
// a record put again under one of their keys (a folder's state written anew) is kept
// with its new payload: read at once, written by the next Flush, read by the next
// process.
func TestPutDuringFlush(t *testing.T) {
	cache := t.TempDir()
	st := Open(cache)
	rs := st.Records("o/p")
	k := Key{Kind: KindWalk, Hash: [32]byte{9}}
	other := autoKey(1)
	rs.Put(k, []byte("state 1"))
	rs.Put(other, autoPayload(1))
	defer func() { beforeSegmentWrite = nil }()
	beforeSegmentWrite = func(r *Records) {
		beforeSegmentWrite = nil
		if p, ok := r.Get(other); !ok || !bytes.Equal(p, autoPayload(1)) || !r.Has(other) {
			t.Errorf("a record being written: found %v", ok)
		}
		r.Put(k, []byte("state 2"))
		if p, _ := r.Get(k); string(p) != "state 2" {
			t.Errorf("during the write: %q, want the new state", p)
		}
	}
	if _, err := rs.Flush(); err != nil {
		t.Fatal(err)
	}
	if p, _ := rs.Get(k); string(p) != "state 2" {
		t.Errorf("after the write: %q, want the new state", p)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st2 := Open(cache)
	defer st2.Close()
	if p, _ := st2.Records("o/p").Get(k); string(p) != "state 2" {
		t.Errorf("next process: %q, want the new state", p)
	}
}

// TestCloseBesideFailingAutoFlush: an automatic write that starts while Close writes
// another repository's records, and then fails, ends, and so does Close (a failed write
// counts itself in the store's statistics, under the store's lock, which Close must not
// hold while it waits for the write).
func TestCloseBesideFailingAutoFlush(t *testing.T) {
	defer func(n int64) { autoFlushBytes = n }(autoFlushBytes)
	defer func() { afterTempCreated = nil }()
	autoFlushBytes = 1000
	for attempt := 0; attempt < 40; attempt++ {
		st := Open(t.TempDir())
		a, b := st.Records("o/a"), st.Records("o/b")
		a.Put(autoKey(1), autoPayload(1)) // below the threshold: written by Close
		b.Put(autoKey(2), autoPayload(2))
		started := make(chan struct{})
		triggered := false
		afterTempCreated = func(name string) {
			switch filepath.Dir(name) {
			case b.Dir():
				a.mu.RLock()
				aFlushed := len(a.pending) == 0
				a.mu.RUnlock()
				if !aFlushed || triggered {
					return // Close writes a after b: no automatic write of a after it
				}
				triggered = true
				go a.Put(autoKey(3), bytes.Repeat([]byte{3}, 2000)) // an automatic write of a
				<-started
			case a.Dir():
				if !triggered {
					return
				}
				close(started)
				for !st.closed.Load() {
					time.Sleep(time.Millisecond)
				}
				time.Sleep(100 * time.Millisecond) // Close now waits for this write
				dir := a.Dir()
				os.Rename(dir, dir+".away")
				os.WriteFile(dir, nil, 0o644) // the write fails
			}
		}
		done := make(chan error, 1)
		go func() { done <- st.Close() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("Close did not return beside a failing automatic write (attempt %d)", attempt)
		}
		afterTempCreated = nil
		if triggered {
			if st.WriteErrors() != 1 {
				t.Errorf("%d write errors, want 1", st.WriteErrors())
			}
			return
		}
	}
	t.Skip("Close never wrote o/a before o/b")
}

// TestRescanBeforeInstall: a rescan (a Get's miss) that finds a segment this process
// has just written, before the write enters it in the index, leaves one opening of it:
// the write's own is closed and unmapped. Both paths keep every record readable.
func TestRescanBeforeInstall(t *testing.T) {
	defer func() { beforeSegmentInstalled = nil }()
	maps := func(dir string) (n, dup int) {
		b, err := os.ReadFile("/proc/self/maps")
		if err != nil {
			t.Skip("no /proc/self/maps:", err)
		}
		seen := map[string]bool{}
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) >= 6 && strings.HasPrefix(f[5], dir) {
				n++
				if seen[f[3]+" "+f[4]] {
					dup++
				}
				seen[f[3]+" "+f[4]] = true
			}
		}
		return n, dup
	}
	st := Open(t.TempDir())
	defer st.Close()
	rs := st.Records("o/r")
	for _, rescanFirst := range []bool{true, false} {
		beforeSegmentInstalled = func(r *Records) {
			if rescanFirst {
				r.mu.Lock()
				r.rescan()
				r.mu.Unlock()
			}
		}
		base := 0
		if rescanFirst {
			base = 100
		}
		for i := base; i < base+10; i++ {
			rs.Put(autoKey(i), autoPayload(i))
		}
		if _, err := rs.Flush(); err != nil {
			t.Fatal(err)
		}
		beforeSegmentInstalled = nil
		for i := base; i < base+10; i++ {
			if p, ok := rs.Get(autoKey(i)); !ok || !bytes.Equal(p, autoPayload(i)) {
				t.Errorf("rescan first %v: record %d: found %v", rescanFirst, i, ok)
			}
		}
	}
	if n, dup := maps(rs.Dir()); n != 2 || dup != 0 {
		t.Errorf("%d mappings of the 2 segments, %d of them twice", n, dup)
	}
}

// TestFlushAfterItsFileIsMerged: another process's compaction may merge and remove a
// segment as soon as it has its name, before the writer reads it back; the writer
// reads the file it wrote (opened before the rename), so the write succeeds and its
// records stay readable.
func TestFlushAfterItsFileIsMerged(t *testing.T) {
	st := Open(t.TempDir())
	defer st.Close()
	rs := st.Records("o/m")
	for i := range 10 {
		rs.Put(autoKey(i), autoPayload(i))
	}
	defer func() { afterSegmentRenamed = nil }()
	removed := false
	afterSegmentRenamed = func(path string) { removed = os.Remove(path) == nil }
	if n, err := rs.Flush(); err != nil || n != 0 {
		t.Fatalf("Flush with its segment removed after the rename: %d not written, %v", n, err)
	}
	if !removed {
		t.Fatal("the hook did not remove the new segment")
	}
	for i := range 10 {
		if p, ok := rs.Get(autoKey(i)); !ok || !bytes.Equal(p, autoPayload(i)) {
			t.Fatalf("record %d: found %v", i, ok)
		}
	}
}

// TestCompactDamagedNewest: merging takes each record's newest intact payload: a
// damaged newest copy falls back to an older one, and a record with no intact copy is
// left out (a miss, recomputed by its reader).
func TestCompactDamagedNewest(t *testing.T) {
	cache := t.TempDir()
	rs := Open(cache).Records("o/d")
	k, only := Key{Kind: KindWalk, Hash: [32]byte{5}}, Key{Kind: KindChunks, Hash: [32]byte{6}}
	for i := range compactLimit + 2 {
		rs.Put(k, []byte(fmt.Sprintf("state %d", i)))
		if i == compactLimit+1 {
			rs.Put(only, []byte("only in the newest"))
		}
		if _, err := rs.Flush(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond) // distinct segment names
	}
	// Damage both payloads of the newest segment.
	dir := rs.Dir()
	ents, _ := os.ReadDir(dir)
	var newest string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), segExt) && e.Name() > newest {
			newest = e.Name()
		}
	}
	seg, entries, err := openSegment(filepath.Join(dir, newest))
	if err != nil {
		t.Fatal(err)
	}
	seg.f.Close()
	f, err := os.OpenFile(filepath.Join(dir, newest), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, err := f.WriteAt([]byte{'#'}, e.loc.off+4); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	if !compactRepo(dir) {
		t.Fatal("not compacted")
	}
	fresh := Open(cache).Records("o/d")
	if b, _ := fresh.Get(k); string(b) != fmt.Sprintf("state %d", compactLimit) {
		t.Errorf("after the merge: %q, want the newest intact state %d", b, compactLimit)
	}
	if b, ok := fresh.Get(only); ok {
		t.Errorf("a record whose only copy is damaged was kept: %q", b)
	}
}

// TestLazyIndex checks that reads before and after the key index is built (the first
// lazyLookups reads look through the segments' entries) find every record, the latest
// of a key written again, and miss absent ones; and that a process's own writes are
// found either way.
func TestLazyIndex(t *testing.T) {
	cache := t.TempDir()
	rs := Open(cache).Records("o/r")
	state := Key{Kind: KindWalk, Hash: [32]byte{7}}
	for seg := range 3 {
		for i := range 50 {
			rs.Put(Key{Kind: KindChunks, Hash: [32]byte{byte(seg), byte(i)}}, []byte(fmt.Sprintf("c %d %d", seg, i)))
		}
		rs.Put(state, []byte(fmt.Sprintf("state %d", seg)))
		if _, err := rs.Flush(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond) // distinct segment names
	}
	r := Open(cache).Records("o/r")
	for i := range 3 * lazyLookups {
		if b, _ := r.Get(state); i <= 2 && string(b) != "state 2" {
			t.Fatalf("read %d: %q, want the latest state", i, b)
		}
		seg, j := i%3, i%50
		if b, _ := r.Get(Key{Kind: KindChunks, Hash: [32]byte{byte(seg), byte(j)}}); string(b) != fmt.Sprintf("c %d %d", seg, j) {
			t.Fatalf("read %d: %q", i, b)
		}
		if r.Has(Key{Kind: KindChunks, Hash: [32]byte{9, 9}}) {
			t.Fatalf("read %d: an absent record found", i)
		}
		if i == 2 {
			r.Put(state, []byte("state 3"))
			if _, err := r.Flush(); err != nil {
				t.Fatal(err)
			}
		}
		if i >= 2 {
			if b, _ := r.Get(state); string(b) != "state 3" {
				t.Fatalf("read %d after a write: %q", i, b)
			}
		}
	}
	if !r.indexed {
		t.Error("the index was never built")
	}
}

// TestGetMapped: GetMapped returns what Get returns, a segment's record in place in its
// mapping, a pending one from memory; a record whose bytes changed in the file (its
// checksum no longer matches) and a truncated segment's are misses.
func TestGetMapped(t *testing.T) {
	cache := t.TempDir()
	rs := Open(cache).Records("o/m")
	k1, k2, k3 := Key{Kind: KindModel, Hash: [32]byte{1}}, Key{Kind: KindModel, Hash: [32]byte{2}}, Key{Kind: KindModel, Hash: [32]byte{3}}
	rs.Put(k1, bytes.Repeat([]byte("a"), 10000))
	rs.Put(k2, bytes.Repeat([]byte("b"), 10000))
	if _, err := rs.Flush(); err != nil {
		t.Fatal(err)
	}
	rs.Put(k3, []byte("pending"))
	r := Open(cache).Records("o/m")
	for _, x := range []*Records{rs, r} {
		for _, k := range []Key{k1, k2, k3} {
			want, wok := x.Get(k)
			got, ok := x.GetMapped(k)
			if ok != wok || !bytes.Equal(got, want) {
				t.Errorf("GetMapped(%x) = %d bytes, %v; Get %d bytes, %v", k.Hash[0], len(got), ok, len(want), wok)
			}
		}
	}
	got, ok := r.GetMapped(k1)
	seg := r.segs[firstKey(r.segs)]
	if !ok || len(r.segs) != 1 || seg.data == nil {
		t.Fatalf("GetMapped(k1): %v; %d segments", ok, len(r.segs))
	}
	if p := uintptr(unsafe.Pointer(&got[0])); p < uintptr(unsafe.Pointer(&seg.data[0])) || p >= uintptr(unsafe.Pointer(&seg.data[0]))+uintptr(len(seg.data)) {
		t.Error("GetMapped(k1) copied the record")
	}
	if _, ok := r.GetMapped(Key{Kind: KindModel, Hash: [32]byte{9}}); ok {
		t.Error("a missing record found")
	}
	segs, _ := filepath.Glob(filepath.Join(Open(cache).repoDir("o/m"), "*"+segExt))
	f, err := os.OpenFile(segs[0], os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	// A byte of k1's payload changed in place (another program's doing): a miss.
	b, _ := os.ReadFile(segs[0])
	if _, err := f.WriteAt([]byte{'z'}, int64(bytes.IndexByte(b, 'a'))+100); err != nil {
		t.Fatal(err)
	}
	r2 := Open(cache).Records("o/m")
	if _, ok := r2.GetMapped(k1); ok {
		t.Error("GetMapped of a changed record found")
	}
	if _, ok := r2.GetMapped(k2); !ok {
		t.Fatal("GetMapped of an intact record beside a changed one missed")
	}
	// The segment truncated under the mapping: a miss, not a SIGBUS.
	if err := f.Truncate(0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, ok := r2.GetMapped(k2); ok {
		t.Error("GetMapped of a truncated segment's record found")
	}
}

// firstKey returns a key of m ("" when m is empty).
func firstKey[V any](m map[string]V) string {
	for k := range m {
		return k
	}
	return ""
}

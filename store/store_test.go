package store

import (
	"bytes"
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
	if err := writeSegment(filepath.Join(dir, "seg-1.seg"), []Key{k}, map[Key][]byte{k: []byte("state")}, map[Key]recLoc{}); err != nil {
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
	k := Key{Kind: KindWalk, Hash: [32]byte{1}}
	recs := map[Key][]byte{k: []byte("state")}
	failed := 0
	var first error
	for i := range 1000 {
		if err := writeSegment(filepath.Join(dir, fmt.Sprintf("seg-%d.seg", i)), []Key{k}, recs, map[Key]recLoc{}); err != nil {
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
// misses, not a SIGBUS; a payload read before keeps its bytes when the file's are
// overwritten in place.
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

package store

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// rewriteFooter writes entries over the footer (after its count) of the only
// segment of repository id in cache, in place, under any mapping of it.
func rewriteFooter(t *testing.T, cache, id string, entries []byte) {
	t.Helper()
	segs, _ := filepath.Glob(filepath.Join(Open(cache).repoDir(id), "*"+segExt))
	if len(segs) != 1 {
		t.Fatalf("%d segments, want 1", len(segs))
	}
	f, err := os.OpenFile(segs[0], os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	tr := make([]byte, segTrailer)
	if _, err := f.ReadAt(tr, fi.Size()-int64(segTrailer)); err != nil {
		t.Fatal(err)
	}
	off, n := int64(binary.LittleEndian.Uint64(tr)), int(binary.LittleEndian.Uint32(tr[8:]))
	if len(entries) > n-1 {
		t.Fatalf("%d bytes of entries, the footer holds %d", len(entries), n-1)
	}
	if _, err := f.WriteAt(entries, off+1); err != nil { // one record count byte first
		t.Fatal(err)
	}
}

// TestFooterRewrittenOffsetOverflow: a footer rewritten in place under the mapping
// after its check, with an entry whose offset and length are each below 2^63 but
// whose sum is not, makes misses, looked through (find) or read into the index
// (each), and no panic (an overflowing bounds check would slice the mapping out of
// range).
func TestFooterRewrittenOffsetOverflow(t *testing.T) {
	cache := t.TempDir()
	rs := Open(cache).Records("o/f")
	for i := range 3 {
		rs.Put(Key{Kind: KindWalk, Hash: [32]byte{byte(i + 1)}}, bytes.Repeat([]byte{'p'}, 10))
	}
	if _, err := rs.Flush(); err != nil {
		t.Fatal(err)
	}
	r := Open(cache).Records("o/f")
	if _, ok := r.Get(Key{Kind: KindWalk, Hash: [32]byte{1}}); !ok {
		t.Fatal("not found before the rewrite")
	}
	k := Key{Kind: KindWalk, Hash: [32]byte{9}}
	e := append([]byte{k.Kind}, k.Hash[:]...)
	e = binary.AppendUvarint(e, 1<<62) // offset
	e = binary.AppendUvarint(e, 1<<62) // length
	rewriteFooter(t, cache, "o/f", e)
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("Get panicked on a footer rewritten under the mapping: %v", p)
		}
	}()
	for i := range 2 * lazyLookups {
		if b, ok := r.Get(k); ok {
			t.Fatalf("read %d: %d bytes found", i, len(b))
		}
	}
}

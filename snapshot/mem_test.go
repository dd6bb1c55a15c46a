package snapshot

import (
	"crypto/sha256"
	"errors"
	"sync/atomic"
	"testing"
)

// TestMemFileLazy: a lazy file is read once, on first need, and only bytes that hash
// as recorded are given; Len is the recorded size until then.
func TestMemFileLazy(t *testing.T) {
	var reads atomic.Int32
	content := []byte("x = 1\n")
	read := func(b []byte) func() ([]byte, error) {
		return func() ([]byte, error) { reads.Add(1); return b, nil }
	}
	f := &MemFile{Sum: sha256.Sum256(content), Lazy: &Lazy{Size: 6, Read: read(content)}}
	snap := NewMem("m", map[string]*MemFile{"a.py": f})
	if n, ok := snap.Size("a.py"); !ok || n != 6 {
		t.Fatalf("Size = %d, %v; want 6", n, ok)
	}
	if reads.Load() != 0 {
		t.Fatal("read before the bytes were needed")
	}
	for range 3 {
		b, err := snap.(*memSnapshot).ReadFile("a.py")
		if err != nil || string(b) != "x = 1\n" {
			t.Fatalf("ReadFile = %q, %v", b, err)
		}
	}
	if reads.Load() != 1 {
		t.Errorf("%d reads, want 1", reads.Load())
	}
	changed := &MemFile{Sum: sha256.Sum256(content), Lazy: &Lazy{Size: 6, Read: read([]byte("x = 2\n"))}}
	if changed.Lazy.Failed() {
		t.Error("Failed before the read")
	}
	if _, err := changed.Bytes(); !errors.Is(err, ErrChanged) || !changed.Lazy.Failed() {
		t.Errorf("changed bytes: error %v, Failed %v; want ErrChanged, true", err, changed.Lazy.Failed())
	}
	if f.Lazy.Failed() {
		t.Error("Failed after a read that succeeded")
	}
	failed := &MemFile{Lazy: &Lazy{Read: func() ([]byte, error) { return nil, errors.New("gone") }}}
	if _, err := failed.Bytes(); err == nil || err.Error() != "gone" {
		t.Errorf("failed read: error %v, want it", err)
	}
	held := &MemFile{Data: content, Sum: sha256.Sum256(content)}
	if b, err := held.Bytes(); err != nil || string(b) != "x = 1\n" || held.Len() != 6 {
		t.Errorf("held bytes: %q, %v, len %d", b, err, held.Len())
	}
}

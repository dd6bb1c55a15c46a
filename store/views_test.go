package store

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// TestStoredViewFile checks PutView and MapView: the payload comes back mapped, at an
// address that is a multiple of 8, and checks; a damaged file does not; a later write
// replaces the file while a mapping of the old one keeps its bytes; Stat counts the
// file; bad names and a failing writer are refused; after Close nothing is written.
func TestStoredViewFile(t *testing.T) {
	cache := t.TempDir()
	st := Open(cache)
	r := st.Records("o/r")
	put := func(payload string) error {
		return r.PutView("ab12", func(w io.Writer) error { _, err := io.WriteString(w, payload); return err })
	}
	if err := put("first payload"); err != nil {
		t.Fatal(err)
	}
	v, ok := r.MapView("ab12")
	if !ok || string(v.Payload) != "first payload" || !v.Verify(nil, nil) {
		t.Fatalf("MapView: %v", ok)
	}
	b := v.Payload
	if uintptr(unsafe.Pointer(&b[0]))%8 != 0 {
		t.Error("the payload is not aligned to 8 bytes")
	}
	if err := put("second, longer payload"); err != nil {
		t.Fatal(err)
	}
	if string(b) != "first payload" {
		t.Errorf("the old mapping changed: %q", b)
	}
	if v2, ok := r.MapView("ab12"); !ok || string(v2.Payload) != "second, longer payload" || !v2.Verify(nil, nil) {
		t.Errorf("after a rewrite: %v", ok)
	} else {
		v2.Release() // unmapped: v2 is not read again
	}
	cs, err := Stat(cache)
	if err != nil || len(cs.Repos) != 1 || cs.Repos[0].Bytes < int64(len("second, longer payload")) {
		t.Errorf("Stat: %+v, %v", cs, err)
	}
	// Damaged: a block's checksum does not match (the payload changed), or the block
	// table's does not (the table changed: not mapped).
	files, _ := filepath.Glob(filepath.Join(r.Dir(), "*"+viewExt))
	if len(files) != 1 {
		t.Fatalf("view files %v", files)
	}
	raw, _ := os.ReadFile(files[0])
	raw[viewHead] ^= 1
	os.WriteFile(files[0], raw, 0o644)
	if v, ok := r.MapView("ab12"); !ok || v.Verify(nil, nil) || v.Check(v.Payload[:1]) {
		t.Error("a damaged payload checks")
	} else {
		v.Release()
	}
	raw[viewHead] ^= 1
	raw[len(raw)-1] ^= 1
	os.WriteFile(files[0], raw, 0o644)
	if _, ok := r.MapView("ab12"); ok {
		t.Error("a view with a damaged block table mapped")
	}
	raw[len(raw)-1] ^= 1
	os.WriteFile(files[0], raw[:len(raw)-1], 0o644)
	if _, ok := r.MapView("ab12"); ok {
		t.Error("a view cut short mapped")
	}
	for _, name := range []string{"", "AB12", "../x", "g0"} {
		if err := r.PutView(name, func(io.Writer) error { return nil }); err == nil {
			t.Errorf("name %q accepted", name)
		}
		if _, ok := r.MapView(name); ok {
			t.Errorf("name %q mapped", name)
		}
	}
	if _, ok := r.MapView("cd34"); ok {
		t.Error("a missing view mapped")
	}
	boom := errors.New("boom")
	if err := r.PutView("cd34", func(io.Writer) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("a failing writer: %v", err)
	}
	if _, ok := r.MapView("cd34"); ok {
		t.Error("a failed write left a view")
	}
	st.Close()
	if err := r.PutView("ef56", func(io.Writer) error { return nil }); err != nil {
		t.Errorf("after Close: %v", err)
	}
	if _, ok := r.MapView("ef56"); ok {
		t.Error("written after Close")
	}
}

// TestMapViewNotAFile checks that a view path that is not a regular file (a FIFO, a
// folder) is a miss at once: opening a FIFO for reading would wait for a writer.
func TestMapViewNotAFile(t *testing.T) {
	st := Open(t.TempDir())
	defer st.Close()
	r := st.Records("o/r")
	if err := r.PutView("ab12", func(w io.Writer) error { _, err := io.WriteString(w, "payload"); return err }); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(r.Dir(), "ab12"+viewExt)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skip("no FIFO:", err)
	}
	done := make(chan bool, 1)
	go func() { _, ok := r.MapView("ab12"); done <- ok }()
	select {
	case ok := <-done:
		if ok {
			t.Error("a FIFO mapped")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("MapView waits on a FIFO")
	}
	os.Remove(path)
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.MapView("ab12"); ok {
		t.Error("a folder mapped")
	}
}

// TestMapViewVerifyStop: verify's stop function ends the checksum early with false;
// without stop, or while it returns false, a payload of several blocks checks.
func TestMapViewVerifyStop(t *testing.T) {
	r := Open(t.TempDir()).Records("o/r")
	payload := bytes.Repeat([]byte("0123456789abcdef"), 3<<20/16+5) // 3 MiB and a bit
	if err := r.PutView("ab12", func(w io.Writer) error { _, err := w.Write(payload); return err }); err != nil {
		t.Fatal(err)
	}
	v, ok := r.MapView("ab12")
	if !ok {
		t.Fatal("no view")
	}
	defer v.Release()
	verify := func(stop func() bool) bool { return v.Verify(nil, stop) }
	if !verify(nil) {
		t.Error("verify(nil) of an intact view: false")
	}
	asked := 0
	if !verify(func() bool { asked++; return false }) || asked != 4 {
		t.Errorf("verify with a stop that never stops: asked %d times, want 4 (one per MiB)", asked)
	}
	asked = 0
	if verify(func() bool { asked++; return asked == 2 }) || asked != 2 {
		t.Errorf("verify stopped at the second MiB: asked %d times, want false after 2", asked)
	}
}

// TestPutViewOverAFIFO checks that a FIFO in a stored view's place is replaced, not
// written to: opening it for writing would wait for ever for a reader (a predict run
// storing that view never ended).
func TestPutViewOverAFIFO(t *testing.T) {
	st := Open(t.TempDir())
	defer st.Close()
	r := st.Records("o/r")
	path := filepath.Join(r.Dir(), "ab12"+viewExt)
	if err := os.MkdirAll(r.Dir(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skip("no FIFO:", err)
	}
	done := make(chan error, 1)
	go func() {
		done <- r.PutView("ab12", func(w io.Writer) error { _, err := io.WriteString(w, "payload"); return err })
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		os.Remove(path) // lets the test end
		t.Fatal("PutView waits on a FIFO")
	}
	if v, ok := r.MapView("ab12"); !ok || string(v.Payload) != "payload" || !v.Verify(nil, nil) {
		t.Errorf("after the write: %v", ok)
	} else {
		v.Release()
	}
}

// TestMappedViewLazy: a damaged block fails Verify unless it lies wholly in a part
// left to Check, and fails Check of any bytes in it, not of bytes in other blocks;
// Check refuses bytes that are not the payload's.
func TestMappedViewLazy(t *testing.T) {
	r := Open(t.TempDir()).Records("o/s")
	const block = 1 << viewBlockShift
	payload := bytes.Repeat([]byte("0123456789abcdef"), 4*block/16+3) // 4 blocks and a bit
	if err := r.PutView("ab", func(w io.Writer) error {
		for p := payload; len(p) > 0; p = p[min(len(p), 1000):] { // writes across blocks
			if _, err := w.Write(p[:min(len(p), 1000)]); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(r.Dir(), "ab"+viewExt)
	raw, _ := os.ReadFile(path)
	if want := viewHead + len(payload) + 4*5; len(raw) != want {
		t.Fatalf("file of %d bytes, want %d (5 block sums)", len(raw), want)
	}
	raw[viewHead+2*block+100] ^= 1 // in block 2
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	v, ok := r.MapView("ab")
	if !ok {
		t.Fatal("not mapped")
	}
	defer v.Release()
	p := v.Payload
	for _, c := range []struct {
		name string
		lazy [][]byte
		want bool
	}{
		{"all", nil, false},
		{"block 2 lazy", [][]byte{p[2*block : 3*block]}, true},
		{"blocks 1-3 lazy", [][]byte{p[block+5 : 4*block+1]}, true},
		{"block 2 partly lazy", [][]byte{p[2*block+1 : 3*block]}, false},
		{"another block lazy", [][]byte{p[3*block : 4*block]}, false},
		{"not the payload's", [][]byte{bytes.Clone(p)}, false},
	} {
		if got := v.Verify(c.lazy, nil); got != c.want {
			t.Errorf("%s: Verify = %v, want %v", c.name, got, c.want)
		}
	}
	for _, c := range []struct {
		name string
		b    []byte
		want bool
	}{
		{"block 0", p[10:20], true},
		{"the last, short block", p[4*block:], true},
		{"block 2", p[2*block+100 : 2*block+101], false},
		{"blocks 1-2", p[block : 2*block+1], false},
		{"block 3", p[3*block : 4*block], true},
		{"empty", p[5:5], true},
		{"a copy", bytes.Clone(p[10:20]), false},
	} {
		for range 2 { // the second time from the checked blocks
			if got := v.Check(c.b); got != c.want {
				t.Errorf("Check(%s) = %v, want %v", c.name, got, c.want)
			}
		}
	}
}

// TestPutViewWriteErrorIgnored: a write function that ignores its writer's error and
// returns nil does not commit a view (its payload would be short): PutView returns
// the error and no view is left.
func TestPutViewWriteErrorIgnored(t *testing.T) {
	r := Open(t.TempDir()).Records("o/w")
	boom := errors.New("disk full")
	err := r.PutView("ab", func(w io.Writer) error {
		w.(*blockWriter).w = failingWriter{boom} // the file fails from now on
		w.Write([]byte("payload"))               // error ignored
		return nil
	})
	if !errors.Is(err, boom) {
		t.Errorf("PutView: %v, want the write's error", err)
	}
	if _, ok := r.MapView("ab"); ok {
		t.Error("a view whose write failed was committed")
	}
}

type failingWriter struct{ err error }

func (f failingWriter) Write([]byte) (int, error) { return 0, f.err }

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
	b, verify, _, ok := r.MapView("ab12")
	if !ok || string(b) != "first payload" || !verify(nil) {
		t.Fatalf("MapView: %q %v", b, ok)
	}
	if uintptr(unsafe.Pointer(&b[0]))%8 != 0 {
		t.Error("the payload is not aligned to 8 bytes")
	}
	if err := put("second, longer payload"); err != nil {
		t.Fatal(err)
	}
	if string(b) != "first payload" {
		t.Errorf("the old mapping changed: %q", b)
	}
	if b2, verify, release, ok := r.MapView("ab12"); !ok || string(b2) != "second, longer payload" || !verify(nil) {
		t.Errorf("after a rewrite: %q %v", b2, ok)
	} else {
		release() // unmapped: b2 is not read again
	}
	cs, err := Stat(cache)
	if err != nil || len(cs.Repos) != 1 || cs.Repos[0].Bytes < int64(len("second, longer payload")) {
		t.Errorf("Stat: %+v, %v", cs, err)
	}
	// Damaged: the checksum does not match.
	files, _ := filepath.Glob(filepath.Join(r.Dir(), "*"+viewExt))
	if len(files) != 1 {
		t.Fatalf("view files %v", files)
	}
	raw, _ := os.ReadFile(files[0])
	raw[len(raw)-1] ^= 1
	os.WriteFile(files[0], raw, 0o644)
	if _, verify, release, ok := r.MapView("ab12"); !ok || verify(nil) {
		t.Error("a damaged view checks")
	} else {
		release()
	}
	for _, name := range []string{"", "AB12", "../x", "g0"} {
		if err := r.PutView(name, func(io.Writer) error { return nil }); err == nil {
			t.Errorf("name %q accepted", name)
		}
		if _, _, _, ok := r.MapView(name); ok {
			t.Errorf("name %q mapped", name)
		}
	}
	if _, _, _, ok := r.MapView("cd34"); ok {
		t.Error("a missing view mapped")
	}
	boom := errors.New("boom")
	if err := r.PutView("cd34", func(io.Writer) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("a failing writer: %v", err)
	}
	if _, _, _, ok := r.MapView("cd34"); ok {
		t.Error("a failed write left a view")
	}
	st.Close()
	if err := r.PutView("ef56", func(io.Writer) error { return nil }); err != nil {
		t.Errorf("after Close: %v", err)
	}
	if _, _, _, ok := r.MapView("ef56"); ok {
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
	go func() { _, _, _, ok := r.MapView("ab12"); done <- ok }()
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
	if _, _, _, ok := r.MapView("ab12"); ok {
		t.Error("a folder mapped")
	}
}

// TestMapViewVerifyStop: verify's stop function ends the checksum early with false;
// without stop, or while it returns false, a payload of several blocks checks.
func TestMapViewVerifyStop(t *testing.T) {
	r := Open(t.TempDir()).Records("o/r")
	payload := bytes.Repeat([]byte("0123456789abcdef"), 3*checkBlock/16+5) // 3 blocks and a bit
	if err := r.PutView("ab12", func(w io.Writer) error { _, err := w.Write(payload); return err }); err != nil {
		t.Fatal(err)
	}
	_, verify, release, ok := r.MapView("ab12")
	if !ok {
		t.Fatal("no view")
	}
	defer release()
	if !verify(nil) {
		t.Error("verify(nil) of an intact view: false")
	}
	asked := 0
	if !verify(func() bool { asked++; return false }) || asked != 4 {
		t.Errorf("verify with a stop that never stops: asked %d times, want 4 (one per block)", asked)
	}
	asked = 0
	if verify(func() bool { asked++; return asked == 2 }) || asked != 2 {
		t.Errorf("verify stopped at the second block: asked %d times, want false after 2", asked)
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
	if b, verify, release, ok := r.MapView("ab12"); !ok || string(b) != "payload" || !verify(nil) {
		t.Errorf("after the write: %q %v", b, ok)
	} else {
		release()
	}
}

// TestStoredViewSkipSum: the region a view's writer leaves out of the checksum
// (SumSkipper) may change without failing verify; a change outside it fails it; a
// region not ended, or a second one, fails PutView.
func TestStoredViewSkipSum(t *testing.T) {
	r := Open(t.TempDir()).Records("o/s")
	write := func(regions int, end bool) func(w io.Writer) error {
		return func(w io.Writer) error {
			io.WriteString(w, "head:")
			for range regions {
				w.(SumSkipper).SkipSum(true)
				io.WriteString(w, "skipped")
				if end {
					w.(SumSkipper).SkipSum(false)
				}
			}
			_, err := io.WriteString(w, ":tail")
			return err
		}
	}
	if err := r.PutView("ab", write(1, true)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(r.Dir(), "ab"+viewExt)
	change := func(old, new string) {
		t.Helper()
		b, _ := os.ReadFile(path)
		if err := os.WriteFile(path, bytes.Replace(b, []byte(old), []byte(new), 1), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	check := func(want bool) {
		t.Helper()
		_, verify, release, ok := r.MapView("ab")
		if !ok || verify(nil) != want {
			t.Errorf("verify: %v, want %v", !want, want)
		}
		release()
	}
	check(true)
	change("skipped", "SKIPPED") // in the region
	check(true)
	change(":tail", ":TAIL") // outside it
	check(false)
	for _, w := range []func(io.Writer) error{write(1, false), write(2, true)} {
		if err := r.PutView("cd", w); err == nil {
			t.Error("PutView of a view with an unended or second region succeeded")
		}
	}
}

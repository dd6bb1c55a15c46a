package atomicfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestDeviceWrittenInPlace: a target that is a named pipe (like /dev/null, not a
// regular file) is written through, and stays a pipe; a regular target is replaced
// atomically.
func TestDeviceWrittenInPlace(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	got := make(chan string)
	go func() {
		r, err := os.Open(fifo)
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(r)
		r.Close()
		got <- string(b)
	}()
	if err := WriteFile(fifo, []byte("through"), Options{}); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "through" {
		t.Errorf("read %q from the pipe, want %q", s, "through")
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the pipe was replaced: %v %v", fi.Mode(), err)
	}
	reg := filepath.Join(dir, "f")
	if err := WriteFile(reg, []byte("a"), Options{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(reg, []byte("b"), Options{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(reg); string(b) != "b" {
		t.Errorf("regular file holds %q", b)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "."+"*"))
	if len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestRenameOpen: a commit with RenameOpen (the writer holding a flock on its file)
// leaves the whole content under the target's name and no temporary file. That the
// lock covers the rename is tested beside a cleaner in store
// (TestSegmentWritesBesideACleaner).
func TestRenameOpen(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "out.seg")
	f, err := Create(target, Options{RenameOpen: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Skipf("no flock here: %v", err)
	}
	f.WriteString("records")
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "records" {
		t.Fatalf("target: %q, %v", b, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d files in the folder, want the target only", len(ents))
	}
}

// TestCreateMissingFolder: a target in a folder that does not exist is an error that
// names the folder (not the temporary file) and is still fs.ErrNotExist.
func TestCreateMissingFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nodir")
	_, err := Create(filepath.Join(dir, "x.jsonl"), Options{})
	if err == nil || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "the folder "+dir+" does not exist") {
		t.Fatalf("err = %v, want the missing folder %s named, wrapping fs.ErrNotExist", err, dir)
	}
}

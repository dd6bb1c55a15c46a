//go:build unix

package inputfile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestCheckRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.py")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for name, want := range map[string]string{fifo: "a named pipe (FIFO)", dir: "a folder", "/dev/zero": "a character device"} {
		done := make(chan error, 1)
		go func() { _, err := ReadFile(name, 0); done <- err }()
		select {
		case err := <-done:
			if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), want) {
				t.Errorf("ReadFile(%s) = %v, want ErrNotRegular naming it and %q", name, err, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("ReadFile(%s) blocks", name) // a FIFO without a writer blocks in open
		}
	}
	if _, err := Open(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	// A symbolic link to a regular file is fine.
	reg := filepath.Join(dir, "a.py")
	if err := os.WriteFile(reg, []byte("x = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.py")
	if err := os.Symlink(reg, link); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(link, 0); err != nil || string(b) != "x = 1\n" {
		t.Errorf("ReadFile(link) = %q, %v", b, err)
	}
}

// The process's standard input is read whatever it is (a pipe here), by any name.
func TestStdinIsAllowed(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	old := os.Stdin
	os.Stdin = r
	defer func() { os.Stdin = old }()
	go func() { w.WriteString("piped\n"); w.Close() }()
	name := fmt.Sprintf("/proc/self/fd/%d", r.Fd())
	if _, err := os.Stat(name); err != nil {
		t.Skipf("no %s: %v", name, err)
	}
	b, err := ReadFile(name, 0)
	if err != nil || string(b) != "piped\n" {
		t.Errorf("ReadFile(standard input as %s) = %q, %v", name, b, err)
	}
}

func TestReadAllLimit(t *testing.T) {
	if b, err := ReadAll(strings.NewReader("12345"), "x", 5); err != nil || string(b) != "12345" {
		t.Errorf("at the limit: %q, %v", b, err)
	}
	_, err := ReadAll(bytes.NewReader(make([]byte, 6)), "big.txt", 5)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Name != "big.txt" || tl.Limit != 5 || !strings.Contains(err.Error(), "big.txt is larger than the limit of 5 bytes") {
		t.Errorf("over the limit: %v", err)
	}
	// An endless stream stops at the limit.
	_, err = ReadAll(endless{}, "standard input", 1<<20)
	if !errors.As(err, &tl) {
		t.Errorf("endless input: %v", err)
	}
}

type endless struct{}

func (endless) Read(p []byte) (int, error) { return len(p), nil }

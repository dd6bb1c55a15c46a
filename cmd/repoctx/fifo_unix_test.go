//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runWithin runs the CLI like run but fails the test instead of hanging when the
// command does not return within d (a FIFO without a writer blocks in open).
func runWithin(t *testing.T, d time.Duration, args ...string) (int, string, string) {
	t.Helper()
	type res struct {
		code     int
		out, err string
	}
	done := make(chan res, 1)
	go func() {
		code, out, errb := run(t, args...)
		done <- res{code, out, errb}
	}()
	select {
	case r := <-done:
		return r.code, r.out, r.err
	case <-time.After(d):
		t.Fatalf("%v still runs after %v (blocked opening a FIFO?)", args, d)
		return 0, "", ""
	}
}

func mkfifo(t *testing.T, path string) string {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	return path
}

// TestFIFOArguments: a FIFO named where a regular file is expected is refused with
// a message naming it instead of blocking forever in open.
func TestFIFOArguments(t *testing.T) {
	dir := t.TempDir()
	cache := t.TempDir()
	fifo := mkfifo(t, filepath.Join(dir, "fifo.py"))
	// A dataset folder whose datapoint file is a FIFO.
	data := filepath.Join(dir, "data")
	copyTree(t, sample, data)
	must(t, os.Remove(filepath.Join(data, "python-sample.jsonl")))
	mkfifo(t, filepath.Join(data, "python-sample.jsonl"))
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"chunk", fifo}, exitError},
		{[]string{"predict", "--data", data, "--lang", "python", "--stage", "sample", "-q", "--cache-dir", cache, "-o", filepath.Join(dir, "o.jsonl")}, exitError},
		{[]string{"predict", "--data", sample, "--lang", "python", "--stage", "sample", "-q", "--cache-dir", cache, "-o", filepath.Join(dir, "o.jsonl"), "--plan-window", "8000", "--tokenizer", fifo}, exitUsage},
	} {
		code, _, stderr := runWithin(t, 30*time.Second, tc.args...)
		if code != tc.code || !strings.Contains(stderr, "named pipe (FIFO)") || !strings.Contains(stderr, filepath.Base(tc.args[len(tc.args)-1])) && !strings.Contains(stderr, "python-sample.jsonl") {
			t.Errorf("%v: exit %d, want %d; stderr %q", tc.args, code, tc.code, stderr)
		}
	}
}

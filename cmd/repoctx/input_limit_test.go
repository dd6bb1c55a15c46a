package main

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/repoctx/repoctx/internal/racetest"
)

// TestInputLimit: the files named by --prefix-file, --suffix-file, --text-file and
// tokens' arguments are read through a limit (64 MiB; lowered here) and a device is
// refused, instead of being read whole into memory (--prefix-file /dev/zero would
// take all of it).
func TestInputLimit(t *testing.T) {
	defer func(n int64) { maxInputBytes = n }(maxInputBytes)
	maxInputBytes = 1000
	dir := t.TempDir()
	big := filepath.Join(dir, "big.py")
	must(t, os.WriteFile(big, bytes.Repeat([]byte("x"), 1001), 0o644))
	ok := filepath.Join(dir, "ok.py")
	must(t, os.WriteFile(ok, bytes.Repeat([]byte("x"), 1000), 0o644))
	cache := t.TempDir()
	ep := newFakeEndpoint(t, http.StatusOK, "x")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"query", "--cache-dir", cache, sampleRepo, "--file", "invoicing/total.py", "--prefix-file", big}, big + " is larger than the limit of 1000 bytes"},
		{[]string{"query", "--cache-dir", cache, sampleRepo, "--file", "invoicing/total.py", "--prefix-file", ok, "--suffix-file", big}, big + " is larger than the limit of 1000 bytes"},
		{[]string{"query", "--cache-dir", cache, sampleRepo, "--file", "invoicing/total.py", "--text-file", big, "--offset", "0"}, big + " is larger than the limit of 1000 bytes"},
		{[]string{"query", "--cache-dir", cache, sampleRepo, "--file", "invoicing/total.py", "--prefix-file", "/dev/zero"}, "/dev/zero: not a regular file: it is a character device"},
		{[]string{"tokens", "--tokenizer", tinyBert, ok, big}, big + " is larger than the limit of 1000 bytes"},
		{[]string{"complete", sampleRepo, "--file", "invoicing/total.py", "--prefix-file", big,
			"--endpoint", ep.url(), "--model", "m", "--fim-template", "starcoder2", "--cache-dir", cache, "--dense", "none"}, big + " is larger than the limit of 1000 bytes"},
	} {
		code, _, stderr := run(t, tc.args...)
		if code != exitError || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr, exitError, tc.want)
		}
	}
	// At the limit it is read.
	if code, _, stderr := run(t, "tokens", "--tokenizer", tinyBert, ok); code != exitOK {
		t.Errorf("tokens on a file at the limit: exit %d, %s", code, stderr)
	}
}

// zeros is an endless stream of zero bytes, as /dev/zero.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestInputLimitStdin: standard input is read through the real 64 MiB limit.
func TestInputLimitStdin(t *testing.T) {
	racetest.Skip(t, "streams 64 MiB through one process")
	if testing.Short() {
		t.Skip("streams 64 MiB")
	}
	exe, err := os.Executable()
	must(t, err)
	cmd := exec.Command(exe, "tokens", "--tokenizer", tinyBert)
	cmd.Env = append(os.Environ(), "REPOCTX_RUN_MAIN=1")
	cmd.Stdin = io.LimitReader(zeros{}, maxInputBytes+4096)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitError || !strings.Contains(stderr.String(), "standard input is larger than the limit of 67108864 bytes (64 MiB)") {
		t.Errorf("tokens < 64 MiB + 4 KiB: %v, stderr %q", err, stderr.String())
	}
}

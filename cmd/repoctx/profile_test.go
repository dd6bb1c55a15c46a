package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestTraceFlag: --trace writes an execution trace of the command; a trace file that is
// also the CPU profile's is refused as a usage error.
func TestTraceFlag(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "trace.out")
	if code, _, stderr := run(t, "--trace", tr, "version"); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if fi, err := os.Stat(tr); err != nil || fi.Size() == 0 {
		t.Fatalf("trace file: %v (%v)", fi, err)
	}
	if code, _, _ := run(t, "--trace", tr, "--cpuprofile", tr, "version"); code == exitOK {
		t.Error("--trace and --cpuprofile on one file: exit 0")
	}
}

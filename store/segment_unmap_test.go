package store

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mappingsOf counts the mappings of path in this process.
func mappingsOf(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Skip("no /proc/self/maps")
	}
	return strings.Count(string(b), path)
}

// TestStatLeavesNoMapping: Stat reads each segment's footer (openSegment) and closes
// the file; it leaves no mapping of the segment behind (nor does compactRepo, for the
// segments it merges, whose removed files would keep their disk space while the
// process lives).
func TestStatLeavesNoMapping(t *testing.T) {
	cache := t.TempDir()
	rs := Open(cache).Records("o/m")
	rs.Put(Key{Kind: KindWalk, Hash: [32]byte{1}}, bytes.Repeat([]byte("m"), 5000))
	if _, err := rs.Flush(); err != nil {
		t.Fatal(err)
	}
	segs, _ := filepath.Glob(filepath.Join(Open(cache).repoDir("o/m"), "*"+segExt))
	if len(segs) != 1 {
		t.Fatalf("%d segments, want 1", len(segs))
	}
	before := mappingsOf(t, segs[0])
	for range 3 {
		if _, err := Stat(cache); err != nil {
			t.Fatal(err)
		}
	}
	if after := mappingsOf(t, segs[0]); after != before {
		t.Errorf("mappings of the segment: %d before 3 Stats, %d after", before, after)
	}
}

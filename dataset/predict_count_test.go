package dataset

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCountDatapoints counts the non-blank lines the datapoint reader would return:
// not a first line holding only a byte order mark, blank or space-only lines (one of
// 64 KiB of spaces and a no-break space, split by the read buffer), while a
// line longer than the read buffer and a last line without "\n" count.
func TestCountDatapoints(t *testing.T) {
	long := `{"id":"` + strings.Repeat("x", 200<<10) + `"}`
	nbsp := strings.Repeat(" ", 65535) + "\u00a0" // a multi-byte space across the 64 KiB read buffer
	text := "\xef\xbb\xbf\n\n  \t\r\n{\"id\":\"a\"}\r\n" + long + "\n   \n" + nbsp + "\n{\"id\":\"b\"}"
	path := filepath.Join(t.TempDir(), "d.jsonl")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	n, err := CountDatapoints(path)
	if err != nil || n != 3 {
		t.Fatalf("CountDatapoints = %d, %v; want 3", n, err)
	}
	got := 0
	for _, err := range DatapointsFile(path) {
		_ = err
		got++
	}
	if got != n {
		t.Errorf("DatapointsFile yields %d lines, CountDatapoints %d", got, n)
	}
}

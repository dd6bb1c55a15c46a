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

// TestCheckDataset: a missing data folder, a file given as one, and a folder without
// the datapoint file (naming the datasets it holds) each get their own error.
func TestCheckDataset(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"kotlin-dev.jsonl", "kotlin-dev.truth.jsonl", "python-dev.jsonl"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := CheckDataset(dir, "python", "dev"); err != nil {
		t.Fatalf("present: %v", err)
	}
	for _, c := range []struct{ dir, lang, stage, want string }{
		{filepath.Join(dir, "missing"), "python", "dev", "data folder"},
		{filepath.Join(dir, "python-dev.jsonl"), "python", "dev", "is not a folder"},
		{dir, "python", "dve", "it holds: kotlin-dev, python-dev"},
		{t.TempDir(), "java", "dev", "no java-dev.jsonl"},
	} {
		if err := CheckDataset(c.dir, c.lang, c.stage); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("CheckDataset(%s, %s, %s) = %v, want %q", c.dir, c.lang, c.stage, err, c.want)
		}
	}
}

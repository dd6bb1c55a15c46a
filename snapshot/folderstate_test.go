package snapshot

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/repoctx/repoctx/store"
)

// TestOpenFolderCached: a second walk reads only the files whose metadata changed, and
// a file rewritten with the same size and modification time is still seen (its change
// time moved); files modified just before the state was recorded are read again.
func TestOpenFolderCached(t *testing.T) {
	root := writeTree(t, map[string]string{"a.py": "a = 1\n", "b.py": "b = 2\n", "sub/c.py": "c = 3\n"})
	old := time.Now().Add(-time.Hour)
	for _, p := range []string{"a.py", "b.py", "sub/c.py"} {
		os.Chtimes(filepath.Join(root, p), old, old)
	}
	cache := t.TempDir()
	st := store.Open(cache)
	defer st.Close()
	recs := st.Records("o/r")
	walk := func() Snapshot {
		t.Helper()
		snap, _, err := OpenFolderCached(context.Background(), root, WalkOptions{}, recs)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range snap.Paths() {
			if _, ok := snap.(*snapshot).sums[p]; !ok {
				t.Fatalf("%s has no hash", p)
			}
		}
		// The hashes equal those of a walk that reads everything.
		full, _, _ := OpenFolder(context.Background(), root, WalkOptions{})
		for _, p := range full.Paths() {
			if snap.(*snapshot).sums[p] != full.(*snapshot).sums[p] {
				t.Errorf("%s: hash %x, want %x", p, snap.(*snapshot).sums[p], full.(*snapshot).sums[p])
			}
		}
		return snap
	}
	walk()
	recs.Flush()
	fs := loadFolderState(recs, mustAbs(t, root), WalkOptions{})
	if len(fs.old) != 3 {
		t.Fatalf("state holds %d files, want 3", len(fs.old))
	}
	// Unchanged files are vouched for.
	for _, p := range []string{"a.py", "sub/c.py"} {
		fi, _ := os.Stat(filepath.Join(root, p))
		if _, ok := fs.known(p, fi); !ok {
			t.Errorf("%s unchanged but not vouched for", p)
		}
	}
	// Same size and modification time, new content: the change time gives it away.
	time.Sleep(10 * time.Millisecond)
	os.WriteFile(filepath.Join(root, "b.py"), []byte("b = 9\n"), 0o644)
	os.Chtimes(filepath.Join(root, "b.py"), old, old)
	fi, _ := os.Stat(filepath.Join(root, "b.py"))
	if _, ok := fs.known("b.py", fi); ok {
		t.Error("a rewritten file with its old size and times was vouched for")
	}
	snap := walk()
	if got, _ := snap.ReadFile("b.py"); string(got) != "b = 9\n" {
		t.Errorf("b.py reads %q", got)
	}
	// A file modified within the racy window of the recorded state is read again.
	now := time.Now()
	os.Chtimes(filepath.Join(root, "a.py"), now, now)
	walk()
	recs.Flush()
	fs = loadFolderState(recs, mustAbs(t, root), WalkOptions{})
	fi, _ = os.Stat(filepath.Join(root, "a.py"))
	if _, ok := fs.known("a.py", fi); ok {
		t.Error("a file modified just before the state was recorded was vouched for")
	}
	// Other walk options: another state.
	if o := loadFolderState(recs, mustAbs(t, root), WalkOptions{KeepGenerated: true}); len(o.old) != 0 {
		t.Error("a walk with other options found this state")
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestFolderStateWalk: a walk given a FolderState's Known yields the files the state
// recorded unread (Vouched, with their hash and metadata) and reads a changed one.
func TestFolderStateWalk(t *testing.T) {
	root := writeTree(t, map[string]string{"a.py": "a = 1\n", "sub/b.py": "b = 2\n"})
	old := time.Now().Add(-time.Hour)
	for _, p := range []string{"a.py", "sub/b.py"} {
		os.Chtimes(filepath.Join(root, p), old, old)
	}
	st := store.Open(t.TempDir())
	defer st.Close()
	recs := st.Records("o/r")
	abs := mustAbs(t, root)
	walk := func() map[string]File {
		t.Helper()
		fs := LoadFolderState(recs, abs, WalkOptions{})
		opts := WalkOptions{Known: fs.Known}
		got := map[string]File{}
		if _, err := Walk(context.Background(), root, opts, func(f File) error {
			sum := f.Sum()
			if !f.Vouched() {
				sum = sha256.Sum256(f.Data)
			}
			fs.Add(f.Path, f.Info(), sum)
			got[f.Path] = f
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		fs.Save()
		recs.Flush()
		return got
	}
	for p, f := range walk() {
		if f.Vouched() || f.Data == nil || f.Info() == nil {
			t.Errorf("first walk: %s vouched %v, data %q, info %v; want read", p, f.Vouched(), f.Data, f.Info())
		}
	}
	os.WriteFile(filepath.Join(root, "sub/b.py"), []byte("b = 3\n"), 0o644)
	got := walk()
	if a := got["a.py"]; !a.Vouched() || a.Data != nil || a.Sum() != sha256.Sum256([]byte("a = 1\n")) || a.Info() == nil {
		t.Errorf("a.py: vouched %v, data %q, sum %x: want vouched with its hash, unread", a.Vouched(), a.Data, a.Sum())
	}
	if b := got["sub/b.py"]; b.Vouched() || string(b.Data) != "b = 3\n" {
		t.Errorf("sub/b.py changed: vouched %v, data %q; want read", b.Vouched(), b.Data)
	}
}

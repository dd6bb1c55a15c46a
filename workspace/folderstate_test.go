package workspace

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
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
	fc := FolderCache{CacheDir: t.TempDir(), Repo: "o/r"}
	walk := func() Snapshot {
		t.Helper()
		snap, _, err := OpenFolderCached(context.Background(), root, WalkOptions{}, fc)
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
	OpenStore(fc.CacheDir).repo(fc.Repo).flush()
	st := loadFolderState(OpenStore(fc.CacheDir).repo(fc.Repo), mustAbs(t, root), WalkOptions{})
	if len(st.old) != 3 {
		t.Fatalf("state holds %d files, want 3", len(st.old))
	}
	// Unchanged files are vouched for.
	for _, p := range []string{"a.py", "sub/c.py"} {
		fi, _ := os.Stat(filepath.Join(root, p))
		if _, ok := st.known(p, fi); !ok {
			t.Errorf("%s unchanged but not vouched for", p)
		}
	}
	// Same size and modification time, new content: the change time gives it away.
	time.Sleep(10 * time.Millisecond)
	os.WriteFile(filepath.Join(root, "b.py"), []byte("b = 9\n"), 0o644)
	os.Chtimes(filepath.Join(root, "b.py"), old, old)
	fi, _ := os.Stat(filepath.Join(root, "b.py"))
	if _, ok := st.known("b.py", fi); ok {
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
	OpenStore(fc.CacheDir).repo(fc.Repo).flush()
	st = loadFolderState(OpenStore(fc.CacheDir).repo(fc.Repo), mustAbs(t, root), WalkOptions{})
	fi, _ = os.Stat(filepath.Join(root, "a.py"))
	if _, ok := st.known("a.py", fi); ok {
		t.Error("a file modified just before the state was recorded was vouched for")
	}
	// Other walk options: another state.
	if o := loadFolderState(OpenStore(fc.CacheDir).repo(fc.Repo), mustAbs(t, root), WalkOptions{KeepGenerated: true}); len(o.old) != 0 {
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

// TestFolderSnapshotHashes: a view of a folder snapshot ([OpenDir]) reads and hashes
// only the files whose metadata changed since an earlier view (in any process), and a
// file rewritten with its old size and modification time is still read (its change
// time moved); the views' keys and files equal those of a view that reads everything.
func TestFolderSnapshotHashes(t *testing.T) {
	root := writeTree(t, map[string]string{"a.py": "a = 1\n", "b.py": "b = 2\n", "sub/c.py": "c = 3\n", "notes.txt": "x"})
	old := time.Now().Add(-time.Hour)
	for _, p := range []string{"a.py", "b.py", "sub/c.py"} {
		os.Chtimes(filepath.Join(root, p), old, old)
	}
	cache := t.TempDir()
	opts := Options{Repo: "o/r", CacheDir: cache, Strategy: "structural"}
	view := func() map[string]bool {
		t.Helper()
		snap, err := OpenDir(root, Limits{})
		if err != nil {
			t.Fatal(err)
		}
		key, files, _, err := viewKey(context.Background(), snap, opts, func(string, ...any) {})
		if err != nil {
			t.Fatal(err)
		}
		// What a view that hashes every file finds.
		wkey, want, _, _ := viewKey(context.Background(), struct{ Snapshot }{snap}, opts, func(string, ...any) {})
		if key != wkey || len(files) != len(want) {
			t.Fatalf("view key %s (%d files), want %s (%d)", key, len(files), wkey, len(want))
		}
		read := map[string]bool{}
		for i, f := range files {
			if f.path != want[i].path || f.sum != want[i].sum || f.size != want[i].size {
				t.Errorf("%s: %x (%d bytes), want %s %x (%d)", f.path, f.sum, f.size, want[i].path, want[i].sum, want[i].size)
			}
			if got, err := f.content(); err != nil || string(got) != string(want[i].raw) {
				t.Errorf("%s: content %q, %v; want %q", f.path, got, err, want[i].raw)
			}
			read[f.path] = f.raw != nil
		}
		OpenStore(cache).repo("o/r").flush()
		return read
	}
	if got := view(); !got["a.py"] || !got["b.py"] || !got["sub/c.py"] || len(got) != 3 {
		t.Fatalf("first view read %v, want every source file", got)
	}
	newProcess()
	if got := view(); got["a.py"] || got["b.py"] || got["sub/c.py"] {
		t.Errorf("a later view read %v, want none (unchanged)", got)
	}
	// Same size and modification time, new content: the change time gives it away.
	time.Sleep(10 * time.Millisecond)
	os.WriteFile(filepath.Join(root, "b.py"), []byte("b = 9\n"), 0o644)
	os.Chtimes(filepath.Join(root, "b.py"), old, old)
	newProcess()
	if got := view(); got["a.py"] || !got["b.py"] || got["sub/c.py"] {
		t.Errorf("after rewriting b.py a view read %v, want b.py only", got)
	}
	// A file modified just now (within the racy window of the state) is read again.
	now := time.Now()
	os.Chtimes(filepath.Join(root, "a.py"), now, now)
	view()
	if got := view(); !got["a.py"] {
		t.Errorf("a file modified within the racy window was not read again: %v", got)
	}
}

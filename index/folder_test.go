package index

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/repoctx/repoctx/snapshot"
	"github.com/repoctx/repoctx/store"
)

// TestFolderRepo checks the repository names FolderRepo gives folders: the absolute
// path, so two folders named alike do not share an index, and "owner/repo" for a
// competition snapshot folder.
func TestFolderRepo(t *testing.T) {
	root := t.TempDir()
	var ids []string
	for _, d := range []string{filepath.Join(root, "a", "src"), filepath.Join(root, "b", "src"), filepath.Join(root, "acme__tool-0123abcd")} {
		ids = append(ids, FolderRepo(d))
	}
	if want := []string{filepath.Join(root, "a", "src"), filepath.Join(root, "b", "src"), "acme/tool"}; !slices.Equal(ids, want) {
		t.Errorf("repositories %q, want %q", ids, want)
	}
}

// TestFolderSnapshotHashes: a view of a folder snapshot (snapshot.OpenDir) reads and hashes
// only the files whose metadata changed since an earlier view (in any process), and a
// file rewritten with its old size and modification time is still read (its change
// time moved); the views' keys and files equal those of a view that reads everything.
func TestFolderSnapshotHashes(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"a.py": "a = 1\n", "b.py": "b = 2\n", "sub/c.py": "c = 3\n", "notes.txt": "x"})
	old := time.Now().Add(-time.Hour)
	for _, p := range []string{"a.py", "b.py", "sub/c.py"} {
		os.Chtimes(filepath.Join(root, p), old, old)
	}
	cache := t.TempDir()
	view := func() map[string]bool {
		t.Helper()
		st := store.Open(cache) // a new process
		defer st.Close()
		ix, err := Open(st, "o/r", Options{Strategy: "structural"})
		if err != nil {
			t.Fatal(err)
		}
		snap, err := snapshot.OpenDir(root, snapshot.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		key, files, _, err := ix.viewKey(context.Background(), snap, func(string, ...any) {})
		if err != nil {
			t.Fatal(err)
		}
		// What a view that hashes every file finds.
		wkey, want, _, _ := ix.viewKey(context.Background(), struct{ snapshot.Snapshot }{snap}, func(string, ...any) {})
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
		return read
	}
	if got := view(); !got["a.py"] || !got["b.py"] || !got["sub/c.py"] || len(got) != 3 {
		t.Fatalf("first view read %v, want every source file", got)
	}
	if got := view(); got["a.py"] || got["b.py"] || got["sub/c.py"] {
		t.Errorf("a later view read %v, want none (unchanged)", got)
	}
	// Same size and modification time, new content: the change time gives it away.
	time.Sleep(10 * time.Millisecond)
	os.WriteFile(filepath.Join(root, "b.py"), []byte("b = 9\n"), 0o644)
	os.Chtimes(filepath.Join(root, "b.py"), old, old)
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

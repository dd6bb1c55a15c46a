package snapshot

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"testing/fstest"
)

// rootFSTree makes a folder with files, nested folders, symlinks (to a file, to a
// folder, out of the root, broken, a loop), a named pipe and an unreadable folder.
func rootFSTree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.kt": "fun a() = 1\n", "b.py": "b = 2\n", "big.txt": string(make([]byte, 5000)),
		"pkg/c.kt": "fun c() = 3\n", "pkg/sub/d.py": "d = 4\n", "pkg/sub/deep/e.kt": "fun e() = 5\n", "other/f.kt": "fun f() = 6\n"})
	for _, l := range [][2]string{{"a.kt", "link.kt"}, {"pkg", "linkdir"}, {"/etc/hostname", "out"}, {"missing", "broken"},
		{"loop", "loop"}, {"../a.kt", "pkg/up.kt"}, {"sub", "pkg/sublink"}} {
		if err := os.Symlink(l[0], filepath.Join(dir, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pkg", "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "closed"), 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// openRootFS opens dir as an os.Root and its RootFS, both closed when the test ends.
func openRootFS(t *testing.T, dir string) (*os.Root, *RootFS) {
	t.Helper()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	rfs := NewRootFS(root)
	t.Cleanup(func() {
		rfs.Close()
		root.Close()
	})
	return root, rfs
}

// describe is what a listing says of its entries: name, type and, from Info, the
// mode, size, modification time and inode.
func describe(entries []fs.DirEntry, err error) []string {
	out := []string{fmt.Sprintf("err=%v", err != nil)}
	for _, e := range entries {
		s := fmt.Sprintf("%s %v %v", e.Name(), e.Type(), e.IsDir())
		fi, err := e.Info()
		if err != nil {
			s += " info error"
		} else {
			ino := uint64(0)
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				ino = st.Ino
			}
			s += fmt.Sprintf(" %s %v %d %v %d %v", fi.Name(), fi.Mode(), fi.Size(), fi.ModTime().UnixNano(), ino, fi.IsDir())
		}
		out = append(out, s)
	}
	return out
}

// TestRootFSReadDir: RootFS's listing (getdents64 below the parent's descriptor, stats
// taken when asked for) says the same of every folder as os.Root's, through symlinked
// folders too, and refuses what os.Root refuses (a symlink out of the root, an
// unreadable folder, a file); its Stat says the same as os.Root's of every path.
func TestRootFSReadDir(t *testing.T) {
	dir := rootFSTree(t)
	root, rfs := openRootFS(t, dir)
	for _, p := range []string{".", "pkg", "pkg/sub", "pkg/sub/deep", "other", "empty", "closed", "linkdir", "linkdir/sub",
		"pkg/sublink", "out", "broken", "a.kt", "missing", "pkg/sub", "."} {
		want := describe(readDirOSRoot(root, p))
		got := describe(fs.ReadDir(rfs, p))
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("ReadDir(%q):\n got %q\nwant %q", p, got, want)
		}
	}
	for _, p := range []string{".", "a.kt", "pkg", "pkg/c.kt", "pkg/sub/deep/e.kt", "link.kt", "linkdir", "linkdir/c.kt", "out",
		"broken", "loop", "pkg/up.kt", "pkg/sublink", "pkg/fifo", "closed", "missing", "pkg/missing", "a.kt/x"} {
		want := describe(statEntries(fs.Stat(root.FS(), p)))
		got := describe(statEntries(fs.Stat(rfs, p)))
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("Stat(%q):\n got %q\nwant %q", p, got, want)
		}
	}
	// fstest opens every file it lists: not the named pipe's folder (an open of a
	// pipe waits for a writer).
	sub, err := fs.Sub(rfs, "pkg/sub")
	if err != nil {
		t.Fatal(err)
	}
	if err := fstest.TestFS(sub, "d.py", "deep/e.kt"); err != nil {
		t.Error(err)
	}
}

// statEntries is a stat's answer as a listing of one entry, for describe.
func statEntries(fi fs.FileInfo, err error) ([]fs.DirEntry, error) {
	if err != nil {
		return nil, err
	}
	return []fs.DirEntry{fs.FileInfoToDirEntry(fi)}, nil
}

// readDirOSRoot is the listing of os.Root's FS, sorted by name.
func readDirOSRoot(root *os.Root, p string) ([]fs.DirEntry, error) {
	return fs.ReadDir(root.FS(), p)
}

// TestRootFSReadDirManyFolders: with more folders listed than descriptors kept, an
// entry whose folder's descriptor was closed still answers Info (through the root),
// and concurrent listings of the same folders agree.
func TestRootFSReadDirManyFolders(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	n := rootFSKeepFDs*2 + 5
	for i := range n {
		files[fmt.Sprintf("d%03d/x/f.kt", i)] = fmt.Sprintf("fun f%d() = %d\n", i, i)
	}
	writeFiles(t, dir, files)
	root, rfs := openRootFS(t, dir)
	var kept [][]fs.DirEntry
	for i := range n {
		entries, err := fs.ReadDir(rfs, fmt.Sprintf("d%03d/x", i))
		if err != nil || len(entries) != 1 {
			t.Fatalf("d%03d/x: %v, %v", i, entries, err)
		}
		kept = append(kept, entries)
	}
	for i, entries := range kept { // the first ones' descriptors are closed by now
		fi, err := entries[0].Info()
		if err != nil || fi.Size() != int64(len(files[fmt.Sprintf("d%03d/x/f.kt", i)])) {
			t.Fatalf("d%03d/x/f.kt: Info = %v, %v", i, fi, err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n {
				p := fmt.Sprintf("d%03d/x", (i+g*17)%n)
				got := describe(fs.ReadDir(rfs, p))
				want := describe(readDirOSRoot(root, p))
				if fmt.Sprint(got) != fmt.Sprint(want) {
					errs <- fmt.Errorf("%s: got %q, want %q", p, got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

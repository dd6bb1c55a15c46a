package workspace

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"

	"github.com/repoctx/repoctx/retrieve"
)

// writeRepo writes files (path -> content) under dir.
func writeRepo(t *testing.T, dir string, files map[string]string) Snapshot {
	t.Helper()
	for p, text := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := OpenDir(dir, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// TestStoreReuse: a second snapshot of a repository chunks and parses only the files
// that changed; its chunks and symbols equal those of a build without the store.
func TestStoreReuse(t *testing.T) {
	v1 := map[string]string{
		"pkg/a.py": "def alpha(x):\n    return x + 1\n",
		"pkg/b.py": "class Beta:\n    def one(self):\n        return 1\n\n    def two(self):\n        return 2\n",
		"pkg/c.py": "import os\n\nPATH = os.getcwd()\n",
	}
	v2 := map[string]string{
		"pkg/a.py": v1["pkg/a.py"],
		"pkg/b.py": "class Beta:\n    def one(self):\n        return 10\n\n    def two(self):\n        return 2\n",
		"pkg/c.py": v1["pkg/c.py"],
		"pkg/d.py": "from pkg.a import alpha\n\nprint(alpha(2))\n",
	}
	cache := t.TempDir()
	index := func(snap Snapshot, cache string) (*retrieve.Index, Stats) {
		r, err := Open(context.Background(), snap, Options{CacheDir: cache, Build: retrieve.BuildOptions{Dense: retrieve.DenseNone}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return r.Index(), r.Stats()
	}
	_, st1 := index(writeRepo(t, filepath.Join(t.TempDir(), "r-1"), v1), cache)
	if st1.Chunked != 3 || st1.Reused != 0 {
		t.Errorf("first snapshot: chunked %d, reused %d; want 3, 0", st1.Chunked, st1.Reused)
	}
	snap2 := writeRepo(t, filepath.Join(t.TempDir(), "r-2"), v2)
	ix2, st2 := index(snap2, cache)
	if st2.Chunked != 2 || st2.Reused != 2 {
		t.Errorf("second snapshot: chunked %d, reused %d; want 2 (b.py changed, d.py new), 2", st2.Chunked, st2.Reused)
	}
	fresh, _ := index(snap2, t.TempDir())
	if !reflect.DeepEqual(ix2.Chunks(), fresh.Chunks()) {
		t.Errorf("chunks from the store differ from a fresh build")
	}
	// Symbols: the second snapshot's table from the store equals one built directly.
	store := OpenStore(cache)
	symbolFiles(writeRepo(t, filepath.Join(t.TempDir(), "r-1"), v1), store, 0, nil) // stores v1's files
	got := symbolFiles(snap2, store, 0, nil)
	want := symbolFiles(snap2, nil, 0, nil)
	if len(got) != 4 || !reflect.DeepEqual(got, want) {
		t.Errorf("symbols from the store differ from a direct extraction (%d files)", len(got))
	}
	// A damaged record is a miss, rewritten by the next build: one byte flipped, a
	// record copied over another key, a FIFO (must not block), plain garbage.
	var recs []string
	filepath.WalkDir(filepath.Join(OpenStore(cache).Dir(), "chunks"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			recs = append(recs, p)
		}
		return nil
	})
	if len(recs) < 4 {
		t.Fatalf("%d chunk records, want at least 4", len(recs))
	}
	for i, p := range recs {
		b, _ := os.ReadFile(p)
		switch i % 4 {
		case 0:
			b[len(b)-3] ^= 0x01
			os.WriteFile(p, b, 0o644)
		case 1:
			other, _ := os.ReadFile(recs[(i+1)%len(recs)])
			os.WriteFile(p, other, 0o644)
		case 2:
			os.Remove(p)
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
		case 3:
			os.WriteFile(p, []byte("garbage"), 0o644)
		}
	}
	_, st3 := index(writeRepo(t, filepath.Join(t.TempDir(), "r-3"), v2), cache)
	if st3.Reused != 0 {
		t.Errorf("after damage: chunked %d, reused %d; want no record reused", st3.Chunked, st3.Reused)
	}
}

// TestIndexStoresSymbols: with Options.Symbols the chunker's parse also yields
// the files' symbols, stored for the symbol table, equal to a separate extraction.
func TestIndexStoresSymbols(t *testing.T) {
	snap := writeRepo(t, filepath.Join(t.TempDir(), "r-1"), map[string]string{
		"pkg/a.py":  "import os\n\n\nclass A:\n    \"\"\"Doc.\"\"\"\n\n    def f(self, x):\n        return os.path.join(x)\n",
		"src/B.kt":  "package b\n\nimport a.C as D\n\nfun interface F { fun g(): Int }\n\nclass B(val x: Int) {\n  fun h() = x\n}\n",
		"pkg/c.py":  "def broken(:\n    pass\n",
		"notes.txt": "not source\n",
	})
	cache := t.TempDir()
	r, err := Open(context.Background(), snap, Options{CacheDir: cache, Build: retrieve.BuildOptions{Dense: retrieve.DenseNone}, Symbols: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Symbols() == nil {
		t.Fatal("no symbol table with Options.Symbols")
	}
	n := 0
	filepath.WalkDir(filepath.Join(OpenStore(cache).Dir(), "symbols"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return nil
	})
	if n != 3 {
		t.Errorf("%d symbol records stored by Open, want 3", n)
	}
	got, want := symbolFiles(snap, OpenStore(cache), 0, nil), symbolFiles(snap, nil, 0, nil)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("symbols from the chunker's parse differ from a separate extraction:\n%+v\n%+v", got, want)
	}
}
func TestDefaultCacheDir(t *testing.T) {
	d := DefaultCacheDir()
	if filepath.Base(d) != "repoctx" && filepath.Base(d) != "repoctx-cache" {
		t.Errorf("DefaultCacheDir() = %q", d)
	}
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "")
	t.Setenv("LocalAppData", "")
	if d := DefaultCacheDir(); d != filepath.Join(os.TempDir(), "repoctx-cache") {
		t.Errorf("DefaultCacheDir() without a home = %q", d)
	}
}

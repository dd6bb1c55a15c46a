package index

import (
	"context"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/repoctx/repoctx/internal/ziptest"
	"github.com/repoctx/repoctx/retrieve"
	"github.com/repoctx/repoctx/snapshot"
	"github.com/repoctx/repoctx/store"
)

// readCounter is a snapshot whose ReadFile calls are counted; it hides the
// snapshot's optional interfaces (RawDigester among them).
type readCounter struct {
	snapshot.Snapshot
	reads *atomic.Int64
}

func (r readCounter) ReadFile(p string) ([]byte, error) {
	r.reads.Add(1)
	return r.Snapshot.ReadFile(p)
}

// rawReadCounter is readCounter with the snapshot's RawDigester.
type rawReadCounter struct{ readCounter }

func (r rawReadCounter) RawDigest(p string) ([32]byte, bool) {
	return r.Snapshot.(snapshot.RawDigester).RawDigest(p)
}

// TestViewSkipsFilesReadInAnotherSnapshot: the view of an inner zip reads only the
// files that no earlier view of the index read stored as the same bytes (the changed
// one), and is the view made by reading every file.
func TestViewSkipsFilesReadInAnotherSnapshot(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, filepath.Join(root, "o__r-1111111"), map[string]string{
		"a.py": "def alpha(x):\n    return x + 1\n",
		"b.py": "def beta():\n    return alpha(2)\n",
		"c.py": "def gamma(items):\n    return sorted(items)\n",
	})
	writeFiles(t, filepath.Join(root, "o__r-2222222"), map[string]string{
		"a.py": "def alpha(x):\n    return x + 1\n",
		"b.py": "def beta():\n    return alpha(3)\n",
		"c.py": "def gamma(items):\n    return sorted(items)\n",
	})
	out := filepath.Join(t.TempDir(), "snaps.zip")
	ziptest.WriteZipOfFolders(t, root, out)
	src, err := snapshot.OpenZipSource(out, snapshot.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	open := func(name string, raw bool, reads *atomic.Int64) snapshot.Snapshot {
		t.Helper()
		s, err := src.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := s.(snapshot.RawDigester); !ok {
			t.Fatal("an inner zip's snapshot is not a RawDigester")
		}
		c := readCounter{s, reads}
		if raw {
			return rawReadCounter{c}
		}
		return c
	}
	view := func(ix *Index, s snapshot.Snapshot) *View {
		t.Helper()
		v, err := ix.View(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { v.Close() })
		return v
	}
	newIndex := func() *Index { // over a store of its own
		t.Helper()
		st := store.Open(t.TempDir())
		t.Cleanup(func() { st.Close() })
		ix, err := Open(st, "o/r", Options{Dense: retrieve.DenseNone, Symbols: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
		return ix
	}

	ix := newIndex()
	var reads1, reads2 atomic.Int64
	view(ix, open("o__r-1111111", true, &reads1))
	got := view(ix, open("o__r-2222222", true, &reads2))
	if reads1.Load() != 3 || reads2.Load() != 1 {
		t.Errorf("files read: %d by the first view, %d by the second; want 3 and 1 (the changed file)", reads1.Load(), reads2.Load())
	}

	ix2 := newIndex()
	var reads3 atomic.Int64
	view(ix2, open("o__r-1111111", false, &reads3))
	want := view(ix2, open("o__r-2222222", false, &reads3))
	if reads3.Load() != 6 {
		t.Errorf("without raw digests %d files read, want 6", reads3.Load())
	}
	if !reflect.DeepEqual(got.Retriever().Chunks(), want.Retriever().Chunks()) {
		t.Error("the view that skipped reads differs from the one that read every file")
	}
	q := retrieve.Query{Text: "alpha sorted items", K: 5, Mode: retrieve.BM25}
	g, err1 := got.Retriever().Search(context.Background(), q)
	w, err2 := want.Retriever().Search(context.Background(), q)
	if err1 != nil || err2 != nil || !reflect.DeepEqual(g, w) {
		t.Errorf("search: %v %v, read every file: %v %v", g, err1, w, err2)
	}
}

package index

import (
	"context"
	"github.com/repoctx/repoctx/chunker"
	"os"
	"reflect"
	"sync"
	"testing"

	"github.com/repoctx/repoctx/retrieve"
)

func lazyCaseFolder(t *testing.T) string {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"a.py":     "def alpha():\n    return 1\n",
		"b.py":     "def beta():\n    return alpha()\n\n\ndef gamma(x):\n    if x:\n        return beta()\n    return 0\n\n\nclass K:\n    def m(self):\n        return gamma(1)\n",
		"c/App.kt": "package app\n\nclass App(val name: String) {\n    fun start() = println(name)\n}\n",
		"z.py":     "x = 1\n",
	})
	return root
}

// lazyCaseStored returns lazyCaseFolder, a cache, the options that store its view
// there, and the view made (and stored) with them.
func lazyCaseStored(t *testing.T) (root, cache string, opts Options, made *View) {
	root, cache = lazyCaseFolder(t), t.TempDir()
	opts = DefaultOptions()
	opts.RepoLSA, opts.StoreViews = true, ViewsStored
	return root, cache, opts, folderView(t, root, cache, opts)
}

// TestLazyStoredViewFlips flips bytes all over a stored view file: every read either
// misses (made again) or gives the made view, but for a file whose record was hit,
// whose chunks come without text (a record's checksum is checked when it is
// decoded); nothing panics. A big file's record spans blocks of the view's checksums
// that hold records only, which the reader leaves to the records' own checksums.
func TestLazyStoredViewFlips(t *testing.T) {
	root, cache := lazyCaseFolder(t), t.TempDir()
	writeFiles(t, root, map[string]string{"big.py": fillerPython("f", 1500)})
	opts := DefaultOptions()
	opts.RepoLSA, opts.StoreViews = true, ViewsStored
	made := folderView(t, root, cache, opts)
	want := made.Retriever().Chunks()
	loaded := folderView(t, root, cache, opts)
	if !loaded.Stats().StoredView {
		t.Fatal("not read back")
	}
	path := firstView(t, cache)
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	stubs := 0 // chunks of a damaged record
	for i := 0; i < len(orig); i += 1 + i/20 {
		b := append([]byte(nil), orig...)
		b[i] ^= 0x5a
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		v := folderView(t, root, cache, opts)
		got := v.Retriever().Chunks()
		if len(got) != len(want) {
			t.Fatalf("flip at %d: %d chunks, made %d", i, len(got), len(want))
		}
		for j := range got {
			w := want[j]
			stub := chunker.Chunk{ID: w.ID, Path: w.Path, Lang: w.Lang, Ordinal: w.Ordinal}
			if !reflect.DeepEqual(got[j], w) {
				if !v.Stats().StoredView || !reflect.DeepEqual(got[j], stub) {
					t.Fatalf("flip at %d: chunk %s differs (stored view %v)", i, w.ID, v.Stats().StoredView)
				}
				stubs++
			}
		}
		v.Close()
	}
	if stubs == 0 {
		t.Error("no flip hit a chunk record")
	}
}

// TestLazyDamagedPayloadPreChecksum runs what readView does before the checksum
// is known (decodeView, LoadImageLazy) on damaged payloads, and
// uses the index: it must not panic.
func TestLazyDamagedPayloadPreChecksum(t *testing.T) {
	_, cache, _, made := lazyCaseStored(t)
	path := firstView(t, cache)
	orig, _ := os.ReadFile(path)
	payload := orig[storeViewHead:]
	lsa, _ := made.Retriever().LSA()
	var emb retrieve.Embedder
	if lsa != nil {
		emb = lsa
	}
	try := func(b []byte) {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("panic: %v", r)
			}
		}()
		sv, err := decodeView(b)
		if err != nil {
			return
		}
		img := append(make([]byte, 0, len(sv.rimg)+8), sv.rimg...)
		rix, err := retrieve.LoadImageLazy("k", sv.files, decodeViewChunks, img, emb)
		if err != nil {
			return
		}
		for i := range rix.Len() {
			rix.ChunkAt(i)
		}
		for _, m := range []retrieve.Mode{retrieve.BM25, retrieve.Hybrid} {
			rix.Search(context.Background(), retrieve.Query{Text: "def beta alpha gamma", K: 5, Mode: m})
		}
	}
	for i := range payload {
		for _, x := range []byte{0x01, 0x80, 0xff} {
			b := append([]byte(nil), payload...)
			b[i] ^= x
			try(b)
		}
	}
	for n := range len(payload) {
		try(append([]byte(nil), payload[:n]...))
	}
}

// TestLazyEmptyFolderStoredView: a folder without files to index, its view stored and
// read back.
func TestLazyEmptyFolderStoredView(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"README": "nothing here\n", "empty.py": ""})
	cache := t.TempDir()
	opts := DefaultOptions()
	opts.RepoLSA, opts.StoreViews = true, ViewsStored
	for range 3 {
		v := folderView(t, root, cache, opts)
		for _, m := range []retrieve.Mode{retrieve.BM25, retrieve.Dense, retrieve.Hybrid} {
			v.Retriever().Search(context.Background(), retrieve.Query{Text: "x", K: 3, Mode: m})
		}
		t.Logf("stored %v chunks %d", v.Stats().StoredView, v.Retriever().Len())
		v.Close()
	}
}

// TestLazyStoredViewConcurrent: a view read back, used by many goroutines at once.
func TestLazyStoredViewConcurrent(t *testing.T) {
	root, cache, opts, made := lazyCaseStored(t)
	for round := range 4 {
		v := folderView(t, root, cache, opts)
		if !v.Stats().StoredView {
			t.Fatal("not stored")
		}
		rix := v.Retriever()
		var wg sync.WaitGroup
		for g := range 12 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range 40 {
					i := (k + g + round) % rix.Len()
					switch k % 4 {
					case 0:
						if !reflect.DeepEqual(*rix.ChunkAt(i), *made.Retriever().ChunkAt(i)) {
							t.Error("ChunkAt", i)
						}
					case 1:
						p := made.Retriever().ChunkAt(i).Path
						if rix.FileText(p) != made.Retriever().FileText(p) {
							t.Error("FileText", p)
						}
					case 2:
						q := retrieve.Query{Text: made.Retriever().ChunkAt(i).Text, K: 4, Mode: retrieve.Mode(g % 3),
							Prefilter: func(p, l string) retrieve.Verdict { return retrieve.Verdict(len(p) % 3) }}
						a, e1 := rix.Search(context.Background(), q)
						b, e2 := made.Retriever().Search(context.Background(), q)
						if e1 != nil || e2 != nil || !reflect.DeepEqual(a, b) {
							t.Error("search", a, b, e1, e2)
						}
					case 3:
						if len(rix.Chunks()) != rix.Len() {
							t.Error("Chunks")
						}
					}
				}
			}()
		}
		wg.Wait()
		v.Close()
	}
}

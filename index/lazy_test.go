package index

import (
	"context"
	"crypto/sha256"
	"errors"
	"testing"

	"github.com/repoctx/repoctx/snapshot"
	"github.com/repoctx/repoctx/store"
)

// TestSymbolsAfterFailedRead: a view whose file's chunks are stored without its
// symbols (a cache made without definitions) and whose bytes cannot be read now (a
// lazy read that failed: the file changed since its hash was taken) has no symbols
// for it, and a later view of the same version whose bytes can be read has them: the
// failed read is not kept.
func TestSymbolsAfterFailedRead(t *testing.T) {
	text := []byte("package p\n\nclass Widget(val size: Int) {\n    fun grow(by: Int): Int = size + by\n}\n")
	sum := sha256.Sum256(text)
	st := store.Open(t.TempDir())
	defer st.Close()
	ctx := context.Background()
	view := func(ix *Index, f *snapshot.MemFile) *View {
		t.Helper()
		v, err := ix.View(ctx, snapshot.NewMem("s", map[string]*snapshot.MemFile{"W.kt": f}))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	o := DefaultOptions()
	o.Symbols = false
	ix, err := Open(st, "r", o)
	if err != nil {
		t.Fatal(err)
	}
	view(ix, &snapshot.MemFile{Data: text, Sum: sum}).Close()
	ix.Close()

	o.Symbols = true
	if ix, err = Open(st, "r", o); err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	failed := &snapshot.MemFile{Sum: sum, Lazy: &snapshot.Lazy{Size: int64(len(text)), Read: func() ([]byte, error) { return nil, errors.New("gone") }}}
	v := view(ix, failed)
	if len(v.Retriever().Chunks()) == 0 {
		t.Fatal("the stored chunks are not in the view")
	}
	v.Close()
	v = view(ix, &snapshot.MemFile{Data: text, Sum: sum})
	defer v.Close()
	if v.Symbols().File("W.kt") == nil {
		t.Error("no symbols for W.kt once its bytes can be read")
	}
}

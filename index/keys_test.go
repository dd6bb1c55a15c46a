package index

import (
	"crypto/sha256"
	"fmt"
	"testing"

	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/retrieve"
	"github.com/repoctx/repoctx/store"
)

// TestRecordKeysUnchanged: the store keys of chunk, symbol and vector records are the
// hashes the store has always used, so a cache written before stays readable.
func TestRecordKeysUnchanged(t *testing.T) {
	sum := sha256.Sum256([]byte("x = 1\n"))
	for _, c := range []struct{ kind, settings, path string }{
		{"chunks", "structural/c800/w20/o5\x00" + chunkCodec, "pkg/a.py"},
		{"symbols", symbolsCacheVersion, "src/Main.kt"},
		{"chunks", "fixed/c800/w20/o10", "README"},
	} {
		h := sha256.New()
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00", store.Version, c.kind, c.settings)
		if g := grammars.ForPath(c.path); g != nil {
			fmt.Fprintf(h, "%s", g.Version)
		}
		fmt.Fprintf(h, "\x00%s\x00%x", c.path, sum)
		var want [32]byte
		h.Sum(want[:0])
		if got := storeKey(c.kind, c.settings, c.path, sum); got != want {
			t.Errorf("storeKey(%q, %q, %q) = %x, want %x", c.kind, c.settings, c.path, got, want)
		}
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00vec\x00%s\x00%d\x00", store.Version, "lsa-v1-d128@fit-1", retrieve.KeepHead)
	h.Write(sum[:])
	want := store.Key{Kind: store.KindVector}
	h.Sum(want.Hash[:0])
	if got := vectorKey("lsa-v1-d128@fit-1", sum); got != want {
		t.Errorf("vectorKey = %x, want %x", got.Hash, want.Hash)
	}
}

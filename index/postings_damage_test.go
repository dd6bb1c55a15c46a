package index

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"

	"github.com/repoctx/repoctx/retrieve"
)

// TestStoredViewDamagedPostings: a byte of a postings list changed in a 16 KiB block
// of the view's checksums that holds postings only (a term frequency, which the
// list's own checks, validPostings, accept): the view is still read back (Verify
// leaves the postings to Check), a search that reads the list finds the damage, and
// the next view is made again, then stored anew. Covers readView's
// CheckPostings/ImagePostings end to end (retrieve's tests cover them alone).
func TestStoredViewDamagedPostings(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"big.py": fillerPython("f", 3000)})
	cache := t.TempDir()
	opts := DefaultOptions()
	opts.Dense, opts.StoreViews = retrieve.DenseNone, ViewsStored
	var vocab []string
	for i := range 3000 {
		vocab = append(vocab, fmt.Sprintf("f%d", i), fmt.Sprint(i))
	}
	query := "def return x " + strings.Join(vocab, " ")
	view := viewer(t, root, cache, opts)
	view(func(v *View) {}) // made, stored
	path := firstView(t, cache)
	raw, _ := os.ReadFile(path)
	n := binary.LittleEndian.Uint64(raw[16:])
	payload := raw[storeViewHead : storeViewHead+int(n)]
	sv, err := decodeView(payload)
	if err != nil {
		t.Fatal(err)
	}
	rix, err := retrieve.LoadImageLazy("k", sv.files, decodeViewChunks, sv.rimg, nil)
	if err != nil {
		t.Fatal(err)
	}
	post := rix.ImagePostings()[0]
	start := int(uintptr(unsafe.Pointer(&post[0])) - uintptr(unsafe.Pointer(&payload[0])))
	if start < 0 || start+len(post) > len(payload) {
		t.Skip("the image was copied (not aligned)")
	}
	const block = 1 << 14
	blk := (start + block - 1) / block
	if (blk+1)*block > start+len(post) {
		t.Fatalf("no block wholly in the postings (%d bytes)", len(post))
	}
	at := start + (blk*block+block/2-start)/8*8 + 4 // a posting's tf, mid-block
	raw[storeViewHead+at]++                         // tf+1: still a valid list
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	view(func(v *View) {
		if !v.Stats().StoredView {
			t.Fatal("damaged postings failed the whole view")
		}
		if _, err := v.Retriever().Search(context.Background(), retrieve.Query{Text: query, K: 5, Mode: retrieve.BM25}); err != nil {
			t.Fatal(err)
		}
	})
	view(func(v *View) {
		if v.Stats().StoredView {
			t.Error("the view with damaged postings was read back again")
		}
	})
	view(func(v *View) {
		if !v.Stats().StoredView {
			t.Error("the view made again was not stored anew")
		}
	})
}

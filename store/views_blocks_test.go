package store

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestMappedViewBlockEdges: for payloads of 0, 1, a block less one, one block
// exactly, a block and one, two blocks exactly and two and one bytes, a flipped byte
// at the first and at the last byte of every block fails Verify and Check of that
// byte (alone, from any of concurrent goroutines), and no other block's; Check
// refuses bytes that run past the payload into the block table; a lazy part that
// ends one byte short of a damaged block's end does not hide it.
func TestMappedViewBlockEdges(t *testing.T) {
	const block = 1 << viewBlockShift
	r := Open(t.TempDir()).Records("o/e")
	path := filepath.Join(r.Dir(), "ab"+viewExt)
	for _, size := range []int{0, 1, block - 1, block, block + 1, 2 * block, 2*block + 1} {
		payload := bytes.Repeat([]byte{0x5a}, size)
		if err := r.PutView("ab", func(w io.Writer) error { _, err := w.Write(payload); return err }); err != nil {
			t.Fatal(err)
		}
		clean, _ := os.ReadFile(path)
		blocks := (size + block - 1) / block
		if len(clean) != viewHead+size+4*blocks {
			t.Fatalf("size %d: file of %d bytes, want %d", size, len(clean), viewHead+size+4*blocks)
		}
		v, ok := r.MapView("ab")
		if !ok || len(v.Payload) != size || !v.Verify(nil, nil) || !v.Check(v.Payload) {
			t.Fatalf("size %d: clean view does not check (%v)", size, ok)
		}
		if size > 0 && v.Check(v.file[viewHead+size-1:viewHead+size+1]) {
			t.Errorf("size %d: Check of bytes past the payload", size)
		}
		v.Release()
		for blk := range blocks {
			last := min((blk+1)*block, size) - 1
			for _, at := range []int{blk * block, last} {
				raw := bytes.Clone(clean)
				raw[viewHead+at] ^= 1
				if err := os.WriteFile(path, raw, 0o644); err != nil {
					t.Fatal(err)
				}
				v, ok := r.MapView("ab")
				if !ok {
					t.Fatalf("size %d: not mapped", size)
				}
				p := v.Payload
				if v.Verify(nil, nil) {
					t.Errorf("size %d, byte %d: Verify true", size, at)
				}
				if v.Verify([][]byte{p[blk*block : last]}, nil) {
					t.Errorf("size %d, byte %d: Verify true, the lazy part one byte short of the block", size, at)
				}
				if !v.Verify([][]byte{p[blk*block : last+1]}, nil) {
					t.Errorf("size %d, byte %d: Verify false, the block lazy", size, at)
				}
				var wg sync.WaitGroup
				for range 4 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if v.Check(p[at : at+1]) {
							t.Errorf("size %d, byte %d: Check true", size, at)
						}
						for o := range blocks {
							if o != blk && !v.Check(p[o*block:min((o+1)*block, size)]) {
								t.Errorf("size %d, byte %d: Check of block %d false", size, at, o)
							}
						}
					}()
				}
				wg.Wait()
				v.Release()
			}
		}
	}
}

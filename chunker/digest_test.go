package chunker_test

import (
	"archive/zip"
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/symbols"
)

// TestOutputDigest writes one line per distinct Kotlin and Python file of every
// snapshot in ../shared/data (dev and starter-kit zips): a hash of its structural
// chunks at three size caps and of its extracted symbols. It runs only when
// REPOCTX_DIGEST names the output file; comparing two such files before and after a
// change shows whether the chunker's or the extractor's output changed.
func TestOutputDigest(t *testing.T) {
	out := os.Getenv("REPOCTX_DIGEST")
	if out == "" {
		t.Skip("set REPOCTX_DIGEST=<file> to write output digests")
	}
	w, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	caps := []int{chunker.DefaultMaxChars, 200, 60}
	var ss []*chunker.Structural
	for _, c := range caps {
		s := chunker.NewStructural(chunker.Options{MaxChars: c})
		defer s.Close()
		ss = append(ss, s)
	}
	x := symbols.NewExtractor(0)
	defer x.Close()
	seen := map[[32]byte]bool{}
	total := sha256.New()
	files := 0
	for _, rel := range []string{"dev/kotlin-dev.zip", "dev/python-dev.zip", "starter-kit/python-start.zip"} {
		outer, err := zip.OpenReader(filepath.Join("..", "..", "shared", "data", rel))
		if err != nil {
			t.Skipf("no shared data: %v", err)
		}
		for _, snap := range outer.File {
			data := readZip(t, snap)
			inner, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
			if err != nil {
				t.Fatal(err)
			}
			for _, zf := range inner.File {
				if !strings.HasSuffix(zf.Name, ".kt") && !strings.HasSuffix(zf.Name, ".py") {
					continue
				}
				raw := readZip(t, zf)
				key := sha256.Sum256(append([]byte(zf.Name+"\x00"), raw...))
				if seen[key] {
					continue
				}
				seen[key] = true
				f, err := chunker.Decode(zf.Name, raw, 0)
				if err != nil {
					continue
				}
				h := sha256.New()
				for _, s := range ss {
					cs, err := s.Chunk(f)
					if err != nil {
						t.Fatal(err)
					}
					json.NewEncoder(h).Encode(cs)
				}
				sym, err := x.Extract(f)
				if err != nil {
					fmt.Fprintf(h, "err %v\n", err)
				} else {
					json.NewEncoder(h).Encode(sym)
				}
				line := fmt.Sprintf("%x %x %s\n", key[:6], h.Sum(nil)[:12], zf.Name)
				bw.WriteString(line)
				total.Write([]byte(line))
				files++
			}
		}
		outer.Close()
	}
	t.Logf("%d distinct files, digest %x", files, total.Sum(nil)[:16])
}

func readZip(t *testing.T, zf *zip.File) []byte {
	r, err := zf.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

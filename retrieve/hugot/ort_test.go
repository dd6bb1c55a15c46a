//go:build onnxruntime

package hugot

import (
	"os"
	"testing"

	"github.com/repoctx/repoctx/retrieve"
)

// ortEmbedder opens the tiny model with ONNX Runtime, skipping the test when the
// library cannot be loaded (set REPOCTX_ORT_LIB to libonnxruntime.so's path).
func ortEmbedder(t testing.TB) retrieve.Embedder {
	t.Helper()
	if os.Getenv("REPOCTX_ORT_LIB") == "" {
		t.Skip("REPOCTX_ORT_LIB is not set")
	}
	emb, err := New(tinyBERT, Options{Backend: "ort"})
	if err != nil {
		t.Fatalf("New(ort): %v", err)
	}
	t.Cleanup(func() { emb.Close() })
	return emb
}

// TestORTMatchesReference checks the ONNX Runtime backend against numpy's embeddings
// and against the pure-Go backend.
func TestORTMatchesReference(t *testing.T) {
	_, dim, cases := tinyExpected(t)
	emb := ortEmbedder(t)
	if emb.Dim() != dim || emb.ID() != tinyEmbedder(t).ID() {
		t.Fatalf("ort embedder: dim %d id %s; go: id %s", emb.Dim(), emb.ID(), tinyEmbedder(t).ID())
	}
	texts := make([]string, 0, len(cases))
	for _, c := range cases {
		vecs, trunc, err := emb.Embed([]string{c.Text}, keepOf(c.Keep))
		if err != nil {
			t.Fatal(err)
		}
		if trunc[0] != c.Truncated {
			t.Errorf("%s: truncated = %v, want %v", c.Name, trunc[0], c.Truncated)
		}
		if d := maxAbsDiff(vecs[0], c.Embedding); d > 2e-5 {
			t.Errorf("%s: ort embedding differs from numpy's by %g", c.Name, d)
		}
		if c.Keep == "head" {
			texts = append(texts, c.Text)
		}
	}
	// A padded batch gives the same vectors as the pure-Go backend.
	a, _, err := emb.Embed(texts, retrieve.KeepHead)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := tinyEmbedder(t).Embed(texts, retrieve.KeepHead)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		if d := maxAbsDiff(a[i], b[i]); d > 2e-5 {
			t.Errorf("text %d: ort and go differ by %g", i, d)
		}
	}
}

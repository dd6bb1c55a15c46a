package hugot

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/retrieve"
)

func testChunk(path string, ord int, text string) chunker.Chunk {
	return chunker.Chunk{ID: chunker.ChunkID(path, ord), Path: path, Kind: chunker.KindFunction, Text: text,
		StartLine: 1, EndLine: 1 + strings.Count(text, "\n"), EndByte: len(text)}
}

// TestHugotIndex indexes chunks with the tiny transformer model (the path the CLI's
// --model takes) and searches them, including a chunk over the token limit that is
// embedded in pieces (counted as split) and one over MaxPieces times the limit that
// is still truncated, counted and listed, never silently.
func TestHugotIndex(t *testing.T) {
	cs := []chunker.Chunk{
		testChunk("src/cache/Lru.kt", 0, "fun evict() {\n    entries.remove(eldest)\n}\n"),
		testChunk("src/blog/slug.py", 0, "def slugify(title):\n    return title.lower().replace(' ', '-')\n"),
		testChunk("src/blog/post.py", 0, "class Post:\n    def url(self):\n        return '/posts/' + slugify(self.title)\n"),
		testChunk("src/big/Big.kt", 0, "fun big() {\n"+strings.Repeat("    entries.remove(eldest)\n", 40)+"}"),
		testChunk("src/big/Huge.kt", 0, "fun huge() {\n"+strings.Repeat("    entries.remove(eldest)\n", 200)+"}"),
	}
	emb := tinyEmbedder(t)
	ctx := context.Background()
	d, err := retrieve.ModelVectors(ctx, emb, cs)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := retrieve.New(cs, d)
	if err != nil {
		t.Fatal(err)
	}
	info := ix.DenseInfo()
	if info.Dim != emb.Dim() || info.Vectors != len(cs) || info.Embedded != len(cs) || info.Model != emb.ID() {
		t.Errorf("dense info = %+v", info)
	}
	var texts, wantIDs []string
	for _, c := range cs {
		texts = append(texts, c.Text)
	}
	_, trunc, err := emb.Embed(texts, retrieve.KeepHead)
	if err != nil {
		t.Fatal(err)
	}
	split := 0
	for i, tr := range trunc {
		if !tr {
			continue
		}
		split++
		if pieces, err := emb.(retrieve.Splitter).Split(cs[i].Text); err != nil || len(pieces) > retrieve.MaxPieces {
			wantIDs = append(wantIDs, cs[i].ID)
		}
	}
	if info.Split != split || split < 2 || info.Truncated != len(wantIDs) || !slices.Equal(info.TruncatedIDs, wantIDs) || !slices.Equal(wantIDs, []string{cs[4].ID}) {
		t.Errorf("split %d (want %d), truncated %d %v, want %v", info.Split, split, info.Truncated, info.TruncatedIDs, wantIDs)
	}
	hits, err := ix.Search(ctx, retrieve.Query{Text: "entries.remove(eldest)", K: 3, Keep: retrieve.KeepTail})
	if err != nil || len(hits) == 0 || hits[0].DenseRank == 0 && hits[0].BM25Rank == 0 {
		t.Fatalf("hybrid search: %v %v", hits, err)
	}
	if _, err := ix.Search(ctx, retrieve.Query{Text: "slugify(post.title)", K: 3, Mode: retrieve.Dense}); err != nil {
		t.Error(err)
	}
}

// benchModelDir is the model of the benchmarks: $REPOCTX_BENCH_MODEL or the tiny one.
func benchModelDir() string {
	if d := os.Getenv("REPOCTX_BENCH_MODEL"); d != "" {
		return d
	}
	return tinyBERT
}

// benchTexts returns n code texts of 20 lines cut from the bundled sample snapshots.
func benchTexts(b *testing.B, n int) []string {
	var lines []string
	root := filepath.Join("..", "..", "testdata", "sample")
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".kt") || strings.HasSuffix(p, ".py")) {
			if raw, err := os.ReadFile(p); err == nil {
				lines = append(lines, strings.Split(string(raw), "\n")...)
			}
		}
		return nil
	})
	if len(lines) < 40 {
		b.Skip("no sample sources")
	}
	out := make([]string, n)
	for i := range out {
		lo := (i * 7919) % (len(lines) - 20)
		out[i] = strings.Join(lines[lo:lo+20], "\n")
	}
	return out
}

// BenchmarkEmbed measures embedding 20-line code texts in batches of 32, per backend;
// chunks/s is throughput.
func BenchmarkEmbed(b *testing.B) {
	for _, backend := range []string{"go", "ort"} {
		b.Run(backend, func(b *testing.B) {
			if backend == "ort" && (!ORTAvailable || os.Getenv("REPOCTX_ORT_LIB") == "") {
				b.Skip("needs -tags onnxruntime and REPOCTX_ORT_LIB")
			}
			emb, err := New(benchModelDir(), Options{Backend: backend})
			if err != nil {
				b.Fatal(err)
			}
			defer emb.Close()
			texts := benchTexts(b, 256)
			const batch = 32
			i, n := 0, 0
			for b.Loop() {
				lo := (i * batch) % len(texts)
				i++
				if _, _, err := emb.Embed(texts[lo:lo+batch], retrieve.KeepHead); err != nil {
					b.Fatal(err)
				}
				n += batch
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "chunks/s")
		})
	}
}

// BenchmarkEmbedTokens measures transformer throughput at fixed input lengths (word
// pieces, [CLS] and [SEP] included), in batches of 8 identical-length texts, per
// backend: half the model's limit and the whole limit (32 and 64 for the tiny test
// model, 128 and 256 for all-MiniLM-L6-v2 in REPOCTX_BENCH_MODEL).
func BenchmarkEmbedTokens(b *testing.B) {
	for _, backend := range []string{"go", "ort"} {
		b.Run(backend, func(b *testing.B) {
			if backend == "ort" && (!ORTAvailable || os.Getenv("REPOCTX_ORT_LIB") == "") {
				b.Skip("needs -tags onnxruntime and REPOCTX_ORT_LIB")
			}
			emb, err := New(benchModelDir(), Options{Backend: backend})
			if err != nil {
				b.Fatal(err)
			}
			defer emb.Close()
			limit := emb.(interface{ limit() int }).limit()
			for _, n := range []int{limit / 2, limit} {
				b.Run(fmt.Sprintf("tokens=%d", n), func(b *testing.B) {
					texts := make([]string, 8)
					for i := range texts {
						texts[i] = strings.Repeat("cache ", n-2) // "cache" is one word piece
					}
					done := 0
					for b.Loop() {
						if _, _, err := emb.Embed(texts, retrieve.KeepHead); err != nil {
							b.Fatal(err)
						}
						done += len(texts)
					}
					b.ReportMetric(float64(done)/b.Elapsed().Seconds(), "texts/s")
				})
			}
		})
	}
}

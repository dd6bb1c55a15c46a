package retrieve

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/repoctx/repoctx/chunker"
)

const benchChunks = 5000

// synthChunks generates n code-like chunks (~25 lines each, 10 per file). Identifiers are
// camelCase, PascalCase or snake_case compounds of 1-3 sub-words drawn Zipf-distributed
// from 800 pseudo-words, and identifiers are themselves Zipf-distributed, so a few
// sub-words ("get", "value" in real code) occur in most chunks and most are rare.
func synthChunks(n int) []chunker.Chunk {
	rng := rand.New(rand.NewPCG(1, 2))
	const cons, vows = "bcdfghklmnprstvwz", "aeiou"
	words := make([]string, 800)
	for i := range words {
		w := []byte{cons[rng.IntN(len(cons))], vows[rng.IntN(len(vows))], cons[rng.IntN(len(cons))]}
		if i%2 == 1 {
			w = append(w, vows[rng.IntN(len(vows))], cons[rng.IntN(len(cons))])
		}
		words[i] = string(w)
	}
	wz := rand.NewZipf(rng, 1.2, 4, uint64(len(words)-1))
	word := func() string { return words[wz.Uint64()] }
	title := func(s string) string { return strings.ToUpper(s[:1]) + s[1:] }
	vocab := make([]string, 6000)
	for i := range vocab {
		switch parts := 1 + rng.IntN(3); i % 3 {
		case 0:
			v := word()
			for range parts - 1 {
				v += title(word())
			}
			vocab[i] = v
		case 1:
			v := word()
			for range parts - 1 {
				v += "_" + word()
			}
			vocab[i] = v
		default:
			v := ""
			for range parts {
				v += title(word())
			}
			vocab[i] = v
		}
	}
	zipf := rand.NewZipf(rng, 1.1, 2, uint64(len(vocab)-1))
	id := func() string { return vocab[zipf.Uint64()] }
	kw := []string{"val", "fun", "return", "if", "for", "while", "when", "null", "this"}
	chunks := make([]chunker.Chunk, n)
	for i := range chunks {
		var sb strings.Builder
		for range 25 {
			switch rng.IntN(4) {
			case 0:
				fmt.Fprintf(&sb, "    val %s = %s.%s(%s, %d)\n", id(), id(), id(), id(), rng.IntN(100))
			case 1:
				fmt.Fprintf(&sb, "    %s (%s != null) %s(%s)\n", kw[rng.IntN(len(kw))], id(), id(), id())
			case 2:
				fmt.Fprintf(&sb, "    // %s the %s before %s\n", id(), id(), id())
			default:
				fmt.Fprintf(&sb, "    return %s[%s] ?: %s\n", id(), id(), id())
			}
		}
		file := i / 10
		path := fmt.Sprintf("src/module%d/%s.kt", file%37, title(strings.ReplaceAll(vocab[file%len(vocab)], "_", ""))+fmt.Sprint(file))
		var header []string
		if i%10 != 0 {
			header = []string{fmt.Sprintf("class %s(private val %s: %s) {", id(), id(), id())}
		}
		chunks[i] = chunk(path, i%10, chunker.KindFunction, id(), header,
			fmt.Sprintf("fun %s(%s: %s): %s {\n%s}", id(), id(), id(), id(), sb.String()))
	}
	return chunks
}

// BenchmarkBuild measures making the BM25 index of 5,000 synthetic chunks from
// scratch (tokenising them into a corpus and building the view's postings), without
// dense vectors (BenchmarkBuildDense measures those).
func BenchmarkBuild(b *testing.B) {
	chunks := synthChunks(benchChunks)
	var text int64
	for i := range chunks {
		text += int64(len(chunks[i].Text))
	}
	b.SetBytes(text)
	cpu0 := cpuTime()
	for b.Loop() {
		if _, err := New(chunks, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
}

// BenchmarkView measures making a view of 5,000 chunks already in a corpus (what a
// later snapshot of a repository costs: postings from cached term frequencies).
func BenchmarkView(b *testing.B) {
	chunks := synthChunks(benchChunks)
	c := NewCorpus()
	ords := c.Add(chunks)
	for b.Loop() {
		if _, err := c.NewIndex("v", ords, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSearch measures one Search over 5,000 synthetic chunks (index built once).
// Besides wall time it reports cpu-ns/op, the process CPU time per search (GC included).
// short is a one-line query; long is 60 lines of code (several hundred tokens, capped at
// MaxQueryTerms distinct terms); filtered is long with a filter rejecting the query's own
// file, as the assembler does for the file being completed.
func BenchmarkSearch(b *testing.B) {
	chunks := synthChunks(benchChunks)
	ix := buildTest(b, chunks)

	queries := make([]string, 64)
	longQueries := make([]string, 64)
	for i := range queries {
		c := &chunks[(i*97)%len(chunks)]
		lines := strings.Split(c.Text, "\n")
		queries[i] = lines[3]
		next := &chunks[(i*97+1)%len(chunks)]
		longQueries[i] = c.Text + "\n" + next.Text + "\n" + strings.Join(lines[:8], "\n")
	}
	run := func(name string, qs []string, filter func(q int) func(*chunker.Chunk) bool) {
		b.Run(name, func(b *testing.B) {
			i, scanned, advances := 0, 0, 0
			cpu0 := cpuTime()
			for b.Loop() {
				q := i % len(qs)
				i++
				hits, st, err := ix.search(qs[q], 10, &chunkFilter{f: filter(q)}, true)
				if err != nil || len(hits) == 0 {
					b.Fatal(hits, err)
				}
				scanned += st.scanned
				advances += st.advances
			}
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(scanned)/float64(b.N), "postings/op")
			b.ReportMetric(float64(advances)/float64(b.N), "skips/op")
		})
	}
	none := func(int) func(*chunker.Chunk) bool { return nil }
	run("short", queries, none)
	run("long", longQueries, none)
	run("filtered", longQueries, func(q int) func(*chunker.Chunk) bool {
		own := chunks[(q*97)%len(chunks)].Path
		return func(c *chunker.Chunk) bool { return c.Path != own }
	})
}

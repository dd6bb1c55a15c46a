package retrieve

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/grammars"
)

// Benchmarks of dense retrieval. They run on synthetic chunks (synthChunks, 5,000) unless
// REPOCTX_BENCH_GITDIRS names git directories (colon-separated, e.g. bare mirrors of
// repositories): then on the structural chunks of every Kotlin and Python file at
// their HEAD. REPOCTX_BENCH_MODEL names a model folder for the hugot benchmarks (default:
// the tiny test model); with -tags onnxruntime and REPOCTX_ORT_LIB set, the ONNX Runtime
// backend is measured too.

var benchCorpus struct {
	once   sync.Once
	chunks []chunker.Chunk
	desc   string
	err    error
}

func benchChunksReal(b *testing.B) ([]chunker.Chunk, string) {
	b.Helper()
	benchCorpus.once.Do(func() {
		dirs := os.Getenv("REPOCTX_BENCH_GITDIRS")
		if dirs == "" {
			benchCorpus.chunks = synthChunks(benchChunks)
			benchCorpus.desc = fmt.Sprintf("%d synthetic chunks", benchChunks)
			return
		}
		ch := chunker.NewStructural(chunker.Options{})
		defer ch.Close()
		files := 0
		for _, gd := range strings.Split(dirs, ":") {
			n, err := chunkGitHead(gd, ch, &benchCorpus.chunks)
			if err != nil {
				benchCorpus.err = err
				return
			}
			files += n
		}
		benchCorpus.desc = fmt.Sprintf("%d chunks of %d files", len(benchCorpus.chunks), files)
	})
	if benchCorpus.err != nil {
		b.Fatal(benchCorpus.err)
	}
	return benchCorpus.chunks, benchCorpus.desc
}

// chunkGitHead appends the chunks of the Kotlin and Python files at HEAD of the git
// directory gd, with paths prefixed by its name so that IDs stay unique.
func chunkGitHead(gd string, ch chunker.Chunker, out *[]chunker.Chunk) (int, error) {
	ls, err := exec.Command("git", "--git-dir="+gd, "ls-tree", "-r", "HEAD").Output()
	if err != nil {
		return 0, fmt.Errorf("git ls-tree %s: %w", gd, err)
	}
	var paths, shas []string
	for _, line := range strings.Split(strings.TrimSpace(string(ls)), "\n") {
		meta, path, ok := strings.Cut(line, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 3 || f[1] != "blob" || grammars.ForPath(path) == nil {
			continue
		}
		paths, shas = append(paths, path), append(shas, f[2])
	}
	cmd := exec.Command("git", "--git-dir="+gd, "cat-file", "--batch")
	cmd.Stdin = strings.NewReader(strings.Join(shas, "\n") + "\n")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("git cat-file %s: %w", gd, err)
	}
	r := bufio.NewReader(&stdout)
	prefix := strings.TrimSuffix(filepath.Base(filepath.Dir(filepath.Clean(gd))), "/")
	for i := range paths {
		hdr, err := r.ReadString('\n')
		if err != nil {
			return 0, err
		}
		f := strings.Fields(hdr)
		size, _ := strconv.Atoi(f[len(f)-1])
		raw := make([]byte, size+1)
		if _, err := io.ReadFull(r, raw); err != nil {
			return 0, err
		}
		file, err := chunker.Decode(prefix+"/"+paths[i], raw[:size], 0)
		if err != nil {
			continue
		}
		cs, err := ch.Chunk(file)
		if err != nil {
			continue
		}
		*out = append(*out, cs...)
	}
	return len(paths), nil
}

// benchTexts returns n chunk texts of the corpus (cycling).
func benchTexts(b *testing.B, n int) []string {
	cs, _ := benchChunksReal(b)
	out := make([]string, n)
	for i := range out {
		out[i] = cs[(i*7919)%len(cs)].Text
	}
	return out
}

// BenchmarkFitLSA measures fitting the default LSA model on the corpus.
func BenchmarkFitLSA(b *testing.B) {
	cs, desc := benchChunksReal(b)
	b.Logf("corpus: %s", desc)
	var m *LSA
	for b.Loop() {
		var err error
		if m, err = FitLSA(cs, DefaultLSADim); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(m.Terms()), "terms")
	b.ReportMetric(float64(len(cs))*float64(b.N)/b.Elapsed().Seconds(), "chunks/s")
}

// benchEmbed measures embedding chunk texts in batches of 32; chunks/s is throughput.
func benchEmbed(b *testing.B, emb Embedder) {
	texts := benchTexts(b, 256)
	const batch = 32
	i, n, trunc := 0, 0, 0
	for b.Loop() {
		lo := (i * batch) % len(texts)
		i++
		_, tr, err := emb.Embed(texts[lo:lo+batch], KeepHead)
		if err != nil {
			b.Fatal(err)
		}
		n += batch
		for _, t := range tr {
			if t {
				trunc++
			}
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "chunks/s")
	b.ReportMetric(float64(trunc)/float64(max(n, 1)), "truncated-frac")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkEmbed measures embedding throughput per embedder and backend.
func BenchmarkEmbed(b *testing.B) {
	b.Run("lsa", func(b *testing.B) {
		cs, _ := benchChunksReal(b)
		m, err := FitLSA(cs, DefaultLSADim)
		if err != nil {
			b.Fatal(err)
		}
		benchEmbed(b, m)
	})
	// The transformer backends are measured in the hugot package.
}

// BenchmarkBuildDense measures the dense part of an index of the corpus: fitting the
// default LSA model and embedding every chunk (transformer models: the hugot package).
func BenchmarkBuildDense(b *testing.B) {
	cs, desc := benchChunksReal(b)
	b.Logf("corpus: %s", desc)
	for b.Loop() {
		if _, err := LSAVectors(context.Background(), cs, 0, ""); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(cs))*float64(b.N)/b.Elapsed().Seconds(), "chunks/s")
}

// BenchmarkSearchHybrid measures warm hybrid queries (BM25 + LSA, k = 8, depth 50) on
// the corpus: 12-line prefix queries cut from chunks (KeepTail), reporting the median and
// 95th percentile latency besides the mean.
func BenchmarkSearchHybrid(b *testing.B) {
	cs, desc := benchChunksReal(b)
	b.Logf("corpus: %s", desc)
	ix := buildTest(b, cs)
	queries := make([]string, 0, 200)
	for i := 0; len(queries) < 200; i++ {
		c := &cs[(i*7919)%len(cs)]
		lines := strings.Split(c.Text, "\n")
		queries = append(queries, strings.Join(lines[:min(12, len(lines))], "\n"))
	}
	run := func(name string, search func(q string) error) {
		b.Run(name, func(b *testing.B) {
			for _, q := range queries[:10] { // warm up: load vectors, fill pools
				if err := search(q); err != nil {
					b.Fatal(err)
				}
			}
			var lat []time.Duration
			i := 0
			for b.Loop() {
				q := queries[i%len(queries)]
				i++
				t := time.Now()
				if err := search(q); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds()), "p95-µs")
		})
	}
	run("hybrid", func(q string) error {
		_, err := ix.searchHybrid(q, 8, nil, Weights{}, KeepTail, false)
		return err
	})
	run("dense", func(q string) error {
		_, err := ix.searchDense(q, 50, nil, KeepTail)
		return err
	})
	run("bm25", func(q string) error {
		_, err := ix.searchBM25(q, 50, nil)
		return err
	})
}

// BenchmarkOrth measures orth on a fit's largest shape (MaxLSAFitChunks rows, the
// default dimension plus oversampling in columns), blocked against the
// column-by-column loop it equals bit for bit.
func BenchmarkOrth(b *testing.B) {
	rows, cols := MaxLSAFitChunks, DefaultLSADim+lsaOversample
	rng := rand.New(rand.NewPCG(3, 4))
	m := make([]float64, rows*cols)
	for i := range m {
		m[i] = rng.NormFloat64()
	}
	for _, v := range []struct {
		name string
		f    func([]float64, int, int) ([]float64, int)
	}{{"blocked", orth}, {"by-column", orthByColumn}} {
		b.Run(v.name, func(b *testing.B) {
			for b.Loop() {
				v.f(m, rows, cols)
			}
		})
	}
}

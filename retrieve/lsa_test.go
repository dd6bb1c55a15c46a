package retrieve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/repoctx/repoctx/chunker"
)

// lsaCorpus is a small repository with two topics (a bounded cache, an HTTP client)
// and unrelated utility code, each topic spread over several chunks whose vocabulary
// overlaps only partly, so that LSA has co-occurrences to learn from.
func lsaCorpus() []chunker.Chunk {
	cs := testChunks()
	add := func(path, name, text string) {
		cs = append(cs, chunk(path, len(cs), chunker.KindFunction, name, nil, text))
	}
	add("src/cache/Eviction.kt", "evictionPolicy", "// eviction policy for the bounded cache: drop the eldest entry when capacity is reached\nfun shouldEvict(entries: Map<K, V>, capacity: Int) = entries.size > capacity")
	add("src/cache/CacheStats.kt", "hitRate", "class CacheStats { var hits = 0; var misses = 0; val hitRate get() = hits.toDouble() / (hits + misses) } // cache entries")
	add("src/cache/LruCache.kt", "put", "fun put(key: K, value: V) { entries[key] = value; if (entries.size > capacity) evictEldest() }")
	add("src/http/Headers.kt", "parseHeaders", "fun parseHeaders(raw: String): Map<String, String> = raw.lines().associate { it.substringBefore(':') to it.substringAfter(':').trim() } // http response headers")
	add("src/http/Retry.kt", "retryRequest", "suspend fun retryRequest(url: String): Response { repeat(3) { runCatching { return transport.post(url, ByteArray(0)) } }; error(\"http request failed\") }")
	add("src/http/Status.kt", "statusText", "fun statusText(status: Int) = when (status) { 200 -> \"OK\"; 404 -> \"Not Found\"; else -> \"HTTP \" + status } // response status")
	add("util/dates.py", "parse_date", "def parse_date(s):\n    return datetime.strptime(s, '%Y-%m-%d').date()")
	add("util/numbers.py", "clamp", "def clamp(x, lo, hi):\n    return max(lo, min(hi, x))")
	return cs
}

func cosine(a, b []float32) float64 {
	var s, na, nb float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return s / math.Sqrt(na*nb)
}

// TestLSARanksRelatedChunk: a query about cache eviction is closer to a cache chunk it
// shares no identifier with than to unrelated code, and likewise for HTTP.
func TestLSARanksRelatedChunk(t *testing.T) {
	cs := lsaCorpus()
	m, err := FitLSA(cs, 8)
	if err != nil {
		t.Fatal(err)
	}
	if m.Dim() == 0 || m.Dim() > 8 {
		t.Fatalf("Dim = %d", m.Dim())
	}
	byName := map[string]string{}
	for _, c := range cs {
		byName[c.Name] = c.Text
	}
	tests := []struct{ query, related, unrelated string }{
		{"when capacity is reached evict", "evictEldest", "slugify"},
		{"cache hits and misses", "hitRate", "clamp"},
		{"put a value, evicting when over capacity", "put", "statusText"},
		{"http response status", "parseHttpResponse", "utf8_len"},
		{"retry the request", "sendRequest", "parse_date"},
	}
	for _, tc := range tests {
		v, _, err := m.Embed([]string{tc.query, byName[tc.related], byName[tc.unrelated]}, KeepTail)
		if err != nil {
			t.Fatal(err)
		}
		rel, unrel := cosine(v[0], v[1]), cosine(v[0], v[2])
		if rel <= unrel {
			t.Errorf("%q: related %s %.3f <= unrelated %s %.3f", tc.query, tc.related, rel, tc.unrelated, unrel)
		}
	}
}

// TestLSASaveLoad: a model read back embeds exactly as the fitted one.
func TestLSASaveLoad(t *testing.T) {
	m, err := FitLSA(lsaCorpus(), 6)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := m.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	m2, err := ReadLSA(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if m2.ID() != m.ID() || m2.Dim() != m.Dim() || m2.Terms() != m.Terms() {
		t.Fatalf("read back %s/%d/%d, want %s/%d/%d", m2.ID(), m2.Dim(), m2.Terms(), m.ID(), m.Dim(), m.Terms())
	}
	q := []string{"evict the eldest cache entry", "parse http headers", ""}
	a, _, _ := m.Embed(q, KeepHead)
	b, _, _ := m2.Embed(q, KeepHead)
	for i := range a {
		if !slices.Equal(a[i], b[i]) {
			t.Errorf("query %d embeds differently after reading back", i)
		}
	}
	for n := range buf.Len() {
		if _, err := ReadLSA(bytes.NewReader(buf.Bytes()[:n])); !errors.Is(err, ErrIncomplete) {
			t.Fatalf("model truncated to %d of %d bytes: %v, want ErrIncomplete", n, buf.Len(), err)
		}
		if _, err := DecodeLSA(buf.Bytes()[:n]); !errors.Is(err, ErrIncomplete) {
			t.Fatalf("DecodeLSA: model truncated to %d of %d bytes: %v, want ErrIncomplete", n, buf.Len(), err)
		}
	}
	// DecodeLSA reads the same model as ReadLSA, trailing bytes ignored.
	m3, err := DecodeLSA(append(bytes.Clone(buf.Bytes()), 1, 2, 3))
	if err != nil {
		t.Fatal(err)
	}
	var b2, b3 bytes.Buffer
	m2.WriteTo(&b2)
	m3.WriteTo(&b3)
	if !bytes.Equal(b2.Bytes(), b3.Bytes()) || !bytes.Equal(b3.Bytes(), buf.Bytes()) {
		t.Error("DecodeLSA and ReadLSA read different models")
	}
	c, _, _ := m3.Embed(q, KeepHead)
	if !reflect.DeepEqual(a, c) {
		t.Error("a model read by DecodeLSA embeds differently")
	}
	bad := bytes.Clone(buf.Bytes())
	bad[len(lsaMagic)] = lsaVersion + 1
	if _, err := DecodeLSA(bad); !errors.Is(err, ErrFormat) {
		t.Errorf("another version: %v, want ErrFormat", err)
	}
}

// TestLSADeterministic: fitting twice gives the same model.
func TestLSADeterministic(t *testing.T) {
	cs := synthChunks(300)
	a, err := FitLSA(cs, 32)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := FitLSA(cs, 32)
	if !slices.Equal(a.proj, b.proj) || !slices.Equal(a.terms, b.terms) {
		t.Error("two fits differ")
	}
}

// TestLSAEdgeCases: no chunks, chunks without terms, a dimension above the rank.
func TestLSAEdgeCases(t *testing.T) {
	m, err := FitLSA(nil, 0)
	if err != nil || m.Dim() != 0 || m.ID() != LSAModelID(DefaultLSADim) {
		t.Errorf("no chunks: %v dim %d id %s", err, m.Dim(), m.ID())
	}
	m, err = FitLSA([]chunker.Chunk{chunk("a.py", 0, chunker.KindCode, "", nil, "1 + 2 == 3  # ?")}, 4)
	if err != nil || m.Dim() != 0 {
		t.Errorf("no terms: %v dim %d", err, m.Dim())
	}
	if v, _, _ := m.Embed([]string{"anything"}, KeepHead); len(v) != 1 || len(v[0]) != 0 {
		t.Errorf("dim-0 model embeds %v", v)
	}
	cs := testChunks()[:3]
	m, err = FitLSA(cs, 500)
	if err != nil || m.Dim() == 0 || m.Dim() > 3 {
		t.Errorf("dimension above rank: %v dim %d", err, m.Dim())
	}
	v, _, _ := m.Embed([]string{"zzz qqq", "evict eldest"}, KeepHead)
	if slices.ContainsFunc(v[0], func(x float32) bool { return x != 0 }) {
		t.Errorf("unknown terms embed to %v, want zeros", v[0])
	}
	if n := cosine(v[1], v[1]); math.Abs(n-1) > 1e-6 {
		t.Errorf("known terms: self-cosine %g", n)
	}
	if _, err := FitLSA(cs, -1); err == nil {
		t.Error("negative dimension accepted")
	}
}

// TestLSANearOptimal compares the randomized SVD with an exact one (gonum, dense): the
// rank-k subspace it finds must capture nearly all the energy the best rank-k subspace
// captures (Eckart–Young), i.e. ‖A V_k‖²_F ≥ 0.985 Σ_{i≤k} σ_i² (synthetic chunks have a flat spectrum, the
// hard case).
func TestLSANearOptimal(t *testing.T) {
	cs := synthChunks(400)
	const k = 24
	m, err := FitLSA(cs, k)
	if err != nil {
		t.Fatal(err)
	}
	if m.Dim() != k {
		t.Fatalf("Dim = %d, want %d", m.Dim(), k)
	}
	v := m.Terms()
	a := mat.NewDense(len(cs), v, nil)
	for i := range cs {
		idx, w := m.tfidf(cs[i].Text)
		for j, ti := range idx {
			a.Set(i, int(ti), w[j])
		}
	}
	var svd mat.SVD
	if !svd.Factorize(a, mat.SVDNone) {
		t.Fatal("exact SVD failed")
	}
	best := 0.0
	for _, s := range svd.Values(nil)[:k] {
		best += s * s
	}
	proj := mat.NewDense(v, k, nil)
	for t2 := range v {
		for j := range k {
			proj.Set(t2, j, float64(m.proj[t2*k+j]))
		}
	}
	// The projection's columns must be orthonormal.
	var g mat.Dense
	g.Mul(proj.T(), proj)
	for i := range k {
		for j := range k {
			want := 0.0
			if i == j {
				want = 1
			}
			if math.Abs(g.At(i, j)-want) > 1e-4 {
				t.Fatalf("VᵀV[%d,%d] = %g", i, j, g.At(i, j))
			}
		}
	}
	var av mat.Dense
	av.Mul(a, proj)
	got := mat.Norm(&av, 2)
	got *= got
	if got < 0.985*best {
		t.Errorf("captured energy %.4f < 0.985 × optimal %.4f", got, best)
	}
	t.Logf("captured %.5f of the optimal rank-%d energy", got/best, k)
}

func TestReadLSABadVersion(t *testing.T) {
	m, _ := FitLSA(lsaCorpus(), 4)
	m2 := *m
	m2.proj = m.proj[:len(m.proj)-1]
	var buf bytes.Buffer
	if _, err := m2.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadLSA(&buf); !errors.Is(err, ErrIncomplete) {
		t.Errorf("damaged model: %v", err)
	}
}

// TestLSAFitSample: above the fit cap the model is fitted on an evenly spaced sample
// (the same model as fitting the sample itself) and still embeds every chunk.
func TestLSAFitSample(t *testing.T) {
	old := lsaFitCap
	lsaFitCap = 100
	defer func() { lsaFitCap = old }()
	cs := synthChunks(350)
	m, err := FitLSA(cs, 16)
	if err != nil {
		t.Fatal(err)
	}
	var sample []chunker.Chunk
	for i := range 100 {
		sample = append(sample, cs[i*350/100])
	}
	lsaFitCap = old
	want, err := FitLSA(sample, 16)
	if err != nil {
		t.Fatal(err)
	}
	if m.docs != 100 || m.Dim() != want.Dim() || m.Terms() != want.Terms() || !slices.Equal(m.proj, want.proj) {
		t.Errorf("sampled fit: %d docs, dim %d, %d terms; the sample's own fit: dim %d, %d terms", m.docs, m.Dim(), m.Terms(), want.Dim(), want.Terms())
	}
	if got := sampleTexts([]string{"a", "b", "c"}, 5); len(got) != 3 {
		t.Errorf("below the cap: %v", got)
	}
	lsaFitCap = 100
	dv, err := LSAVectors(context.Background(), cs, 16, "")
	if err != nil {
		t.Fatal(err)
	}
	ix, err := New(cs, dv)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if d := ix.DenseInfo(); d.Vectors != 350 {
		t.Errorf("%d vectors for 350 chunks", d.Vectors)
	}
}

// TestOrthIllConditioned checks orth on columns that are nearly dependent (each the
// first plus noise of relative size 1e-7, and one exact copy): the basis is orthonormal
// to 1e-12 (the second projection pass is what keeps it so), the exact copy is dropped,
// and every column lies in the basis' span.
func TestOrthIllConditioned(t *testing.T) {
	const rows, cols = 300, 12
	rng := rand.New(rand.NewPCG(7, 9))
	m := make([]float64, rows*cols)
	for r := range rows {
		base := rng.NormFloat64()
		for c := range cols {
			m[r*cols+c] = base + 1e-7*rng.NormFloat64()
		}
		m[r*cols+cols-1] = m[r*cols] // an exact copy of column 0
	}
	q, k := orth(m, rows, cols)
	if k != cols-1 {
		t.Fatalf("rank %d, want %d", k, cols-1)
	}
	for i := range k {
		for j := range k {
			dot := 0.0
			for r := range rows {
				dot += q[r*k+i] * q[r*k+j]
			}
			want := 0.0
			if i == j {
				want = 1
			}
			if math.Abs(dot-want) > 1e-12 {
				t.Fatalf("QᵀQ[%d,%d] = %g, want %g", i, j, dot, want)
			}
		}
	}
	for c := range cols { // the residual of each column off span(Q) is rounding
		res, norm := 0.0, 0.0
		coef := make([]float64, k)
		for j := range k {
			for r := range rows {
				coef[j] += q[r*k+j] * m[r*cols+c]
			}
		}
		for r := range rows {
			x := m[r*cols+c]
			for j := range k {
				x -= coef[j] * q[r*k+j]
			}
			res += x * x
			norm += m[r*cols+c] * m[r*cols+c]
		}
		if math.Sqrt(res) > 1e-9*math.Sqrt(norm) {
			t.Fatalf("column %d: residual %g of norm %g", c, math.Sqrt(res), math.Sqrt(norm))
		}
	}
}

// TestLSAEmbedFitRows checks that a fitted model embeds the texts it was fitted on
// (from the rows the fit kept) exactly as a model read back from its bytes does (from
// the texts' terms).
func TestLSAEmbedFitRows(t *testing.T) {
	texts := []string{
		"func parseConfig(path string) (*Config, error) { return readConfig(path) }",
		"type Config struct { Path string; Retries int }",
		"func readConfig(path string) (*Config, error) { b := os.ReadFile(path) }",
		"func (c *Config) Validate() error { if c.Retries < 0 { return errRetries } }",
		"var errRetries = errors.New(\"retries must not be negative\")",
		"func parseConfig(path string) (*Config, error) { return readConfig(path) }", // a duplicate
	}
	m, err := fitLSATexts(texts, 4)
	if err != nil || m.Dim() == 0 || m.fitRow == nil {
		t.Fatalf("fit: %v, dim %d, fit rows %v", err, m.Dim(), m.fitRow != nil)
	}
	var buf bytes.Buffer
	if _, err := m.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	r, err := ReadLSA(&buf)
	if err != nil || r.fitRow != nil {
		t.Fatalf("read: %v, fit rows %v", err, r.fitRow != nil)
	}
	all := append(slices.Clone(texts), "a text the model was not fitted on: Config path")
	got, _, _ := m.Embed(all, KeepHead)
	want, _, _ := r.Embed(all, KeepHead)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("vectors from the fit rows differ from those from the terms:\n%v\n%v", got, want)
	}
}

// TestFitRowsAreTfidf: the fit's one scan of the texts builds the rows tfidf gives
// each text, bit for bit (Embed uses them for a text the model was fitted on, and
// tfidf for any other).
func TestFitRowsAreTfidf(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	words := []string{"alpha", "Beta", "gamma", "DELTA", "parse", "token", "index", "chunk", "query", "score", "x", "9lives"}
	texts := make([]string, 400)
	for i := range texts {
		var b []string
		for range rng.IntN(30) {
			b = append(b, fmt.Sprintf("%s%d", words[rng.IntN(len(words))], rng.IntN(40)))
		}
		texts[i] = strings.Join(b, " ")
	}
	m, err := fitLSATextsP(texts, 32, 8, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		lo, hi := m.fitRows.ptr[i], m.fitRows.ptr[i+1]
		idx, w := m.tfidf(text)
		if !slices.Equal(idx, m.fitRows.idx[lo:hi]) || !slices.Equal(w, m.fitRows.val[lo:hi]) {
			t.Fatalf("text %d: fit row %v %v, tfidf %v %v", i, m.fitRows.idx[lo:hi], m.fitRows.val[lo:hi], idx, w)
		}
	}
}

// orthByColumn is orth as a column-by-column loop (each column projected on every
// accepted vector before it, a second time when the first pass removed most of it):
// what the blocked orth must equal bit for bit.
func orthByColumn(m []float64, rows, cols int) ([]float64, int) {
	var colv [][]float64
	for c := range cols {
		v := make([]float64, rows)
		for r := range rows {
			v[r] = m[r*cols+c]
		}
		n0 := floats.Norm(v, 2)
		if n0 == 0 {
			continue
		}
		n := n0
		for range 2 {
			for _, q := range colv {
				floats.AddScaled(v, -floats.Dot(q, v), q)
			}
			before := n
			n = floats.Norm(v, 2)
			if n >= before/math.Sqrt2 {
				break
			}
		}
		if n <= 1e-10*n0 || n == 0 {
			continue
		}
		floats.Scale(1/n, v)
		colv = append(colv, v)
	}
	k := len(colv)
	out := make([]float64, rows*k)
	for c, v := range colv {
		for r, x := range v {
			out[r*k+c] = x
		}
	}
	return out, k
}

// TestOrthBlockedSame checks that orth (blocked, on several goroutines) gives the
// column-by-column loop's basis to the last bit: on random matrices, on nearly
// dependent columns (second passes), with zero and duplicate columns (dropped), at
// sizes below and above minParallelWork, with 1, 2 and 4 processors.
func TestOrthBlockedSame(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	type tc struct {
		name       string
		rows, cols int
		m          []float64
	}
	var cases []tc
	for _, sz := range [][2]int{{5, 3}, {40, 9}, {300, 17}, {2000, 37}, {3000, 64}} {
		rows, cols := sz[0], sz[1]
		m := make([]float64, rows*cols)
		for i := range m {
			m[i] = rng.NormFloat64()
		}
		cases = append(cases, tc{fmt.Sprintf("random %dx%d", rows, cols), rows, cols, m})
		// Nearly dependent columns, a zero column and an exact copy.
		d := make([]float64, rows*cols)
		for r := range rows {
			base := rng.NormFloat64()
			for c := range cols {
				d[r*cols+c] = base + 1e-7*rng.NormFloat64()
				if c%5 == 1 {
					d[r*cols+c] = rng.NormFloat64()
				}
			}
			if cols > 3 {
				d[r*cols+2] = 0
				d[r*cols+cols-1] = d[r*cols]
			}
		}
		cases = append(cases, tc{fmt.Sprintf("ill-conditioned %dx%d", rows, cols), rows, cols, d})
	}
	for _, c := range cases {
		want, wk := orthByColumn(c.m, c.rows, c.cols)
		for _, procs := range []int{1, 2, 4} {
			var got []float64
			var gk int
			withProcs(procs, func() { got, gk = orth(c.m, c.rows, c.cols) })
			if gk != wk {
				t.Fatalf("%s, GOMAXPROCS %d: rank %d, want %d", c.name, procs, gk, wk)
			}
			for i := range want {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("%s, GOMAXPROCS %d: element %d is %v, want %v", c.name, procs, i, got[i], want[i])
				}
			}
		}
	}
}

// TestLentBuffersSame checks that csr.mulTo and orthTo give, in buffers lent dirty
// (as a fit's rounds leave them), bit for bit what mul and orth give in new memory.
func TestLentBuffersSame(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	const rows, cols, bc = 300, 200, 17
	a := &csr{rows: rows, cols: cols, ptr: make([]int, 1, rows+1)}
	for range rows {
		for j := range cols {
			if rng.IntN(10) == 0 {
				a.idx, a.val = append(a.idx, int32(j)), append(a.val, rng.NormFloat64())
			}
		}
		a.ptr = append(a.ptr, len(a.idx))
	}
	b := make([]float64, cols*bc)
	for i := range b {
		b[i] = rng.NormFloat64()
	}
	dirty := func(n int) []float64 {
		d := make([]float64, n)
		for i := range d {
			d[i] = float64(i) + 0.5
		}
		return d
	}
	want := a.mul(b, bc)
	if got := a.mulTo(dirty(rows*bc+7), b, bc); !slices.Equal(got, want) {
		t.Fatal("mulTo in a lent buffer differs from mul")
	}
	if got := a.mulTo(dirty(3), b, bc); !slices.Equal(got, want) {
		t.Fatal("mulTo with a short buffer differs from mul")
	}
	wq, wc := orth(want, rows, bc)
	for _, n := range []int{rows * bc, 5} { // lent, and too short (new memory)
		gq, gc := orthTo(dirty(n), dirty(n), want, rows, bc)
		if gc != wc || !slices.Equal(gq, wq) {
			t.Fatalf("orthTo with buffers of %d values differs from orth", n)
		}
	}
}

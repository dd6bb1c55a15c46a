package retrieve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"

	"github.com/repoctx/repoctx/chunker"
)

// chunk builds a chunk by hand (package chunker's constructors are not used on purpose).
func chunk(path string, ord int, kind chunker.Kind, name string, header []string, text string) chunker.Chunk {
	return chunker.Chunk{
		ID: chunker.ChunkID(path, ord), Path: path, Ordinal: ord, Kind: kind, Name: name,
		StartLine: 1, EndLine: 1 + strings.Count(text, "\n"), EndByte: len(text),
		Header: header, Text: text,
	}
}

// testChunks is a small hand-made repository with one obviously right chunk per query
// of TestSearchRanksRightChunkFirst.
func testChunks() []chunker.Chunk {
	cacheHdr := []string{"class BoundedCache<K, V>(private val capacity: Int) {"}
	settingsHdr := []string{"class Settings:"}
	return []chunker.Chunk{
		chunk("src/cache/BoundedCache.kt", 0, chunker.KindClass, "BoundedCache", nil,
			"class BoundedCache<K, V>(private val capacity: Int) {\n    private val entries = LinkedHashMap<K, V>()"),
		chunk("src/cache/BoundedCache.kt", 1, chunker.KindFunction, "evictEldest", cacheHdr,
			"private fun evictEldest() {\n    val eldest = entries.keys.first()\n    entries.remove(eldest)\n}"),
		chunk("src/cache/BoundedCache.kt", 2, chunker.KindFunction, "get", cacheHdr,
			"fun get(key: K): V? = entries[key]"),
		chunk("src/http/Client.kt", 0, chunker.KindFunction, "parseHttpResponse", nil,
			"fun parseHttpResponse(raw: String): Response {\n    val status = raw.substringBefore(' ').toInt()\n    return Response(status, raw.substringAfter(\"\\r\\n\\r\\n\"))\n}"),
		chunk("src/http/Client.kt", 1, chunker.KindFunction, "sendRequest", nil,
			"suspend fun sendRequest(url: String, body: ByteArray): Response =\n    withTimeout(timeoutMs) { transport.post(url, body) }"),
		chunk("config/settings.py", 0, chunker.KindFunction, "load_from_env", settingsHdr,
			"def load_from_env(self):\n    for key, value in os.environ.items():\n        if key.startswith('APP_'):\n            self._data[key[4:].lower()] = value"),
		chunk("config/settings.py", 1, chunker.KindFunction, "get", settingsHdr,
			"def get(self, key, default=None):\n    return self._data.get(key, default)"),
		chunk("util/strings.py", 0, chunker.KindFunction, "utf8_len", nil,
			"def utf8_len(s: str) -> int:\n    return len(s.encode('utf-8'))"),
		chunk("util/strings.py", 1, chunker.KindFunction, "slugify", nil,
			"def slugify(title):\n    return re.sub(r'[^a-z0-9]+', '-', title.lower()).strip('-')"),
		chunk("README.md", 0, chunker.KindWindow, "", nil,
			"# Demo\n\nThis repository shows a bounded cache and an HTTP client."),
		chunk("src/json/JsonReader.kt", 0, chunker.KindClass, "JSONReader", nil,
			"class JSONReader(private val input: Reader) {\n    fun readObject(): Map<String, Any?> = parseValue() as Map<String, Any?>"),
	}
}

func buildTest(t testing.TB, chunks []chunker.Chunk) *Index {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "idx")
	if err := Build(context.Background(), dir, "k1", chunks, BuildOptions{}); err != nil {
		t.Fatalf("Build: %v", err)
	}
	ix, err := Open(dir, "k1", BuildOptions{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func TestSearchRanksRightChunkFirst(t *testing.T) {
	ix := buildTest(t, testChunks())
	tests := []struct {
		query string
		want  string
	}{
		{"evict the eldest entry", "src/cache/BoundedCache.kt#1"},
		{"val r = parseHTTPResponse(bytes)", "src/http/Client.kt#0"},
		{"load settings from environment variables APP_", "config/settings.py#0"},
		{"n := utf8Len(name)", "util/strings.py#0"},
		{"slugify(post.title)", "util/strings.py#1"},
		{"val obj = JsonReader(r).readObject()", "src/json/JsonReader.kt#0"},
		{"withTimeout { transport.post(url) }", "src/http/Client.kt#1"},
		{"self._data.get(key, default)", "config/settings.py#1"},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			hits, err := ix.searchBM25(tc.query, 3, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) == 0 || hits[0].ID != tc.want {
				t.Fatalf("top hit for %q = %v, want %s", tc.query, hits, tc.want)
			}
			for i, h := range hits {
				if h.Rank != i+1 {
					t.Errorf("hit %d has rank %d", i, h.Rank)
				}
				if i > 0 && h.Score > hits[i-1].Score {
					t.Errorf("hits not sorted by score: %v", hits)
				}
			}
		})
	}
}

// refBM25 scores every chunk for query with textbook BM25, independently of bleve: it
// counts tokens itself and applies the formula documented on Search.
func refBM25(chunks []chunker.Chunk, query string) map[string]float64 {
	type doc struct {
		tf [3]map[string]int
		dl [3]int
	}
	docs := make([]doc, len(chunks))
	var nf [3]int
	var total [3]int
	df := [3]map[string]int{{}, {}, {}}
	for i, c := range chunks {
		vals := [3]string{c.Text, strings.Join(c.Header, "\n"), c.Path}
		for f, v := range vals {
			toks := Tokens(v)
			docs[i].tf[f] = map[string]int{}
			for _, tok := range toks {
				docs[i].tf[f][tok]++
			}
			docs[i].dl[f] = len(toks)
			if len(toks) > 0 {
				nf[f]++
				total[f] += len(toks)
			}
			for tok := range docs[i].tf[f] {
				df[f][tok]++
			}
		}
	}
	boost := [3]float64{BoostText, BoostHeader, BoostPath}
	q := map[string]bool{}
	for _, tok := range Tokens(query) {
		q[tok] = true
	}
	out := map[string]float64{}
	for i, c := range chunks {
		s := 0.0
		for f := range 3 {
			if nf[f] == 0 {
				continue
			}
			avgdl := float64(total[f]) / float64(nf[f])
			for tok := range q {
				tf := float64(docs[i].tf[f][tok])
				if tf == 0 {
					continue
				}
				n := float64(df[f][tok])
				idf := math.Log(1 + (float64(nf[f])-n+0.5)/(n+0.5))
				s += boost[f] * idf * tf * (1.2 + 1) / (tf + 1.2*(1-0.75+0.75*float64(docs[i].dl[f])/avgdl))
			}
		}
		if s > 0 {
			out[c.ID] = s
		}
	}
	return out
}

// TestSearchIsTextbookBM25 verifies the scores against a hand-written BM25.
func TestSearchIsTextbookBM25(t *testing.T) {
	chunks := testChunks()
	ix := buildTest(t, chunks)
	queries := []string{
		"entries",
		"evict the eldest entry from the bounded cache",
		"fun get(key: K): V? = entries[key] ?: load(key)",
		"def get(self, key, default=None): return self._data.get(key, default)",
		"Response status raw parse http",
	}
	for _, q := range queries {
		t.Run(q, func(t *testing.T) {
			want := refBM25(chunks, q)
			hits, err := ix.searchBM25(q, len(chunks), nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) != len(want) {
				t.Errorf("got %d hits, want %d (every chunk with a matching term)", len(hits), len(want))
			}
			for _, h := range hits {
				w, ok := want[h.ID]
				if !ok || math.Abs(h.Score-w) > 1e-9*math.Max(1, w) {
					t.Errorf("score of %s = %.12f, want %.12f", h.ID, h.Score, w)
				}
			}
		})
	}
}

// TestBM25ParamsMatchBleve pins K1 and B to bleve's constants, as documented.
func TestBM25ParamsMatchBleve(t *testing.T) {
	if K1 != search.BM25_k1 || B != search.BM25_b {
		t.Errorf("K1, B = %v, %v; bleve uses %v, %v", K1, B, search.BM25_k1, search.BM25_b)
	}
}

// TestBleveNativeBM25Quirks documents why Search scores postings itself: bleve's own
// "bm25" model (v2.6.3) uses √tf, multiplies by a coordination factor and a query
// normalisation, and takes the average field length to be ceil(distinct terms in the
// field dictionary / documents) rather than the mean number of tokens per document. If
// this test fails, bleve changed its BM25 and the choice is worth revisiting.
func TestBleveNativeBM25Quirks(t *testing.T) {
	chunks := testChunks()
	ix := buildTest(t, chunks)
	q := bleve.NewMatchQuery("entries eldest")
	q.SetField("text")
	req := bleve.NewSearchRequest(q)
	req.Explain = true
	res, err := ix.bidx.Search(req)
	if err != nil {
		t.Fatal(err)
	}
	var expl *search.Explanation
	for _, h := range res.Hits {
		if h.ID == "src/cache/BoundedCache.kt#1" { // "entries" twice, "eldest" twice
			expl = h.Expl
		}
	}
	if expl == nil {
		t.Fatalf("chunk not found or not explained: %v", res)
	}
	b, _ := json.Marshal(expl)
	js := string(b)
	distinct := map[string]bool{}
	for _, c := range chunks {
		for _, tok := range Tokens(c.Text) {
			distinct[tok] = true
		}
	}
	quirkAvg := math.Ceil(float64(len(distinct)) / float64(len(chunks)))
	meanLen := float64(ix.stats[0].Tokens) / float64(ix.stats[0].Docs)
	var sqrtTF bool
	var walk func(e *search.Explanation)
	walk = func(e *search.Explanation) {
		if strings.HasPrefix(e.Message, "tf(termFreq(text:entries)=2") && math.Abs(e.Value-math.Sqrt2) < 1e-9 {
			sqrtTF = true
		}
		for _, c := range e.Children {
			walk(c)
		}
	}
	walk(expl)
	checks := []struct {
		what string
		ok   bool
	}{
		{"bm25 model", strings.Contains(js, "as per bm25 model")},
		{"tf = √freq", sqrtTF},
		{"coordination factor", strings.Contains(js, "coord(2/2)")},
		{"query normalisation", strings.Contains(js, "queryNorm")},
		{fmt.Sprintf("avgFieldLength = ceil(distinct terms / docs) = %v (true mean %.2f)", quirkAvg, meanLen),
			strings.Contains(js, fmt.Sprintf("avgFieldLength=%f", quirkAvg))},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("bleve's BM25 explanation no longer shows %s: %s", c.what, js)
		}
	}
}

func TestSearchFilterDoesNotCountRejected(t *testing.T) {
	// 40 chunks mention "needle"; the ones in file a.go score highest. Filtering a.go out
	// must still return k hits, from b.go, in order.
	var chunks []chunker.Chunk
	for i := range 20 {
		chunks = append(chunks, chunk("a.go", i, chunker.KindCode, "", nil, "needle needle needle filler"))
	}
	for i := range 20 {
		chunks = append(chunks, chunk("b.go", i, chunker.KindCode, "", nil,
			"needle "+strings.Repeat("hay ", i+1)))
	}
	ix := buildTest(t, chunks)
	notA := func(c *chunker.Chunk) bool { return c.Path != "a.go" }
	for _, k := range []int{1, 3, 19, 20, 50} {
		hits, err := ix.searchBM25("needle", k, notA)
		if err != nil {
			t.Fatal(err)
		}
		if want := min(k, 20); len(hits) != want {
			t.Fatalf("k=%d: got %d hits, want %d", k, len(hits), want)
		}
		for i, h := range hits {
			if !strings.HasPrefix(h.ID, "b.go#") || h.Rank != i+1 {
				t.Errorf("k=%d: hit %d = %+v", k, i, h)
			}
		}
		// Shorter chunks score higher: b.go#0 first.
		if hits[0].ID != "b.go#0" {
			t.Errorf("k=%d: top hit %s, want b.go#0", k, hits[0].ID)
		}
	}
	all, _ := ix.searchBM25("needle", 5, nil)
	if !strings.HasPrefix(all[0].ID, "a.go#") {
		t.Errorf("unfiltered top hit %s, want one of a.go", all[0].ID)
	}
}

func TestSearchEdgeCases(t *testing.T) {
	ix := buildTest(t, testChunks())
	tests := []struct {
		name  string
		query string
		k     int
	}{
		{"k zero", "entries", 0},
		{"k negative", "entries", -1},
		{"no tokens", "+-*/ ()", 5},
		{"no matching term", "zzzqqq xyzzy", 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hits, err := ix.searchBM25(tc.query, tc.k, nil)
			if err != nil || len(hits) != 0 {
				t.Errorf("Search(%q, %d) = %v, %v; want no hits", tc.query, tc.k, hits, err)
			}
		})
	}
}

func TestQueryTermCap(t *testing.T) {
	// Term word(i) occurs in i+1 chunks, so lower i is rarer.
	const n = 300
	word := func(i int) string { return fmt.Sprintf("t%c%c", 'a'+i/26, 'a'+i%26) }
	var chunks []chunker.Chunk
	for i := range n {
		var sb strings.Builder
		for w := i; w < n; w++ {
			sb.WriteString(word(w) + " ")
		}
		chunks = append(chunks, chunk(fmt.Sprintf("f%03d.txt", i), 0, chunker.KindWindow, "", nil, sb.String()))
	}
	ix := buildTest(t, chunks)
	var q strings.Builder
	for w := n - 1; w >= 0; w-- {
		fmt.Fprintf(&q, "%s absent%s ", word(w), word(w))
	}
	r, err := ix.adv.Reader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	terms, err := ix.queryTerms(r, Tokens(q.String()))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := range terms {
		got = append(got, terms[i].term)
		terms[i].close()
	}
	slices.Sort(got)
	var want []string
	for w := range MaxQueryTerms {
		want = append(want, word(w))
	}
	if !slices.Equal(got, want) {
		t.Errorf("kept terms %v..., want the %d rarest %v...", got[:5], MaxQueryTerms, want[:5])
	}
	if _, err := ix.searchBM25(q.String(), 10, nil); err != nil {
		t.Fatal(err)
	}
}

func TestChunksAndLookup(t *testing.T) {
	chunks := testChunks()
	ix := buildTest(t, chunks)
	got := ix.Chunks()
	if len(got) != len(chunks) {
		t.Fatalf("Chunks() has %d chunks, want %d", len(got), len(chunks))
	}
	for i := range chunks {
		if got[i].ID != chunks[i].ID || got[i].Text != chunks[i].Text ||
			!slices.Equal(got[i].Header, chunks[i].Header) || got[i].Kind != chunks[i].Kind {
			t.Errorf("Chunks()[%d] = %+v, want %+v", i, got[i], chunks[i])
		}
		c, ok := ix.Chunk(chunks[i].ID)
		if !ok || c.ID != chunks[i].ID {
			t.Errorf("Chunk(%q) = %v, %v", chunks[i].ID, c, ok)
		}
	}
	if _, ok := ix.Chunk("nope#0"); ok {
		t.Error("Chunk of an unknown id succeeded")
	}
}

func TestOpenErrors(t *testing.T) {
	base := t.TempDir()
	good := filepath.Join(base, "good")
	if err := Build(context.Background(), good, "key-a", testChunks(), BuildOptions{}); err != nil {
		t.Fatal(err)
	}
	corrupt := func(name string, edit func(dir string)) string {
		dir := filepath.Join(base, name)
		if err := os.CopyFS(dir, os.DirFS(good)); err != nil {
			t.Fatal(err)
		}
		edit(dir)
		return dir
	}
	setManifest := func(field string, v any) func(string) {
		return func(dir string) {
			p := filepath.Join(dir, manifestFile)
			var m map[string]any
			b, _ := os.ReadFile(p)
			_ = json.Unmarshal(b, &m)
			m[field] = v
			b, _ = json.Marshal(m)
			_ = os.WriteFile(p, b, 0o644)
		}
	}
	tests := []struct {
		name string
		dir  string
		key  string
		want []error
	}{
		{"missing dir", filepath.Join(base, "nope"), "key-a", []error{ErrIncomplete, fs.ErrNotExist}},
		{"no manifest", corrupt("nomanifest", func(d string) { os.Remove(filepath.Join(d, manifestFile)) }), "key-a", []error{ErrIncomplete}},
		{"garbage manifest", corrupt("garbage", func(d string) { os.WriteFile(filepath.Join(d, manifestFile), []byte("{"), 0o644) }), "key-a", []error{ErrIncomplete}},
		{"truncated chunks", corrupt("trunc", func(d string) { os.Truncate(filepath.Join(d, chunksFile), 10) }), "key-a", []error{ErrIncomplete}},
		{"no bleve index", corrupt("nobleve", func(d string) { os.RemoveAll(filepath.Join(d, bleveDir)) }), "key-a", []error{ErrIncomplete}},
		{"wrong count", corrupt("count", setManifest("chunks", 3)), "key-a", []error{ErrIncomplete}},
		{"other format", corrupt("format", setManifest("format", 0)), "key-a", []error{ErrFormat}},
		{"other key", good, "key-b", []error{ErrKeyMismatch}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ix, err := Open(tc.dir, tc.key, BuildOptions{})
			if err == nil {
				ix.Close()
				t.Fatal("Open succeeded")
			}
			for _, w := range tc.want {
				if !errors.Is(err, w) {
					t.Errorf("Open error %q is not %v", err, w)
				}
			}
			if !strings.HasPrefix(err.Error(), "retrieve: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
		})
	}
}

func TestOpenOrBuild(t *testing.T) {
	cache := t.TempDir()
	calls := 0
	chunks := func() ([]chunker.Chunk, error) { calls++; return testChunks(), nil }
	dir := filepath.Join(cache, CacheDirName("snap-1"))

	steps := []struct {
		name      string
		key       string
		prepare   func()
		wantBuilt bool
	}{
		{"first call builds", "snap-1", nil, true},
		{"same key reuses", "snap-1", nil, false},
		{"different key builds", "snap-2", nil, true},
		{"first key still cached", "snap-1", nil, false},
		{"half-written dir is rebuilt", "snap-1", func() {
			if err := os.Remove(filepath.Join(dir, manifestFile)); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"after rebuild reuses", "snap-1", nil, false},
		{"dir with another key's index is rebuilt", "snap-1", func() {
			// As after a hash collision: dir holds a complete index of another key.
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			if err := Build(context.Background(), dir, "other", testChunks()[:2], BuildOptions{}); err != nil {
				t.Fatal(err)
			}
		}, true},
	}
	for _, st := range steps {
		if st.prepare != nil {
			st.prepare()
		}
		before := calls
		ix, built, err := OpenOrBuild(context.Background(), cache, st.key, ctxless(chunks), BuildOptions{})
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if built != st.wantBuilt || (calls > before) != st.wantBuilt {
			t.Errorf("%s: built = %v (chunks called %d times), want %v", st.name, built, calls-before, st.wantBuilt)
		}
		if ix.Key() != st.key || len(ix.Chunks()) != len(testChunks()) {
			t.Errorf("%s: got index of key %q with %d chunks", st.name, ix.Key(), len(ix.Chunks()))
		}
		if hits, err := ix.searchBM25("evict eldest", 1, nil); err != nil || len(hits) != 1 {
			t.Errorf("%s: search: %v %v", st.name, hits, err)
		}
		if err := ix.Close(); err != nil {
			t.Errorf("%s: close: %v", st.name, err)
		}
	}
	assertNoLeftovers(t, cache)
}

func TestOpenOrBuildPropagatesChunksError(t *testing.T) {
	boom := errors.New("boom")
	_, _, err := OpenOrBuild(context.Background(), t.TempDir(), "k", ctxless(func() ([]chunker.Chunk, error) { return nil, boom }), BuildOptions{})
	if !errors.Is(err, boom) {
		t.Errorf("err = %v, want wrapping boom", err)
	}
}

// assertNoLeftovers checks that no temporary or moved-aside directories remain.
func assertNoLeftovers(t *testing.T, parent string) {
	t.Helper()
	entries, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), tmpInfix) || strings.Contains(e.Name(), oldInfix) {
			t.Errorf("leftover %s", e.Name())
		}
	}
}

func TestBuildErrors(t *testing.T) {
	foreign := t.TempDir()
	if err := os.WriteFile(filepath.Join(foreign, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	dup := testChunks()
	dup[1].ID = dup[0].ID
	noID := testChunks()
	noID[2].ID = ""
	tests := []struct {
		name   string
		dir    string
		chunks []chunker.Chunk
	}{
		{"duplicate id", filepath.Join(t.TempDir(), "x"), dup},
		{"empty id", filepath.Join(t.TempDir(), "x"), noID},
		{"foreign directory", foreign, testChunks()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Build(context.Background(), tc.dir, "k", tc.chunks, BuildOptions{})
			if err == nil || !strings.HasPrefix(err.Error(), "retrieve: ") {
				t.Errorf("Build error = %v, want a retrieve error", err)
			}
		})
	}
	if b, err := os.ReadFile(filepath.Join(foreign, "notes.txt")); err != nil || string(b) != "mine" {
		t.Errorf("Build touched a foreign directory: %q, %v", b, err)
	}
	assertNoLeftovers(t, filepath.Dir(foreign))
}

func TestEmptyIndex(t *testing.T) {
	ix := buildTest(t, nil)
	if n := len(ix.Chunks()); n != 0 {
		t.Errorf("empty index has %d chunks", n)
	}
	hits, err := ix.searchBM25("anything at all", 5, nil)
	if err != nil || len(hits) != 0 {
		t.Errorf("Search on empty index = %v, %v", hits, err)
	}
}

func TestSearchAfterClose(t *testing.T) {
	ix := buildTest(t, testChunks())
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := ix.searchBM25("entries", 3, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Search after Close: %v, want ErrClosed", err)
	}
}

func TestConcurrentSearch(t *testing.T) {
	ix := buildTest(t, testChunks())
	queries := []string{"evict the eldest entry", "parseHTTPResponse", "load_from_env", "slugify title", "readObject"}
	want := make([][]Hit, len(queries))
	for i, q := range queries {
		var err error
		if want[i], err = ix.searchBM25(q, 5, nil); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				qi := (g + i) % len(queries)
				var filter func(*chunker.Chunk) bool
				if i%2 == 1 {
					filter = func(*chunker.Chunk) bool { return true }
				}
				got, err := ix.searchBM25(queries[qi], 5, filter)
				if err != nil {
					t.Error(err)
					return
				}
				if !slices.Equal(got, want[qi]) {
					t.Errorf("goroutine %d: Search(%q) = %v, want %v", g, queries[qi], got, want[qi])
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestConcurrentOpenOrBuild(t *testing.T) {
	cache := t.TempDir()
	var mu sync.Mutex
	builds := 0
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			ix, built, err := OpenOrBuild(context.Background(), cache, "race", ctxless(func() ([]chunker.Chunk, error) { return testChunks(), nil }), BuildOptions{})
			if err != nil {
				t.Error(err)
				return
			}
			defer ix.Close()
			if built {
				mu.Lock()
				builds++
				mu.Unlock()
			}
			if hits, err := ix.searchBM25("slugify", 1, nil); err != nil || len(hits) != 1 || hits[0].ID != "util/strings.py#1" {
				t.Errorf("search: %v %v", hits, err)
			}
		})
	}
	wg.Wait()
	if builds != 1 {
		t.Errorf("%d goroutines built, want 1", builds)
	}
	assertNoLeftovers(t, cache)
}

// TestConcurrentBuildSameDir races Build itself (as separate processes would, without
// OpenOrBuild's in-process lock): every racer succeeds and the result is one valid index.
func TestConcurrentBuildSameDir(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "idx")
	// Start from a stale index so racers also exercise moving it aside.
	if err := Build(context.Background(), dir, "old", testChunks()[:3], BuildOptions{}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if err := Build(context.Background(), dir, "new", testChunks(), BuildOptions{}); err != nil {
				t.Error(err)
			}
			ix, err := Open(dir, "new", BuildOptions{})
			if err != nil {
				t.Error(err)
				return
			}
			ix.Close()
		})
	}
	wg.Wait()
	ix, err := Open(dir, "new", BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if len(ix.Chunks()) != len(testChunks()) {
		t.Errorf("index has %d chunks", len(ix.Chunks()))
	}
	assertNoLeftovers(t, parent)
}

// TestPruningIsExact compares Search (MaxScore pruning) with exhaustive scoring on many
// queries, k values and filters: the hits must be identical.
func TestPruningIsExact(t *testing.T) {
	chunks := synthChunks(600)
	ix := buildTest(t, chunks)
	var queries []string
	for i := range 8 {
		c := chunks[(i*131)%len(chunks)]
		lines := strings.Split(c.Text, "\n")
		queries = append(queries,
			lines[1+i%20],                  // one line
			strings.Join(lines[:10], "\n"), // a few lines
			c.Text+"\n"+chunks[(i*131+7)%len(chunks)].Text, // two chunks
		)
	}
	filters := map[string]func(*chunker.Chunk) bool{
		"nil":         nil,
		"odd ordinal": func(c *chunker.Chunk) bool { return c.Ordinal%2 == 1 },
		"rare":        func(c *chunker.Chunk) bool { return len(c.Path)%7 == 0 },
	}
	searches, pruned := 0, 0
	for fname, filter := range filters {
		for _, k := range []int{1, 10, 50} {
			for qi, q := range queries {
				got, st, err := ix.search(q, k, filter, true)
				if err != nil {
					t.Fatal(err)
				}
				want, _, err := ix.search(q, k, filter, false)
				if err != nil {
					t.Fatal(err)
				}
				searches++
				if st.pruned {
					pruned++
				}
				if !slices.Equal(got, want) {
					t.Errorf("filter %s, k=%d, query %d: pruned %v\nexhaustive %v", fname, k, qi, got, want)
				}
			}
		}
	}
	// The comparison is only meaningful if pruning happened often.
	if pruned < searches/2 {
		t.Errorf("pruning kicked in for %d of %d searches only", pruned, searches)
	}
	t.Logf("pruning kicked in for %d of %d searches", pruned, searches)
}

// childEnv names the cache directory a re-executed test binary should use in
// TestChildProcess.
const childEnv = "REPOCTX_RETRIEVE_TEST_CACHE"

// TestChildProcess is the body of the processes started by TestOpenOrBuildProcesses; it
// does nothing in a normal test run.
func TestChildProcess(t *testing.T) {
	cache := os.Getenv(childEnv)
	if cache == "" {
		t.Skip("only run as a child of TestOpenOrBuildProcesses")
	}
	ix, built, err := OpenOrBuild(context.Background(), cache, "multi-process", ctxless(func() ([]chunker.Chunk, error) { return testChunks(), nil }), BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	hits, err := ix.searchBM25("slugify", 1, nil)
	if err != nil || len(hits) != 1 || hits[0].ID != "util/strings.py#1" {
		t.Fatalf("search: %v %v", hits, err)
	}
	fmt.Printf("built=%v\n", built)
}

// TestOpenOrBuildProcesses races OpenOrBuild for one key from several processes (the
// test binary re-executed), while this process keeps the index open read-only once it
// exists: every process must end with a usable index.
func TestOpenOrBuildProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	cache := t.TempDir()
	const procs = 3
	outs := make([][]byte, procs)
	errs := make([]error, procs)
	var wg sync.WaitGroup
	for i := range procs {
		wg.Go(func() {
			cmd := exec.Command(exe, "-test.run=^TestChildProcess$", "-test.count=1")
			cmd.Env = append(os.Environ(), childEnv+"="+cache)
			outs[i], errs[i] = cmd.CombinedOutput()
		})
	}
	wg.Wait()
	builders := 0
	for i := range procs {
		if errs[i] != nil {
			t.Errorf("process %d: %v\n%s", i, errs[i], outs[i])
		}
		if strings.Contains(string(outs[i]), "built=true") {
			builders++
		}
	}
	if builders == 0 {
		t.Errorf("no process built the index")
	}
	t.Logf("%d of %d racing processes built the index", builders, procs)
	// A later process opens it while we hold it open.
	ix, err := Open(filepath.Join(cache, CacheDirName("multi-process")), "multi-process", BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	cmd := exec.Command(exe, "-test.run=^TestChildProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+cache)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "built=false") {
		t.Errorf("process opening a held index: %v\n%s", err, out)
	}
	assertNoLeftovers(t, cache)
}

// ctxless adapts a chunk source without a context to OpenOrBuild's.
func ctxless(f func() ([]chunker.Chunk, error)) func(context.Context) ([]chunker.Chunk, error) {
	return func(context.Context) ([]chunker.Chunk, error) { return f() }
}

package retrieve

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/internal/racetest"
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

// buildTest returns the index of chunks with BM25 and LSA vectors.
func buildTest(t testing.TB, chunks []chunker.Chunk) *Index {
	t.Helper()
	d, err := LSAVectors(context.Background(), chunks, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	ix, err := New(chunks, d)
	if err != nil {
		t.Fatalf("New: %v", err)
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
		hits, err := ix.searchBM25("needle", k, &chunkFilter{f: notA})
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
	acc := ix.getAccum()
	defer ix.putAccum(acc)
	terms := ix.queryTerms(Tokens(q.String()), acc)
	var got []string
	for i := range terms {
		got = append(got, terms[i].term)
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
				got, err := ix.searchBM25(queries[qi], 5, &chunkFilter{f: filter})
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

// TestPruningIsExact compares Search (MaxScore pruning, the k-th score looked for
// among the documents above the last one found) with exhaustive scoring on many
// queries, k values and filters: the hits must be identical.
func TestPruningIsExact(t *testing.T) {
	racetest.Skip(t, "compares pruned and exhaustive BM25 over many queries on one goroutine")
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
	searches, pruned, narrowed := 0, 0, 0
	for fname, filter := range filters {
		for _, k := range []int{1, 10, 50} {
			for qi, q := range queries {
				got, st, err := ix.search(q, k, &chunkFilter{f: filter}, true)
				if err != nil {
					t.Fatal(err)
				}
				want, _, err := ix.search(q, k, &chunkFilter{f: filter}, false)
				if err != nil {
					t.Fatal(err)
				}
				searches++
				if st.pruned {
					pruned++
				}
				if st.narrowed > 0 {
					narrowed++
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
	// And so did the k-th score's search among the documents above the last one found.
	if narrowed < searches/4 {
		t.Errorf("the k-th score was looked for among the documents above lb in %d of %d searches only", narrowed, searches)
	}
	t.Logf("pruning kicked in for %d of %d searches, the narrowed k-th search for %d", pruned, searches, narrowed)
}

// TestFileText: a file's text is its chunks joined in order, the bytes a chunk shares
// with its predecessor left out; the text is cached and the same on a second call.
func TestFileText(t *testing.T) {
	a := chunker.Chunk{ID: chunker.ChunkID("a.kt", 0), Path: "a.kt", StartByte: 0, EndByte: 8, Text: "fun a()\n"}
	b := chunker.Chunk{ID: chunker.ChunkID("a.kt", 1), Path: "a.kt", Ordinal: 1, StartByte: 4, EndByte: 14, Text: "a()\nval x\n"}
	c := chunker.Chunk{ID: chunker.ChunkID("b.kt", 0), Path: "b.kt", StartByte: 0, EndByte: 4, Text: "val\n"}
	ix, err := New([]chunker.Chunk{a, b, c}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if got := ix.FileText("a.kt"); got != "fun a()\nval x\n" {
			t.Errorf("a.kt: %q", got)
		}
		if got := ix.FileText("missing.kt"); got != "" {
			t.Errorf("missing.kt: %q", got)
		}
	}
	if ix.textBytes != len("fun a()\nval x\n") {
		t.Errorf("cache holds %d bytes", ix.textBytes)
	}
}

// TestSortCand: the bitmap sort of the candidates gives slices.Sort's order for sets
// of every size, and leaves the bitmap clear for the next search.
func TestSortCand(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	a := &accum{scores: make([]float64, 1000)}
	for _, n := range []int{0, 1, 63, 64, 65, 500, 1000} {
		a.cand = a.cand[:0]
		for _, d := range rng.Perm(1000)[:n] {
			a.cand = append(a.cand, uint64(d))
		}
		want := slices.Sorted(slices.Values(a.cand))
		a.sortCand()
		if !slices.Equal(a.cand, want) {
			t.Errorf("%d candidates: sorted to %v, want %v", n, a.cand, want)
		}
		for w, word := range a.bits {
			if word != 0 {
				t.Fatalf("%d candidates: bitmap word %d left %x", n, w, word)
			}
		}
	}
}

// TestAccumulatorsAcrossIndexes: the accumulators a search leaves for the next
// (shared by every index of the process) give a smaller and a larger index the same
// BM25 hits as a first search of each, searches interleaved.
func TestAccumulatorsAcrossIndexes(t *testing.T) {
	small := buildTest(t, testChunks())
	var more []chunker.Chunk
	for i := range 300 {
		more = append(more, chunk(fmt.Sprintf("gen/F%d.kt", i), 0, chunker.KindFunction, "f", nil,
			fmt.Sprintf("fun f%d(entries: Map<String, Int>) = entries[\"k%d\"] ?: %d", i, i%7, i)))
	}
	big := buildTest(t, append(testChunks(), more...))
	queries := []string{"entries remove eldest", "parse http response status", "fun entries Map String", "slugify title", "k3 entries"}
	want := map[string][]Hit{}
	for _, ix := range []*Index{small, big} {
		for _, q := range queries {
			hits, err := ix.searchBM25(q, 8, nil)
			if err != nil {
				t.Fatal(err)
			}
			want[fmt.Sprintf("%p %s", ix, q)] = hits
		}
	}
	for round := range 5 {
		for i, q := range queries {
			ix := []*Index{big, small}[(i+round)%2]
			hits, err := ix.searchBM25(q, 8, nil)
			if err != nil {
				t.Fatal(err)
			}
			if w := want[fmt.Sprintf("%p %s", ix, q)]; !slices.Equal(hits, w) {
				t.Fatalf("round %d, %q on the index of %d chunks: %v, want %v", round, q, ix.chunks.len(), hits, w)
			}
		}
	}
}

package hugot

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/repoctx/repoctx/internal/racetest"
	"github.com/repoctx/repoctx/retrieve"
)

// tinyBERT is the generated test model (testdata/models/gen_tiny_bert.py).
var tinyBERT = filepath.Join("..", "..", "testdata", "models", "tiny-bert")

type tinyCase struct {
	Name      string    `json:"name"`
	Text      string    `json:"text"`
	Keep      string    `json:"keep"`
	IDs       []int     `json:"ids"`
	Truncated bool      `json:"truncated"`
	Embedding []float32 `json:"embedding"`
}

func tinyExpected(t testing.TB) (limit, dim int, cases []tinyCase) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(tinyBERT, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var e struct {
		Limit int        `json:"limit"`
		Dim   int        `json:"dim"`
		Cases []tinyCase `json:"cases"`
	}
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	return e.Limit, e.Dim, e.Cases
}

func keepOf(s string) retrieve.KeepEnd {
	if s == "tail" {
		return retrieve.KeepTail
	}
	return retrieve.KeepHead
}

// sharedTiny is one tiny-model embedder shared by the tests of this package (loading
// compiles graphs; the embedder is safe for concurrent use).
var sharedTiny struct {
	once sync.Once
	emb  retrieve.Embedder
	err  error
}

func tinyEmbedder(t testing.TB) retrieve.Embedder {
	t.Helper()
	sharedTiny.once.Do(func() { sharedTiny.emb, sharedTiny.err = New(tinyBERT, Options{}) })
	if sharedTiny.err != nil {
		t.Fatalf("New: %v", sharedTiny.err)
	}
	return sharedTiny.emb
}

func maxAbsDiff(a, b []float32) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	m := 0.0
	for i := range a {
		m = max(m, math.Abs(float64(a[i])-float64(b[i])))
	}
	return m
}

// TestHugotMatchesReference checks the pure-Go hugot pipeline against embeddings the
// generator computed independently with numpy (its own WordPiece tokenizer, its own
// forward pass), including accent stripping and both truncation ends.
func TestHugotMatchesReference(t *testing.T) {
	limit, dim, cases := tinyExpected(t)
	emb := tinyEmbedder(t)
	if emb.Dim() != dim {
		t.Fatalf("Dim = %d, want %d", emb.Dim(), dim)
	}
	prep := emb.(*hugotGo).prep
	if prep.limit != limit || prep.special != 2 || !prep.strip {
		t.Fatalf("prep = limit %d special %d strip %v", prep.limit, prep.special, prep.strip)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			_, enc, cut, err := prep.prepare(c.Text, keepOf(c.Keep))
			if err != nil {
				t.Fatal(err)
			}
			if !equalInts(enc.Ids, c.IDs) {
				t.Errorf("ids = %v\nwant  %v", enc.Ids, c.IDs)
			}
			vecs, trunc, err := emb.Embed([]string{c.Text}, keepOf(c.Keep))
			if err != nil {
				t.Fatal(err)
			}
			if trunc[0] != c.Truncated || cut != c.Truncated {
				t.Errorf("truncated = %v/%v, want %v", trunc[0], cut, c.Truncated)
			}
			if d := maxAbsDiff(vecs[0], c.Embedding); d > 2e-5 {
				t.Errorf("embedding differs from numpy's by %g", d)
			}
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestHugotPaddingInvariant: a text's vector must not depend on the batch it is in
// (padding to the longest text and to the shape buckets).
func TestHugotPaddingInvariant(t *testing.T) {
	emb := tinyEmbedder(t)
	short := "def get(self, key): return self.cache[key]"
	long := strings.Repeat("entries.remove(eldest) ", 20)
	alone, _, err := emb.Embed([]string{short}, retrieve.KeepHead)
	if err != nil {
		t.Fatal(err)
	}
	batch, _, err := emb.Embed([]string{long, short, "x", long + long}, retrieve.KeepHead)
	if err != nil {
		t.Fatal(err)
	}
	if d := maxAbsDiff(alone[0], batch[1]); d > 1e-5 {
		t.Errorf("vector changes by %g when padded in a batch", d)
	}
	for i, v := range batch {
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		if math.Abs(n-1) > 1e-4 {
			t.Errorf("vector %d has squared norm %g", i, n)
		}
	}
}

// TestHugotConcurrentEmbed: the embedder is shared by predict's workers and serve's
// requests, so Embed called from several goroutines at once gives each the vectors it
// gives alone (run under -race in make test).
func TestHugotConcurrentEmbed(t *testing.T) {
	emb := tinyEmbedder(t)
	texts := [][]string{
		{"def get(self, key): return self.cache[key]"},
		{"fun evict(eldest: Entry) = entries.remove(eldest)", "x"},
		{strings.Repeat("retry backoff ", 10)},
	}
	want := make([][][]float32, len(texts))
	for i, ts := range texts {
		v, _, err := emb.Embed(ts, retrieve.KeepHead)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = v
	}
	got := make([][][]float32, len(texts))
	errs := make([]error, len(texts))
	var wg sync.WaitGroup
	for i, ts := range texts {
		wg.Go(func() { got[i], _, errs[i] = emb.Embed(ts, retrieve.KeepHead) })
	}
	wg.Wait()
	for i := range texts {
		if errs[i] != nil {
			t.Fatalf("goroutine %d: %v", i, errs[i])
		}
		for j := range want[i] {
			if d := maxAbsDiff(want[i][j], got[i][j]); d > 1e-6 {
				t.Errorf("goroutine %d text %d: vector differs by %g from the one embedded alone", i, j, d)
			}
		}
	}
}

func TestWantsAccentStrip(t *testing.T) {
	tests := []struct {
		norm string
		want bool
	}{
		{`{"type":"BertNormalizer","strip_accents":null,"lowercase":true}`, true},
		{`{"type":"BertNormalizer","strip_accents":null,"lowercase":false}`, false},
		{`{"type":"BertNormalizer","strip_accents":false,"lowercase":true}`, false},
		{`{"type":"BertNormalizer","strip_accents":true,"lowercase":false}`, true},
		{`{"type":"Sequence","normalizers":[{"type":"NFD"},{"type":"StripAccents"},{"type":"Lowercase"}]}`, true},
		{`{"type":"Sequence","normalizers":[{"type":"NFC"}]}`, false},
		{`null`, false},
	}
	for _, tc := range tests {
		if got := wantsAccentStrip([]byte(`{"normalizer":` + tc.norm + `}`)); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.norm, got, tc.want)
		}
	}
	if got := stripAccents("Café Ångström naïve ß ﬁ x"); got != "Cafe Angstrom naive ß ﬁ x" {
		t.Errorf("stripAccents = %q", got)
	}
}

// TestHugotLongInputs: texts far over the limit, and one giant word, never fail, are
// flagged and fit the limit.
func TestHugotLongInputs(t *testing.T) {
	racetest.Skip(t, "embeds long texts with the pure-Go model")
	emb := tinyEmbedder(t)
	prep := emb.(*hugotGo).prep
	texts := []string{
		strings.Repeat("def get(self, key): return self.cache[key]\n", 300),
		strings.Repeat("q", 5000),             // one word over max_input_chars_per_word: [UNK]
		strings.Repeat("zq", 45),              // one word of 90 pieces
		"x = 1 # " + strings.Repeat("é", 300), // accents stripped
		strings.Repeat("\u4e2d\u6587", 100),   // CJK characters (unknown)
		"",                                    // empty
		strings.Repeat("entries.remove(eldest) ", 100) + "END",
	}
	for _, keep := range []retrieve.KeepEnd{retrieve.KeepHead, retrieve.KeepTail} {
		vecs, trunc, err := emb.Embed(texts, keep)
		if err != nil {
			t.Fatalf("%v: %v", keep, err)
		}
		for i, text := range texts {
			p, enc, cut, err := prep.prepare(text, keep)
			if err != nil {
				t.Fatalf("%v text %d: %v", keep, i, err)
			}
			if len(enc.Ids) > prep.limit {
				t.Errorf("%v text %d: %d tokens over the limit %d", keep, i, len(enc.Ids), prep.limit)
			}
			if cut != trunc[i] {
				t.Errorf("%v text %d: truncated %v vs %v", keep, i, cut, trunc[i])
			}
			if len(vecs[i]) != emb.Dim() {
				t.Errorf("%v text %d: dim %d", keep, i, len(vecs[i]))
			}
			if keep == retrieve.KeepTail && i == len(texts)-1 && !strings.HasSuffix(p, "END") {
				t.Errorf("retrieve.KeepTail lost the end: %q", p[max(0, len(p)-20):])
			}
			if keep == retrieve.KeepHead && i == 0 && !strings.HasPrefix(text, p) {
				t.Errorf("retrieve.KeepHead did not keep the start")
			}
		}
		if !trunc[0] || !trunc[2] || trunc[5] {
			t.Errorf("%v: truncated flags %v", keep, trunc)
		}
	}
}

func TestHugotModelID(t *testing.T) {
	id, err := ModelID(tinyBERT, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(id, "hugot:tiny-bert:") || !strings.HasSuffix(id, ":max64:v2") || id != tinyEmbedder(t).ID() {
		t.Errorf("id = %s (embedder %s)", id, tinyEmbedder(t).ID())
	}
	if id2, _ := ModelID(tinyBERT, Options{MaxTokens: 32}); id2 == id || !strings.HasSuffix(id2, ":max32:v2") {
		t.Errorf("MaxTokens 32: id %s", id2)
	}
	if id3, _ := ModelID(tinyBERT, Options{MaxTokens: 1000}); id3 != id {
		t.Errorf("MaxTokens above max_position_embeddings: %s", id3)
	}
	// A copy with another tokenizer is another model.
	dir := t.TempDir()
	for _, f := range []string{"model.onnx", "tokenizer.json", "config.json"} {
		b, err := os.ReadFile(filepath.Join(tinyBERT, f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "tokenizer.json" {
			b = []byte(strings.Replace(string(b), `"max_length": 16`, `"max_length": 17`, 1))
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if id4, err := ModelID(dir, Options{}); err != nil || strings.Split(id4, ":")[2] == strings.Split(id, ":")[2] {
		t.Errorf("changed tokenizer: %s %v", id4, err)
	}
	// Two .onnx files need OnnxFile.
	if err := os.WriteFile(filepath.Join(dir, "other.onnx"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ModelID(dir, Options{}); err == nil {
		t.Error("two .onnx files accepted")
	}
	if _, err := ModelID(dir, Options{OnnxFile: "model.onnx"}); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{filepath.Join(dir, "nope"), filepath.Join(tinyBERT, "config.json"), t.TempDir()} {
		if _, err := New(bad, Options{}); err == nil {
			t.Errorf("New(%s) succeeded", bad)
		}
	}
	if _, err := New(tinyBERT, Options{Backend: "cuda"}); err == nil {
		t.Error("unknown backend accepted")
	}
	if !ORTAvailable {
		if _, err := New(tinyBERT, Options{Backend: "ort"}); err == nil {
			t.Error("ort backend without the build tag accepted")
		}
	}
}

// TestHugotSplit: Split cuts a long text into pieces that each fit the token limit,
// at word starts, and that put back together give the text.
func TestHugotSplit(t *testing.T) {
	emb := tinyEmbedder(t).(*hugotGo)
	for _, text := range []string{
		"def get(self, key): return self.cache[key]",
		strings.Repeat("def get(self, key): return self.cache[key]\n", 30),
		strings.Repeat("zq", 400), // one word of 800 pieces: cut inside
		strings.Repeat("x = café ", 80),
	} {
		pieces, err := emb.Split(text)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := strings.Join(pieces, ""), stripAccents(text); got != want {
			t.Errorf("pieces do not add up to the text: %.40q...", got)
		}
		for i, p := range pieces {
			_, enc, cut, err := emb.prep.prepare(p, retrieve.KeepHead)
			if err != nil || cut || len(enc.Ids) > emb.limit() {
				t.Errorf("piece %d of %d (%.30q): %d tokens, cut %v, %v", i, len(pieces), p, len(enc.Ids), cut, err)
			}
		}
		if len(pieces) > 1 && strings.HasPrefix(text, "def") {
			for _, p := range pieces[1:] {
				if r := p[0]; r != ' ' && r != '\n' && r != 'd' && r != 'r' && r != 's' && r != 'k' && r != 'c' && r != '(' && r != ')' && r != ':' && r != '.' && r != ',' && r != '[' && r != ']' {
					t.Errorf("piece starts inside a word: %.20q", p)
				}
			}
		}
	}
}

// copyModel copies the tiny model's files into a new folder, with the files of
// extra replaced (or added; "" removes the file).
func copyModel(t *testing.T, extra map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "model")
	os.Mkdir(dir, 0o755)
	for _, f := range []string{"model.onnx", "tokenizer.json", "config.json"} {
		b, err := os.ReadFile(filepath.Join(tinyBERT, f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, f), b, 0o644)
	}
	for f, content := range extra {
		if content == "" {
			os.Remove(filepath.Join(dir, f))
			continue
		}
		os.WriteFile(filepath.Join(dir, f), []byte(content), 0o644)
	}
	return dir
}

// TestHugotTokenLimit: where the token limit comes from, and the errors of a folder
// that does not say it right.
func TestHugotTokenLimit(t *testing.T) {
	limit := func(dir string, opts Options) (int, error) {
		mf, err := resolveModel(dir, opts)
		return mf.maxTokens, err
	}
	for _, tc := range []struct {
		name  string
		files map[string]string
		opts  Options
		want  int
	}{
		{"config and ONNX agree", nil, Options{}, 64},
		{"no config: the ONNX table", map[string]string{"config.json": ""}, Options{}, 64},
		{"config claims more positions than the table", map[string]string{"config.json": `{"max_position_embeddings": 512}`}, Options{}, 64},
		{"max_seq_length", map[string]string{"sentence_bert_config.json": `{"max_seq_length": 32}`}, Options{}, 32},
		{"max_seq_length above the positions", map[string]string{"sentence_bert_config.json": `{"max_seq_length": 256}`}, Options{}, 64},
		{"explicit", nil, Options{MaxTokens: 20}, 20},
	} {
		got, err := limit(copyModel(t, tc.files), tc.opts)
		if err != nil || got != tc.want {
			t.Errorf("%s: limit %d, %v; want %d", tc.name, got, err, tc.want)
		}
	}
	// A malformed file is an error naming it.
	for _, f := range []string{"sentence_bert_config.json", "config.json"} {
		dir := copyModel(t, map[string]string{f: `{"max_seq_length": 1`})
		_, err := limit(dir, Options{})
		if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, f)) || !strings.Contains(err.Error(), "malformed") {
			t.Errorf("malformed %s: %v, want an error naming it", f, err)
		}
		if _, err := New(dir, Options{}); err == nil {
			t.Errorf("New accepted a malformed %s", f)
		}
	}
	// No table (a graph without one), no config, no sentence config: refused.
	dir := copyModel(t, map[string]string{"config.json": ""})
	os.WriteFile(filepath.Join(dir, "model.onnx"), model(graph(input("input_ids"), initializer("word", 100, 8), gather("word", "input_ids"))), 0o644)
	if _, err := limit(dir, Options{}); !errors.Is(err, ErrNoLimit) || !strings.Contains(err.Error(), dir) {
		t.Errorf("unknown limit: %v, want ErrNoLimit naming the folder", err)
	}
	if got, err := limit(dir, Options{MaxTokens: 128}); err != nil || got != 128 {
		t.Errorf("unknown positions with MaxTokens 128: %d, %v", got, err)
	}
	// RoBERTa's position ids start after the padding index.
	dir = copyModel(t, map[string]string{"config.json": `{"model_type": "roberta", "max_position_embeddings": 66, "pad_token_id": 1}`})
	os.WriteFile(filepath.Join(dir, "model.onnx"), model(graph(initializer("embeddings.position_embeddings.weight", 66, 8))), 0o644)
	if got, err := limit(dir, Options{}); err != nil || got != 64 {
		t.Errorf("roberta with 66 positions: limit %d, %v; want 64", got, err)
	}
}

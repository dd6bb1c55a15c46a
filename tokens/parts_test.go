package tokens

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/repoctx/repoctx/internal/racetest"
)

// The split behaviors, from the Rust library's own test (pre_tokenizers/split.rs
// "basic": the Whitespace regex, inverted).
func TestSplitBehaviors(t *testing.T) {
	re, err := compileRegex(`\w+|[^\w\s]+`)
	if err != nil {
		t.Fatal(err)
	}
	const s = "How are you doing?"
	for _, tc := range []struct {
		b    behavior
		want []string
	}{
		{removed, []string{"How", "are", "you", "doing", "?"}},
		{isolated, []string{"How", " ", "are", " ", "you", " ", "doing", "?"}},
		{mergedWithPrevious, []string{"How ", "are ", "you ", "doing", "?"}},
		{mergedWithNext, []string{"How", " are", " you", " doing", "?"}},
		{contiguous, []string{"How", " ", "are", " ", "you", " ", "doing?"}},
	} {
		p := &splitPre{m: regexMatcher{re}, behavior: tc.b, invert: true}
		got := p.split(s, &scratch{}, nil)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("behavior %d: got %q, want %q", tc.b, got, tc.want)
		}
	}
	// A String pattern splits like the same regex (split.rs "regex_string").
	lit := (&splitPre{m: literalMatcher(" "), behavior: removed}).split("Hey, man!", &scratch{}, nil)
	if want := []string{"Hey,", "man!"}; !reflect.DeepEqual(lit, want) {
		t.Errorf("String pattern: got %q, want %q", lit, want)
	}
}

func TestDigitsAndBert(t *testing.T) {
	sc := &scratch{}
	digits := &splitPre{m: funcMatcher(isNumeric), behavior: isolated}
	if got, want := digits.split("ab123c٣4", sc, nil), []string{"ab", "1", "2", "3", "c", "٣", "4"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Digits(individual): got %q, want %q", got, want)
	}
	runs := &splitPre{m: funcMatcher(isNumeric), behavior: contiguous}
	if got, want := runs.split("ab123c4", sc, nil), []string{"ab", "123", "c", "4"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Digits: got %q, want %q", got, want)
	}
	if got, want := (bertPre{}).split("Hey friend!  How are you?!?", sc, nil),
		[]string{"Hey", "friend", "!", "How", "are", "you", "?", "!", "?"}; !reflect.DeepEqual(got, want) {
		t.Errorf("BertPreTokenizer: got %q, want %q", got, want)
	}
	if got, want := (whitespacePre{}).split("Hey man!\tHow's it?", sc, nil),
		[]string{"Hey", "man", "!", "How", "'", "s", "it", "?"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Whitespace: got %q, want %q", got, want)
	}
}

// scannerAlphabet mixes the runes the GPT-2-family patterns tell apart.
var scannerAlphabet = []rune{
	'a', 'Z', 'é', 'ß', '日', 'Ω', '1', '0', '٣', 'Ⅻ', '½',
	' ', ' ', ' ', '\t', '\n', '\r', '\u00a0', '\u3000', '\u2028', '\u000b',
	'\'', '\'', 's', 'S', 'ſ', 't', 'T', 'r', 'R', 'e', 'E', 'v', 'l', 'L', 'd', 'm', 'M',
	'(', '.', '_', '"', '😀', '\u200d', '\u0301', '\ufeff', '\u00ad',
}

func randomText(r *rand.Rand, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteRune(scannerAlphabet[r.IntN(len(scannerAlphabet))])
	}
	return b.String()
}

// TestScannerMatchesRegexp2 checks that the hand-written scanner splits as
// regexp2 does with each pattern it stands in for.
func TestScannerMatchesRegexp2(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for pattern, g := range gptPatterns {
		re, err := compileRegex(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3000; i++ {
			s := randomText(r, 1+r.IntN(24))
			got := g.matches(s, nil)
			want := regexMatcher{re}.matches(s, nil)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("pattern %.30q on %q:\nscanner %v\nregexp2 %v", pattern, s, spansText(s, got), spansText(s, want))
			}
		}
	}
}

func spansText(s string, spans [][2]int) []string {
	var out []string
	for _, p := range spans {
		out = append(out, s[p[0]:p[1]])
	}
	return out
}

func FuzzScanner(f *testing.F) {
	for _, s := range []string{"", "   x", "x   ", "a\n\n\n b", "'s 'LL", "  \n  \n", "0x1F_FF 1e-9", "日本語 é\u0301"} {
		f.Add(s)
	}
	type pair struct {
		g  gptScanner
		re regexMatcher
	}
	var pairs []pair
	for pattern, g := range gptPatterns {
		re, err := compileRegex(pattern)
		if err != nil {
			f.Fatal(err)
		}
		pairs = append(pairs, pair{g, regexMatcher{re}})
	}
	f.Fuzz(func(t *testing.T, s string) {
		s = strings.ToValidUTF8(s, "\ufffd")
		for _, p := range pairs {
			got, want := p.g.matches(s, nil), p.re.matches(s, nil)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("on %q: scanner %q, regexp2 %q", s, spansText(s, got), spansText(s, want))
			}
		}
	})
}

// FuzzCount checks that counting never panics, gives a whole number >= 0 and
// never more tokens than bytes (byte-level BPE), on Qwen's tokenizer.
func FuzzCount(f *testing.F) {
	tk := qwen(f)
	for _, s := range []string{"", "<|file_sep|>a.kt\n", "\xff\xfe", "def f():\r\n\treturn 1\n", "<|fim_prefix|"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := tk.Count(s)
		if n < 0 || n != float64(int(n)) || n > float64(3*len(s)) {
			t.Fatalf("Count(%q) = %v", s, n)
		}
	})
}

// TestQwenRegexp2 runs the reference counts with the Split pattern compiled by
// regexp2 instead of the scanner: the fallback is exact too.
func TestQwenRegexp2(t *testing.T) {
	racetest.Skip(t, "tokenizes the reference texts on one goroutine")
	tk := qwen(t)
	raw, err := os.ReadFile(filepath.Join(qwenDir, "tokenizer.json"))
	if err != nil {
		t.Skip(err)
	}
	saved := gptPatterns
	gptPatterns = map[string]gptScanner{}
	slow, err := parse(raw)
	gptPatterns = saved
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := slow.pre.(sequencePre)[0].(*splitPre).m.(regexMatcher); !ok {
		t.Fatal("the regexp2 tokenizer does not use regexp2")
	}
	data, err := os.ReadFile(filepath.Join(qwenDir, "reference-counts.jsonl"))
	if err != nil {
		t.Skip(err)
	}
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var rec struct {
			Text   string `json:"text"`
			Tokens int    `json:"tokens"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		if got := slow.CountInt(rec.Text); got != rec.Tokens || got != tk.CountInt(rec.Text) {
			t.Errorf("line %d: regexp2 count %d, scanner %d, want %d", i+1, got, tk.CountInt(rec.Text), rec.Tokens)
		}
	}
}

// TestWordPieceTinyBert checks the word-piece counts of the tiny test model
// against the ids gen_tiny_bert.py computed with its own Python tokenizer
// (less [CLS] and [SEP]).
func TestWordPieceTinyBert(t *testing.T) {
	dir := filepath.Join("..", "testdata", "models", "tiny-bert")
	tk, err := Load(filepath.Join(dir, "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exp struct {
		Cases []struct {
			Name, Text string
			IDs        []int `json:"ids"`
			Truncated  bool
		}
	}
	if err := json.Unmarshal(raw, &exp); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, c := range exp.Cases {
		if c.Truncated {
			continue
		}
		checked++
		if got, want := tk.CountInt(c.Text), len(c.IDs)-2; got != want {
			t.Errorf("%s: Count(%q) = %d, want %d", c.Name, c.Text, got, want)
		}
	}
	if checked == 0 {
		t.Fatal("no untruncated case in expected.json")
	}
	for _, tc := range []struct {
		text string
		want int
	}{
		{"", 0},
		{"[CLS] def [SEP]", 3},        // added tokens whole, on the raw text
		{"DEF   Return\tSELF", 3},     // lower-cased, white space dropped
		{"café", 1},                   // accents stripped: "cafe" is a word of the vocabulary
		{"a\u0000b", 2},               // control characters dropped: "ab" = a ##b
		{"日本", 2},                     // CJK ideographs split apart, each unknown
		{strings.Repeat("a", 101), 1}, // past max_input_chars_per_word: one [UNK]
		{"printing", 2},               // print ##ing
		{"self.cache[key]", 6},        // punctuation isolated
	} {
		if got := tk.CountInt(tc.text); got != tc.want {
			t.Errorf("Count(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
}

// byteLevelFile returns a small byte-level BPE tokenizer.json: the 256 byte
// characters, merges (as "a b" strings or as pairs) and the given pre-tokenizer.
func byteLevelFile(t *testing.T, pre string, pairs bool, extra string) string {
	t.Helper()
	vocab := map[string]int{}
	for b := 0; b < 256; b++ {
		vocab[string(byteChar[b])] = b
	}
	merges := [][2]string{{"Ġ", "t"}, {"h", "e"}, {"Ġt", "he"}, {"Ġ", "Ġ"}, {"1", "2"}}
	for _, m := range merges {
		if _, ok := vocab[m[0]+m[1]]; !ok {
			vocab[m[0]+m[1]] = len(vocab)
		}
	}
	var mj any = merges
	if !pairs {
		var ss []string
		for _, m := range merges {
			ss = append(ss, m[0]+" "+m[1])
		}
		mj = ss
	}
	v, _ := json.Marshal(vocab)
	mm, _ := json.Marshal(mj)
	js := fmt.Sprintf(`{"version":"1.0","added_tokens":[{"id":999,"content":"<sep>","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true}%s],
	"normalizer":null,"pre_tokenizer":%s,"model":{"type":"BPE","vocab":%s,"merges":%s}}`, extra, pre, v, mm)
	p := filepath.Join(t.TempDir(), "tokenizer.json")
	if err := os.WriteFile(p, []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestByteLevelVariants(t *testing.T) {
	const gpt2 = `{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":true}`
	const starcoder = `{"type":"Sequence","pretokenizers":[{"type":"Digits","individual_digits":true},` + gpt2 + `]}`
	const prefix = `{"type":"ByteLevel","add_prefix_space":true,"use_regex":true}`
	const noRegex = `{"type":"ByteLevel","add_prefix_space":false,"use_regex":false}`
	for _, tc := range []struct {
		name, pre string
		text      string
		want      int
	}{
		{"gpt2", gpt2, " the", 1},            // Ġthe
		{"gpt2", gpt2, "the", 2},             // t, he
		{"gpt2", gpt2, "  the", 2},           // Ġ, Ġthe: the run gives its last space to the word
		{"gpt2", gpt2, "x  ", 2},             // x, ĠĠ
		{"gpt2", gpt2, "12", 1},              // " ?\p{N}+" keeps digits together
		{"gpt2", gpt2, "a<sep>b", 3},         // added token cut out whole
		{"starcoder", starcoder, "12", 2},    // Digits splits them first
		{"prefix", prefix, "the", 1},         // add_prefix_space: " the"
		{"prefix", prefix, "the<sep>the", 3}, // each run between added tokens gets its space
		{"noRegex", noRegex, "  the", 2},     // one word "  the": Ġ, Ġthe (Ġt merges before ĠĠ)
		{"noRegex", noRegex, "é", 2},         // two bytes, no merge
	} {
		for _, pairs := range []bool{false, true} {
			tk, err := Load(byteLevelFile(t, tc.pre, pairs, ""))
			if err != nil {
				t.Fatal(err)
			}
			if got := tk.CountInt(tc.text); got != tc.want {
				t.Errorf("%s (pair merges %v): Count(%q) = %d, want %d", tc.name, pairs, tc.text, got, tc.want)
			}
		}
	}
}

func TestAddedTokenOptions(t *testing.T) {
	const gpt2 = `{"type":"ByteLevel","add_prefix_space":false,"use_regex":true}`
	extra := `,{"id":1000,"content":"<l>","lstrip":true,"rstrip":false,"normalized":false},
	{"id":1001,"content":"<r>","lstrip":false,"rstrip":true,"normalized":false},
	{"id":1002,"content":"ab","single_word":true,"normalized":false}`
	tk, err := Load(byteLevelFile(t, gpt2, true, extra))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		text string
		want int
	}{
		{"x   <l>y", 3},  // lstrip takes the spaces: x, <l>, y
		{"x<r>   y", 3},  // rstrip takes the spaces: x, <r>, y
		{"x <sep> y", 5}, // no strip: x, Ġ, <sep>, Ġ, y
		{"ab", 1},        // single word
		{"cab", 3},       // not single: c, a, b
		{"x ab.", 4},     // x, Ġ, ab, .
	} {
		if got := tk.CountInt(tc.text); got != tc.want {
			t.Errorf("Count(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		path, want string
	}{
		{filepath.Join(dir, "missing.json"), "missing.json"},
		{write("text.json", "hello"), "not a tokenizer.json"},
		{write("nomodel.json", `{"version":"1.0"}`), `no "model"`},
		{write("unigram.json", `{"model":{"type":"Unigram","vocab":[["a",0.0]]}}`), "model Unigram is not supported"},
		{write("wordlevel.json", `{"model":{"type":"WordLevel","vocab":{"a":0},"unk_token":"a"}}`), "model WordLevel is not supported"},
		{write("metaspace.json", `{"pre_tokenizer":{"type":"Metaspace","replacement":"▁"},"model":{"type":"BPE","vocab":{"a":0},"merges":[]}}`), "pre_tokenizer Metaspace is not supported"},
		{write("precompiled.json", `{"normalizer":{"type":"Precompiled","precompiled_charsmap":""},"model":{"type":"BPE","vocab":{"a":0},"merges":[]}}`), "normalizer Precompiled is not supported"},
		{write("dropout.json", `{"model":{"type":"BPE","dropout":0.1,"vocab":{"a":0},"merges":[]}}`), "dropout"},
		{write("emptyvocab.json", `{"model":{"type":"BPE","vocab":{},"merges":[]}}`), "the vocabulary is empty"}, // counted 0 tokens for any text
		{write("emptywp.json", `{"model":{"type":"WordPiece","vocab":{},"unk_token":"[UNK]"}}`), "the vocabulary is empty"},
		{write("badmerge.json", `{"model":{"type":"BPE","vocab":{"a":0},"merges":["a b"]}}`), "merge 1"},
		{write("badregex.json", `{"pre_tokenizer":{"type":"Split","pattern":{"Regex":"(unclosed"},"behavior":"Isolated","invert":false},"model":{"type":"BPE","vocab":{"a":0},"merges":[]}}`), "pattern"},
	} {
		_, err := Load(tc.path)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), filepath.Base(tc.path)) ||
			!strings.HasPrefix(err.Error(), "tokens: ") {
			t.Errorf("Load(%s) = %v, want an error naming the file with %q", filepath.Base(tc.path), err, tc.want)
		}
	}
}

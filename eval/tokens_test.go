package eval

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The tokenizer files in testdata are written by hand: a word-level model
// with the Whitespace pre-tokenizer (\w+|[^\w\s]+), and a byte-level BPE in
// the layout of Qwen2.5's tokenizer.json (NFC, a Split with its regular
// expression, ByteLevel without regex) with a vocabulary of a few symbols.

func TestWordLevelTokenizer(t *testing.T) {
	tk, err := LoadTokenizer(filepath.Join("testdata", "tokenizer-wordlevel.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in   string
		want float64
	}{
		{"def foo(x):", 5},                    // def foo ( x ):
		{"<|file_sep|>a.py\n    return x", 6}, // <|file_sep|> a . py return x
		{"zzz yyy", 2},                        // unknown words are one [UNK] each
		{"", 0},
		{"x<|file_sep|><|file_sep|>x", 4},
	} {
		if got := tk.Count(tc.in); got != tc.want {
			t.Errorf("Count(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
	if !strings.Contains(tk.Name(), "tokenizer-wordlevel.json") {
		t.Errorf("Name() = %q", tk.Name())
	}
	if tk.Failures() != 0 {
		t.Errorf("%d failures", tk.Failures())
	}
}

func TestByteLevelBPETokenizer(t *testing.T) {
	tk, err := LoadTokenizer(filepath.Join("testdata", "tokenizer-bytelevel-bpe.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in   string
		want float64
		why  string
	}{
		// Split: "ab", " ab", "\n" -> byte-level "ab", "Ġab", "Ċ"; merges a+b, then Ġ+ab.
		{"ab ab\n", 3, "merges apply"},
		{"(1)ab", 4, "( 1 ) ab"},
		{"<|file_sep|>ab", 2, "an added token counts one"},
		// Known departure: the Rust library splits "a", " ", " b" (the look-ahead
		// gives the last space to the word): a Ġ Ġb = 3 tokens. Without look-ahead
		// the split is "a", "  ", "b": a Ġ Ġ b = 4 tokens.
		{"a  b", 4, "run of spaces before a word"},
	} {
		if got := tk.Count(tc.in); got != tc.want {
			t.Errorf("Count(%q) = %v, want %v (%s)", tc.in, got, tc.want, tc.why)
		}
	}
	// "é" has no byte symbols in this vocabulary and no unknown token: the
	// library fails (panics); Count estimates instead and counts the failure.
	if got := tk.Count("é"); !near(got, 1/3.5) {
		t.Errorf("Count(é) = %v, want the estimate 1/3.5", got)
	}
	if tk.Failures() != 1 {
		t.Errorf("Failures() = %d, want 1", tk.Failures())
	}
}

func TestLoadTokenizerErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		path, want string
	}{
		{filepath.Join(dir, "missing.json"), "no such file"},
		{write("notjson.json", "{"), "not a tokenizer.json"},
		{write("nomodel.json", `{"version":"1.0"}`), `no "model" object`},
		{write("lookbehind.json", `{"model":{"type":"WordLevel","vocab":{"a":0},"unk_token":"a"},
			"pre_tokenizer":{"type":"Split","pattern":{"Regex":"(?<=a)b"},"behavior":"Isolated","invert":false}}`), "not supported by Go's regexp"},
		{write("badtype.json", `{"model":{"type":"WordLevel","vocab":{"a":0},"unk_token":"a"},
			"pre_tokenizer":{"type":"Nonsense"}}`), "Nonsense"},
		{write("badfield.json", `{"model":{"type":"BPE","vocab":{"a":0},"merges":[],"dropout":"high"}}`), "unsupported"},
	} {
		_, err := LoadTokenizer(tc.path)
		if err == nil || !strings.HasPrefix(err.Error(), "eval: tokenizer") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("LoadTokenizer(%s) = %v, want an error with %q", filepath.Base(tc.path), err, tc.want)
		}
	}
}

func TestPatchPatterns(t *testing.T) {
	cfg := map[string]any{"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{
		map[string]any{"type": "Split", "pattern": map[string]any{"String": "a.b"}},
		map[string]any{"type": "Split", "pattern": map[string]any{"Regex": `x|\s+(?!\S)|\s+`}},
	}}}
	if err := patchPatterns(cfg); err != nil {
		t.Fatal(err)
	}
	ps := cfg["pre_tokenizer"].(map[string]any)["pretokenizers"].([]any)
	if got := ps[0].(map[string]any)["pattern"].(map[string]any)["Regex"]; got != `a\.b` {
		t.Errorf("String pattern became %q", got)
	}
	if got := ps[1].(map[string]any)["pattern"].(map[string]any)["Regex"]; got != `x|\s+` {
		t.Errorf("Regex pattern became %q", got)
	}
}

// TestTokenizerIgnoresTruncation: the test model's tokenizer.json truncates to a
// few tokens; counts must be of the whole text all the same.
func TestTokenizerIgnoresTruncation(t *testing.T) {
	tk, err := LoadTokenizer("../testdata/models/tiny-bert/tokenizer.json")
	if err != nil {
		t.Fatal(err)
	}
	short := tk.Count("def f(x): return x")
	long := tk.Count(strings.Repeat("def f(x): return x\n", 50))
	if long < 40*short {
		t.Errorf("50 copies count %v tokens, one %v: truncated", long, short)
	}
}

package tokens

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/repoctx/repoctx/internal/racetest"
)

const qwenDir = "../../shared/tokenizers/qwen2.5"

var (
	qwenOnce sync.Once
	qwenTok  *Tokenizer
	qwenErr  error
)

// qwen loads Qwen2.5's tokenizer.json once, skipping the test when ../shared is
// absent.
func qwen(t testing.TB) *Tokenizer {
	t.Helper()
	path := filepath.Join(qwenDir, "tokenizer.json")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("no %s: %v", path, err)
	}
	qwenOnce.Do(func() { qwenTok, qwenErr = Load(path) })
	if qwenErr != nil {
		t.Fatal(qwenErr)
	}
	return qwenTok
}

// TestQwenReference checks every count of reference-counts.jsonl (transformers.js
// tok.encode(text, {add_special_tokens: false}).length with the same file).
func TestQwenReference(t *testing.T) {
	racetest.Skip(t, "tokenizes the reference texts on one goroutine")
	tk := qwen(t)
	f, err := os.Open(filepath.Join(qwenDir, "reference-counts.jsonl"))
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	total, exact, line := 0, 0, 0
	for sc.Scan() {
		line++
		var rec struct {
			Text   string `json:"text"`
			Tokens int    `json:"tokens"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("reference-counts.jsonl:%d: %v", line, err)
		}
		total++
		got := tk.CountInt(rec.Text)
		if got == rec.Tokens {
			exact++
			continue
		}
		t.Errorf("reference-counts.jsonl:%d: Count(%.60q) = %d, want %d", line, rec.Text, got, rec.Tokens)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d of %d reference counts exact", exact, total)
	if total != 110 {
		t.Errorf("read %d reference texts, want 110", total)
	}
}

func TestQwenTable(t *testing.T) {
	racetest.Skip(t, "loads the Qwen tokenizer and counts the table's texts on one goroutine")
	tk := qwen(t)
	for _, tc := range []struct {
		text string
		want int
	}{
		// Empty text.
		{"", 0},
		// Whitespace runs: \s+(?!\S) leaves the run's last space to the word.
		{" ", 1},
		{"    ", 1},
		{"   x", 2},      // "  ", " x"
		{"x   ", 2},      // "x", "   "
		{"a\n\n\n b", 3}, // "a", "\n\n\n", " b"
		{"  \n  \n", 1},  // \s*[\r\n]+
		{"    \n    return", 3},
		// CRLF.
		{"\r\n", 1},
		{"def f(x):\r\n    return x\r\n", 8},
		// Tabs.
		{"\t\t", 1},
		{"tab\tinside\tline", 4},
		// Unicode letters and numbers: NFC folds e + U+0301 into é.
		{"café", 2},
		{"cafe\u0301", 2},
		{"x = 123456789012345", 18}, // one token per digit
		{"日本語のコメント\nfun 関数() {}", 12},
		// Added tokens, cut out whole.
		{"<|file_sep|>src/a.py\nimport os\n", 8},
		{"<|fim_prefix|>x<|fim_suffix|>y<|fim_middle|>", 5},
		{"<|file_sep|><|file_sep|>", 2},
		{"<|endoftext|>", 1},
		{"<|file_sep", 4}, // not an added token: "<|", "file", "_", "sep"
	} {
		if got := tk.CountInt(tc.text); got != tc.want {
			t.Errorf("Count(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
}

// TestQwenConcurrent counts the same texts from several goroutines.
func TestQwenConcurrent(t *testing.T) {
	tk := qwen(t)
	texts := []string{"func main() {\n\tfmt.Println(\"héllo\")\n}\n", strings.Repeat("x = 1\n", 50), "<|file_sep|>a.kt\nval x = 1\n"}
	want := make([]int, len(texts))
	for i, s := range texts {
		want[i] = tk.CountInt(s)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < 200; k++ {
				i := k % len(texts)
				if got := tk.CountInt(texts[i]); got != want[i] {
					t.Errorf("concurrent Count(%q) = %d, want %d", texts[i], got, want[i])
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestMoreReferences checks counts made the way reference-counts.jsonl was
// (transformers.js: tok.encode(text, {add_special_tokens: false}).length) for
// other tokenizers, named by REPOCTX_TOKENS_REFS as
// "tokenizer.json=counts.jsonl[,...]" (skipped when unset). Texts with U+FEFF are
// left out: ECMAScript's \s matches it, Oniguruma's (the Rust library's) does
// not, and this package follows Rust.
func TestMoreReferences(t *testing.T) {
	env := os.Getenv("REPOCTX_TOKENS_REFS")
	if env == "" {
		t.Skip("REPOCTX_TOKENS_REFS not set")
	}
	for _, pair := range strings.Split(env, ",") {
		tj, counts, ok := strings.Cut(pair, "=")
		if !ok {
			t.Fatalf("REPOCTX_TOKENS_REFS: %q is not tokenizer.json=counts.jsonl", pair)
		}
		tk, err := Load(tj)
		if err != nil {
			t.Error(err)
			continue
		}
		data, err := os.ReadFile(counts)
		if err != nil {
			t.Fatal(err)
		}
		exact, total := 0, 0
		for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var rec struct {
				Text   string `json:"text"`
				Tokens int    `json:"tokens"`
			}
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatalf("%s:%d: %v", counts, i+1, err)
			}
			if strings.ContainsRune(rec.Text, 0xFEFF) {
				continue
			}
			total++
			if got := tk.CountInt(rec.Text); got == rec.Tokens {
				exact++
			} else {
				t.Errorf("%s:%d: Count(%.60q) = %d, want %d", counts, i+1, rec.Text, got, rec.Tokens)
			}
		}
		t.Logf("%s: %d of %d counts exact", tj, exact, total)
	}
}

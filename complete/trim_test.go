package complete

import (
	"os"
	"testing"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/internal/racetest"
	"github.com/repoctx/repoctx/tokens"
)

// byteCounter counts one token per byte, to make trimming easy to follow.
type byteCounter struct{}

func (byteCounter) Name() string           { return "bytes" }
func (byteCounter) Count(s string) float64 { return float64(len(s)) }

// The scorer's rule on hand cases: lines cost 5, 3 and 7 tokens; prefix and
// suffix 2 + 1; the room for lines is W - 384 - 3.
var scorerCases = []struct {
	window int
	want   string
}{
	{394, "cccccc\n"},     // room 7: the last line exactly
	{396, "cccccc\n"},     // room 9: 7 + 3 = 10 does not fit
	{397, "bb\ncccccc\n"}, // room 10
	{401, "bb\ncccccc\n"}, // room 14: 15 does not fit
	{402, "aaaa\nbb\ncccccc\n"},
	{390, ""}, // room 3: the last line does not fit, so nothing is kept
	{100, ""}, // prefix, suffix and the completion alone overflow
	{1 << 20, "aaaa\nbb\ncccccc\n"},
}

func TestTrimToWindow(t *testing.T) {
	ctx := "aaaa\nbb\ncccccc\n"
	for _, tc := range scorerCases {
		if got := TrimToWindow(ctx, "pp", "s", tc.window, byteCounter{}); got != tc.want {
			t.Errorf("window %d: got %q, want %q", tc.window, got, tc.want)
		}
	}
	// A last line without "\n" is a line.
	if got := TrimToWindow("x\nyy", "", "", 384+2, byteCounter{}); got != "yy" {
		t.Errorf("got %q, want %q", got, "yy")
	}
	// characters/4: prefix 7 runes = 1.75 tokens; lines "abcdef\n" 1.75 tokens
	// and "é\n" 2 runes = 0.5 token.
	for _, tc := range []struct {
		window int
		want   string
	}{{386, ""}, {387, "é\n"}, {388, "abcdef\né\n"}, {389, "abcdef\né\n"}} {
		if got := TrimToWindow("abcdef\né\n", "abcdefg", "", tc.window, repoctx.CharEstimate{}); got != tc.want {
			t.Errorf("estimate, window %d: got %q, want %q", tc.window, got, tc.want)
		}
	}
}

// Build applies the scorer's rule with the template's markup counted with the
// prefix and suffix: the same cut as TrimToWindow for a window that many tokens
// larger.
func TestBuildTrimsAsTheScorer(t *testing.T) {
	ctx := "aaaa\nbb\ncccccc\n"
	q, _ := LookupTemplate("qwen2.5")
	p := Prompt{Path: "m.py", Context: ctx, Prefix: "pp", Suffix: "s"}
	// "<|file_sep|>m.py\n<|fim_prefix|><|fim_suffix|><|fim_middle|>": 12 + 5 + 3*14 bytes.
	const markup = 59
	for _, tc := range scorerCases {
		b := q.Build(p, tc.window+markup, byteCounter{})
		if b.Context != tc.want {
			t.Errorf("window %d + markup: kept %q, want %q", tc.window, b.Context, tc.want)
		}
		if want := (q.Render(Prompt{Path: "m.py", Context: tc.want, Prefix: "pp", Suffix: "s"})); b.Text != want {
			t.Errorf("window %d + markup: prompt %q, want %q", tc.window, b.Text, want)
		}
		if b.Tokens.Overflow != (tc.window < 384+3) {
			t.Errorf("window %d + markup: overflow %v", tc.window, b.Tokens.Overflow)
		}
	}
	b := q.Build(p, 397+markup, byteCounter{})
	want := Tokens{Counter: "bytes", Window: 397 + markup, Completion: 384, Prefix: 2, Suffix: 1, Context: 10, Markup: markup,
		Prompt: markup + 13, ContextLines: 3, KeptLines: 2}
	if b.Tokens != want {
		t.Errorf("tokens %+v, want %+v", b.Tokens, want)
	}
	// Nothing kept: the file-level prompt, whose markup is the three FIM markers only.
	b = q.Build(p, 390+markup, byteCounter{})
	if b.Text != "<|fim_prefix|>pp<|fim_suffix|>s<|fim_middle|>" || b.Tokens.Markup != 42 || b.Tokens.KeptLines != 0 {
		t.Errorf("nothing kept: %q, %+v", b.Text, b.Tokens)
	}
	// Window 0 is the template's.
	if b := q.Build(p, 0, byteCounter{}); b.Tokens.Window != 16000 || b.Context != ctx {
		t.Errorf("window 0: %+v", b.Tokens)
	}
}

// Each context line costs what the model sees: Mellum's "<filename>" (10 bytes)
// instead of "<|file_sep|>" (12).
func TestBuildCountsTheModelsSeparator(t *testing.T) {
	m, _ := LookupTemplate("mellum")
	ctx := "<|file_sep|>a.kt\nval x = 1\n"
	p := Prompt{Path: "b.kt", Context: ctx}
	// Markup "<filename>b.kt\n<fim_suffix><fim_prefix><fim_middle>" = 15 + 12 + 12 + 12 = 51 bytes;
	// the context's lines cost 15 ("<filename>a.kt\n") and 10.
	const markup = 51
	for _, tc := range []struct {
		room int
		want string
	}{{25, ctx}, {24, "val x = 1\n"}, {10, "val x = 1\n"}, {9, ""}} {
		b := m.Build(p, 384+markup+tc.room, byteCounter{})
		if b.Context != tc.want {
			t.Errorf("room %d: kept %q, want %q", tc.room, b.Context, tc.want)
		}
	}
	b := m.Build(p, 384+markup+24, byteCounter{})
	if b.Text != "val x = 1\n<filename>b.kt\n<fim_suffix><fim_prefix><fim_middle>" {
		t.Errorf("a part cut below its header: %q", b.Text)
	}
}

// With Qwen2.5's own tokenizer the prompt fits the window with the completion's room.
func TestBuildExactQwen(t *testing.T) {
	racetest.Skip(t, "counts Qwen tokens of every trimmed prompt on one goroutine")
	path := "../../shared/tokenizers/qwen2.5/tokenizer.json"
	if _, err := os.Stat(path); err != nil {
		t.Skip("no ../shared tokenizer")
	}
	tk, err := tokens.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	q, _ := LookupTemplate("qwen2.5")
	var ctx string
	for i := 0; i < 200; i++ {
		ctx += "<|file_sep|>pkg/mod.py\ndef helper_function_number(x):\n    return x * 42 + 7\n"
	}
	p := Prompt{Path: "main.py", Context: ctx, Prefix: "import pkg.mod\n\nresult = ", Suffix: "\nprint(result)\n"}
	for _, w := range []int{500, 1000, 3000} {
		b := q.Build(p, w, tk)
		if b.Tokens.Prompt != tk.Count(b.Text) || b.Tokens.Prompt+repoctx.MaxNewTokens > float64(w) {
			t.Errorf("window %d: %+v", w, b.Tokens)
		}
		if b.Tokens.KeptLines == 0 || b.Tokens.KeptLines == b.Tokens.ContextLines {
			t.Errorf("window %d: kept %d of %d lines", w, b.Tokens.KeptLines, b.Tokens.ContextLines)
		}
		// The markup is a handful of added tokens and the path.
		if b.Tokens.Markup < 4 || b.Tokens.Markup > 10 {
			t.Errorf("window %d: markup %v tokens", w, b.Tokens.Markup)
		}
	}
}

func TestKeptParts(t *testing.T) {
	parts := []repoctx.Part{
		{Path: "a.py", StartLine: 10, EndLine: 11, Text: "a1\na2\n"},
		{Path: "b.py", StartLine: 3, EndLine: 5, Text: "b3\nb4\nb5\n"},
	}
	c := repoctx.Context{Text: "<|file_sep|>a.py\na1\na2\n<|file_sep|>b.py\nb3\nb4\nb5\n", Parts: parts}
	for _, tc := range []struct {
		kept  string
		want  []repoctx.Part
		wantN int
	}{
		{c.Text, parts, 2},
		{"a2\n<|file_sep|>b.py\nb3\nb4\nb5\n", []repoctx.Part{{Path: "a.py", StartLine: 11, EndLine: 11, Text: "a2\n"}, parts[1]}, 2},
		{"<|file_sep|>b.py\nb3\nb4\nb5\n", parts[1:], 1},
		{"b3\nb4\nb5\n", parts[1:], 1}, // the header line dropped, every text line kept
		{"b5\n", []repoctx.Part{{Path: "b.py", StartLine: 5, EndLine: 5, Text: "b5\n"}}, 1},
		{"", nil, 0},
	} {
		got, ok := KeptParts(c, tc.kept)
		if !ok || len(got) != tc.wantN {
			t.Errorf("kept %q: %d parts, ok %v; want %d", tc.kept, len(got), ok, tc.wantN)
			continue
		}
		for i := range got {
			if got[i].Path != tc.want[i].Path || got[i].StartLine != tc.want[i].StartLine || got[i].EndLine != tc.want[i].EndLine || got[i].Text != tc.want[i].Text {
				t.Errorf("kept %q: part %d = %+v, want %+v", tc.kept, i, got[i], tc.want[i])
			}
		}
	}
	if _, ok := KeptParts(repoctx.Context{Text: "<|file_sep|>x\nfree text\n"}, "free text\n"); ok {
		t.Error("a text that is not its parts' rendering gave parts")
	}
	if _, ok := KeptParts(c, "not a suffix\n"); ok {
		t.Error("kept text that is not a suffix gave parts")
	}
}

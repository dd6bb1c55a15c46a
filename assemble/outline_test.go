package assemble

import (
	"strings"
	"testing"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/grammars"
)

func TestLineSpanAround(t *testing.T) {
	text := "a\nb\nc\nd\ne\n"
	// The chunk is "b\n" (bytes 2..4).
	for _, c := range []struct {
		start, end, n int
		after         bool
		want          string
	}{
		{2, 4, 2, true, "c\nd\n"},
		{2, 4, 9, true, "c\nd\ne\n"},
		{2, 3, 1, true, "c\n"}, // a chunk ending inside its line: the next line start
		{2, 4, 1, false, "a\n"},
		{2, 4, 5, false, "a\n"},
		{0, 2, 3, false, ""},
		{8, 10, 3, true, ""},
		{5, 7, 1, false, "b\n"}, // a chunk starting inside its line: lines before that line
	} {
		a, b := lineSpanAround(text, c.start, c.end, c.n, c.after)
		if got := text[a:b]; got != c.want {
			t.Errorf("lineSpanAround(%d, %d, %d, %v) = %q, want %q", c.start, c.end, c.n, c.after, got, c.want)
		}
	}
}

func TestPrefixOutline(t *testing.T) {
	prefix := "import foo.Alpha\nimport foo.Beta\n\nclass Gamma(val delta: Int) {\n    val x = 1\n    fun epsilon() = Alpha()\n" +
		"    // a comment with zeta\n    fun keep() {\n        call(Beta)\n        "
	cut := strings.Index(prefix, "    fun keep()")
	h := repoctx.Hole{Path: "src/G.kt", Prefix: prefix, Suffix: "\n    }\n}\n"}
	split := Split{Prefix: prefix[cut:], Suffix: h.Suffix, PrefixCut: cut, PrefixTrimmed: true}
	p, ok := prefixOutline(h, split, 1000, repoctx.CharEstimate{})
	if !ok {
		t.Fatal("no outline")
	}
	// Beta and call are in the given prefix, so "import foo.Beta" still brings foo...
	// once: the Alpha import takes foo first. Every line holding a new name is kept,
	// in file order.
	want := "import foo.Alpha\nclass Gamma(val delta: Int) {\n    fun epsilon() = Alpha()\n    // a comment with zeta\n"
	if p.Text != want || p.Path != h.Path || p.StartLine != 1 || p.EndLine != 7 {
		t.Errorf("outline %q lines %d-%d, want %q lines 1-7", p.Text, p.StartLine, p.EndLine, want)
	}
	// A budget for the header and one short line keeps the first import only.
	hdr := repoctx.CharEstimate{}.Count(header(repoctx.Part{Path: h.Path}))
	p, ok = prefixOutline(h, split, int(hdr)+5, repoctx.CharEstimate{})
	if !ok || p.Text != "import foo.Alpha\n" {
		t.Errorf("small budget: %q %v", p.Text, ok)
	}
	if _, ok := prefixOutline(h, Split{Prefix: prefix, Suffix: h.Suffix}, 1000, repoctx.CharEstimate{}); ok {
		t.Error("an outline of an untrimmed prefix")
	}
}

// TestOutlineRegexpsCompile: the outline's expressions compile (they do on first use).
func TestOutlineRegexpsCompile(t *testing.T) {
	for _, r := range []*grammars.Regexp{importLine, declLine} {
		if r.Regexp() == nil {
			t.Errorf("%q", r)
		}
	}
}

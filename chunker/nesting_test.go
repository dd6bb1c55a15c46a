package chunker

import (
	"runtime"
	"strconv"
	"strings"
	"testing"

	sitter "github.com/smacker/go-tree-sitter"
)

// nestedErrors returns depth copies of an opening that is a syntax error in most
// languages, then depth closing braces: a hostile input whose error recovery nests deep.
func nestedErrors(depth int) string {
	return strings.Repeat("fun a() {", depth) + strings.Repeat("}", depth) + "\n"
}

// nestedInputs are deeply nested syntax errors and containers, in several languages.
func nestedInputs(depth int) map[string]string {
	m := map[string]string{
		"ifdef.c":     strings.Repeat("#ifdef A\nint f(\n", depth) + strings.Repeat("#endif\n", depth),
		"brackets.py": "x = " + strings.Repeat("[(", depth/2) + strings.Repeat(")]", depth/2) + " +\n",
	}
	for _, ext := range []string{"py", "kt", "java", "c", "js", "go", "rs", "ts"} {
		m["errors."+ext] = nestedErrors(depth)
	}
	return m
}

// TestNestedErrorsLinear: collecting the items of a tree of deeply nested ERROR
// nodes is linear in its size (it was quadratic: each nested level copied all the
// items below it into its parent, 50-76 s for 20,000 levels). The work is measured
// as the nodes items visits and the bytes it allocates, bounded per source byte; the
// trees are parsed directly, below the MaxNesting guard that spares deeper files the
// parse.
func TestNestedErrorsLinear(t *testing.T) {
	for name, src := range nestedInputs(MaxNesting - 1) {
		f, err := Decode(name, []byte(src), 0)
		if err != nil {
			t.Fatal(err)
		}
		s := NewStructural(Options{})
		spec := grammarOf(f)
		tree, parsed, err := s.parsers.Parse(spec, f.Text)
		if err != nil {
			s.Close()
			t.Fatalf("%s: %v", name, err)
		}
		b := &builder{opts: s.opts, spec: spec, li: newLineIndex(f.Text), src: f.Text, parsed: parsed}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		its := b.items(tree.RootNode(), false)
		runtime.ReadMemStats(&after)
		tree.Close()
		s.Close()
		alloc := after.TotalAlloc - before.TotalAlloc
		// A few nodes per source byte at most; the quadratic copy allocated about
		// depth²/2 items (40 MB at this depth, 40 KB of source).
		if b.visited > 4*len(src) {
			t.Errorf("%s: items visited %d nodes for %d bytes", name, b.visited, len(src))
		}
		if alloc > uint64(200*len(src)) {
			t.Errorf("%s: items allocated %d bytes for %d bytes of source (%d items)", name, alloc, len(src), len(its))
		}
		t.Logf("%s: %d bytes, %d items, %d nodes visited, %d bytes allocated", name, len(src), len(its), b.visited, alloc)
	}
}

// TestNestedErrorsChunk: deeply nested inputs keep the chunk invariants, below the
// MaxNesting guard (parsed) and above it (windowed without a parse, flagged
// LimitNesting).
func TestNestedErrorsChunk(t *testing.T) {
	for _, depth := range []int{MaxNesting - 1, 20000} {
		for name, src := range nestedInputs(depth) {
			f, err := Decode(name, []byte(src), 0)
			if err != nil {
				t.Fatal(err)
			}
			s := NewStructural(Options{})
			parsed := false
			cs, err := s.ChunkTree(f, func(_ *sitter.Node, _ []byte) { parsed = true })
			s.Close()
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if err := Validate(f, cs, DefaultMaxChars); err != nil {
				t.Errorf("%s at depth %d: %v", name, depth, err)
			}
			if deep := tooDeep(f.Text); parsed == deep {
				t.Errorf("%s at depth %d: parsed %v, nesting over MaxNesting %v", name, depth, parsed, deep)
			}
			if deep := tooDeep(f.Text); deep && (FileLimit(cs) != LimitNesting || cs[0].ParseError) {
				t.Errorf("%s at depth %d: limit %q, parse error %v; want %q and no parse error", name, depth, FileLimit(cs), cs[0].ParseError, LimitNesting)
			} else if !deep && FileLimit(cs) != LimitNone {
				t.Errorf("%s at depth %d: limit %q, want none", name, depth, FileLimit(cs))
			}
		}
	}
}

func TestTooDeep(t *testing.T) {
	for _, c := range []struct {
		text string
		want bool
	}{
		{strings.Repeat("(", MaxNesting), false},
		{strings.Repeat("(", MaxNesting+1), true},
		{strings.Repeat("{}", 10*MaxNesting), false},
		{strings.Repeat(")", 5) + strings.Repeat("[", MaxNesting), false}, // stray closers do not go below 0
		{strings.Repeat("([{", MaxNesting/3+1), true},
	} {
		if got := tooDeep([]byte(c.text)); got != c.want {
			t.Errorf("tooDeep(%.20q... %d bytes) = %v, want %v", c.text, len(c.text), got, c.want)
		}
	}
}

// BenchmarkNestedErrors chunks (parse included) the nested inputs just below the
// MaxNesting guard and far above it (20,000 levels, 180 KB: windowed unparsed).
func BenchmarkNestedErrors(b *testing.B) {
	for _, depth := range []int{MaxNesting - 1, 20000} {
		for name, src := range nestedInputs(depth) {
			b.Run(name+"/"+strconv.Itoa(depth), func(b *testing.B) { benchChunkSource(b, name, src) })
		}
	}
}

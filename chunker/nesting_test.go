package chunker

import (
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/repoctx/repoctx/internal/racetest"
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
// MaxNesting guard and above it (the inside of the deep region blanked for the
// parser: its chunks are windows flagged LimitNesting, the others are not).
func TestNestedErrorsChunk(t *testing.T) {
	racetest.Skip(t, "chunks deeply nested broken code on one goroutine")
	for _, depth := range []int{MaxNesting - 1, 20000} {
		for name, src := range nestedInputs(depth) {
			f, err := Decode(name, []byte(src), 0)
			if err != nil {
				t.Fatal(err)
			}
			s := NewStructural(Options{})
			cs, err := s.Chunk(f)
			s.Close()
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if err := Validate(f, cs, DefaultMaxChars); err != nil {
				t.Errorf("%s at depth %d: %v", name, depth, err)
			}
			_, regions := flattenDeep(f.Text)
			if deep := TooDeep(f.Text); deep != (len(regions) > 0) || deep != (FileLimit(cs) == LimitNesting) {
				t.Errorf("%s at depth %d: limit %q, %d deep regions; nesting over MaxNesting %v", name, depth, FileLimit(cs), len(regions), deep)
			}
			for _, c := range cs {
				in := false
				for _, r := range regions {
					in = in || c.StartByte < r[1] && c.EndByte > r[0]
				}
				if in != (c.Limit == LimitNesting) || (in && !c.Fallback) {
					t.Errorf("%s at depth %d: L%d-%d limit %q fallback %v, in a deep region %v", name, depth, c.StartLine, c.EndLine, c.Limit, c.Fallback, in)
				}
			}
		}
	}
}

// TestDeepRegionOnly: a file nesting one expression far deeper than MaxNesting
// windows that expression only; its other definitions keep their named chunks, and
// the windows of a deep definition carry its name.
func TestDeepRegionOnly(t *testing.T) {
	const d = 3 * MaxNesting
	lines := func(ss ...string) string { return strings.Join(ss, "\n") + "\n" }
	for _, c := range []struct {
		name, src string
		want      []want
		deep      string // the name the deep windows carry, or "" for glue
	}{
		{"one_line.js", lines(
			"export function alpha(a, b) {", "  const s = a + b;", "  return s * 2;", "}", "",
			"const table = "+strings.Repeat("[", d)+"1"+strings.Repeat("]", d)+";", "",
			"class Beta {", "  constructor(x) {", "    this.x = x;", "  }", "",
			"  scaled(k) {", "    return this.x * k + 1;", "  }", "}", "",
			"function gamma(n) {", "  let t = 0;", "  for (let i = 0; i < n; i++) t += i;", "  return t;", "}"),
			[]want{{name: "alpha", start: 1, header: "-"}, {name: "Beta", start: 8},
				{name: "constructor", header: "class Beta"}, {name: "gamma", start: 18, end: 22, header: "-"}}, "table"},
		{"many_lines.ts", lines(
			"function alpha(a: number): number {", "  return a + 1;", "}", "",
			"function build(): number {", "  return "+strings.Repeat("f(\n", d)+"0"+strings.Repeat(")", d)+";", "}", "",
			"function gamma(n: number): number {", "  return n * 2;", "}"),
			[]want{{name: "alpha", start: 1, end: 4, header: "-"}, {name: "gamma", start: d + 9, header: "-"}}, ""},
		{"deep.py", lines(
			"def alpha(a):", "    return a + 1", "", "",
			"DATA = "+strings.Repeat("(", d)+"1"+strings.Repeat(",)", d), "", "",
			"def gamma(n):", "    return n * 2"),
			[]want{{name: "alpha", start: 1, header: "-"}, {name: "gamma", start: 8, header: "-"}}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, cs := chunkString(t, c.name, c.src, Options{})
			check(t, cs, c.want)
			n := 0
			for _, k := range cs {
				if k.Limit == LimitNesting {
					n++
					if c.deep != "" && k.Name != c.deep {
						t.Errorf("L%d-%d: deep window named %q, want %q", k.StartLine, k.EndLine, k.Name, c.deep)
					}
				} else if k.Limit != LimitNone {
					t.Errorf("L%d-%d: limit %q", k.StartLine, k.EndLine, k.Limit)
				}
			}
			if n == 0 {
				t.Errorf("no window flagged %q\n%s", LimitNesting, dump(cs))
			}
			if FileLimit(cs) != LimitNesting {
				t.Errorf("FileLimit = %q, want %q", FileLimit(cs), LimitNesting)
			}
		})
	}
}

// TestFlattenDeep: the inside of a region deeper than MaxNesting is blanked from the
// bracket at depth deepKeep to its close (or the end), line breaks kept; shallower
// text is returned as is.
func TestFlattenDeep(t *testing.T) {
	shallow := []byte(strings.Repeat("(", MaxNesting) + strings.Repeat(")", MaxNesting))
	if out, r := flattenDeep(shallow); &out[0] != &shallow[0] || r != nil {
		t.Errorf("shallow text changed: %d regions", len(r))
	}
	d := MaxNesting + 5
	src := "a(" + strings.Repeat("[\n", d) + strings.Repeat("]", d) + ") b"
	out, r := flattenDeep([]byte(src))
	if len(out) != len(src) || len(r) != 1 {
		t.Fatalf("length %d (want %d), %d regions (want 1)", len(out), len(src), len(r))
	}
	// "a(" opens depth 1; the bracket at depth deepKeep is the (deepKeep-1)th "[".
	open := 2 + 2*(deepKeep-2)
	close := len(src) - len(") b") - (deepKeep - 1)
	if r[0] != [2]int{open + 1, close} {
		t.Errorf("region %v, want [%d %d]", r[0], open+1, close)
	}
	if got, want := string(out[:open+1]), src[:open+1]; got != want {
		t.Errorf("text before the region changed")
	}
	if got, want := string(out[close:]), src[close:]; got != want {
		t.Errorf("text after the region: %q, want %q", got, want)
	}
	if strings.Trim(string(out[open+1:close]), " \n") != "" || strings.Count(string(out), "\n") != d {
		t.Errorf("region not blanked with its line breaks kept")
	}
	if TooDeep(out) {
		t.Error("flattened text still too deep")
	}
	if _, r := flattenDeep([]byte("x = " + strings.Repeat("[", MaxNesting+1))); len(r) != 1 || r[0][1] != len("x = ")+MaxNesting+1 {
		t.Errorf("unclosed region %v, want one to the end", r)
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
		if got := TooDeep([]byte(c.text)); got != c.want {
			t.Errorf("TooDeep(%.20q... %d bytes) = %v, want %v", c.text, len(c.text), got, c.want)
		}
	}
}

// BenchmarkNestedErrors chunks (parse included) the nested inputs just below the
// MaxNesting guard and far above it (20,000 levels, 180 KB: the deep region blanked
// for the parser).
func BenchmarkNestedErrors(b *testing.B) {
	for _, depth := range []int{MaxNesting - 1, 20000} {
		for name, src := range nestedInputs(depth) {
			b.Run(name+"/"+strconv.Itoa(depth), func(b *testing.B) { benchChunkSource(b, name, src) })
		}
	}
}

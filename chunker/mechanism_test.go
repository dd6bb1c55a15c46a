package chunker

import (
	"fmt"
	"strings"
	"testing"
)

// Tests of the structural share of the shared mechanism: each fault kind
// with a fixture of our own, then the handed-over cases of the same kinds
// (../shared/cases/chunker, skipped when absent). chunkString checks Validate on every
// chunking. Line breaks and encodings: decode_test.go.

// commentBlock returns n lines of "# ..." (or "// ...") comment text.
func commentBlock(prefix string, n int) string {
	var sb strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&sb, "%s note %02d: the quick brown fox jumps over the lazy dog again\n", prefix, i)
	}
	return sb.String()
}

// body returns n statement lines of a Python function.
func pyBody(n int) string {
	var sb strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&sb, "    acc_%d = acc + weight * %d\n", i, i)
	}
	return sb.String()
}

// lineOf returns the 1-based line of the first occurrence of s in text.
func lineOf(t *testing.T, text, s string) int {
	t.Helper()
	i := strings.Index(text, s)
	if i < 0 {
		t.Fatalf("%q not in the fixture", s)
	}
	return strings.Count(text[:i], "\n") + 1
}

// Fault kind 2: a definition that fits the cap is not cut because the comment run
// above it was attached; the run becomes its own chunk. A small comment stays.
func TestCommentRunDetachedWhenOverCap(t *testing.T) {
	src := "import os\n\n\n" + commentBlock("#", 14) + // 672 non-space runes
		"def weigh(acc, weight):\n" + pyBody(8) + "    return acc\n\n\n" + // 174: together over the cap of 800
		"# Small note.\ndef tiny(x):\n    return os.sep + x\n"
	_, cs := chunkString(t, "weigh.py", src, Options{})
	def := lineOf(t, src, "def weigh")
	w := byName(cs, "weigh")
	if w == nil || w.StartLine != def || w.Fallback {
		t.Fatalf("weigh should be one clean chunk from line %d\n%s", def, dump(cs))
	}
	for _, c := range cs {
		if len(c.Header) > 0 && strings.HasPrefix(c.Header[len(c.Header)-1], "def weigh") {
			t.Errorf("weigh was split (chunk %d has its header)\n%s", c.Ordinal, dump(cs))
		}
	}
	prev := cs[w.Ordinal-1]
	if prev.Kind != KindCode || !strings.HasPrefix(prev.Text, "# note 00") || !strings.HasSuffix(prev.Text, "again\n") {
		t.Errorf("the comment run is not its own chunk: %q\n%s", prev.Text, dump(cs))
	}
	check(t, cs, []want{{name: "tiny", start: lineOf(t, src, "# Small note."), header: "-"}})

	// Kotlin: the KDoc goes, the annotation line stays with the function.
	var kt strings.Builder
	kt.WriteString("package demo\n\n/**\n")
	for i := 0; i < 15; i++ { // 15 lines of about 47 non-space runes, with the function over the cap
		fmt.Fprintf(&kt, " * Line %d of a long description of what this does and why.\n", i)
	}
	kt.WriteString(" */\n@Suppress(\"MagicNumber\")\nfun weigh(acc: Int, weight: Int): Int {\n")
	for i := 0; i < 8; i++ {
		fmt.Fprintf(&kt, "    val acc%d = acc + weight * %d\n", i, i)
	}
	kt.WriteString("    return acc\n}\n")
	ksrc := kt.String()
	_, ks := chunkString(t, "Weigh.kt", ksrc, Options{})
	check(t, ks, []want{{name: "weigh", start: lineOf(t, ksrc, "@Suppress"), header: "-"}})
	if c := byName(ks, "weigh"); c != nil && (c.Fallback || strings.Contains(c.Text, "description")) {
		t.Errorf("weigh holds the KDoc or is a window\n%s", dump(ks))
	}

	// A definition windowed anyway keeps a short comment in its first window.
	var lit strings.Builder
	for i := 0; i < 120; i++ {
		fmt.Fprintf(&lit, "    %d to \"value number %d\",\n", i, i)
	}
	windowed := "package demo\n\n// Pairs copied from the reference.\nfun pairs(): Map<Int, String> = mapOf(\n" + lit.String() + ")\n"
	_, ws := chunkString(t, "Pairs.kt", windowed, Options{})
	if c := byName(ws, "pairs"); c == nil || c.StartLine != 3 || !c.Fallback {
		t.Errorf("pairs' first window should start at its comment (line 3)\n%s", dump(ws))
	}

	// When the comment and the definition fit together, they stay together.
	small := "import os\n\n\n" + commentBlock("#", 3) + "def weigh(acc, weight):\n" + pyBody(4) + "    return acc\n"
	_, ss := chunkString(t, "small.py", small, Options{})
	check(t, ss, []want{{name: "weigh", start: 4, header: "-"}})
}

// Fault kind 3: a comment block over the cap never swallows the signature of the
// definition after it: the definition's first chunk starts at its own first line,
// whether the definition fits the cap or is split.
func TestHugeCommentKeepsSignature(t *testing.T) {
	huge := commentBlock("#", 40) // ~2,000 non-space runes
	methods := ""
	for i := 0; i < 6; i++ {
		methods += fmt.Sprintf("    def step_%d(self, acc, weight):\n%s        return acc\n\n", i, strings.ReplaceAll(pyBody(6), "    ", "        "))
	}
	for _, tc := range []struct {
		name, src, sig string
	}{
		{"small def", huge + "@cache\ndef weigh(acc, weight):\n" + pyBody(3) + "    return acc\n", "@cache"},
		{"split class", huge + "class Scale:\n    \"\"\"Scales.\"\"\"\n\n" + methods, "class Scale:"},
	} {
		_, cs := chunkString(t, "huge.py", tc.src, Options{})
		def := lineOf(t, tc.src, tc.sig)
		var first *Chunk
		for i := range cs {
			if cs[i].StartLine <= def && def <= cs[i].EndLine {
				if first == nil {
					first = &cs[i]
				}
				if strings.Contains(cs[i].Text, "# note") {
					t.Errorf("%s: chunk %d holds comment text and the signature\n%s", tc.name, i, dump(cs))
				}
			}
		}
		if first == nil || first.StartLine != def || first.Fallback {
			t.Errorf("%s: the definition's first chunk should start clean at line %d\n%s", tc.name, def, dump(cs))
		}
	}
}

// Fault kind 4: windows of a definition too big to split, and parts of a statement
// holding a giant literal, carry a header naming that declaration.
func TestWindowsNameTheirDeclaration(t *testing.T) {
	var rows, names, entries, dict strings.Builder
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&rows, "    \"key%03d\" to %d,\n", i, i)
	}
	for i := 0; i < 400; i++ {
		fmt.Fprintf(&dict, "        \"k%03d\": %d,\n", i, i)
	}
	for i := 0; i < 150; i++ {
		fmt.Fprintf(&names, "        \"name-%03d-%s\",\n", i, strings.Repeat("x", 20))
		fmt.Fprintf(&entries, "entry %03d: %s\n", i, strings.Repeat("word ", 10))
	}
	kt := "package demo\n\nfun table(): Map<String, Int> = mapOf(\n" + rows.String() + ")\n\nclass Holder {\n    val names = listOf(\n" +
		names.String() + "    )\n\n    fun size() = names.size\n}\n"
	_, ks := chunkString(t, "Table.kt", kt, Options{})
	windowsOf := func(cs []Chunk, name string) []Chunk {
		var out []Chunk
		for _, c := range cs {
			if c.Name == name {
				out = append(out, c)
			}
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		outer []string
		sig   string
	}{
		{"table", nil, "fun table(): Map<String, Int>"},
		{"names", []string{"class Holder"}, "val names ="},
	} {
		ws := windowsOf(ks, tc.name)
		if len(ws) < 3 {
			t.Fatalf("%s: %d windows\n%s", tc.name, len(ws), dump(ks))
		}
		for i, w := range ws {
			want := tc.outer
			if i > 0 {
				want = append(append([]string(nil), tc.outer...), tc.sig)
				if w.Parent != ws[0].ID {
					t.Errorf("%s window %d: parent %q, want the first window %s", tc.name, i, w.Parent, ws[0].ID)
				}
			}
			if !w.Fallback || strings.Join(w.Header, "|") != strings.Join(want, "|") {
				t.Errorf("%s window %d: header %q fallback %v, want %q\n%s", tc.name, i, w.Header, w.Fallback, want, dump(ks))
			}
		}
	}

	words := strings.Repeat("token ", 1500)
	py := "\"\"\"Tables.\"\"\"\n\nHELP = \"\"\"\n" + entries.String() + "\"\"\"\n\nWORDS = \"" + words + "\"\n\n\ndef lookup(key):\n    TABLE = {\n" +
		dict.String() + "    }\n    return TABLE[key]\n"
	_, ps := chunkString(t, "tables.py", py, Options{})
	// Chunks within the statement carry its opening; one that reaches past its end
	// (merged with what follows) carries the enclosing header only.
	for _, tc := range []struct {
		first, last string
		header      []string
	}{
		{"HELP = ", "\"\"\"\n\nWORDS", []string{"HELP ="}},
		{"WORDS = ", "token \"\n", []string{"WORDS ="}},
		{"    TABLE = {", "    }\n", []string{"def lookup(key):", "TABLE ="}},
	} {
		lo, hi := lineOf(t, py, tc.first), lineOf(t, py, tc.last)
		n := 0
		for _, c := range ps {
			if c.StartLine < lo || c.EndLine > hi {
				continue
			}
			n++
			if strings.Join(c.Header, "|") != strings.Join(tc.header, "|") {
				t.Errorf("chunk %d (lines %d-%d) inside %q: header %q, want %q", c.Ordinal, c.StartLine, c.EndLine, tc.header, c.Header, tc.header)
			}
		}
		if n < 2 {
			t.Errorf("%q: %d chunks, want several\n%s", tc.header, n, dump(ps))
		}
	}
}

// Fault kind 5: hundreds of one-line definitions are merged with their small
// siblings (cAST's merge, into chunks of at most a fourth of the cap), at the top
// level and inside a split class, not one chunk each; definitions that are not small
// stay one chunk each. A merged chunk's Name is its first definition's; Names lists
// them all, in order.
func TestSmallSiblingsMerge(t *testing.T) {
	const n = 300
	var py, kt strings.Builder
	py.WriteString("import math\n\n\n")
	kt.WriteString("package demo\n\nclass Ops {\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&py, "def f_%d(x): return x + %d\n", i, i)
		fmt.Fprintf(&kt, "    fun f%d(x: Int) = x + %d\n", i, i)
	}
	py.WriteString("\n\nclass Big:\n")
	for i := 0; i < 4; i++ { // methods of about 75 non-space runes: one chunk each
		fmt.Fprintf(&py, "    def m%d(self, values):\n        return [math.sqrt(v * %d) for v in values if v > self.low]\n\n", i, i)
	}
	kt.WriteString("}\n")
	for _, tc := range []struct {
		path, src, prefix, header string
	}{
		{"ops.py", py.String(), "f_", ""},
		{"Ops.kt", kt.String(), "f", "class Ops"},
	} {
		_, cs := chunkString(t, tc.path, tc.src, Options{})
		var names []string
		merged := 0
		for _, c := range cs {
			if !strings.HasPrefix(c.Name, tc.prefix) {
				continue
			}
			merged++
			if n := countNonSpace([]byte(c.Text)); n > DefaultMaxChars/smallMergeDivisor {
				t.Errorf("%s: chunk %d has %d non-space runes, over %d", tc.path, c.Ordinal, n, DefaultMaxChars/smallMergeDivisor)
			}
			if c.Kind != KindFunction || strings.Join(c.Header, "|") != tc.header {
				t.Errorf("%s: chunk %d kind %s header %q, want function under %q", tc.path, c.Ordinal, c.Kind, c.Header, tc.header)
			}
			if tc.header != "" && (c.Parent != cs[0].ID && c.Parent != cs[1].ID) {
				t.Errorf("%s: chunk %d parent %q, want the class head", tc.path, c.Ordinal, c.Parent)
			}
			if len(c.Names) == 1 || len(c.Names) > 1 && c.Names[0] != c.Name || strings.Contains(c.Name, ",") {
				t.Errorf("%s: chunk %d name %q names %q, want the first of two or more, or none", tc.path, c.Ordinal, c.Name, c.Names)
			}
			names = append(names, c.DefNames()...)
		}
		if merged > n/5 { // 20 to 24 runes each: 8 or more per chunk
			t.Errorf("%s: %d chunks for %d one-line functions\n%s", tc.path, merged, n, dump(cs))
		}
		for i, name := range names {
			if want := fmt.Sprintf("%s%d", tc.prefix, i); name != want {
				t.Fatalf("%s: name %d is %q, want %q (each function once, in order)", tc.path, i, name, want)
			}
		}
		if len(names) != n {
			t.Errorf("%s: %d names, want %d", tc.path, len(names), n)
		}
	}
	_, cs := chunkString(t, "ops.py", py.String(), Options{})
	for i := 0; i < 4; i++ {
		check(t, cs, []want{{name: fmt.Sprintf("m%d", i), header: "class Big:"}})
		if c := byName(cs, fmt.Sprintf("m%d", i)); c != nil && (c.Name != fmt.Sprintf("m%d", i) || c.Names != nil) {
			t.Errorf("method m%d merged: %q %q", i, c.Name, c.Names)
		}
	}
}

// Case 31 (a comment run pushes a definition that fits over the cap).
func TestSharedCaseCommentPushesDefOverCap(t *testing.T) {
	path, src := sharedCase(t, "31-py-leading-comment-pushes-def-over-cap")
	_, cs := chunkString(t, path, src, Options{})
	check(t, cs, []want{
		{name: "stable_norm", start: 16, header: "-"},
		{name: "clamp", start: 28, header: "-"},
		{name: "lerp", start: 32, end: 34, header: "-"},
	})
	for _, c := range cs {
		if len(c.Header) > 0 {
			t.Errorf("stable_norm was split: chunk %d has header %q\n%s", c.Ordinal, c.Header, dump(cs))
		}
		if c.StartLine <= 15 && c.EndLine >= 5 && (c.StartLine != 5 || c.EndLine != 15) {
			t.Errorf("the comment run 5-15 is not one chunk\n%s", dump(cs))
		}
	}
}

// Case 26 (PEP 758 except clauses): boundaries unmoved, only keys flagged.
func TestSharedCaseExceptNoParens(t *testing.T) {
	path, src := sharedCase(t, "26-py-pep758-except-no-parens")
	_, cs := chunkString(t, path, src, Options{})
	check(t, cs, []want{
		{name: "read_json", start: 6, header: "-"},
		{name: "TomlReader", start: 16, header: "-"},
		{name: "__init__", start: 17, header: "class TomlReader:"},
		{name: "read", start: 20, header: "class TomlReader:"},
		{name: "keys", start: 29, header: "class TomlReader:"},
		{name: "describe", start: 36, end: 37, header: "-"},
	})
	for _, c := range cs {
		if c.ParseError != (c.Name == "keys") {
			t.Errorf("chunk %d (%s) parse_error=%v\n%s", c.Ordinal, c.Name, c.ParseError, dump(cs))
		}
	}
}

// Case 28 (match/case soft keywords): no boundary at a case line.
func TestSharedCaseMatchSoftKeyword(t *testing.T) {
	path, src := sharedCase(t, "28-py-match-soft-keyword")
	_, cs := chunkString(t, path, src, Options{})
	check(t, cs, []want{
		{name: "parse", start: 7, header: "-"},
		{name: "Dispatcher", start: 24, end: 24, header: "-"},
		{name: "match", start: 25, header: "class Dispatcher:"},
		{name: "handle", start: 28, header: "class Dispatcher:"},
		{name: "case_insensitive", start: 36, end: 37, header: "-"},
	})
	for _, c := range cs {
		if strings.HasPrefix(strings.TrimSpace(c.Text), "case ") || c.ParseError || c.Fallback {
			t.Errorf("chunk %d: starts at a case line or is flagged\n%s", c.Ordinal, dump(cs))
		}
	}
}

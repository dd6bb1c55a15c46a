package chunker

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Tests of the kinds of fault where grammar errors cost definitions their names
// although no text is lost: a definition header chosen by preprocessor conditionals
// (C), a nested heredoc that swallowed the code after it (Ruby), and windows of a
// declaration whose header was only its keyword (Go).

// chunkFixture chunks testdata/cases/name (checking the invariants) or, with
// shared, ../shared/cases/chunker/name, skipping when that is absent.
func chunkFixture(t *testing.T, name string, shared bool) []Chunk {
	t.Helper()
	path := filepath.Join("testdata", "cases", name)
	if shared {
		path = filepath.Join("..", "..", "shared", "cases", "chunker", name)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		if shared {
			t.Skipf("no shared case: %v", err)
		}
		t.Fatal(err)
	}
	_, cs := chunkString(t, filepath.Base(name), string(raw), Options{})
	return cs
}

// checkSplitHeader checks that the function name holds its alternative headers and
// its body (lines start-end), and that no chunk of the file is anonymous code holding
// a body's opening brace.
func checkSplitHeader(t *testing.T, cs []Chunk, name string, start, end int) {
	t.Helper()
	check(t, cs, []want{{name: name, start: start, end: end, header: "-"}})
	for _, c := range cs {
		if c.Name == "" && strings.HasPrefix(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(c.Text), "#endif")), "{") {
			t.Errorf("anonymous chunk L%d-%d holds a body\n%s", c.StartLine, c.EndLine, dump(cs))
		}
	}
}

func TestCIfdefSplitHeader(t *testing.T) { // kind of case 36 (tree-sitter-c#63)
	cs := chunkFixture(t, "ifdef_header.c", false)
	checkSplitHeader(t, cs, "buf_sum", 5, 19)
	check(t, cs, []want{{name: "record_packed", start: 20, end: 28}, {name: "buf_empty", start: 29, end: 32}})
	for _, c := range cs {
		if c.ParseError || c.Fallback {
			t.Errorf("L%d-%d: parse_error %v, fallback %v; want a clean parse\n%s", c.StartLine, c.EndLine, c.ParseError, c.Fallback, dump(cs))
		}
	}
}

func TestCIfdefSplitHeaderShared(t *testing.T) {
	cs := chunkFixture(t, "36-c-ifdef-split-function-header/input.c", true)
	checkSplitHeader(t, cs, "mix_round", 5, 14)
	check(t, cs, []want{{name: "mix_all", start: 15}, {name: "mix_selftest", start: 24}})
}

// checkClean checks that no chunk is flagged fallback or parse_error.
func checkClean(t *testing.T, cs []Chunk) {
	t.Helper()
	for _, c := range cs {
		if c.Fallback || c.ParseError {
			t.Errorf("L%d-%d: fallback %v, parse_error %v; want neither\n%s", c.StartLine, c.EndLine, c.Fallback, c.ParseError, dump(cs))
		}
	}
}

// A heredoc opened inside an interpolation of another heredoc's body no longer
// swallows the methods after it (the Ruby rules blank the outer body for the parser):
// each method is a chunk under its module and class, and nothing is flagged.
func TestRubyNestedHeredoc(t *testing.T) { // kind of case 42 (tree-sitter-ruby#148)
	cs := chunkFixture(t, "nested_heredoc.rb", false)
	check(t, cs, []want{
		{name: "Reports", start: 1, header: "-"},
		{name: "initialize", start: 3, end: 6, header: "class Weekly"},
		{name: "render", start: 7, end: 19, header: "class Weekly"},
		{name: "title", start: 20, header: "class Weekly"}, {name: "footer", header: "class Weekly"},
		{name: "build", start: 29, end: 32, header: "module Reports"},
	})
	checkClean(t, cs)
	if r := byName(cs, "render"); r != nil && !strings.Contains(r.Text, "<<~LIST.lines") {
		t.Errorf("render does not hold its heredocs:\n%s", r.Text)
	}
}

func TestRubyNestedHeredocShared(t *testing.T) {
	cs := chunkFixture(t, "42-rb-nested-heredoc/input.rb", true)
	check(t, cs, []want{
		{name: "initialize", start: 3, header: "class Digest"},
		{name: "body", start: 7, header: "class Digest"},
		{name: "subject", start: 19, header: "class Digest"},
		{name: "deliver", start: 24, end: 27, header: "module Mailer"},
	})
	for _, name := range []string{"initialize", "body", "subject"} {
		if c := byName(cs, name); c != nil && (len(c.Header) != 2 || c.Header[0] != "module Mailer") {
			t.Errorf("%s: header %q, want [module Mailer, class Digest]", name, c.Header)
		}
	}
	checkClean(t, cs)
}

// checkWindowHeaders checks that the windows of the declaration name after its
// first carry header, and that there are at least min of them.
func checkWindowHeaders(t *testing.T, cs []Chunk, name, header string, min int) {
	t.Helper()
	n := 0
	for _, c := range cs {
		if c.Name != name || len(c.Header) == 0 {
			continue
		}
		n++
		if got := c.Header[len(c.Header)-1]; got != header {
			t.Errorf("%s L%d-%d: header %q, want %q", name, c.StartLine, c.EndLine, got, header)
		}
	}
	if n < min {
		t.Errorf("%s: %d windows with a header, want at least %d\n%s", name, n, min, dump(cs))
	}
}

func TestGoVarTableHeaders(t *testing.T) { // kind of case 46
	cs := chunkFixture(t, "var_table.go", false)
	checkWindowHeaders(t, cs, "rows", "var rows =", 5)
	check(t, cs, []want{{name: "row", start: 1}, {name: "lookup", header: "-"}})
}

func TestGoVarTableHeadersShared(t *testing.T) {
	cs := chunkFixture(t, "46-go-table-test-composite-literals/input_test.go", true)
	checkWindowHeaders(t, cs, "cases", "var cases =", 100)
	checkWindowHeaders(t, cs, "parseTree", "var parseTree =", 2)
	check(t, cs, []want{{name: "sum", header: "-"}, {name: "TestSum", header: "-"}, {name: "depth", header: "-"}})
}

func TestHeaderNotFromComment(t *testing.T) { // "headers never come from string contents"
	cs := chunkFixture(t, "crate_docs.rs", false)
	for _, c := range cs {
		for _, h := range c.Header {
			if strings.HasPrefix(h, "/*") || strings.HasPrefix(h, "//") {
				t.Errorf("L%d-%d: header %q comes from a comment\n%s", c.StartLine, c.EndLine, c.Header, dump(cs))
			}
		}
	}
	check(t, cs, []want{{name: "f", header: "-"}})
}

// Rust 2024 syntax the bundled grammar predates (unsafe extern blocks, safe items,
// raw borrows, async closures, gen blocks) keeps every definition's name and flags
// no parse error; an extern block's items are named; inner doc comments (`//!`)
// never attach to the item below them nor become a header.
func TestRust2024(t *testing.T) {
	cs := chunkFixture(t, "rust2024.rs", false)
	check(t, cs, []want{
		{name: "Ring", header: "-"}, {name: "abs", header: "-"}, {name: "strlen", header: "-"},
		{name: "exported", start: 15, end: 19}, {name: "captures", start: 20}, {name: "raw_ptr", start: 24},
		{name: "chains", start: 28}, {name: "runner", start: 35}, {name: "new", header: "impl Ring"},
		{name: "after", start: 50, header: "-"},
	})
	checkClean(t, cs)
	src := "//! Crate docs: a ring buffer of bytes, line one of two.\n//! Line two of the crate docs.\n" +
		"pub fn capacity_of(ring: &[u8], reserve: usize) -> usize {\n    ring.len() + reserve * 2 + 1\n}\n"
	_, cs = chunkString(t, "lib.rs", src, Options{})
	check(t, cs, []want{{name: "capacity_of", start: 3, end: 5, header: "-"}})
	for _, c := range cs {
		for _, h := range c.Header {
			if strings.HasPrefix(h, "//") || strings.HasPrefix(h, "/*") {
				t.Errorf("L%d-%d: header %q comes from a comment", c.StartLine, c.EndLine, c.Header)
			}
		}
	}
}

// Scala 3 indentation syntax: a method whose indented body the grammar ends at the
// next line's indentation no longer swallows the next method (twice was lost inside
// greet), and an extension's methods are named members under its signature.
func TestScala3Indentation(t *testing.T) {
	cs := chunkFixture(t, "scala3.scala", false)
	check(t, cs, []want{
		{name: "Show", start: 1}, {name: "intShow", start: 8},
		{name: "shout", header: "extension (s: String)"}, {name: "whisper", header: "extension (s: String)"},
		{name: "greet", start: 16, end: 19, header: "object Main"}, {name: "twice", start: 20, header: "object Main"},
		{name: "get", header: "class Box(val v: Int)"}, {name: "put", header: "class Box(val v: Int)"},
		{name: "topLevel", start: 31, header: "-"},
	})
	checkClean(t, cs)
}

// A C# 14 extension block's members are named methods under its signature, not
// the body of one method named "extension".
func TestCSharpExtensionBlock(t *testing.T) {
	cs := chunkFixture(t, "extension_block.cs", false)
	check(t, cs, []want{
		{name: "Twice", header: "extension(string s)"}, {name: "IsShout", header: "extension(string s)"},
		{name: "Third", header: "public static class StringExtensions"},
	})
	checkClean(t, cs)
}

// Definitions inside text the parser could not place (a Flow-typed class that
// tree-sitter-javascript reads as ERROR and JSX) keep their names: a chunk named by
// the text's definition line and flagged parse_error, not anonymous fallback glue.
func TestJSErrorRegionNames(t *testing.T) {
	cs := chunkFixture(t, "flow_types.js", false)
	check(t, cs, []want{
		{name: "greet", start: 4, header: "-"}, {name: "add", start: 8, header: "-"},
		{name: "Box", start: 12, end: 13, header: "-"}, {name: "constructor", start: 14, end: 21, header: "class Box<T>"}, {name: "plain", start: 22, header: "-"},
	})
	if c := byName(cs, "Box"); c != nil && (!c.ParseError || c.Kind != KindClass) {
		t.Errorf("Box: kind %s, parse_error %v; want class, true", c.Kind, c.ParseError)
	}
	for _, c := range cs {
		if c.Name == "" && c.StartLine >= 12 && c.EndLine <= 21 {
			t.Errorf("L%d-%d: anonymous chunk inside Box\n%s", c.StartLine, c.EndLine, dump(cs))
		}
	}
}

// An object literal missing its closing brace swallows the top-level definitions
// after it (tree-sitter-javascript and -typescript read them as its properties): each
// column-0 opening after it (function, export function, class, const bound to an
// arrow) becomes a named chunk flagged parse_error, and the literal ends before it.
func TestJSUnclosedObjectSwallows(t *testing.T) {
	cases := []struct {
		path, src string
		want      []want
	}{
		{"a.js", "const config = {\n  a: 1,\n  b: 2,\n\nfunction tail() { return 1 }\nfunction tail2() {\n  return 2\n}\n",
			[]want{{name: "config", start: 1, end: 4, header: "-"}, {name: "tail", start: 5, header: "-"}, {name: "tail2", header: "-"}}},
		{"b.ts", "const config: Record<string, number> = {\n  a: 1,\n\nexport function tail(x: number): number {\n  return x\n}\nclass Box {\n  n = 1\n}\nconst f = (a: number) => a + 1\n",
			[]want{{name: "config", start: 1, end: 3, header: "-"}, {name: "tail", start: 4, header: "-"}, {name: "Box", start: 7, header: "-"}}},
		{"c.tsx", "export const routes = {\n  home: '/',\n\nconst Page = (p: Props) => {\n  return p.title\n}\n",
			[]want{{name: "routes", start: 1, header: "-"}, {name: "Page", header: "-"}}},
	}
	for _, tc := range cases {
		_, cs := chunkString(t, tc.path, tc.src, Options{})
		check(t, cs, tc.want)
		for _, w := range tc.want[1:] {
			if c := byName(cs, w.name); c != nil && !c.ParseError {
				t.Errorf("%s %s: parse_error false, want true", tc.path, w.name)
			}
		}
	}
}

// A well-formed literal followed by functions is not cut: only a definition that
// holds a parse error is.
func TestJSClosedObjectUnchanged(t *testing.T) {
	_, cs := chunkString(t, "ok.js", "const config = {\n  a: 1,\n}\nfunction tail() { return 1 }\n", Options{})
	check(t, cs, []want{{name: "config", start: 1, header: "-"}, {name: "tail", start: 4, header: "-"}})
	for _, c := range cs {
		if c.ParseError {
			t.Errorf("L%d-%d flagged parse_error in well-formed code", c.StartLine, c.EndLine)
		}
	}
}

// get/set accessors inside text the parser could not place are named members of
// their class, a body on the opening line (`get size() { return 1 }`) included.
func TestJSErrorRegionAccessors(t *testing.T) {
	cases := []struct{ path, src string }{
		{"flow.js", "// @flow\nclass Box<T> {\n  value: T;\n  get size() { return 1 }\n  set size(v) { this.value = v }\n  static get empty(): Box<T> {\n    return new Box(null);\n  }\n}\n"},
		{"flow.ts", "class Box<T> {\n  value: T = 0 as T;\n  oops( {\n  get size(): number { return 1 }\n  set size(v: number) { this.value = v as T }\n  static get empty(): Box<number> {\n    return new Box()\n  }\n}\n"},
	}
	for _, tc := range cases {
		_, cs := chunkString(t, tc.path, tc.src, Options{NoMerge: true})
		var sizes int
		for _, c := range cs {
			if c.Name == "size" {
				sizes++
				if !c.ParseError || c.Kind != KindFunction {
					t.Errorf("%s L%d size: kind %s, parse_error %v; want function, true", tc.path, c.StartLine, c.Kind, c.ParseError)
				}
			}
		}
		if sizes != 2 || byName(cs, "empty") == nil {
			t.Errorf("%s: %d chunks named size (want 2), empty found %v\n%s", tc.path, sizes, byName(cs, "empty") != nil, dump(cs))
		}
	}
}

// C# definitions inside text the parser could not place (a member that
// tree-sitter-c-sharp turns, with everything after it, into one ERROR) keep their
// names: types and methods recovered from their declaration lines, flagged
// parse_error, instead of one anonymous fallback window over the file. A call
// statement (no modifier) is never taken for a method.
func TestCSharpErrorRegionNames(t *testing.T) {
	src := `namespace N;

public class Account
{
    public int X => ((( ] broken <<< ;

    public void Deposit(int amount)
    {
        Console.WriteLine(amount);
        var total = amount + 2;
    }

    private static async Task<int> Audit<T>(T item) where T : class
    {
        return 1;
    }
}

internal sealed record Ledger(int Id)
{
    public void Close() { }
}
`
	_, cs := chunkString(t, "a.cs", src, DefaultOptions(StrategyStructural))
	named := map[string]bool{}
	for _, c := range cs {
		named[c.Name] = true
		for _, n := range c.Names {
			named[n] = true
		}
		if c.Name == "" && c.Fallback && c.EndLine-c.StartLine > 4 {
			t.Errorf("L%d-%d: an anonymous fallback window over definitions\n%s", c.StartLine, c.EndLine, dump(cs))
		}
	}
	for _, n := range []string{"Account", "Deposit", "Audit", "Ledger"} {
		if !named[n] {
			t.Errorf("%s has no chunk naming it\n%s", n, dump(cs))
		}
	}
	for _, n := range []string{"WriteLine", "total"} {
		if named[n] {
			t.Errorf("a statement was taken for a definition: %s\n%s", n, dump(cs))
		}
	}
	if c := byName(cs, "Account"); c != nil && (!c.ParseError || c.Kind != KindClass) {
		t.Errorf("Account: kind %s, parse_error %v; want class, true", c.Kind, c.ParseError)
	}
}

// errorDefCase is a source whose parse error (a broken match arm, an unclosed call)
// made the tree misread the definitions around it, the chunks it must still have
// (each flagged parse_error when flagged is set), and names no chunk may have:
// statements, calls, match arms, closures and string contents.
type errorDefCase struct {
	path, src string
	want      []want
	flagged   []string
	never     []string
}

// checkErrorDefs chunks each case without merging and checks its named chunks,
// their parse_error flags and that no statement was taken for a definition.
func checkErrorDefs(t *testing.T, cases []errorDefCase) {
	t.Helper()
	for _, tc := range cases {
		_, cs := chunkString(t, tc.path, tc.src, Options{NoMerge: true})
		check(t, cs, tc.want)
		for _, n := range tc.flagged {
			if c := byName(cs, n); c != nil && !c.ParseError {
				t.Errorf("%s %s: parse_error false, want true\n%s", tc.path, n, dump(cs))
			}
		}
		for _, c := range cs {
			for _, n := range append([]string{c.Name}, c.Names...) {
				if slices.Contains(tc.never, n) {
					t.Errorf("%s L%d-%d: a statement was taken for a definition: %s\n%s", tc.path, c.StartLine, c.EndLine, n, dump(cs))
				}
			}
		}
	}
}

// A grammar error inside a Scala method's body (a broken match case, an unclosed
// call) ended the method, and the class holding it, at the error: the method's
// opening line landed in the class chunk, the members after it left the class or
// became anonymous windows. The definitions are taken from their text (DefLines,
// braces or indentation), named, under their class and flagged parse_error.
func TestScalaErrorDefNames(t *testing.T) {
	checkErrorDefs(t, []errorDefCase{
		{"a.scala", "class Parser {\n  def parse(s: String): Int = s.toIntOption match {\n    case Some(x) => x ]]] ((\n    case None => 0\n  }\n  def other(): Int = 1\n}\n",
			[]want{{name: "Parser", start: 1, header: "-"}, {name: "parse", start: 2, end: 5, header: "class Parser"}, {name: "other", start: 6, header: "class Parser"}},
			[]string{"parse"}, []string{"Some", "None", "x"}},
		{"nested.scala", "package demo\n\nobject Outer {\n  class Inner {\n    def parse(s: String): Int = s.toIntOption match {\n      case Some(x) => x ]]] ((\n      case None => 0\n    }\n    def other(): Int = 1\n  }\n  def after(x: Int): Int = x + 1\n}\n",
			[]want{{name: "parse", start: 5, end: 8, header: "class Inner"}, {name: "other", start: 9, header: "class Inner"}, {name: "after", start: 11, header: "object Outer"}},
			[]string{"parse"}, nil},
		{"trait.scala", "trait Shape {\n  def area(): Double\n  def describe(): String = {\n    val s = area() match {\n      case 0.0 => \"empty\" )) ]\n      case _ => \"some\"\n    }\n    s\n  }\n  def name: String = \"shape\"\n}\n",
			[]want{{name: "area", header: "trait Shape"}, {name: "describe", start: 3, end: 9, header: "trait Shape"}, {name: "name", start: 10, header: "trait Shape"}},
			[]string{"describe"}, []string{"s"}},
		{"eof.scala", "class Tail {\n  def first(): Int = 1\n\n  def last(s: String): Int = s.length match {\n    case 0 => ]] 0 (\n",
			[]want{{name: "Tail", start: 1}, {name: "first", header: "class Tail"}, {name: "last", start: 4, header: "class Tail"}},
			[]string{"last"}, nil},
		{"indented.scala", "object Indent:\n  def parse(s: String): Int =\n    s.toIntOption match\n      case Some(x) => x ]]] ((\n      case None => 0\n\n  def other(): Int = 1\n",
			[]want{{name: "parse", start: 2, header: "object Indent:"}, {name: "other", start: 7, header: "object Indent:"}},
			[]string{"parse"}, []string{"Some", "None"}},
		{"negative.scala", "class Service {\n  def handle(req: Req): Resp = req.kind match {\n    case Get(x) => fetch(x) ]] ((\n    case Post(body) =>\n      val parsed = parse(body\n      val doc = \"\"\"\n        def fake(): Int = 1\n        class Phantom\n      \"\"\"\n      items.map { it => it.value }\n      Resp(parsed)\n  }\n\n  def close(): Unit = ()\n}\n",
			[]want{{name: "handle", start: 2, end: 13, header: "class Service"}, {name: "close", start: 14, header: "class Service"}},
			[]string{"handle"}, []string{"fake", "Phantom", "parsed", "doc", "fetch", "Get", "Post", "map", "it", "Resp", "parse"}},
	})
}

// The same kind in Rust: a broken match arm or an unclosed call inside a function
// made tree-sitter-rust read the impl (or the whole file) as one ERROR, losing the
// impl's and its methods' names, or cut a module at the error. The items are taken
// from their text, named under their impl or module and flagged parse_error;
// statements, match arms, closures and a raw string's contents are not.
func TestRustErrorDefNames(t *testing.T) {
	checkErrorDefs(t, []errorDefCase{
		{"impl.rs", "struct Parser {\n    n: i32,\n}\n\nimpl Parser {\n    fn parse(&self, s: &str) -> i32 {\n        match s.parse::<i32>() {\n            Ok(x) => x ]]] ((,\n            Err(_) => 0,\n        }\n    }\n\n    fn other(&self) -> i32 {\n        1\n    }\n}\n\nfn after() -> i32 {\n    2\n}\n",
			[]want{{name: "parse", start: 6, end: 12, header: "impl Parser"}, {name: "other", start: 13, header: "impl Parser"}, {name: "after", start: 18, header: "-"}},
			[]string{"parse", "other"}, []string{"Ok", "Err", "x"}},
		{"mod.rs", "mod inner {\n    pub fn first() -> i32 {\n        1\n    }\n\n    pub fn last(s: &str) -> usize {\n        match s.len() {\n            0 => ]] 0 (\n",
			[]want{{name: "inner", start: 1}, {name: "first", start: 2, header: "mod inner"}, {name: "last", start: 6, header: "mod inner"}},
			[]string{"last"}, nil},
		{"generic.rs", "impl<T: Clone> fmt::Display for Wrapper<T> {\n    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {\n        match self.0 {\n            Some(v) => write!(f, \"{}\", v) ]] ((,\n            None => Ok(()),\n        }\n    }\n\n    pub(crate) async fn helper(&self) -> usize {\n        0\n    }\n}\n",
			[]want{{name: "fmt", start: 2, header: "impl<T: Clone> fmt::Display for Wrapper<T>"}, {name: "helper", start: 9}},
			[]string{"fmt"}, []string{"Some", "None", "write"}},
		{"negative.rs", "impl Service {\n    fn handle(&self, req: Req) -> Resp {\n        match req.kind {\n            Kind::Get(x) => self.fetch(x) ]] ((,\n            Kind::Post(body) => {\n                let parsed = parse(body;\n                let doc = r#\"\nfn fake() -> i32 { 1 }\nstruct Phantom;\n\"#;\n                let f = |it: &Item| it.value;\n                items.iter().map(f).collect()\n            }\n        }\n    }\n\n    fn close(&self) {}\n}\n",
			[]want{{name: "Service", start: 1}, {name: "handle", start: 2, end: 16, header: "impl Service"}, {name: "close", start: 17, header: "impl Service"}},
			[]string{"handle"}, []string{"fake", "Phantom", "parsed", "doc", "f", "fetch", "Get", "Post", "map", "collect"}},
	})
}

// A definition taken from the text that is over the size cap is split at the
// definitions inside it (a method's local methods), like one of the tree.
func TestScalaErrorDefSplitsAtInnerDefs(t *testing.T) {
	body := strings.Repeat("    val total = accumulate(items, weights, offsets) + scale(factor)\n", 16)
	src := "class Big {\n  def outer(x: Int): Int = x match {\n    case 1 => ]] ((\n" + body +
		"    def inner(y: Int): Int = y + 1\n    inner(x)\n  }\n}\n"
	_, cs := chunkString(t, "big.scala", src, Options{})
	check(t, cs, []want{{name: "outer", start: 2}, {name: "inner", header: "def outer(x: Int): Int = x match"}})
	for _, c := range cs {
		if c.Name == "total" || c.Name == "accumulate" {
			t.Errorf("a statement was taken for a definition\n%s", dump(cs))
		}
	}
}

// The same kind in Go, Python and Ruby: an unclosed call inside a method made the
// parser swallow the methods after it (Go: the file after it one ERROR; Python: the
// class's methods hidden inside one; Ruby: the whole file one anonymous window).
// The definitions are taken from their text, named under their class and flagged
// parse_error; assignments, function literals, lambdas, blocks and the contents of
// raw strings, triple-quoted strings and heredocs never open one.
func TestGoPythonRubyErrorDefNames(t *testing.T) {
	checkErrorDefs(t, []errorDefCase{
		{"svc.go", "package svc\n\ntype Service struct {\n\tn int\n}\n\nfunc (s *Service) Handle(req Req) Resp {\n\tparsed := parse(req.Body,\n\tdoc := `\nfunc fake() int { return 1 }\ntype Phantom struct{}\n`\n\tcb := func(it Item) int { return it.Value }\n\treturn Resp{parsed, doc, cb}\n}\n\nfunc (s *Service) Close() error {\n\treturn nil\n}\n\nfunc After[T any](x T) T {\n\treturn x\n}\n",
			[]want{{name: "Service", start: 3, header: "-"}, {name: "Handle", start: 7, header: "-"}, {name: "Close", start: 17, header: "-"}, {name: "After", start: 21, header: "-"}},
			[]string{"Handle", "Close"}, []string{"fake", "Phantom", "parsed", "doc", "cb", "parse", "Resp"}},
		{"svc.py", "class Service:\n    def handle(self, req):\n        parsed = parse(req.body,\n        doc = \"\"\"\ndef fake():\n    class Phantom: pass\n\"\"\"\n        items = [f(x) for x in req.items]\n        cb = lambda it: it.value\n        return Resp(parsed)\n\n    async def close(self):\n        return None\n\n\ndef after():\n    return 2\n",
			[]want{{name: "Service", start: 1, header: "-"}, {name: "handle", start: 2, header: "class Service:"}, {name: "close", start: 12, header: "class Service:"}, {name: "after", start: 16, header: "-"}},
			[]string{"handle", "close"}, []string{"fake", "Phantom", "parsed", "doc", "items", "cb", "parse", "Resp"}},
		{"svc.rb", "module Api\n  class Service\n    def handle(req)\n      parsed = parse(req.body,\n      doc = <<~TEXT\n        def fake\n        class Phantom\n      TEXT\n      req.items.each { |it| it.value }\n      Resp.new(parsed)\n    end\n\n    def self.close\n      nil\n    end\n  end\n\n  def self.version\n    1\n  end\nend\n",
			[]want{{name: "Api", start: 1, header: "-"}, {name: "handle", start: 3, header: "class Service"}, {name: "close", start: 13, header: "class Service"}, {name: "version", start: 18, header: "module Api"}},
			[]string{"handle"}, []string{"fake", "Phantom", "parsed", "doc", "each", "parse", "Resp", "new"}},
	})
}

// The same kind in Kotlin and Swift: an unbalanced bracket inside a method (`val y
// = ) ]] {`) made the grammar nest the members after it inside the method, or the
// Kotlin outline find no members in the class: the class was one chunk. Its
// members are taken from the definition lines of its text, named under their
// classes; the method with the error is flagged parse_error. Properties (`val z =
// compute(1,`), closures and a raw string's contents never open a definition.
func TestKotlinSwiftErrorDefNames(t *testing.T) {
	want := []want{{name: "Outer", start: 1, header: "-"}, {name: "Inner", start: 2, header: "class Outer"},
		{name: "parse", start: 3, header: "class Inner"}, {name: "other", start: 14, header: "class Inner"},
		{name: "after", start: 17, header: "class Outer"}}
	never := []string{"fake", "Phantom", "y", "z", "doc", "compute", "forEach", "println", "print"}
	checkErrorDefs(t, []errorDefCase{
		{"Svc.kt", "class Outer {\n    class Inner {\n        fun parse(s: String): Int {\n            val y = ) ]] {\n            val z = compute(1,\n            val doc = \"\"\"\nfun fake(): Int = 1\nclass Phantom\n\"\"\"\n            items.forEach { it -> println(it) }\n            return y\n        }\n\n        fun other(): Int = 1\n    }\n\n    fun after(): Int = 2\n}\n", want, []string{"parse"}, never},
		{"svc.swift", "class Outer {\n    class Inner {\n        func parse(_ s: String) -> Int {\n            let y = ) ]] {\n            let z = compute(1,\n            let doc = \"\"\"\nfunc fake() -> Int { 1 }\nclass Phantom {}\n\"\"\"\n            items.forEach { it in print(it) }\n            return y\n        }\n\n        func other() -> Int { return 1 }\n    }\n\n    func after() -> Int { return 2 }\n}\n", want, []string{"parse"}, never},
	})
}

// An unbalanced bracket inside a method of a nested class (`val y = ) ]] {`) in
// Scala, Rust, Python, Ruby and Go: every definition keeps its name under its class.
func TestUnbalancedBracketErrorDefNames(t *testing.T) {
	checkErrorDefs(t, []errorDefCase{
		{"a.scala", "object Outer {\n  class Inner {\n    def parse(s: String): Int = {\n      val y = ) ]] {\n      y\n    }\n\n    def other(): Int = 1\n  }\n\n  def after(): Int = 2\n}\n", []want{{name: "parse", start: 3, header: "class Inner"}, {name: "other", start: 8, header: "class Inner"}, {name: "after", start: 11, header: "object Outer"}}, []string{"parse"}, []string{"y"}},
		{"a.rs", "mod outer {\n    impl Inner {\n        fn parse(&self, s: &str) -> i32 {\n            let y = ) ]] {;\n            y\n        }\n\n        fn other(&self) -> i32 { 1 }\n    }\n\n    fn after() -> i32 { 2 }\n}\n", []want{{name: "parse", start: 3, header: "impl Inner"}, {name: "other", start: 8, header: "impl Inner"}, {name: "after", start: 11, header: "mod outer"}}, []string{"parse"}, []string{"y"}},
		{"a.py", "class Outer:\n    class Inner:\n        def parse(self, s):\n            y = ) ]] {\n            return y\n\n        def other(self):\n            return 1\n\n    def after(self):\n        return 2\n", []want{{name: "parse", start: 3, header: "class Inner:"}, {name: "other", start: 7, header: "class Inner:"}, {name: "after", start: 10, header: "class Outer:"}}, []string{"parse"}, []string{"y"}},
		{"a.rb", "class Outer\n  class Inner\n    def parse(s)\n      y = ) ]] {\n      y\n    end\n\n    def other\n      1\n    end\n  end\n\n  def after\n    2\n  end\nend\n", []want{{name: "parse", start: 3, header: "class Inner"}, {name: "other", start: 8, header: "class Inner"}, {name: "after", start: 13, header: "class Outer"}}, []string{"parse"}, []string{"y"}},
		{"a.go", "package p\n\nfunc (p *P) Parse(s string) int {\n\ty := ) ]] {\n\treturn y\n}\n\nfunc (p *P) Other() int { return 1 }\n\nfunc After() int { return 2 }\n", []want{{name: "Parse", start: 3, header: "-"}, {name: "Other", start: 8, header: "-"}, {name: "After", start: 10, header: "-"}}, []string{"Parse"}, []string{"y"}},
	})
}

// The same kind in C++: an unbalanced bracket inside a method made the class the
// return type of the function after it (a chunk named after over the class). The
// class and its methods are taken from their text. A statement keyword before a
// name (`if MACRO (x) {`), a lambda, a call and a raw string's contents never open
// a definition.
func TestCPPErrorDefNames(t *testing.T) {
	checkErrorDefs(t, []errorDefCase{
		{"a.cpp", "namespace ns {\nclass Outer {\npublic:\n    int parse(const char *s) {\n        int y = ) ]] {;\n        return y;\n    }\n\n    int other() { return 1; }\n};\n\nint after() { return 2; }\n}\n", []want{{name: "Outer", start: 2}, {name: "parse", start: 4, header: "class Outer"}, {name: "other", start: 9, header: "class Outer"}, {name: "after", start: 12}}, []string{"parse"}, []string{"y"}},
		{"conv.cpp", "template <typename T> class Conv {\n public:\n  void run(T value) {\n    if FMT_CONSTEXPR20 (sizeof(T) <= sizeof(int)) {\n      int y = ) ]] {;\n      store(value);\n    }\n    auto cb = [](int x) { return x; };\n    const char *doc = R\"(\nint fake(int x) {\n)\";\n  }\n\n  int other() const { return 1; }\n};\n", nil, nil, []string{"FMT_CONSTEXPR20", "store", "cb", "fake", "doc"}},
	})
}

// The same kind in Java and PHP: a file cut inside a method (an unclosed switch at
// its end) made the class and the method unnamed windows. They are taken from
// their text. Anonymous classes (`new Runnable() {`), lambdas, closures, calls,
// text blocks and heredocs never open a definition.
func TestJavaPHPErrorDefNames(t *testing.T) {
	checkErrorDefs(t, []errorDefCase{
		{"A.java", "public class Tail {\n    int first() { return 1; }\n\n    int last(String s) {\n        switch (s.length()) {\n            case 0: return ]] 0 (\n", []want{{name: "Tail", start: 1}, {name: "first", start: 2, header: "public class Tail"}, {name: "last", start: 4, header: "public class Tail"}}, []string{"last"}, nil},
		{"a.php", "<?php\nclass Tail {\n    public function first() { return 1; }\n\n    public function last($s) {\n        switch ($s) {\n            case 0: return ]] 0 (\n", []want{{name: "Tail", start: 2}, {name: "first", start: 3, header: "class Tail"}, {name: "last", start: 5, header: "class Tail"}}, []string{"last"}, nil},
		{"Svc.java", "public class Svc {\n    void handle(List<Item> items) {\n        Runnable r = new Runnable() {\n            public void run() { work(); }\n        };\n        items.forEach(it -> {\n            process(it);\n        });\n        if (items.isEmpty()) {\n            String doc = \"\"\"\n                void fake() {\n                \"\"\";\n        }\n        int y = ) ]] {;\n        helper(items) ;\n    }\n\n    int other() { return 1; }\n}\n", []want{{name: "handle", start: 2, header: "public class Svc"}, {name: "other", start: 18, header: "public class Svc"}}, []string{"handle"}, []string{"Runnable", "forEach", "process", "fake", "helper", "isEmpty", "doc", "r"}},
		{"svc.php", "<?php\nclass Svc {\n    public function handle($items) {\n        $f = function ($x) {\n            return $x;\n        };\n        array_map(function ($x) {\n            return $x;\n        }, $items);\n        $doc = <<<TEXT\nfunction fake() {\nTEXT;\n        $y = ) ]] {;\n    }\n\n    public function other() { return 1; }\n}\n", []want{{name: "handle", start: 3, header: "class Svc"}, {name: "other", start: 16, header: "class Svc"}}, []string{"handle"}, []string{"fake", "f", "array_map", "doc"}},
	})
}

// The same kind in C: a file cut inside a function left it an unnamed window; it is
// taken from its text. A statement keyword before a macro, a declaration with an
// initialiser, a loop macro and a string never open a definition.
func TestCErrorDefNames(t *testing.T) {
	checkErrorDefs(t, []errorDefCase{
		{"a.c", "int first(void) { return 1; }\n\nint last(const char *s) {\n    switch (s[0]) {\n    case 0: return ]] 0 (\n", []want{{name: "first", start: 1}, {name: "last", start: 3}}, []string{"last"}, nil},
		{"run.c", "static int run(struct ctx *c) {\n    if LIKELY (c->n > 0) {\n        struct item it = make_item(c) ;\n        list_foreach(c->items, visit) {\n            visit(it);\n        }\n    }\n    const char *doc = \"int fake(void) {\";\n    int y = ) ]] {;\n    return 0;\n}\n\nint other(void) { return 1; }\n", []want{{name: "run", start: 1}, {name: "other", start: 13}}, []string{"run"}, []string{"LIKELY", "it", "make_item", "list_foreach", "visit", "fake", "doc"}},
	})
}

// The same kind in JavaScript and TypeScript: a file cut inside a method (an editor's
// buffer mid-typing) kept the methods' names but lost their class as header; the class
// is now taken from its text. Calls, callbacks, object literals and strings never open
// a definition.
func TestJSTSErrorDefHeaders(t *testing.T) {
	checkErrorDefs(t, []errorDefCase{
		{"a.js", "class Account {\n  constructor(owner) {\n    this.owner = owner;\n  }\n\n  deposit(amount) {\n    if (amount > 0) {\n      this.balance += amount;\n", []want{{name: "Account", start: 1}, {name: "constructor", start: 2, header: "class Account"}, {name: "deposit", start: 6, header: "class Account"}}, []string{"deposit"}, nil},
		{"a.ts", "export class Account {\n  constructor(private owner: string) {\n    this.owner = owner;\n  }\n\n  deposit(amount: number): void {\n    items.forEach((it) => {\n      process(it);\n    });\n    const doc = \"function fake() {\";\n    const opts = { retry: true };\n    if (amount > 0) {\n      this.balance += amount;\n", []want{{name: "Account", start: 1}, {name: "constructor", start: 2, header: "export class Account"}, {name: "deposit", start: 6, header: "export class Account"}}, []string{"deposit"}, []string{"forEach", "process", "fake", "doc", "opts"}},
	})
}

// The same kind in C#: a file cut inside a method (an editor's buffer mid-typing) kept
// the methods' names but lost their class as header: the text's class line read as a
// one-line definition, constructors, properties and fields opened none, and a body
// opened by a `{` on the next line (Allman style) ended at its first line. Types
// (class, struct, interface, record; in a block or file-scoped namespace, nested)
// are taken from their text with their members. Calls, lambdas, object initialisers,
// `new X() {`, `if`, `switch`, and the contents of strings never open a definition.
func TestCSharpErrorDefHeaders(t *testing.T) {
	never := []string{"Handler", "Name", "Foo", "twice", "ForEach", "Process", "opts", "Options", "Fake", "Phantom", "Hidden", "doc", "raw", "Log", "Work", "code", "f", "x", "if", "switch", "AddRange"}
	checkErrorDefs(t, []errorDefCase{
		{"a.cs", "namespace Bank {\n  public class Account {\n    public Account(string owner) {\n      this.owner = owner;\n    }\n\n    public void Deposit(int amount) {\n      if (amount > 0) {\n        balance += amount;\n",
			[]want{{name: "Account", start: 2, header: "-"}, {name: "Deposit", start: 7, header: "public class Account"}}, []string{"Account", "Deposit"}, nil},
		{"allman.cs", "namespace Bank\n{\n    public class Account\n    {\n        private int balance;\n\n        public Account(string owner)\n        {\n            this.owner = owner;\n        }\n\n        public void Deposit(int amount)\n        {\n            if (amount > 0)\n            {\n                balance += amount;\n",
			[]want{{name: "Account", start: 3, header: "-"}, {name: "balance", start: 5, header: "public class Account"}, {name: "Deposit", start: 12, end: 16, header: "public class Account"}}, []string{"Deposit"}, nil},
		{"record.cs", "namespace Bank;\n\npublic record Account(string Owner) {\n    public Account() : this(\"x\") {\n        Log();\n    }\n\n    public int Balance {\n        get { return balance; }\n    }\n\n    public void Deposit(int amount) {\n        if (amount > 0) {\n            balance += amount;\n",
			[]want{{name: "Account", start: 3, header: "-"}, {name: "Balance", start: 8, header: "public record Account(string Owner)"}, {name: "Deposit", start: 12, header: "public record Account(string Owner)"}}, []string{"Deposit"}, never},
		{"nested.cs", "namespace Bank.Core;\n\npublic sealed class Outer\n{\n    public int Id { get; set; }\n\n    public void Before()\n    {\n        Log();\n    }\n\n    private sealed class Inner\n    {\n        public Inner() { }\n\n        public void Run(int x)\n        {\n            var f = new Foo() {\n                Name = \"n\",\n            };\n            if (x > 0)\n            {\n                Work(x);\n",
			[]want{{name: "Outer", start: 3, header: "-"}, {name: "Id", start: 5, header: "public sealed class Outer"}, {name: "Before", start: 7, header: "public sealed class Outer"},
				{name: "Inner", start: 12, header: "public sealed class Outer"}, {name: "Run", start: 16, header: "private sealed class Inner"}}, []string{"Run"}, never},
		{"single.cs", "namespace Bank {\n  public class Outer {\n    public int Id { get; set; }\n\n    private class Inner {\n      public void Run(int x) {\n        if (x > 0) {\n          Work(x);\n",
			[]want{{name: "Outer", start: 2, header: "-"}, {name: "Inner", start: 5, header: "public class Outer"}, {name: "Run", start: 6, header: "private class Inner"}}, []string{"Run"}, never},
		{"struct.cs", "namespace Geo;\n\npublic interface IShape\n{\n    double Area();\n\n    public string Describe()\n    {\n        switch (Kind)\n        {\n            case 1:\n                return \"one\";\n        }\n        return \"x\";\n    }\n}\n\ninternal readonly struct Slot\n{\n    public readonly int Id;\n\n    public Slot(int id) => Id = id;\n\n    public override string ToString()\n    {\n        return $\"Slot {Id",
			[]want{{name: "IShape", start: 3, header: "-"}, {name: "Describe", start: 7, header: "public interface IShape"}, {name: "Slot", start: 18, header: "-"},
				{name: "ToString", start: 24, header: "internal readonly struct Slot"}}, []string{"ToString"}, never},
		{"negative.cs", "namespace Shop {\n  public class Cart {\n    private readonly List<Item> items = new();\n\n    public Cart(IEnumerable<Item> seed) : base() {\n      items.AddRange(seed);\n    }\n\n    public decimal Total(string code) {\n      var handler = new Handler() {\n        Name = \"x\",\n      };\n      Func<int, int> twice = x => x * 2;\n      items.ForEach(it => {\n        Process(it);\n      });\n      var opts = new Options { Retry = true };\n      var doc = @\"\n        public void Fake() {\n        public class Phantom {\n      \";\n      var raw = \"\"\"\n        private int Hidden(int x) {\n        \"\"\";\n      switch (code) {\n        case \"a\":\n          break;\n      }\n      if (items.Count > 0) {\n        Log(code);\n",
			[]want{{name: "Cart", start: 2, header: "-"}, {name: "items", start: 3, header: "public class Cart"}, {name: "Total", start: 9, header: "public class Cart"}}, []string{"Total"}, never},
	})
}

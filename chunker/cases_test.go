package chunker

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Each case reproduces, in our own words, one kind of fault that public grammars or
// chunkers have shown (the kinds of ../shared/cases/chunker/; see its README).

type want struct {
	name       string // chunk whose Name is this (or whose text starts with it when prefix)
	start, end int    // 1-based lines; 0 = don't check (end is checked only with start)
	header     string // last header entry; "-" = must be top-level
}

func chunkString(t *testing.T, path, src string, opts Options) (*File, []Chunk) {
	t.Helper()
	f, err := Decode(path, []byte(src), 0)
	if err != nil {
		t.Fatalf("Decode(%s): %v", path, err)
	}
	s := NewStructural(opts)
	defer s.Close()
	cs, err := s.Chunk(f)
	if err != nil {
		t.Fatalf("Chunk(%s): %v", path, err)
	}
	if err := Validate(f, cs, s.opts.MaxChars); err != nil {
		t.Fatalf("invariants: %v\n%s", err, dump(cs))
	}
	return f, cs
}

func dump(cs []Chunk) string {
	var sb strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&sb, "  #%d L%d-%d %s %q fb=%v hdr=%q\n", c.Ordinal, c.StartLine, c.EndLine, c.Kind, c.DefNames(), c.Fallback, c.Header)
	}
	return sb.String()
}

// byName returns the chunk named name, or else the first chunk whose Names (small
// sibling definitions merged into one chunk) holds it, or nil.
func byName(cs []Chunk, name string) *Chunk {
	for i := range cs {
		if cs[i].Name == name {
			return &cs[i]
		}
	}
	for i := range cs {
		if slices.Contains(cs[i].Names, name) {
			return &cs[i]
		}
	}
	return nil
}

func check(t *testing.T, cs []Chunk, ws []want) {
	t.Helper()
	for _, w := range ws {
		c := byName(cs, w.name)
		if c == nil {
			t.Errorf("no chunk named %q\n%s", w.name, dump(cs))
			continue
		}
		if w.start != 0 && (c.StartLine != w.start || (w.end != 0 && c.EndLine != w.end)) {
			t.Errorf("%s: lines %d-%d, want %d-%d\n%s", w.name, c.StartLine, c.EndLine, w.start, w.end, dump(cs))
		}
		switch {
		case w.header == "-" && len(c.Header) != 0:
			t.Errorf("%s: header %q, want top-level", w.name, c.Header)
		case w.header != "" && w.header != "-" && (len(c.Header) == 0 || c.Header[len(c.Header)-1] != w.header):
			t.Errorf("%s: header %q, want last %q", w.name, c.Header, w.header)
		}
	}
}

func TestKotlinCtorOnNextLine(t *testing.T) { // kind of case 01 (fwcd/tree-sitter-kotlin#75)
	src := `package demo.store

/** Keeps at most max items. */
class Pool<T>
private constructor(
    private val max: Int,
    private val make: () -> T,
) {
    private val free = ArrayDeque<T>()

    fun take(): T {
        val item = free.removeFirstOrNull()
        return item ?: make()
    }

    fun give(item: T) {
        if (free.size < max) free.addLast(item)
    }

    class Counter
    internal constructor(val n: Int) {
        fun twice(): Int = n * 2
    }
}

fun <T> pool(make: () -> T): Pool<T> = TODO()
`
	_, cs := chunkString(t, "Pool.kt", src, Options{})
	hdr := "class Pool<T> private constructor(private val max: Int, private val make: () -> T)"
	check(t, cs, []want{
		{name: "Pool", start: 3, end: 10, header: "-"},
		{name: "take", start: 11, end: 15, header: hdr},
		{name: "give", start: 16, end: 19, header: hdr},
		{name: "Counter", header: hdr},
		{name: "pool", start: 26, end: 26, header: "-"},
	})
	for _, c := range cs {
		if c.ParseError || c.Fallback {
			t.Errorf("chunk %d: parse error/fallback after rewrite\n%s", c.Ordinal, dump(cs))
		}
	}
}

func TestKotlinFunInterface(t *testing.T) { // kind of case 02 (fwcd/tree-sitter-kotlin#87)
	src := `package demo.bus

class Hub {
    fun interface Handler {
        fun handle(msg: String)
    }

    private val handlers = mutableListOf<Handler>()

    fun add(h: Handler) {
        handlers += h
    }

    fun send(msg: String) {
        handlers.forEach { it.handle(msg) }
    }
}

fun interface Ticker {
    fun tick(): Long
}

val ticker = Ticker { 0L }
`
	_, cs := chunkString(t, "Hub.kt", src, Options{})
	check(t, cs, []want{ // a small definition does not merge with a property (case 02)
		{name: "Handler", start: 4, end: 7, header: "class Hub"},
		{name: "handlers", start: 8, end: 9, header: "class Hub"},
		{name: "add", start: 10, end: 13, header: "class Hub"},
		{name: "send", header: "class Hub"},
		{name: "Ticker", start: 19, end: 22, header: "-"},
		{name: "ticker", start: 23, end: 23, header: "-"},
	})
	if c := byName(cs, "Handler"); c != nil && !strings.HasPrefix(strings.TrimSpace(c.Text), "fun interface Handler") {
		t.Errorf("Handler chunk text %q", c.Text)
	}
	// With a tiny cap Ticker is split, so its member carries its signature.
	_, small := chunkString(t, "Hub.kt", src, Options{MaxChars: 20})
	if c := byName(small, "tick"); c == nil || len(c.Header) != 1 || c.Header[0] != "fun interface Ticker" {
		t.Errorf("tick's header should say fun interface Ticker\n%s", dump(small))
	}
	sub, _ := chunkString(t, "Hub.kt", src, Options{})
	_ = sub
}

func TestKotlinDocAbsorbedByImport(t *testing.T) { // kind of case 06
	src := `package demo.web

import demo.http.Get

/**
 * Shows one user.
 */
@Get("/users/{id}")
class ShowUser(val id: Long)

/** Lists users. */
@Get("/users")
class ListUsers {
    fun all(): List<Long> = emptyList()
}
`
	_, cs := chunkString(t, "Users.kt", src, Options{})
	check(t, cs, []want{
		{name: "ShowUser", start: 5, end: 10, header: "-"},
		{name: "ListUsers", start: 11, end: 15, header: "-"},
	})
	if strings.Contains(cs[0].Text, "Shows one user") {
		t.Errorf("import chunk holds the KDoc:\n%s", dump(cs))
	}
}

func TestPythonErrorInsideBrackets(t *testing.T) { // kind of case 08 (tree-sitter-python#256)
	src := `import os


class Checks:
    def first(self):
        return os.sep

    def odd(self):
        def inner():
            (obj.
        attr)
            return 1
        return inner

    def last(self):
        return 2


def tail(x):
    return x + 1
`
	_, cs := chunkString(t, "checks.py", src, Options{})
	found := false
	for _, c := range cs {
		if strings.Contains(c.Text, "def tail(x):") {
			found = true
		}
	}
	if !found {
		t.Fatalf("def tail lost\n%s", dump(cs))
	}
	check(t, cs, []want{{name: "first", header: "class Checks:"}})
	degraded := false
	for _, c := range cs {
		degraded = degraded || c.ParseError
	}
	if !degraded {
		t.Errorf("no chunk flagged ParseError\n%s", dump(cs))
	}
}

func TestPythonLeadingComments(t *testing.T) { // kind of case 09
	src := `import csv


# NOTE: rows are dicts.
# Keep the order stable.
def write_row(row):
    return csv.writer(row)


#: rows per page
PAGE = 20


# Reads a header.
class Header:
    # once per file
    def read(self, line):
        return line.split(",")

    # skips blanks
    def blank(self, line):
        return not line
`
	_, cs := chunkString(t, "rows.py", src, Options{})
	check(t, cs, []want{
		{name: "write_row", start: 4, end: 9, header: "-"},
		{name: "Header", start: 14, end: 15, header: "-"},
		{name: "read", start: 16, end: 19, header: "class Header:"},
		{name: "blank", start: 20, end: 22, header: "class Header:"},
	})
	for _, c := range cs {
		if strings.HasSuffix(strings.TrimSpace(c.Text), "Keep the order stable.") {
			t.Errorf("a chunk ends with the comment of the next definition\n%s", dump(cs))
		}
		if strings.Contains(c.Text, "#: rows per page") && !strings.Contains(c.Text, "PAGE = 20") {
			t.Errorf("comment and constant split\n%s", dump(cs))
		}
	}
}

func TestPythonStackedDecorators(t *testing.T) { // kind of case 10
	src := `import functools

table = {}


def route(path, *, method="GET"):
    def wrap(fn):
        table[path] = (fn, method)
        return fn
    return wrap


@route(
    "/users",
    method="POST",
)
# cached for the process
@functools.cache
def create_user(name="x"):
    """Create a user."""
    return name


class Api:
    @staticmethod
    @route("/ping")
    def ping():
        return "pong"

    @property
    def size(self):
        return len(table)
`
	_, cs := chunkString(t, "api.py", src, Options{})
	check(t, cs, []want{
		{name: "route", start: 6, end: 12, header: "-"},
		{name: "create_user", start: 13, end: 23, header: "-"},
		{name: "ping", start: 25, end: 29, header: "class Api:"},
		{name: "size", start: 30, end: 32, header: "class Api:"},
	})
	if c := byName(cs, "create_user"); c != nil {
		_ = c
	}
}

func TestOversizedLeaf(t *testing.T) { // kind of case 11
	words := strings.Repeat("alpha beta gamma delta ", 400) // ~7.6 KB on one line
	var rows strings.Builder
	for i := 0; i < 150; i++ {
		fmt.Fprintf(&rows, "row %03d: %s\n", i, strings.Repeat("x", 60))
	}
	src := "\"\"\"Tables.\"\"\"\n\nWORDS = \"" + words + "\"\n\n\ndef is_word(w):\n    return w in WORDS\n\n\nHELP = \"\"\"\n" + rows.String() + "\"\"\"\n\n\ndef usage():\n    return HELP\n"
	f, cs := chunkString(t, "tables.py", src, Options{MaxChars: 800})
	check(t, cs, []want{{name: "is_word", header: "-"}, {name: "usage", header: "-"}})
	all := ""
	for _, c := range cs {
		all += c.Text
	}
	for i := 0; i < 150; i++ {
		if !strings.Contains(all, fmt.Sprintf("row %03d:", i)) {
			t.Fatalf("row %d lost", i)
		}
	}
	lineWins := 0
	for _, c := range cs {
		if c.StartLine == 3 && c.EndLine <= 5 {
			lineWins++
		}
	}
	if lineWins < 5 {
		t.Errorf("the long line gave %d windows, want several\n%s", lineWins, dump(cs))
	}
	_ = f
}

func TestCRLFAndBOM(t *testing.T) { // kind of case 14
	lf := "\"\"\"Loader.\"\"\"\nimport os\n\n\ndef load(path):\n    with open(path) as fh:\n        return fh.read()\n\n\nclass Conf:\n    def __init__(self, d):\n        self.d = d\n\n    def get(self, k):\n        return self.d.get(k)\n"
	crlf := "\xEF\xBB\xBF" + strings.ReplaceAll(lf, "\n", "\r\n")
	_, a := chunkString(t, "conf.py", lf, Options{})
	_, b := chunkString(t, "conf.py", crlf, Options{})
	if len(a) != len(b) {
		t.Fatalf("LF gave %d chunks, CRLF+BOM %d", len(a), len(b))
	}
	for i := range a {
		if a[i].Text != b[i].Text || a[i].StartLine != b[i].StartLine || a[i].StartByte != b[i].StartByte {
			t.Errorf("chunk %d differs between LF and CRLF+BOM", i)
		}
		for _, h := range b[i].Header {
			if strings.ContainsAny(h, "\r\uFEFF") {
				t.Errorf("header %q has CR or BOM", h)
			}
		}
	}
	check(t, b, []want{{name: "load", start: 5, end: 9}, {name: "get", start: 11, end: 15, header: "class Conf:"}}) // __init__ + get: small, merged
}

func TestLatin1Cookie(t *testing.T) { // kind of case 16
	src := "# -*- coding: latin-1 -*-\n\n\ndef caf\xe9(x):\n    return x\n\n\nclass R\xe9sum\xe9:\n    def t(self):\n        return 'na\xefve'\n"
	f, cs := chunkString(t, "old.py", src, Options{})
	if f.Encoding != "iso-8859-1" || f.Lossy {
		t.Errorf("encoding %q lossy=%v", f.Encoding, f.Lossy)
	}
	check(t, cs, []want{{name: "café", start: 1, end: 10}, {name: "Résumé", start: 1, end: 10}}) // small: merged
	// Without a cookie: decoded lossily as Windows-1252, flagged, never dropped.
	g, err := Decode("old.kt", []byte("fun caf\xe9() = 1\n"), 0)
	if err != nil || !g.Lossy || !strings.Contains(string(g.Text), "café") {
		t.Errorf("lossy decode: %v %v %q", err, g.Lossy, g.Text)
	}
}

func TestLongFunctionSplitAtStatements(t *testing.T) { // kind of case 20
	var sb strings.Builder
	sb.WriteString("\"\"\"Long.\"\"\"\n\n\ndef report(rows, opts):\n    \"\"\"Build it.\"\"\"\n    out = []\n")
	for i := 0; i < 250; i++ {
		fmt.Fprintf(&sb, "    total_%d = sum(r.get(\"m_%d\", 0) for r in rows)\n", i, i)
	}
	sb.WriteString("    return out\n\n\ndef helper(x):\n    return x\n")
	_, cs := chunkString(t, "long.py", sb.String(), Options{MaxChars: 800})
	parts := 0
	for _, c := range cs {
		if len(c.Header) == 1 && c.Header[0] == "def report(rows, opts):" {
			parts++
			if c.Fallback {
				t.Errorf("part %d is a fallback window; want statement boundaries", c.Ordinal)
			}
			if !strings.HasSuffix(c.Text, "\n") {
				t.Errorf("part %d ends mid-line", c.Ordinal)
			}
		}
	}
	if parts < 5 {
		t.Errorf("report split into %d parts\n%s", parts, dump(cs))
	}
	check(t, cs, []want{{name: "helper", header: "-"}})
}

// TestSharedCases runs the invariants on ../shared/cases/chunker when present.
func TestSharedCases(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "cases", "chunker")
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Skipf("no shared cases: %v", err)
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		for _, in := range []string{"input.kt", "input.py"} {
			raw, err := os.ReadFile(filepath.Join(dir, e.Name(), in))
			if err != nil {
				continue
			}
			t.Run(e.Name(), func(t *testing.T) {
				for _, opts := range []Options{{}, {MaxChars: 300}, {MaxChars: 3000}} {
					f, err := Decode(in, raw, 0)
					if err != nil {
						t.Fatal(err)
					}
					for _, ch := range []Chunker{NewStructural(opts), NewFixed(opts)} {
						cs, err := ch.Chunk(f)
						if err != nil {
							t.Fatal(err)
						}
						if err := Validate(f, cs, opts.withDefaults(false).MaxChars); err != nil {
							t.Errorf("%T %+v: %v", ch, opts, err)
						}
					}
				}
			})
		}
	}
}

// TestParserStaysUsable parses many files with several chunkers at once: none may
// fall back to windows. It guards against smacker's ParseCtx cancel-flag race (a
// cancelled context's watcher goroutine set the parser's cancel flag after the parse
// ended, and every later parse on that parser failed), which made whole files fall
// back at random in about 1 of 12 indexing runs of testdata/sample. The race depends on
// scheduling and this test did not reproduce it with the old code; the fix (no
// cancellable context, tree-sitter's own time limit) removes the goroutine entirely.
func TestParserStaysUsable(t *testing.T) {
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := 0; w < 4; w++ { // several chunkers at once, as predict's workers run
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			s := NewStructural(Options{})
			defer s.Close()
			for i := 0; i < 400; i++ {
				src := fmt.Sprintf("def f%d(x):\n    return x + %d\n\n\ndef g%d():\n    pass\n", i, i, i)
				f, _ := Decode(fmt.Sprintf("m%d.py", i), []byte(src), 0)
				cs, _ := s.Chunk(f)
				for _, c := range cs {
					if c.Fallback || c.Kind == KindWindow {
						errs <- fmt.Errorf("worker %d: file %d fell back to windows: parser unusable", w, i)
						return
					}
				}
				runtime.Gosched()
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

package grammars

import (
	"fmt"
	"math/rand"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/repoctx/repoctx/internal/racetest"
	sitter "github.com/smacker/go-tree-sitter"
)

func TestRegistry(t *testing.T) {
	for path, want := range map[string]string{"a/b.py": "python", "x.PYI": "python", "M.kt": "kotlin", "build.gradle.kts": "kotlin", "A.java": "java", "x.unknownext": "", "noext": ""} {
		got := ""
		if s := ForPath(path); s != nil {
			got = s.Name
		}
		if got != want {
			t.Errorf("ForPath(%q) = %q, want %q", path, got, want)
		}
	}
	if err := Register(&Spec{Name: "python", Extensions: []string{".zz"}, Language: Python.Language}); err == nil {
		t.Error("duplicate name accepted")
	}
	if err := Register(&Spec{Name: "other", Extensions: []string{".py"}, Language: Python.Language}); err == nil {
		t.Error("duplicate extension accepted")
	}
	if err := Register(&Spec{Name: "bare"}); err == nil {
		t.Error("spec without language accepted")
	}
	if !Kotlin.IsKeyword("fun") || Kotlin.IsKeyword("println") || !Python.IsKeyword("def") {
		t.Error("IsKeyword")
	}
}

// tidyRegexp is TidySignature's definition.
func tidyRegexp(s string) string {
	s = strings.TrimSpace(regexp.MustCompile(`\s+`).ReplaceAllString(s, " "))
	s = regexp.MustCompile(`([(\[<]) `).ReplaceAllString(s, "$1")
	s = regexp.MustCompile(` ?,? ?([)\]>])`).ReplaceAllString(s, "$1")
	return strings.TrimSpace(s)
}

// TestTidySignature: the byte scanner gives what the regular expressions give.
func TestTidySignature(t *testing.T) {
	racetest.Skip(t, "compares 30000 random signatures with the regexp reference")
	cases := []string{
		"", " ", "f(\n  a,\n)", "class Foo(val a: Int) : Bar()", "def load(path):",
		"f( a , b , )", "f(a,,)", "f(a, ,)", "f(a , , )", "x ,)", "( ( x ) )", "< a , >",
		"f(\va, )", "f(\u00a0a\u00a0)", "\u00a0 f() \u2003", ",)", " ,)", ", )", " , )", "  )",
		"a\t\t,\n)", "[ ]", "()", "( )", "(,)", "( ,)", "(, )", "( , )", "a,,, , ,)",
	}
	rnd := rand.New(rand.NewSource(2))
	atoms := []string{" ", "  ", ",", "(", ")", "[", "]", "<", ">", "a", "\n", "\t", "\v", "\r", "\f", "\u00a0", "\u2003", "é", ":", "\x85", "\xc2"}
	for i := 0; i < 30000; i++ {
		var sb strings.Builder
		for n := rnd.Intn(12); n >= 0; n-- {
			sb.WriteString(atoms[rnd.Intn(len(atoms))])
		}
		cases = append(cases, sb.String())
	}
	for _, c := range cases {
		if got, want := TidySignature(c), tidyRegexp(c); got != want {
			t.Fatalf("TidySignature(%q) = %q, want %q", c, got, want)
		}
	}
}

// TestTypeOf: the symbol-table type name is Type's for every node of some Kotlin
// and Python, syntax errors included.
func TestTypeOf(t *testing.T) {
	srcs := map[*Spec]string{
		Kotlin: "package a.b\nimport x.y as z\n/** k */\n@A(\"x\") class K<T>(val id: Long) : B(), C {\n" +
			"  companion object { const val X = 1 }\n  fun interface F { fun f() }\n  fun g(a: Int = 2 / 1) = a // c\n" +
			"  val (p, q) = 1 to 2\n  init { when (x) { is Int -> 1 else -> 2 } }\n}\nclass Broken( { fun }\n",
		Python: "import os\nfrom . import x as y\n@d(1)\nclass A(B):\n    '''doc'''\n    def f(self, *a, **k) -> int:\n" +
			"        return [i async for i in a if i]  # c\nlambda: (yield)\ndef broken(:\n    x = \n",
	}
	for spec, src := range srcs {
		ps := NewParsers(0)
		tree, _, err := ps.Parse(spec, []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		var walk func(node *sitter.Node)
		walk = func(node *sitter.Node) {
			n++
			if got, want := spec.TypeOf(node), node.Type(); got != want {
				t.Errorf("%s: TypeOf = %q, Type = %q", spec.Name, got, want)
			}
			for _, c := range Children(node) {
				walk(c)
			}
		}
		walk(tree.RootNode())
		if !tree.RootNode().HasError() {
			t.Errorf("%s: sample has no syntax error", spec.Name)
		}
		tree.Close()
		ps.Close()
		if n < 50 {
			t.Errorf("%s: only %d nodes", spec.Name, n)
		}
	}
}

// TestRegexpsCompile compiles every expression of the package's specs and rules
// (they compile on first use, not at start: a bad one would otherwise panic in the
// middle of a run) and checks that each spec's expressions are among them.
func TestRegexpsCompile(t *testing.T) {
	allMu.Lock()
	all := append([]*Regexp(nil), allRegexps...)
	allMu.Unlock()
	if len(all) < 50 {
		t.Fatalf("only %d expressions registered", len(all))
	}
	known := map[*Regexp]bool{}
	for _, r := range all {
		func() {
			defer func() {
				if e := recover(); e != nil {
					t.Errorf("%q does not compile: %v", r, e)
				}
			}()
			if r.Regexp() == nil || r.Regexp().String() != r.String() {
				t.Errorf("%q compiled to %v", r, r.Regexp())
			}
		}()
		known[r] = true
	}
	for _, name := range Names() {
		s := Lookup(name)
		rs := []*Regexp{s.NotDefLine, s.LeadingLine, s.CommentLine, s.SkipLine}
		for _, d := range append(append([]DefLine(nil), s.DefLines...), s.SwallowLines...) {
			rs = append(rs, d.Re)
		}
		for _, r := range rs {
			if r != nil && !known[r] {
				t.Errorf("%s: %q was not made by LazyRegexp", name, r)
			}
		}
	}
}

// TestLazyRegexpMatchesRegexp: the wrapper's methods answer as regexp's do.
func TestLazyRegexpMatchesRegexp(t *testing.T) {
	const expr = `^[ \t]*fun\s+([A-Za-z_]\w*)`
	lazy, re := LazyRegexp(expr), regexp.MustCompile(expr)
	for _, s := range []string{"fun main() {", "  fun x(", "val fun", "", "\tfun  _a1"} {
		if lazy.MatchString(s) != re.MatchString(s) || lazy.Match([]byte(s)) != re.Match([]byte(s)) ||
			!slices.Equal(lazy.FindStringSubmatch(s), re.FindStringSubmatch(s)) ||
			fmt.Sprint(lazy.FindSubmatch([]byte(s))) != fmt.Sprint(re.FindSubmatch([]byte(s))) {
			t.Errorf("%q: the lazy expression answers otherwise", s)
		}
	}
}

// TestLazyRegexpConcurrentFirstUse: many goroutines use a fresh expression, and every
// spec's, at once (run under -race).
func TestLazyRegexpConcurrentFirstUse(t *testing.T) {
	r := &Regexp{expr: `^[ \t]*(fun|val)\s+(\w+)`} // not registered: a fresh one
	var wg sync.WaitGroup
	allMu.Lock()
	all := append([]*Regexp(nil), allRegexps...)
	allMu.Unlock()
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !r.MatchString("  fun x") || r.FindStringSubmatch("val yy")[2] != "yy" || r.Match([]byte("x")) {
				t.Error("wrong match")
			}
			for i := g; i < len(all); i += 3 {
				all[i].MatchString("fun f() {")
				_ = all[i].FindSubmatch([]byte("class A {"))
			}
		}()
	}
	wg.Wait()
}

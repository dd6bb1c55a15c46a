package grammars

import (
	"bytes"
	"math/rand"
	"regexp"
	"slices"
	"strings"
	"testing"

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

// TestKotlinRewrite: the rewrite keeps the length (byte offsets stay valid) and
// touches only the two mis-parsed constructs.
func TestKotlinRewrite(t *testing.T) {
	tests := []struct{ in, want string }{
		{"fun interface Clock {\n", "    interface Clock {\n"},
		{"class Pool<T>\nprivate constructor(\n", "class Pool<T> private constructor(\n"},
		{"class A\n  internal constructor(val a: Int)\n", "class A   internal constructor(val a: Int)\n"},
		{"class A(val a: Int)\nconstructor() : this(1)\n", "class A(val a: Int)\nconstructor() : this(1)\n"}, // has a parameter list: untouched
		{"val funInterface = 1\n", "val funInterface = 1\n"},
	}
	for _, tt := range tests {
		got := string(kotlinRewrite([]byte(tt.in)))
		if got != tt.want || len(got) != len(tt.in) {
			t.Errorf("kotlinRewrite(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	long := strings.Repeat("class X\nconstructor()\n", 100)
	if len(kotlinRewrite([]byte(long))) != len(long) {
		t.Error("length changed")
	}
}

// TestFunInterfaces: the byte scanner finds exactly the regexp's matches.
func TestFunInterfaces(t *testing.T) {
	cases := []string{
		"", "fun interface I", "fun  \n\tinterface I {}", "funinterface", "fun interfaces",
		"xfun interface", "_fun interface", "é fun interface", "fun interface_", "fun interface1",
		"fun\vinterface", "fun \finterface", "fun\r\ninterface", "fun fun interface fun interface",
		"interface", "fun interface", " fun interface)", "fun interface fun\ninterface\n",
		"val f = fun(x) interface", "fun\u00a0interface", "fun\ninterface\x00", "fun interfaceé",
	}
	rnd := rand.New(rand.NewSource(1))
	atoms := []string{"fun", "interface", " ", "\n", "\t", "\v", "x", "_", "1", "(", "é", "\f"}
	for i := 0; i < 20000; i++ {
		var sb strings.Builder
		for n := rnd.Intn(8); n >= 0; n-- {
			sb.WriteString(atoms[rnd.Intn(len(atoms))])
		}
		cases = append(cases, sb.String())
	}
	for _, c := range cases {
		var want []int
		for _, m := range ktFunInterface.FindAllIndex([]byte(c), -1) {
			want = append(want, m[0])
		}
		if got := funInterfaces([]byte(c)); !slices.Equal(got, want) {
			t.Fatalf("funInterfaces(%q) = %v, want %v", c, got, want)
		}
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

// kotlinRewriteLines is kotlinLineRewrite written line by line with the regular
// expressions alone; the reference for TestKotlinRewriteSame.
func kotlinRewriteLines(src []byte) []byte {
	out := append([]byte(nil), src...)
	for _, m := range ktFunInterface.FindAllIndex(out, -1) {
		copy(out[m[0]:m[0]+3], "   ")
	}
	var starts []int // line starts in src
	for i := 0; i <= len(src); i++ {
		if i == 0 || src[i-1] == '\n' {
			starts = append(starts, i)
		}
	}
	line := func(k int) []byte { // line k of out, without its break
		end := len(out)
		if k+1 < len(starts) {
			end = starts[k+1] - 1
		}
		return out[starts[k]:end]
	}
	for i := 1; i < len(starts); i++ {
		if !ktCtorLine.Match(line(i)) {
			continue
		}
		k := i - 1
		for k > 0 && i-k < 8 && ktAnnotationLine.Match(line(k)) {
			k--
		}
		if ktClassLine.Match(line(k)) || ktTypeParamsEnd.Match(line(k)) {
			for j := k + 1; j <= i; j++ {
				out[starts[j]-1] = ' '
			}
		}
	}
	return out
}

// TestKotlinRewriteSame: kotlinLineRewrite gives what the line-by-line version gave.
func TestKotlinRewriteSame(t *testing.T) {
	rnd := rand.New(rand.NewSource(3))
	atoms := []string{"class A", "class Pool<T>", "\n", " ", "private ", "constructor", "constructor()", "(", "{",
		"=", "@Inject ", "@A(x) ", "fun interface I", "fun ", "interface", "x", "\t", "é", "internal ", "@Inject\n", ">\n", "actual "}
	for i := 0; i < 30000; i++ {
		var sb strings.Builder
		for n := rnd.Intn(10); n >= 0; n-- {
			sb.WriteString(atoms[rnd.Intn(len(atoms))])
		}
		in := []byte(sb.String())
		if got, want := kotlinLineRewrite(in), kotlinRewriteLines(in); !bytes.Equal(got, want) {
			t.Fatalf("kotlinLineRewrite(%q) = %q, want %q", in, got, want)
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

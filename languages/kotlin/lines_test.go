package kotlin

import (
	"bytes"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/repoctx/repoctx/grammars"
)

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
		got := string(Rewrite([]byte(tt.in)))
		if got != tt.want || len(got) != len(tt.in) {
			t.Errorf("Rewrite(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	long := strings.Repeat("class X\nconstructor()\n", 100)
	if len(Rewrite([]byte(long))) != len(long) {
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
		for _, m := range ktFunInterface.Regexp().FindAllIndex([]byte(c), -1) {
			want = append(want, m[0])
		}
		if got := funInterfaces([]byte(c)); !slices.Equal(got, want) {
			t.Fatalf("funInterfaces(%q) = %v, want %v", c, got, want)
		}
	}
}

// kotlinRewriteLines is kotlinLineRewrite written line by line with the regular
// expressions alone; the reference for TestKotlinRewriteSame.
func kotlinRewriteLines(src []byte) []byte {
	out := append([]byte(nil), src...)
	for _, m := range ktFunInterface.Regexp().FindAllIndex(out, -1) {
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

// TestLineRegexpsCompile: the line rules' expressions compile (they do on first use).
func TestLineRegexpsCompile(t *testing.T) {
	for _, r := range []*grammars.Regexp{ktFunInterface, ktClassLine, ktCtorLine, ktAnnotationLine, ktTypeParamsEnd} {
		if r.Regexp() == nil {
			t.Errorf("%q", r)
		}
	}
}

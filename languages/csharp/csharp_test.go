package csharp

import (
	"testing"

	"github.com/repoctx/repoctx/grammars"
)

// TestCSharpRewrite: C# 12-14 constructs the bundled grammar lacks become ones it
// parses, same length; types, attributes and literals are kept. Each input then
// parses without errors.
func TestCSharpRewrite(t *testing.T) {
	cond := "#if !NETCOREAPP\nusing System.Runtime.Serialization;\n#endif\n\nnamespace P;\n\n"
	for _, c := range []struct{ in, want string }{
		// Empty collection expressions.
		{"class A\n{\n    private readonly List<int> _a = [];\n    int[] B(int?[] x) => [];\n    void C() { F([], x); _a ??= []; var y = c ? [] : _a; }\n}\n",
			"class A\n{\n    private readonly List<int> _a = __;\n    int[] B(int?[] x) => __;\n    void C() { F(__, x); _a ??= __; var y = c ? __ : _a; }\n}\n"},
		{"class A { string s = \"[]\"; /* = [] */ object[] o = new object[] { }; List<int>[] l; }\n",
			"class A { string s = \"[]\"; /* = [] */ object[] o = new object[] { }; List<int>[] l; }\n"},
		{"class A { int[] M() { return []; } }\n", "class A { int[] M() { return __; } }\n"},
		// File-based program directives.
		{"#!/usr/bin/env dotnet\n#:sdk Cake.Sdk\n#:package X@1.0\nvar x = 1;\n", "///usr/bin/env dotnet\n//sdk Cake.Sdk\n//package X@1.0\nvar x = 1;\n"},
		// A conditional holding only an attribute: its directives go.
		{cond + "#if !NETCOREAPP\n[Serializable]\n#endif\npublic class B : E\n{\n}\n",
			cond + "               \n[Serializable]\n      \npublic class B : E\n{\n}\n"},
		// A conditional in the middle of an expression: the first branch stays.
		{"class A\n{\n    static string M() =>\n#if NET\n        a[..n];\n#else\n        a.Substring(0, n);\n#endif\n}\n",
			"class A\n{\n    static string M() =>\n       \n        a[..n];\n     \n                          \n      \n}\n"},
		// Conditionals between declarations and statements are kept.
		{"class A\n{\n#if NET\n    void M() { }\n#else\n    void N() { }\n#endif\n}\n", "class A\n{\n#if NET\n    void M() { }\n#else\n    void N() { }\n#endif\n}\n"},
		// A directive-like line inside a verbatim string is not a directive.
		{"class A { string s = @\"\n#:sdk x\n[]\"; }\n", "class A { string s = @\"\n#:sdk x\n[]\"; }\n"},
	} {
		got := string(Rewrite([]byte(c.in)))
		if got != c.want || len(got) != len(c.in) {
			t.Errorf("Rewrite(%q) =\n%q, want\n%q", c.in, got, c.want)
		}
		ps := grammars.NewParsers(0)
		tree, _, err := ps.Parse(grammars.CSharp, []byte(c.in))
		if err != nil {
			t.Fatal(err)
		}
		if tree.RootNode().HasError() {
			t.Errorf("%q: parse errors after the rewrite: %s", c.in, tree.RootNode())
		}
		tree.Close()
		ps.Close()
	}
}

// FuzzCSharpRewrite: the C# rewrite keeps the length and every line break where it
// was, and never panics.
func FuzzCSharpRewrite(f *testing.F) {
	for _, s := range []string{
		"class A { List<int> a = []; int[] b; }\n",
		"#:sdk X\n#if A\n[Obsolete]\n#elif B\n[X]\n#else\nvoid f();\n#endif\n",
		"x = $@\"{a}\"\"[]\" + \"\"\"\n[]\n\"\"\" + '\\'' + @\"\n#if\";\n#endif\n",
		"return\n#if X\n a;\n#else\n b;\n#endif\n/* [] */ // []",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) { checkSameShape(t, src, Rewrite([]byte(src))) })
}

// checkSameShape fails t unless out, a rewrite of src, has src's length and its
// line breaks ("\n" and "\r") at the same offsets.
func checkSameShape(t *testing.T, src string, out []byte) {
	t.Helper()
	if len(out) != len(src) {
		t.Fatalf("length %d, want %d", len(out), len(src))
	}
	for i := range out {
		if (out[i] == '\n') != (src[i] == '\n') || (out[i] == '\r') != (src[i] == '\r') {
			t.Fatalf("line break moved at %d: %q -> %q", i, src, out)
		}
	}
}

// TestCSharpExtensionBlock: a C# 14 extension block becomes a nested class named
// extension for the parser, same length; one in a comment or string, or with too
// little indentation, is kept.
func TestCSharpExtensionBlock(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"static class E\n{\n        extension(string s)\n        {\n            public int Twice() => s.Length * 2;\n        }\n}\n",
			"static class E\n{\n  class extension          \n        {\n            public int Twice() => s.Length * 2;\n        }\n}\n"},
		{"        extension<T>(List<T> xs) {\n", "  class extension                {\n"},
		{"    extension(string s)\n    {\n", ""},
		{"        // extension(string s)\n        {\n", ""},
		{"        var e = extension(s);\n", ""},
	} {
		want := c.want
		if want == "" {
			want = c.in
		}
		if got := string(Rewrite([]byte(c.in))); got != want {
			t.Errorf("Rewrite(%q) =\n%q, want\n%q", c.in, got, want)
		}
	}
}

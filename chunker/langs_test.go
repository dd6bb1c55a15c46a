package chunker

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/repoctx/repoctx/grammars"
)

// langWant is a chunk a language fixture must give: its kind, name, lines and the
// last entry of its header ("-": top-level).
type langWant struct {
	kind       Kind
	name       string
	start, end int
	header     string
}

// langFixtures are the files of testdata/langs, one or more per language of the
// registry besides Kotlin and Python (which have their own cases), with the named
// class and method chunks and headers each must give at the default cap.
var langFixtures = []struct {
	file, lang string
	want       []langWant
}{
	{"Sample.java", "java", []langWant{
		{KindClass, "Foo", 7, 10, "-"},
		{KindFunction, "Foo", 11, 15, "public class Foo<T> extends Bar implements Baz"}, // comment and annotation attached
		{KindFunction, "map", 17, 19, "public class Foo<T> extends Bar implements Baz"},
		{KindClass, "Color", 21, 21, "public class Foo<T> extends Bar implements Baz"},
		{KindClass, "Point", 22, 23, "public class Foo<T> extends Bar implements Baz"},
		{KindClass, "Ann", 24, 24, "-"},
	}},
	{"sample.ts", "typescript", []langWant{
		{KindClass, "Foo", 7, 10, "-"}, // doc comment and decorator attached
		{KindFunction, "constructor", 11, 11, "class Foo<T> extends Bar implements Baz"},
		{KindFunction, "y", 12, 13, "class Foo<T> extends Bar implements Baz"}, // member decorator in the span
		{KindFunction, "load", 14, 16, "class Foo<T> extends Bar implements Baz"},
		{KindClass, "I", 19, 19, "-"},
		{KindFunction, "top", 22, 24, "-"},
		{KindProperty, "arrow", 25, 25, "-"},
		{KindClass, "NS", 27, 27, "-"},
		{KindClass, "Abs", 29, 29, "-"},
	}},
	{"widget.tsx", "tsx", []langWant{
		{KindFunction, "Widget", 4, 9, "-"},
		{KindClass, "Panel", 10, 16, "-"},
	}},
	{"sample.jsx", "javascript", []langWant{
		{KindClass, "A", 7, 9, "-"},
		{KindFunction, "v", 11, 11, "class A extends B"},
		{KindFunction, "gen", 12, 13, "class A extends B"},
		{KindFunction, "g", 14, 14, "-"},
		{KindProperty, "Comp", 18, 20, "-"},
	}},
	{"sample.go", "go", []langWant{
		{KindClass, "Foo", 11, 15, "-"},
		{KindFunction, "New", 21, 25, "-"},
		{KindFunction, "Get", 26, 27, "-"},
	}},
	{"sample.rs", "rust", []langWant{
		{KindClass, "Foo", 6, 11, "-"}, // doc comment and #[derive] attached
		{KindFunction, "new", 13, 16, "impl<T> Foo<T> where T: Clone"},
		{KindFunction, "get", 17, 19, "impl<T> Foo<T> where T: Clone"},
		{KindClass, "Tr", 20, 20, "-"},
		{KindClass, "m", 26, 28, "-"},
	}},
	{"sample.c", "c", []langWant{
		{KindFunction, "add", 5, 9, "-"},
		{KindClass, "point", 10, 13, "-"},
		{KindProperty, "thing_t", 14, 17, "-"},
		{KindFunction, "guarded", 21, 23, "-"}, // inside #ifdef
		{KindFunction, "ptrfn", 25, 28, "-"},
	}},
	{"guard.h", "cpp", []langWant{
		{KindFunction, "buffer_len", 18, 21, "-"}, // inside the include guard and extern "C"
	}},
	{"sample.cpp", "cpp", []langWant{
		{KindClass, "Box", 9, 12, "-"}, // template, in a namespace
		{KindFunction, "Box", 13, 13, "class Box : public Base"},
		{KindFunction, "get", 15, 15, "class Box : public Base"},
		{KindFunction, "get2", 21, 25, "-"},
		{KindFunction, "main", 32, 34, "-"},
	}},
	{"Sample.cs", "csharp", []langWant{
		{KindClass, "Foo", 8, 12, "-"},
		{KindFunction, "Foo", 13, 13, "public class Foo<T> : Bar, IBaz where T : class"},
		{KindProperty, "X", 14, 14, "public class Foo<T> : Bar, IBaz where T : class"},
		{KindFunction, "LoadAsync", 15, 16, "public class Foo<T> : Bar, IBaz where T : class"},
		{KindClass, "I", 19, 19, "-"},
		{KindClass, "R", 22, 22, "-"},
	}},
	{"sample.rb", "ruby", []langWant{
		{KindClass, "Acme", 4, 5, "-"},
		{KindClass, "Foo", 6, 9, "module Acme"},
		{KindFunction, "initialize", 10, 13, "class Foo <Bar"},
		{KindFunction, "make", 14, 16, "class Foo <Bar"},
		{KindFunction, "helper", 19, 23, "class Foo <Bar"},
		{KindClass, "Baz", 24, 30, "module Acme"},
		{KindFunction, "top", 31, 33, "-"},
	}},
	{"sample.php", "php", []langWant{
		{KindClass, "User", 10, 17, "-"},
		{KindFunction, "__construct", 18, 18, "final class User extends Model implements HasName"},
		{KindFunction, "make", 19, 24, "final class User extends Model implements HasName"},
		{KindClass, "HasName", 25, 25, "-"},
		{KindFunction, "helper", 28, 28, "-"},
	}},
	{"sample.swift", "swift", []langWant{
		{KindClass, "Foo", 4, 7, "-"},
		{KindFunction, "init", 8, 8, "public final class Foo: Bar, Baz"},
		{KindFunction, "load", 9, 13, "public final class Foo: Bar, Baz"},
		{KindClass, "P", 18, 18, "-"},
		{KindFunction, "top", 21, 21, "-"},
	}},
	{"sample.scala", "scala", []langWant{
		{KindClass, "Foo", 7, 10, "-"},
		{KindFunction, "load", 12, 16, "final case class Foo[T](a: Int) extends Bar with Baz"},
		{KindClass, "Tr", 18, 18, "-"},
		{KindFunction, "top", 20, 20, "-"},
	}},
}

// TestLanguages chunks each fixture of testdata/langs: the invariants hold, no chunk
// has a parse error or is a fallback, and the wanted class and method chunks are
// there with their headers. Every registered language has a fixture.
func TestLanguages(t *testing.T) {
	covered := map[string]bool{"kotlin": true, "python": true}
	for _, fx := range langFixtures {
		covered[fx.lang] = true
		t.Run(fx.file, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join("testdata", "langs", fx.file))
			if err != nil {
				t.Fatal(err)
			}
			f, cs := chunkString(t, fx.file, string(src), Options{})
			if f.Lang != fx.lang {
				t.Fatalf("language %q, want %q", f.Lang, fx.lang)
			}
			for _, c := range cs {
				if c.ParseError || c.Fallback {
					t.Errorf("chunk %d (lines %d-%d): parse error %v, fallback %v\n%s", c.Ordinal, c.StartLine, c.EndLine, c.ParseError, c.Fallback, dump(cs))
				}
			}
			for _, w := range fx.want {
				// A definition's own chunk, or a chunk of small sibling definitions
				// merged (its Names list theirs) that spans the definition's lines.
				var c *Chunk
				merged := false
				for i := range cs {
					if cs[i].Name == w.name && cs[i].StartLine == w.start {
						c, merged = &cs[i], len(cs[i].Names) > 1
					}
				}
				for i := range cs {
					if c == nil && slices.Contains(cs[i].Names, w.name) &&
						cs[i].StartLine <= w.start && cs[i].EndLine >= w.end {
						c, merged = &cs[i], true
					}
				}
				if c == nil {
					t.Errorf("no chunk %s %q at line %d\n%s", w.kind, w.name, w.start, dump(cs))
					continue
				}
				if !merged && (c.Kind != w.kind || c.EndLine != w.end) {
					t.Errorf("%q: %s lines %d-%d, want %s lines %d-%d\n%s", w.name, c.Kind, c.StartLine, c.EndLine, w.kind, w.start, w.end, dump(cs))
				}
				check(t, []Chunk{*c}, []want{{name: w.name, header: w.header}})
			}
		})
	}
	for _, name := range grammars.Names() {
		if !covered[name] {
			t.Errorf("language %s has no fixture in testdata/langs", name)
		}
	}
}

package chunker

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/internal/racetest"
)

// FuzzChunk checks that both strategies keep every invariant (Validate) and never
// panic, for every registered language (langSel picks one of grammars.Names(),
// modulo their number), at a small and the default cap. The seeds are Kotlin and
// Python snippets and each file of testdata/langs in its language.
func FuzzChunk(f *testing.F) {
	names := grammars.Names()
	index := func(lang string) uint8 { return uint8(slices.Index(names, lang)) }
	seeds := []string{
		"def f(x):\n    return x\n",
		"class A:\n    def a(self):\n        pass\n\n    def b(self):\n        pass\n",
		"@d\n# c\n@e(\n 1,\n)\ndef g():\n    '''doc'''\n",
		"fun interface I {\n  fun f()\n}\nclass C\nprivate constructor(val a: Int) {\n  fun x() = 1\n  fun y() = 2\n}\n",
		"/** k */\n@A(\"x\")\nclass K(val id: Long)\n",
		"x = '" + strings.Repeat("ab ", 500) + "'\n",
		"\xEF\xBB\xBFimport os\r\n\r\ndef f():\r\n    pass\r\n",
		"(obj.\nattr)\n  (x.\n y(\n))\ndef h(): pass\n",
		"\n\n   \n",
		"é\xff\xfe",
		brokenRepo,
		"class G {\n  fun suspend() = when (x) {\n    is A if y -> 1\n    else -> $$\"$$z\"\n  }\n  context(a: A)\n  val v get() = 1\n}\n",
		"class H : B(, {\n  fun f() {\n  }\n  class I {\n    fun g() = ((\n  }\n}\n",
		"import os\r\rdef f():\r    return 1\r\rclass C:\r    def g(self): pass\r",
		"d\x00e\x00f\x00 \x00f\x00(\x00)\x00:\x00 \x00p\x00a\x00s\x00s\x00\n\x00", // UTF-16LE, no BOM
		strings.Repeat("# a comment line of some length\n", 30) + "@dec\ndef h(x):\n    return x\n",
		"X = \"\"\"\n" + strings.Repeat("row of text\n", 80) + "\"\"\"\n",
	}
	for _, s := range seeds {
		f.Add(s, index("kotlin"), uint8(0))
		f.Add(s, index("python"), uint8(1))
	}
	for _, fx := range langFixtures {
		src, err := os.ReadFile(filepath.Join("testdata", "langs", fx.file))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(src), index(fx.lang), uint8(0))
		f.Add(string(src), index(fx.lang), uint8(2))
	}
	f.Fuzz(func(t *testing.T, src string, langSel uint8, capSel uint8) {
		if len(src) > 1<<16 {
			return
		}
		spec := grammars.Lookup(names[int(langSel)%len(names)])
		path := "f" + spec.Extensions[0]
		opts := Options{MaxChars: []int{60, 200, DefaultMaxChars}[int(capSel)%3]}
		file, err := Decode(path, []byte(src), 0)
		if err != nil {
			return // binary: skipped by design
		}
		for _, ch := range []Chunker{NewStructural(opts), NewFixed(opts)} {
			cs, err := ch.Chunk(file)
			if err != nil {
				t.Fatalf("%T: %v", ch, err)
			}
			if err := Validate(file, cs, opts.withDefaults(false).MaxChars); err != nil {
				t.Fatalf("%s %T: %v", spec.Name, ch, err)
			}
			if s, ok := ch.(*Structural); ok {
				s.Close()
			}
		}
	})
}

// realFiles returns the Kotlin or Python files of the first snapshot in a zip of
// ../shared/data (dev/{kotlin,python}-dev.zip or starter-kit/python-start.zip), or
// skips when the shared data is absent.
func realFiles(tb testing.TB, rel string) (string, []*File) {
	tb.Helper()
	outer, err := zip.OpenReader(filepath.Join("..", "..", "shared", "data", rel))
	if err != nil {
		tb.Skipf("no shared data: %v", err)
	}
	defer outer.Close()
	rc, err := outer.File[0].Open()
	if err != nil {
		tb.Fatal(err)
	}
	data, _ := io.ReadAll(rc)
	rc.Close()
	inner, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		tb.Fatal(err)
	}
	var files []*File
	for _, zf := range inner.File {
		if !strings.HasSuffix(zf.Name, ".kt") && !strings.HasSuffix(zf.Name, ".py") {
			continue
		}
		r, err := zf.Open()
		if err != nil {
			tb.Fatal(err)
		}
		raw, _ := io.ReadAll(r)
		r.Close()
		if f, err := Decode(zf.Name, raw, 0); err == nil {
			files = append(files, f)
		}
	}
	return outer.File[0].Name, files
}

var realSets = []string{"dev/kotlin-dev.zip", "dev/python-dev.zip", "starter-kit/python-start.zip"}

// TestRealSnapshots chunks every Kotlin and Python file of the first snapshot of
// each zip in ../shared/data (skipped when absent) and checks the invariants.
func TestRealSnapshots(t *testing.T) {
	racetest.Skip(t, "chunks every file of the real snapshots on one goroutine")
	if testing.Short() {
		t.Skip("short")
	}
	for _, set := range realSets {
		name, files := realFiles(t, set)
		s := NewStructural(Options{})
		chunks, errs, fallback := 0, 0, 0
		for _, f := range files {
			cs, err := s.Chunk(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := Validate(f, cs, DefaultMaxChars); err != nil {
				t.Error(err)
			}
			chunks += len(cs)
			for _, c := range cs {
				if c.Fallback {
					fallback++
				}
			}
			for _, c := range cs {
				if c.ParseError {
					errs++
					break
				}
			}
		}
		s.Close()
		t.Logf("%s: %d files, %d chunks (%d fallback), %d files with parse errors", name, len(files), chunks, fallback, errs)
	}
}

func TestMain(m *testing.M) { os.Exit(m.Run()) }

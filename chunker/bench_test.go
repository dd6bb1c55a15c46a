package chunker

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sitter "github.com/smacker/go-tree-sitter"

	"github.com/repoctx/repoctx/grammars"
)

// pathological inputs: deep nesting, a huge flat literal, deep brackets.
func pathological(scale int) map[string]string {
	return map[string]string{
		"deepcls.kt":  strings.Repeat("class A {\n", scale) + strings.Repeat("}\n", scale),
		"minified.py": "x = [" + strings.Repeat("1,", 80*scale) + "]\n",
		"parens.py":   "x = " + strings.Repeat("(", 4*scale) + "1" + strings.Repeat(")", 4*scale) + "\n",
		"parens.kt":   "val x = " + strings.Repeat("(", 4*scale) + "1" + strings.Repeat(")", 4*scale) + "\n",
		"table.js":    "const t = [" + strings.Repeat("{a: 1},", 40*scale) + "];\n",
		"deep.cpp":    strings.Repeat("#ifdef A\n", scale) + "int f() { return 1; }\n" + strings.Repeat("#endif\n", scale),
	}
}

// TestPathological: deep nesting and huge flat nodes keep the invariants, without
// stack overflow (tree walks are bounded or iterate) and in reasonable time.
func TestPathological(t *testing.T) {
	for name, src := range pathological(1000) {
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
			t.Errorf("%s: %v", name, err)
		}
		for _, c := range cs {
			if len(c.Header) > maxHeaderDepth {
				t.Fatalf("%s: header depth %d", name, len(c.Header))
			}
		}
	}
}

// BenchmarkPathological measures the worst cases at five times the test's size
// (deepcls.kt: 5,000 nested classes; minified.py: a 800 KB one-line list).
func BenchmarkPathological(b *testing.B) {
	for name, src := range pathological(5000) {
		b.Run(name, func(b *testing.B) { benchChunkSource(b, name, src) })
	}
}

// BenchmarkRealRepo compares tree-sitter parsing alone (a bare parser on the file
// text, without our Kotlin rewrite) with structural chunking (rewrite, parse and
// chunk) and fixed chunking, over the Kotlin and Python files of one real snapshot each
// (../shared/data; skipped when absent). MB/s is of source bytes per second of wall
// time; cpu-MB/s per second of the process's CPU time (user and system, GC
// included), which other load on a shared machine disturbs less.
//
// With REPOCTX_BENCH_REPOS set to a comma-separated list of folders (checkouts of
// real repositories), it measures each language found there instead: the files of
// every registered language (.git, vendor, node_modules and dot-folders left out),
// grouped by language, at most benchRepoBytes of each.
func BenchmarkRealRepo(b *testing.B) {
	if dirs := os.Getenv("REPOCTX_BENCH_REPOS"); dirs != "" {
		byLang := repoFiles(b, strings.Split(dirs, ","))
		for _, lang := range grammars.Names() {
			if fs := byLang[lang]; len(fs) > 0 {
				benchFiles(b, lang, fs)
			}
		}
		return
	}
	for _, set := range realSets[:2] {
		_, files := realFiles(b, set)
		lang := strings.SplitN(set[strings.LastIndex(set, "/")+1:], "-", 2)[0]
		benchFiles(b, lang, files)
	}
}

// benchRepoBytes caps the source bytes per language that BenchmarkRealRepo reads
// from REPOCTX_BENCH_REPOS.
const benchRepoBytes = 8 << 20

// repoFiles reads the files of registered languages under dirs, by language, in
// walk order, at most benchRepoBytes per language.
func repoFiles(b *testing.B, dirs []string) map[string][]*File {
	out := map[string][]*File{}
	size := map[string]int{}
	for _, dir := range dirs {
		err := filepath.WalkDir(strings.TrimSpace(dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if n := d.Name(); p != dir && (strings.HasPrefix(n, ".") || n == "vendor" || n == "node_modules") {
					return filepath.SkipDir
				}
				return nil
			}
			s := grammars.ForPath(p)
			if s == nil || !d.Type().IsRegular() || size[s.Name] >= benchRepoBytes {
				return nil
			}
			raw, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if f, err := Decode(p, raw, 0); err == nil {
				out[s.Name] = append(out[s.Name], f)
				size[s.Name] += len(f.Text)
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	return out
}

// benchFiles runs the parse, structural and fixed sub-benchmarks of
// BenchmarkRealRepo on files of one language.
func benchFiles(b *testing.B, lang string, files []*File) {
	var size int64
	for _, f := range files {
		size += int64(len(f.Text))
	}
	b.Run(lang+"/parse", func(b *testing.B) {
		// The baseline is tree-sitter alone on the file text: no source rewrite
		// (grammars.Spec.Rewrite) and no other work of ours, which all counts as
		// chunking cost.
		ps := map[string]*sitter.Parser{}
		defer func() {
			for _, p := range ps {
				p.Close()
			}
		}()
		for _, f := range files {
			if ps[f.Lang] == nil {
				ps[f.Lang] = sitter.NewParser()
				ps[f.Lang].SetLanguage(grammarOf(f).Language())
			}
		}
		b.SetBytes(size)
		defer reportCPU(b, size)()
		for i := 0; i < b.N; i++ {
			for _, f := range files {
				tree, err := ps[f.Lang].ParseCtx(context.Background(), nil, f.Text)
				if err != nil || tree == nil {
					b.Fatal("parse failed", err)
				}
				tree.Close()
			}
		}
	})
	b.Run(lang+"/structural", func(b *testing.B) {
		s := NewStructural(Options{})
		defer s.Close()
		b.SetBytes(size)
		defer reportCPU(b, size)()
		for i := 0; i < b.N; i++ {
			for _, f := range files {
				if _, err := s.Chunk(f); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run(lang+"/fixed", func(b *testing.B) {
		x := NewFixed(Options{})
		b.SetBytes(size)
		defer reportCPU(b, size)()
		for i := 0; i < b.N; i++ {
			for _, f := range files {
				if _, err := x.Chunk(f); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

func grammarOf(f *File) *grammars.Spec { return grammars.Lookup(f.Lang) }

// reportCPU starts measuring the process's CPU time; the function it returns reports
// bytesPerOp*b.N per CPU second as cpu-MB/s (where the platform tells CPU time).
func reportCPU(b *testing.B, bytesPerOp int64) func() {
	start, ok := cpuTime()
	return func() {
		end, _ := cpuTime()
		if ok && end > start {
			b.ReportMetric(float64(bytesPerOp)*float64(b.N)/(end-start).Seconds()/1e6, "cpu-MB/s")
		}
	}
}

// benchChunkSource measures structural chunking (parse included) of src as the file
// name, in bytes per second, whatever its size (the inputs here may exceed the default
// file size limit: table.js at BenchmarkPathological's scale is 1.4 MB).
func benchChunkSource(b *testing.B, name, src string) {
	f, err := Decode(name, []byte(src), len(src))
	if err != nil {
		b.Fatal(err)
	}
	s := NewStructural(Options{})
	defer s.Close()
	b.SetBytes(int64(len(src)))
	for i := 0; i < b.N; i++ {
		if _, err := s.Chunk(f); err != nil {
			b.Fatal(err)
		}
	}
}

package assemble

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/index"
	"github.com/repoctx/repoctx/snapshot"
	"github.com/repoctx/repoctx/store"
	"github.com/repoctx/repoctx/symbols"
)

// TestIndexedSymbolsEqualParse checks what lets a request on an unedited file skip
// the parse of its text: for every file of a repository in several languages, the
// symbol table's symbols are those a parse of the indexed text gives (deep equal),
// from the chunker's parse (first view), from the store's records (the view opened
// again) and with fixed windows (symbols extracted apart from chunking); and an
// edited text is parsed.
func TestIndexedSymbolsEqualParse(t *testing.T) {
	files := map[string]string{
		"go/a.go":       "package a\n\nimport \"strings\"\n\n// Up upper-cases.\nfunc Up(s string) string { return strings.ToUpper(s) }\n\ntype T struct{ n int }\n\nfunc (t *T) Inc() { t.n++ }\n",
		"java/A.java":   "package p;\n\nimport java.util.List;\n\npublic class A {\n  /** Size. */\n  int size(List<String> xs) { return xs.size(); }\n}\n",
		"ts/a.ts":       "import { b } from './b';\n\nexport function f(x: number): number { return b(x) + 1; }\nexport class C { m(): void {} }\n",
		"js/a.js":       "const { g } = require('./g');\nexport function h(y) { return g(y); }\n",
		"rs/a.rs":       "use std::fmt;\n\npub struct S;\n\nimpl S {\n    pub fn new() -> S { S }\n}\n",
		"c/a.c":         "#include <stdio.h>\n\nstatic int add(int a, int b) { return a + b; }\n",
		"cs/A.cs":       "using System;\n\nnamespace N {\n  public class A {\n    public int Get() { return 1; }\n  }\n}\n",
		"rb/a.rb":       "require 'set'\n\nclass A\n  def go(x)\n    x + 1\n  end\nend\n",
		"swift/a.swift": "import Foundation\n\nstruct P {\n    func area() -> Int { return 1 }\n}\n",
		"broken/b.kt":   "package x\n\nclass B {\n    fun f( {\n",
	}
	err := filepath.WalkDir("../testdata/sample", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || grammars.ForPath(p) == nil {
			return err
		}
		raw, err := os.ReadFile(p)
		files["sample/"+filepath.ToSlash(strings.TrimPrefix(p, "../testdata/sample/"))] = string(raw)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	snap := writeSnapshot(t, files)
	ex := symbols.NewExtractor(0)
	defer ex.Close()
	cache := t.TempDir()
	for _, run := range []struct {
		name     string
		strategy chunker.Strategy
	}{{"first view", ""}, {"from the store", ""}, {"fixed windows", chunker.StrategyFixed}} {
		st := store.Open(cache)
		v, closeView := viewWith(t, st, snap, run.strategy)
		langs, shortcuts := map[string]bool{}, 0
		for _, p := range snap.Paths() {
			spec := grammars.ForPath(p)
			if spec == nil {
				continue
			}
			text := v.Retriever().FileText(p)
			cut := len(text) / 2
			c := &composer{ix: v.Retriever(), syms: v.Symbols(), spec: spec,
				h: repoctx.Hole{Path: p, Prefix: text[:cut], Suffix: text[cut:]}}
			got := c.indexedSymbols(newFileTexts(c.ix))
			if got == nil {
				if v.Symbols().File(p) != nil {
					t.Errorf("%s: %s: the unedited text was not matched to its indexed symbols", run.name, p)
				}
				continue
			}
			shortcuts++
			langs[spec.Name] = true
			want, err := ex.Extract(&chunker.File{Path: p, Lang: spec.Name, Text: []byte(text)})
			if err != nil {
				t.Fatalf("%s: %s: %v", run.name, p, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: %s: indexed symbols differ from a parse of the text:\n got %+v\nwant %+v", run.name, p, got, want)
			}
			c.h.Suffix += "\n"
			if c.indexedSymbols(newFileTexts(c.ix)) != nil {
				t.Errorf("%s: %s: an edited text was matched to the indexed symbols", run.name, p)
			}
		}
		if len(langs) < 11 {
			t.Errorf("%s: indexed symbols used in %d languages (%v), want all 11 of the test", run.name, len(langs), langs)
		}
		t.Logf("%s: %d files matched", run.name, shortcuts)
		closeView()
		st.Close()
	}
}

// TestIndexedSymbolsDeepNesting: the chunker parses a file whose brackets nest deeper
// than chunker.MaxNesting with the inside of that region blanked (a comment's run of
// brackets counts: the count ignores syntax), so the symbol table holds only what the
// blanked text defines and imports. A request on such a file, unedited, must still
// get the symbols of a parse of its text: here the import after the run, through
// which the name near the cursor resolves to its definition. Also with fixed windows
// on a store the structural view filled: the symbol record is keyed by the file's
// content alone, so that view reads the blanked parse's symbols too.
func TestIndexedSymbolsDeepNesting(t *testing.T) {
	a := "import os\n\n# " + strings.Repeat("(", chunker.MaxNesting+1) + "\nfrom lib.other import target\n\n\ndef main():\n    y = target(3)\n    return y\n"
	snap := writeSnapshot(t, map[string]string{
		"a.py":         a,
		"lib/other.py": "import os\n\n\ndef target(x):\n    \"\"\"Joins.\"\"\"\n    return os.path.join(x, 'z')\n",
	})
	ex := symbols.NewExtractor(0)
	defer ex.Close()
	want, err := ex.Extract(&chunker.File{Path: "a.py", Lang: "python", Text: []byte(a)})
	if err != nil {
		t.Fatal(err)
	}
	st := store.Open(t.TempDir())
	defer st.Close()
	for _, strategy := range []chunker.Strategy{chunker.StrategyStructural, chunker.StrategyFixed} {
		r, closeView := viewWith(t, st, snap, strategy)
		cut := strings.Index(a, "    return y")
		h := repoctx.Hole{Path: "a.py", Prefix: a[:cut], Suffix: a[cut:]}
		c := &composer{ix: r.Retriever(), syms: r.Symbols(), spec: grammars.ForPath(h.Path), h: h}
		if got := c.indexedSymbols(newFileTexts(c.ix)); got != nil && !reflect.DeepEqual(got, want) {
			t.Errorf("%s: indexed symbols differ from a parse of the text:\n got %+v\nwant %+v", strategy, got, want)
		}
		if defPart(definitionsOnly(t, r, h), "def:target(import)") == nil {
			t.Errorf("%s: the unedited text got no definition of target through its import", strategy)
		}
		h.Suffix += "\n" // edited: parsed
		if defPart(definitionsOnly(t, r, h), "def:target(import)") == nil {
			t.Errorf("%s: the edited text got no definition of target through its import", strategy)
		}
		closeView()
	}
}

// viewWith opens snap's view on st with the default index options and strategy ("":
// the default), and returns the function that closes the view and its index.
func viewWith(t *testing.T, st *store.Store, snap snapshot.Snapshot, strategy chunker.Strategy) (*index.View, func()) {
	t.Helper()
	opts := index.DefaultOptions()
	if strategy != "" {
		opts.Strategy = strategy
	}
	ix, err := index.Open(st, "test/repo", opts)
	if err != nil {
		t.Fatal(err)
	}
	v, err := ix.View(context.Background(), snap)
	if err != nil {
		ix.Close()
		t.Fatal(err)
	}
	return v, func() { v.Close(); ix.Close() }
}

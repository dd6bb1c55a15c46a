package symbols

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/grammars"
)

// lazyTables makes extractAll return NewLazyTable's tables (see TestLazyTables).
var lazyTables bool

// sliceSource is a Source over files in memory: each File call returns a copy, as a
// Source that decodes its files would.
type sliceSource struct {
	files []*File
	keys  [NumKeyKinds]map[string][]int
}

func newSliceSource(files []*File) *sliceSource {
	s := &sliceSource{files: files}
	for k := range s.keys {
		s.keys[k] = map[string][]int{}
	}
	for i, f := range files {
		Keys(f, func(kind KeyKind, key string) {
			if is := s.keys[kind][key]; len(is) == 0 || is[len(is)-1] != i {
				s.keys[kind][key] = append(is, i)
			}
		})
	}
	return s
}

func (s *sliceSource) Len() int { return len(s.files) }

func (s *sliceSource) File(i int) (*File, error) {
	f := *s.files[i]
	f.Defs, f.Imports = slices.Clone(f.Defs), slices.Clone(f.Imports)
	return &f, nil
}

func (s *sliceSource) Lang(i int) string { return s.files[i].Lang }

func (s *sliceSource) Find(kind KeyKind, key string) []int { return s.keys[kind][key] }

func (s *sliceSource) Each(kind KeyKind, fn func(key string)) {
	for k := range s.keys[kind] {
		fn(k)
	}
}

// TestLazyTables runs the resolution tests over NewLazyTable's tables.
func TestLazyTables(t *testing.T) {
	lazyTables = true
	defer func() { lazyTables = false }()
	for name, test := range map[string]func(*testing.T){
		"ResolveForeign": TestResolveForeign, "ResolveForeignFolderPackage": TestResolveForeignFolderPackage,
		"KotlinSoftKeywordNames": TestKotlinSoftKeywordNames, "PHPNamespaceQualifier": TestPHPNamespaceQualifier,
		"ResolveKeepFilters": TestResolveKeepFilters, "ResolveModuleRules": TestResolveModuleRules,
		"ResolvePerLanguage": TestResolvePerLanguage, "ForEachImportedKotlin": TestForEachImportedKotlin,
		"ForEachImportedPython": TestForEachImportedPython, "KeywordsAndCommonNames": TestKeywordsAndCommonNames,
		"KotlinNestedImportsAndChains": TestKotlinNestedImportsAndChains, "NoCrossLanguage": TestNoCrossLanguage,
		"PythonQualifiedExternalType": TestPythonQualifiedExternalType, "ReceiverTypeKotlin": TestReceiverTypeKotlin,
		"ReceiverTypePython": TestReceiverTypePython, "KotlinImportsAndResolve": TestKotlinImportsAndResolve,
		"PythonImports": TestPythonImports, "PythonResolve": TestPythonResolve, "SwiftModule": TestSwiftModule,
	} {
		t.Run(name, test)
	}
}

// pathRepo has files of the languages whose imports name paths, relative and not.
var pathRepo = map[string]string{
	"web/src/lib/money.ts":        "export function parseAmount(s: string): number { return 1; }\nexport class Wallet { add(n: number) {} }\n",
	"web/src/lib/index.ts":        "export * from './money';\n",
	"web/src/components/Pay.tsx":  "import { parseAmount, Wallet } from '../lib';\nimport * as m from '@/lib/money';\nexport function Pay() { return parseAmount('1') + m.parseAmount('2'); }\n",
	"web/src/app.js":              "const { parseAmount } = require('./lib/money');\nfunction run(w) { return parseAmount(w); }\n",
	"go/pkg/money/money.go":       "package money\n\n// Parse parses.\nfunc Parse(s string) int { return 1 }\n\ntype Wallet struct{}\n\nfunc (w *Wallet) Add(n int) {}\n",
	"go/cmd/main.go":              "package main\n\nimport \"example.com/go/pkg/money\"\n\nfunc main() { money.Parse(\"1\"); var w money.Wallet; w.Add(1) }\n",
	"rs/src/lib.rs":               "pub mod money;\npub use money::parse_amount;\n",
	"rs/src/money.rs":             "pub fn parse_amount(s: &str) -> u32 { 1 }\npub struct Wallet;\nimpl Wallet { pub fn add(&self) {} }\n",
	"rs/src/main.rs":              "use crate::money::{parse_amount, Wallet};\nfn main() { parse_amount(\"1\"); Wallet.add(); }\n",
	"c/util/foo.h":                "int parse_amount(const char *s);\n",
	"c/util/foo.c":                "#include \"foo.h\"\nint parse_amount(const char *s) { return 1; }\n",
	"c/main.c":                    "#include \"util/foo.h\"\nint main() { return parse_amount(\"1\"); }\n",
	"py/src/shop/__init__.py":     "",
	"py/src/shop/money.py":        "def parse_amount(s):\n    return 1\n\nclass Wallet:\n    def add(self, n):\n        pass\n",
	"py/src/shop/app.py":          "from .money import parse_amount, Wallet\nimport shop.money as m\n\ndef run():\n    w = Wallet()\n    w.add(parse_amount('1'))\n    return m.parse_amount('2')\n",
	"py/tests/conftest.py":        "import pytest\n\n@pytest.fixture\ndef wallet():\n    return None\n",
	"py/tests/test_money.py":      "from shop.money import parse_amount\n\ndef test_parse(wallet):\n    assert parse_amount('1') == 1\n",
	"kt/src/com/acme/Money.kt":    "package com.acme\n\nfun parseAmount(s: String): Int = 1\n\nclass Wallet { fun add(n: Int) {} }\n",
	"kt/src/com/acme/app/App.kt":  "package com.acme.app\n\nimport com.acme.*\n\nfun run() { val w = Wallet(); w.add(parseAmount(\"1\")) }\n",
	"kt/src/com/acme/app/Dup.kt":  "package com.acme.app\n\nfun run2() = 1\n",
	"kt/src/com/acme/app/Dup2.kt": "package com.acme.app\n\nfun run2() = 2\n",
}

// TestLazyTableAnswers checks that NewLazyTable's table gives NewTable's answers over
// the same files: every file, and every use of every file's text at each line start
// resolved (ResolveUse, ResolveForeign), every defined name resolved bare from every
// file (Resolve).
func TestLazyTableAnswers(t *testing.T) {
	for ri, repo := range []map[string]string{pyRepo, ktRepo, ktForEach, pyForEach, ktRepoTypes, pyRepoTypes, ktOkio, pathRepo} {
		files := extractSorted(t, repo)
		eager, lazy := NewTable(files), NewLazyTable(newSliceSource(files))
		compareTables(t, ri, eager, lazy, files, repo)
	}
}

// extractSorted returns the symbols of the files of repo (path -> text), in path order.
func extractSorted(t *testing.T, repo map[string]string) []*File {
	t.Helper()
	e := NewExtractor(0)
	defer e.Close()
	var files []*File
	for _, p := range slices.Sorted(maps.Keys(repo)) {
		cf, err := chunker.Decode(p, []byte(repo[p]), 0)
		if err != nil {
			t.Fatal(err)
		}
		sf, err := e.Extract(cf)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, sf)
	}
	return files
}

// compareTables checks that tables a and b answer alike over files (whose texts are
// texts).
func compareTables(t *testing.T, repo int, a, b *Table, files []*File, texts map[string]string) {
	t.Helper()
	same := func(what string, x, y any) {
		t.Helper()
		if !reflect.DeepEqual(x, y) {
			t.Errorf("repo %d: %s: %+v, lazy %+v", repo, what, x, y)
		}
	}
	found := 0 // uses resolved to something
	defer func() {
		if found == 0 {
			t.Errorf("repo %d: no use resolved", repo)
		}
	}()
	names := map[string]bool{}
	for _, f := range files {
		same("File "+f.Path, a.File(f.Path), b.File(f.Path))
		for _, d := range f.Defs {
			names[d.Name] = true
		}
	}
	same("File of no file", a.File("no/such.kt"), b.File("no/such.kt"))
	for _, f := range files {
		for n := range names {
			same("Resolve "+n+" from "+f.Path, a.Resolve(n, f.Path, nil, 5), b.Resolve(n, f.Path, nil, 5))
		}
		spec := grammars.Lookup(f.Lang)
		text := texts[f.Path]
		for cur := 0; cur <= len(text); cur++ {
			if cur > 0 && text[cur-1] != '\n' && cur != len(text) {
				continue
			}
			site := Site{From: f.Path, Scope: NewScope(f.Lang, text, cur)}
			fsite := Site{From: "app/" + f.Path, Imports: f.Imports, Scope: site.Scope}
			for _, u := range Uses(text[:cur], text[cur:], spec) {
				what := "use " + u.Name + "." + strings.Join(u.Qualifiers, ".") + " in " + f.Path
				got := a.ResolveUse(u, site, 5)
				same(what, got, b.ResolveUse(u, site, 5))
				if len(got) > 0 {
					found++
				}
				foreign := []string{"shop", "acme", "lib", "web", "money"}
				same("foreign "+what, a.ResolveForeign(u, fsite, foreign, 5), b.ResolveForeign(u, fsite, foreign, 5))
			}
		}
	}
}

// TestLazyTableConcurrent resolves the same names from several goroutines at once
// over one lazy table (its files are read, and its answers kept, by whichever
// goroutine asks first): every goroutine gets NewTable's answers.
func TestLazyTableConcurrent(t *testing.T) {
	var files []*File
	for _, repo := range []map[string]string{ktRepoTypes, pyRepoTypes, pathRepo} {
		files = append(files, extractSorted(t, repo)...)
	}
	eager, lazy := NewTable(files), NewLazyTable(newSliceSource(files))
	type query struct{ name, from string }
	var qs []query
	for _, f := range files {
		for _, d := range f.Defs {
			for _, g := range files[:8] {
				qs = append(qs, query{d.Name, g.Path})
			}
		}
	}
	want := make([][]Candidate, len(qs))
	for i, q := range qs {
		want[i] = eager.Resolve(q.name, q.from, nil, 5)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range qs {
				i := (k + g*len(qs)/4) % len(qs) // each goroutine from another start
				if got := lazy.Resolve(qs[i].name, qs[i].from, nil, 5); !reflect.DeepEqual(got, want[i]) {
					t.Errorf("Resolve(%s) from %s: %v, want %v", qs[i].name, qs[i].from, got, want[i])
					return
				}
				lazy.File(qs[i].from)
			}
		}()
	}
	wg.Wait()
}

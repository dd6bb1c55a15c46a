package index

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/internal/racetest"
	"github.com/repoctx/repoctx/symbols"
)

// realFolder returns a folder holding copies of some of the repository's own source
// folders and its sample repositories (Go, Kotlin and Python files: imports by
// package, by module and by path), and the paths of its files that have a grammar.
func realFolder(t *testing.T) (string, []string) {
	t.Helper()
	root := t.TempDir()
	for _, dir := range []string{"../symbols", "../index", "../assemble", "../testdata/sample"} {
		if err := os.CopyFS(filepath.Join(root, filepath.Base(dir)), os.DirFS(dir)); err != nil {
			t.Fatal(err)
		}
	}
	var paths []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && grammars.ForPath(p) != nil {
			rel, _ := filepath.Rel(root, p)
			paths = append(paths, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(paths)
	return root, paths
}

// TestStoredViewSymbols checks that the symbol table of a stored view read back
// (decoded on demand) answers as the table of the view made from the files, on real
// code: every file, every name defined resolved bare from a sample of files, and every
// use in a sample of files' texts resolved at each line start; and that a view whose
// symbol section is damaged is not read back.
func TestStoredViewSymbols(t *testing.T) {
	racetest.Skip(t, "resolves every name and every use of its sample files")
	root, paths := realFolder(t)
	cache := t.TempDir()
	opts := DefaultOptions()
	opts.RepoLSA, opts.StoreViews = true, ViewsStored
	made := folderView(t, root, cache, opts)
	read := folderView(t, root, cache, opts)
	if read.Stats().Chunked != 0 || read.Stats().Built {
		t.Fatalf("the second view was made again: %+v", read.Stats())
	}
	a, b := made.Symbols(), read.Symbols()
	names := map[string]bool{}
	files := 0
	for _, p := range paths {
		fa, fb := a.File(p), b.File(p)
		if !reflect.DeepEqual(fa, fb) {
			t.Errorf("File(%s): %+v, read back %+v", p, fb, fa)
		}
		if fa == nil {
			continue
		}
		files++
		for _, d := range fa.Defs {
			names[d.Name] = true
		}
	}
	if files < 100 || len(names) < 500 {
		t.Fatalf("%d files with symbols, %d names: too few to compare", files, len(names))
	}
	resolved := 0
	for i, p := range paths {
		if i%17 != 0 || a.File(p) == nil {
			continue
		}
		for n := range names {
			ca, cb := a.Resolve(n, p, nil, 5), b.Resolve(n, p, nil, 5)
			if !reflect.DeepEqual(ca, cb) {
				t.Errorf("Resolve(%s) from %s: %v, read back %v", n, p, ca, cb)
			}
		}
		text, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		f := a.File(p)
		spec := grammars.Lookup(f.Lang)
		for cur := 0; cur <= len(text); cur++ {
			if cur > 0 && text[cur-1] != '\n' {
				continue
			}
			site := symbols.Site{From: p, Scope: symbols.NewScope(f.Lang, string(text), cur)}
			for _, u := range symbols.Uses(string(text[:cur]), string(text[cur:]), spec) {
				ca, cb := a.ResolveUse(u, site, 5), b.ResolveUse(u, site, 5)
				if !reflect.DeepEqual(ca, cb) {
					t.Errorf("ResolveUse(%s.%s) in %s: %v, read back %v", strings.Join(u.Qualifiers, "."), u.Name, p, ca, cb)
				}
				if len(ca) > 0 {
					resolved++
				}
			}
		}
	}
	if resolved < 100 {
		t.Errorf("%d uses resolved: too few to compare", resolved)
	}

	// A byte of a symbol record damaged: the record is checked when it is first read,
	// so the view is read back with the files of the damaged block (16 KiB) without
	// symbols, and made again the next time, with the same table.
	view := firstView(t, cache)
	raw, err := os.ReadFile(view)
	if err != nil {
		t.Fatal(err)
	}
	sv, err := decodeView(raw[storeViewHead:])
	if err != nil {
		t.Fatal(err)
	}
	hit := sv.symbols.Len() / 2
	rec := sv.symbols.record(hit)
	at := bytes.Index(raw, rec)
	if at < 0 || len(rec) < 16 {
		t.Fatal("no symbol record in the stored view")
	}
	raw[at+len(rec)/2] ^= 0x55
	if err := os.WriteFile(view, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	withFolderIndex(t, cache, opts, func(ix *Index) { // looked up while the index is open
		damaged, err := ix.View(context.Background(), dirSnapshot(t, root))
		if err != nil {
			t.Fatal(err)
		}
		if !damaged.Stats().StoredView {
			t.Fatalf("a damaged symbol record failed the whole view: %+v", damaged.Stats())
		}
		lost := 0
		for _, p := range paths {
			switch got := damaged.Symbols().File(p); {
			case got == nil && a.File(p) != nil:
				lost++
			case !reflect.DeepEqual(got, a.File(p)):
				t.Errorf("File(%s) with a damaged record elsewhere differs", p)
			}
		}
		if lost == 0 || lost == len(paths) {
			t.Errorf("%d of %d files lost their symbols to one damaged record", lost, len(paths))
		}
	})
	again := folderView(t, root, cache, opts)
	if again.Stats().StoredView || again.Stats().Reused != read.Stats().Reused || again.Stats().Chunked != 0 {
		t.Fatalf("after damage: %+v", again.Stats())
	}
	for _, p := range paths {
		if !reflect.DeepEqual(again.Symbols().File(p), a.File(p)) {
			t.Errorf("File(%s) after damage differs", p)
		}
	}
}

// storeViewHead is the offset of a stored view file's payload (store.Records.PutView).
const storeViewHead = 40

// TestViewSymbolsDamage checks that a symbol section (writeSymbols) altered at any
// byte, or cut short, is refused or read without a fault: each lookup and file of a
// table over it answers (whatever it answers).
func TestViewSymbolsDamage(t *testing.T) {
	syms := sampleSymbols(t)
	var buf bytes.Buffer
	var vb [16]byte
	put := func(b []byte) { buf.Write(b) }
	num := func(v int) { buf.Write(vb[:binary.PutUvarint(vb[:], uint64(v))]) }
	writeSymbols(put, num, syms, nil)
	good := buf.Bytes()
	vs, size, ok := decodeViewSymbols(good)
	if !ok || size != len(good) || vs.Len() != len(syms) {
		t.Fatalf("decodeViewSymbols: ok %v, size %d of %d, %d files", ok, size, len(good), vs.Len())
	}
	eager, lazy := symbols.NewTable(syms), symbols.NewLazyTable(vs)
	for _, f := range syms {
		if !reflect.DeepEqual(eager.File(f.Path), lazy.File(f.Path)) {
			t.Errorf("File(%s) differs", f.Path)
		}
		for _, d := range f.Defs {
			if g, w := lazy.Resolve(d.Name, f.Path, nil, 5), eager.Resolve(d.Name, f.Path, nil, 5); !reflect.DeepEqual(g, w) {
				t.Errorf("Resolve(%s): %v, want %v", d.Name, g, w)
			}
		}
	}
	exercise := func(b []byte) {
		vs, _, ok := decodeViewSymbols(b)
		if !ok {
			return
		}
		tab := symbols.NewLazyTable(vs)
		for _, f := range syms {
			tab.File(f.Path)
			for _, d := range f.Defs {
				tab.Resolve(d.Name, f.Path, nil, 5)
			}
		}
		for i := range vs.Len() {
			vs.File(i)
			vs.Lang(i)
		}
		for k := range symbols.NumKeyKinds {
			vs.Each(symbols.KeyKind(k), func(key string) { vs.Find(symbols.KeyKind(k), key) })
		}
	}
	for i := range good {
		for _, x := range []byte{0x01, 0x80, 0xff} {
			b := bytes.Clone(good)
			b[i] ^= x
			exercise(b)
		}
		exercise(good[:i])
	}
}

// TestOldViewRefused checks that a stored view of the previous format (without the
// symbol lookups) is refused by its magic.
func TestOldViewRefused(t *testing.T) {
	if _, err := decodeView([]byte("rcview1\n\x00\x00")); err == nil {
		t.Error("a view of the previous format was decoded")
	}
}

// TestViewTextSymbols: a text's symbols are extracted once and read back from the
// records by a later view (the extraction not called), the same file; another text,
// path or language is extracted anew; an error of the extraction is returned and
// nothing is kept.
func TestViewTextSymbols(t *testing.T) {
	root := lazyCaseFolder(t)
	cache := t.TempDir()
	opts := DefaultOptions()
	opts.Symbols = true
	text := "package app\n\nclass Cart(val items: List<String>) {\n    fun total() = items.size\n}\n"
	extracted := 0
	extract := func(text string) func() (*symbols.File, error) {
		return func() (*symbols.File, error) {
			extracted++
			return symbols.NewExtractor(0).Extract(&chunker.File{Path: "c/Cart.kt", Lang: "kotlin", Text: []byte(text)})
		}
	}
	var first *symbols.File
	view := viewer(t, root, cache, opts)
	view(func(v *View) {
		f, err := v.TextSymbols("c/Cart.kt", "kotlin", text, extract(text))
		if err != nil || f == nil || len(f.Defs) == 0 {
			t.Fatalf("first: %v, %v", f, err)
		}
		first = f
		boom := errors.New("boom")
		if _, err := v.TextSymbols("c/Other.kt", "kotlin", "x", func() (*symbols.File, error) { return nil, boom }); !errors.Is(err, boom) {
			t.Errorf("the extraction's error: %v", err)
		}
	})
	view(func(v *View) {
		n := extracted
		f, err := v.TextSymbols("c/Cart.kt", "kotlin", text, extract(text))
		if err != nil || !reflect.DeepEqual(f, first) || extracted != n {
			t.Errorf("read back: %v (extracted %d more times), equal %v", err, extracted-n, reflect.DeepEqual(f, first))
		}
		for _, c := range []struct{ path, lang, text string }{
			{"c/Cart.kt", "kotlin", text + "\n"}, {"c/Cart2.kt", "kotlin", text}, {"c/Cart.kt", "java", text},
		} {
			n := extracted
			if _, err := v.TextSymbols(c.path, c.lang, c.text, extract(c.text)); err != nil || extracted != n+1 {
				t.Errorf("%+v: not extracted anew (%v)", c, err)
			}
		}
		n = extracted
		if _, err := v.TextSymbols("c/Other.kt", "kotlin", "x", extract("x")); err != nil || extracted != n+1 {
			t.Errorf("a failed extraction was kept (%v)", err)
		}
	})
}

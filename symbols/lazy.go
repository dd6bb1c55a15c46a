package symbols

import (
	"path"
	"strings"
	"sync"

	"github.com/repoctx/repoctx/grammars"
)

// KeyKind names one of a Table's lookups: what a file is found under (see Keys).
type KeyKind uint8

const (
	// KeyPath finds a file by its path.
	KeyPath KeyKind = iota
	// KeyName finds the files holding a definition of a name.
	KeyName
	// KeyPackage finds the files of a package (File.Package, "" included).
	KeyPackage
	// KeyStem finds the files whose imports name paths (grammars.Spec.ImportsByPath)
	// by their path without its extension.
	KeyStem
	// KeyDir finds the files whose imports name paths by their folder.
	KeyDir
)

// NumKeyKinds is the number of KeyKinds.
const NumKeyKinds = int(KeyDir) + 1

// Keys calls fn with each key a Table finds f under: its path, the name of each of its
// definitions (once per definition), its package and, for a language whose imports
// name paths, its path without extension and its folder. A Source's lookups are made
// of these keys.
func Keys(f *File, fn func(kind KeyKind, key string)) {
	fn(KeyPath, f.Path)
	for i := range f.Defs {
		fn(KeyName, f.Defs[i].Name)
	}
	fn(KeyPackage, f.Package)
	if stem, dir, ok := pathKeys(f); ok {
		fn(KeyStem, stem)
		fn(KeyDir, dir)
	}
}

// pathKeys returns the path without extension and the folder of f when f's
// language's imports name paths.
func pathKeys(f *File) (stem, dir string, ok bool) {
	if s := grammars.Lookup(f.Lang); s == nil || !s.ImportsByPath {
		return "", "", false
	}
	return strings.TrimSuffix(f.Path, path.Ext(f.Path)), path.Dir(f.Path), true
}

// Source holds the files of a Table made by NewLazyTable: Len files, numbered in the
// order NewTable would be given them, read when a lookup first needs them, and for
// each KeyKind a lookup from a key to the numbers of the files Keys gives that key.
// Its methods must be safe for concurrent use.
type Source interface {
	// Len returns the number of files.
	Len() int
	// File returns file i (0 <= i < Len()), read anew; the Table asks for each file
	// at most once and keeps it. A file it cannot read (nil or an error) is absent
	// from the Table.
	File(i int) (*File, error)
	// Lang returns the language of file i without reading the rest of it ("" when it
	// cannot be read).
	Lang(i int) string
	// Find returns the numbers of the files found under key by kind's lookup, in
	// increasing order (none: an empty list).
	Find(kind KeyKind, key string) []int
	// Each calls fn with every key of kind's lookup, in any order.
	Each(kind KeyKind, fn func(key string))
}

// NewLazyTable returns a Table over src: the same answers as NewTable of src's files
// in their order, but a file is read (Source.File) only when a lookup returns it, so
// that a process that resolves a few names pays for the files those names are in,
// not for every file. It is safe for concurrent use.
func NewLazyTable(src Source) *Table {
	return &Table{lazy: &lazyIndex{src: src, files: make([]lazyFile, src.Len())}}
}

// lazyIndex is the lookups of a Table made by NewLazyTable.
type lazyIndex struct {
	src   Source
	files []lazyFile // by number
	// The answers given so far: by kind, key -> []*File (KeyPath: *File); byName:
	// name -> []*Def.
	found  [NumKeyKinds]sync.Map
	byName sync.Map
}

// lazyFile is one file of a lazyIndex, read on first use.
type lazyFile struct {
	once sync.Once
	f    *File
}

// file returns file i, read on the first call (nil when it cannot be read).
func (x *lazyIndex) file(i int) *File {
	if i < 0 || i >= len(x.files) {
		return nil
	}
	lf := &x.files[i]
	lf.once.Do(func() {
		if f, err := x.src.File(i); err == nil {
			lf.f = f
		}
	})
	return lf.f
}

// filesOf returns the files key is found under by kind's lookup, in their order.
func (x *lazyIndex) filesOf(kind KeyKind, key string) []*File {
	if v, ok := x.found[kind].Load(key); ok {
		return v.([]*File)
	}
	var out []*File
	for _, i := range x.src.Find(kind, key) {
		if f := x.file(i); f != nil {
			out = append(out, f)
		}
	}
	v, _ := x.found[kind].LoadOrStore(key, out)
	return v.([]*File)
}

// path returns the file at p (the last of that path), or nil.
func (x *lazyIndex) path(p string) *File {
	if v, ok := x.found[KeyPath].Load(p); ok {
		return v.(*File)
	}
	var f *File
	if is := x.src.Find(KeyPath, p); len(is) > 0 {
		f = x.file(is[len(is)-1])
	}
	v, _ := x.found[KeyPath].LoadOrStore(p, f)
	return v.(*File)
}

// named returns the definitions of name, in file order and then in their file's.
func (x *lazyIndex) named(name string) []*Def {
	if v, ok := x.byName.Load(name); ok {
		return v.([]*Def)
	}
	var out []*Def
	for _, i := range x.src.Find(KeyName, name) {
		f := x.file(i)
		if f == nil {
			continue
		}
		for j := range f.Defs {
			if f.Defs[j].Name == name {
				out = append(out, &f.Defs[j])
			}
		}
	}
	v, _ := x.byName.LoadOrStore(name, out)
	return v.([]*Def)
}

// firstLang returns the language of the first file key is found under by kind's
// lookup ("" for none).
func (x *lazyIndex) firstLang(kind KeyKind, key string) string {
	if is := x.src.Find(kind, key); len(is) > 0 {
		return x.src.Lang(is[0])
	}
	return ""
}

// The Table's lookups, over its maps (NewTable) or its lazy index (NewLazyTable).

// named returns the definitions of name, in file order.
func (t *Table) named(name string) []*Def {
	if t.lazy != nil {
		return t.lazy.named(name)
	}
	return t.byName[name]
}

// keyFiles returns the files key is found under by kind's lookup (not KeyPath or
// KeyName), in file order.
func (t *Table) keyFiles(kind KeyKind, key string) []*File {
	if t.lazy != nil {
		return t.lazy.filesOf(kind, key)
	}
	switch kind {
	case KeyPackage:
		return t.byPkg[key]
	case KeyStem:
		return t.byStem[key]
	case KeyDir:
		return t.byDir[key]
	}
	return nil
}

// pkgFiles returns the files of package pkg, in file order.
func (t *Table) pkgFiles(pkg string) []*File { return t.keyFiles(KeyPackage, pkg) }

// eachKey calls fn with every key of kind's lookup (KeyPackage, KeyStem or KeyDir),
// in no particular order.
func (t *Table) eachKey(kind KeyKind, fn func(key string)) {
	if t.lazy != nil {
		t.lazy.src.Each(kind, fn)
		return
	}
	var m map[string][]*File
	switch kind {
	case KeyPackage:
		m = t.byPkg
	case KeyStem:
		m = t.byStem
	case KeyDir:
		m = t.byDir
	}
	for k := range m {
		fn(k)
	}
}

// firstLang returns the language of the first file key is found under by kind's
// lookup (KeyPackage, KeyStem or KeyDir; "" for none).
func (t *Table) firstLang(kind KeyKind, key string) string {
	if t.lazy != nil {
		return t.lazy.firstLang(kind, key)
	}
	if fs := t.keyFiles(kind, key); len(fs) > 0 {
		return fs[0].Lang
	}
	return ""
}

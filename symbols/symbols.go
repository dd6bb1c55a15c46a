// Package symbols extracts definitions and imports from source files with the same
// tree-sitter grammars as the chunker, and resolves a name used in one file to the
// definitions it most likely refers to.
//
// Resolution follows the language's own scoping as far as imports show it, the way
// IDE-less completion context tools do (the competition's top teams resolved
// identifiers near the cursor to their definitions; see docs/field-notes):
// explicitly imported names first, then star imports, then the same directory, the
// same package, and finally anywhere in the repository.
package symbols

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	sitter "github.com/smacker/go-tree-sitter"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/grammars"
)

// Def is one definition: a function, method, class, object, property or constant.
type Def struct {
	Name string `json:"name"`
	// Kind is grammars.Function, Class or Property.
	Kind string `json:"kind"`
	// Path is the file, slash-separated, relative to the repository root.
	Path string `json:"path"`
	// Container is the name of the enclosing class or object, "" at top level.
	Container string `json:"container,omitempty"`
	// Signature is the definition's text up to its body, tidied (grammars.Spec.Signature).
	Signature string `json:"signature"`
	// Doc is the comment block directly above the definition or, for Python, its
	// docstring; at most MaxDocBytes bytes.
	Doc string `json:"doc,omitempty"`
	// StartLine and EndLine are 1-based, inclusive; StartByte and EndByte a half-open
	// byte range of the decoded file text (chunker.File.Text), decorators and
	// annotations included.
	StartLine, EndLine int
	StartByte, EndByte int
}

// MaxDocBytes caps Def.Doc.
const MaxDocBytes = 600

// File holds one file's definitions and imports.
type File struct {
	Path string `json:"path"`
	Lang string `json:"lang"`
	// Package is Kotlin's package header, or for Python the dotted module path derived
	// from Path ("pkg/sub/mod.py" -> "pkg.sub.mod", "pkg/__init__.py" -> "pkg").
	Package string            `json:"package"`
	Defs    []Def             `json:"defs"`
	Imports []grammars.Import `json:"imports"`
}

// Extractor parses files and extracts their symbols. It holds one tree-sitter parser
// per language and is not safe for concurrent use; Close it when done.
type Extractor struct {
	parsers *grammars.Parsers
}

// NewExtractor returns an Extractor whose parses stop once they have used limit of
// their thread's CPU time (<= 0 means grammars.DefaultParseCPULimit).
func NewExtractor(limit time.Duration) *Extractor {
	return &Extractor{parsers: grammars.NewParsers(limit)}
}

// Close frees the parsers.
func (e *Extractor) Close() {
	e.parsers.Close()
}

// Extract returns the symbols of f. It returns an error if f's language has no
// grammar or the parse fails (runs over its CPU time limit: grammars.ErrCPULimit);
// syntax errors are not errors: whatever
// definitions the tree holds are returned.
func (e *Extractor) Extract(f *chunker.File) (*File, error) {
	spec := grammars.Lookup(f.Lang)
	if spec == nil {
		return nil, fmt.Errorf("symbols: %s: no grammar for language %q", f.Path, f.Lang)
	}
	tree, parsed, err := e.parsers.Parse(spec, f.Text)
	if err != nil {
		return nil, fmt.Errorf("symbols: %s: %w", f.Path, err)
	}
	defer tree.Close()
	return ExtractTree(f, tree.RootNode(), parsed)
}

// ExtractTree is Extract on a syntax tree already parsed from f (root, and the text
// it was parsed from: the grammar's Rewrite of f.Text, as grammars.Parsers.Parse
// returns it), e.g. by chunker.Structural.ChunkTree. It fails only when f's
// language has no grammar.
func ExtractTree(f *chunker.File, root *sitter.Node, parsed []byte) (*File, error) {
	spec := grammars.Lookup(f.Lang)
	if spec == nil {
		return nil, fmt.Errorf("symbols: %s: no grammar for language %q", f.Path, f.Lang)
	}
	out := &File{Path: f.Path, Lang: f.Lang}
	if spec.Imports != nil {
		out.Package, out.Imports = spec.Imports(root, f.Text)
	}
	if spec.Family == "javascript" {
		out.Imports = append(out.Imports, jsReExports(root, f.Text)...)
	}
	if out.Package == "" && spec.Name == "python" {
		out.Package = pythonModule(f.Path)
	}
	x := &walker{spec: spec, src: f.Text, parsed: parsed, file: out}
	x.walk(root, "", 0)
	return out, nil
}

// pythonModule returns the dotted module path of a Python file path.
func pythonModule(p string) string {
	p = strings.TrimSuffix(strings.TrimSuffix(p, ".py"), ".pyi")
	p = strings.TrimSuffix(p, "/__init__")
	return strings.ReplaceAll(p, "/", ".")
}

type walker struct {
	spec   *grammars.Spec
	src    []byte
	parsed []byte
	file   *File
}

// maxDepth bounds the definition walk (nesting deeper than this is not indexed).
const maxDepth = 24

func (w *walker) walk(n *sitter.Node, container string, depth int) {
	if depth > maxDepth || n.ChildCount() > 4096 && n.Parent() != nil {
		return
	}
	for _, c := range grammars.Children(n) {
		if !c.IsNamed() {
			continue
		}
		def, kind := w.spec.Definition(c)
		if def == nil {
			if c.ChildCount() > 0 && (c.IsError() || w.spec.Bodies[c.Type()] || w.spec.Flatten[c.Type()] || depth == 0 && c.HasError()) {
				w.walk(c, container, depth+1)
			}
			continue
		}
		name := ""
		if w.spec.DefName != nil {
			name = w.spec.DefName(def, w.src)
		}
		if name != "" {
			d := Def{
				Name: name, Kind: kind, Path: w.file.Path, Container: container,
				Signature: w.spec.Signature(def, w.src, w.parsed),
				StartLine: int(c.StartPoint().Row) + 1, EndLine: int(c.EndPoint().Row) + 1,
				StartByte: int(c.StartByte()), EndByte: int(c.EndByte()),
			}
			d.Doc = w.doc(c, def)
			w.file.Defs = append(w.file.Defs, d)
		}
		if kind == grammars.Class {
			if body := w.spec.Body(def); body != nil {
				w.walk(body, name, depth+1)
			}
		}
	}
}

// doc returns the comment lines right above n, or a Python docstring.
func (w *walker) doc(n, def *sitter.Node) string {
	if w.spec.Name == "python" {
		if body := w.spec.Body(def); body != nil {
			for _, s := range grammars.Children(body) {
				if !s.IsNamed() || s.Type() == "comment" {
					continue
				}
				if s.Type() == "expression_statement" && s.NamedChildCount() == 1 && s.NamedChild(0).Type() == "string" {
					return clip(s.Content(w.src))
				}
				break
			}
		}
	}
	return clip(commentAbove(w.src, int(n.StartByte())))
}

// commentAbove returns the comment lines directly above the line holding byte start
// of src (at most 30; a line is a comment when, trimmed, it starts with "#", "//",
// "/*" or "*"), joined by "\n". It reads upwards from that line, so its cost is that
// of the lines it returns, not of the text before start.
func commentAbove(src []byte, start int) string {
	end := lineStart(src, start) // just after the line break above start's line
	var doc []string
	for end > 0 && len(doc) < 30 {
		s := lineStart(src, end-1)
		line := string(src[s : end-1])
		t := strings.TrimSpace(line)
		if t == "" || !(strings.HasPrefix(t, "#") || strings.HasPrefix(t, "//") || strings.HasPrefix(t, "/*") || strings.HasPrefix(t, "*")) {
			break
		}
		doc = append(doc, line)
		end = s
	}
	slices.Reverse(doc)
	return strings.Join(doc, "\n")
}

func lineStart(src []byte, b int) int {
	for b > 0 && src[b-1] != '\n' {
		b--
	}
	return b
}

func clip(s string) string {
	if len(s) > MaxDocBytes {
		s = s[:MaxDocBytes]
		for len(s) > 0 && s[len(s)-1]&0xC0 == 0x80 {
			s = s[:len(s)-1]
		}
		if len(s) > 0 && s[len(s)-1] >= 0xC0 {
			s = s[:len(s)-1]
		}
	}
	return s
}

// Table resolves names across a repository's files. It is read-only after NewTable
// (or NewLazyTable) and safe for concurrent use.
type Table struct {
	// NewTable's lookups (nil in a table of NewLazyTable, which asks lazy instead).
	files  map[string]*File
	byName map[string][]*Def
	byPkg  map[string][]*File // Kotlin package or Python module -> files
	// For languages whose imports name paths (grammars.Spec.ImportsByPath): files by
	// path without extension, and by folder.
	byStem, byDir map[string][]*File
	lazy          *lazyIndex // NewLazyTable's lookups
	pathCache     sync.Map   // folder + "\x00" + module -> []*File, pathFiles' answers
	pyTopsOnce    sync.Once
	pyTops        map[string]bool // pythonTops' answer
}

// NewTable indexes files.
func NewTable(files []*File) *Table {
	defs := 0
	for _, f := range files {
		defs += len(f.Defs)
	}
	// Sized up front: a view's table is made per snapshot (thousands of names).
	t := &Table{files: make(map[string]*File, len(files)), byName: make(map[string][]*Def, defs), byPkg: map[string][]*File{},
		byStem: map[string][]*File{}, byDir: map[string][]*File{}}
	for _, f := range files {
		t.files[f.Path] = f
		t.byPkg[f.Package] = append(t.byPkg[f.Package], f)
		if stem, dir, ok := pathKeys(f); ok {
			t.byStem[stem] = append(t.byStem[stem], f)
			t.byDir[dir] = append(t.byDir[dir], f)
		}
		for i := range f.Defs {
			d := &f.Defs[i]
			t.byName[d.Name] = append(t.byName[d.Name], d)
		}
	}
	return t
}

// File returns the symbols of the file at p, or nil.
func (t *Table) File(p string) *File {
	if t.lazy != nil {
		return t.lazy.path(p)
	}
	return t.files[p]
}

// Candidate is a resolved definition with the reason it was chosen.
type Candidate struct {
	Def *Def
	// Via is one of the Via constants (ViaImport, ViaReceiver, ...), most certain
	// first in their declaration order.
	Via string
}

// moduleFiles returns the files an import's module refers to (for Python's
// `from pkg import mod`, also pkg.mod's).
func (t *Table) moduleFiles(im grammars.Import, from string) []*File {
	lang := ""
	if fromFile := t.File(from); fromFile != nil {
		lang = fromFile.Lang
	} else if s := grammars.ForPath(from); s != nil {
		lang = s.Name
	}
	if lang == "rust" && im.Module == "" {
		return t.rustCrateRoot(from) // `use crate::name`
	}
	if s := grammars.Lookup(lang); s != nil && s.ImportsByPath {
		return t.pathFiles(im.Module, from)
	}
	if lang != "python" {
		return t.pkgFiles(im.Module)
	}
	out := t.pyModule(im.Module, im.Level, from)
	if im.Name != "" && !im.Star {
		mod := im.Name
		if im.Module != "" {
			mod = im.Module + "." + im.Name
		}
		out = append(out, t.pyModule(mod, im.Level, from)...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// pyModule returns the files of the Python module mod imported with level leading
// dots from the file at from, matched by suffix so that "src/" layouts resolve.
func (t *Table) pyModule(mod string, level int, from string) []*File {
	if level > 0 {
		base := pythonModule(from)
		if !strings.HasSuffix(from, "__init__.py") {
			base = parentModule(base)
		}
		for i := 1; i < level; i++ {
			base = parentModule(base)
		}
		switch {
		case base == "":
		case mod == "":
			mod = base
		default:
			mod = base + "." + mod
		}
	}
	if mod == "" || strings.HasSuffix(mod, ".") {
		return nil
	}
	if fs := t.pkgFiles(mod); len(fs) > 0 {
		return append([]*File(nil), fs...)
	}
	var out []*File
	t.eachKey(KeyPackage, func(p string) {
		if strings.HasSuffix(p, "."+mod) {
			out = append(out, t.pkgFiles(p)...)
		}
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// pathFiles returns the files a path import names (grammars.Spec.ImportsByPath),
// in path order. A module starting with "./" or "../" is resolved against the
// importing file's folder: the file with that path and any extension, else the
// folder's index or mod file, else the folder's files (a Go package). Any other
// module is matched as a path suffix, dropping leading components until something
// matches ("@/components/x" finds src/components/x.tsx, "github.com/a/b/pkg" the
// folder pkg/): files whose path without extension ends with it first, then
// folders that end with it. A registered extension on the module ("util/foo.h")
// is dropped first.
func (t *Table) pathFiles(mod, from string) []*File {
	if mod == "" {
		return nil
	}
	key := path.Dir(from) + "\x00" + mod
	if v, ok := t.pathCache.Load(key); ok {
		return v.([]*File)
	}
	out := t.findPathFiles(mod, from)
	t.pathCache.Store(key, out)
	return out
}

// findPathFiles is pathFiles without its cache.
func (t *Table) findPathFiles(mod, from string) []*File {
	if ext := path.Ext(mod); ext != "" && grammars.ForPath(mod) != nil {
		mod = strings.TrimSuffix(mod, ext)
	}
	sorted := func(fs []*File) []*File {
		out := slices.Clone(fs)
		sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
		return out
	}
	if strings.HasPrefix(mod, "./") || strings.HasPrefix(mod, "../") {
		target := path.Join(path.Dir(from), mod)
		for _, fs := range [][]*File{t.keyFiles(KeyStem, target), t.keyFiles(KeyStem, target+"/index"), t.keyFiles(KeyStem, target+"/mod"), t.keyFiles(KeyDir, target)} {
			if len(fs) > 0 {
				return sorted(fs)
			}
		}
		return nil
	}
	parts := strings.Split(strings.Trim(mod, "/"), "/")
	for k := range parts {
		m := strings.Join(parts[k:], "/")
		if m == "" || m == "." || m == ".." {
			continue
		}
		for _, kind := range []KeyKind{KeyStem, KeyDir} {
			var out []*File
			t.eachKey(kind, func(key string) {
				if key == m || strings.HasSuffix(key, "/"+m) {
					out = append(out, t.keyFiles(kind, key)...)
				}
			})
			if len(out) > 0 {
				return sorted(out)
			}
		}
	}
	return nil
}

func parentModule(m string) string {
	if i := strings.LastIndexByte(m, '.'); i >= 0 {
		return m[:i]
	}
	return ""
}

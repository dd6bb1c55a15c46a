// Package grammars is the registry of languages repoctx understands: for each, the
// tree-sitter language, the node types that are chunk boundaries (definitions), the
// node types that hold members or statements (bodies), comment node types, how to read
// a definition's name and its imports. The text-level rules that work around a
// grammar's faults (length-preserving source rewrites, Kotlin's text outline for
// recovery) live in the language's own package under languages/ and are attached to
// its spec by package languages (see [Rules]).
//
// Adding a language is adding one file that calls [Register] from init with a [Spec];
// rules, when its grammar needs them, go in a package languages/<name> listed in
// package languages.
// The bundled grammars are those of github.com/smacker/go-tree-sitter (Kotlin: fwcd
// tree-sitter-kotlin 0.3.8, which has no field names; Python: tree-sitter-python 0.23).
// With the build tag kotlin2, Kotlin uses tree-sitter-grammars/tree-sitter-kotlin
// 1.1.0 instead (package grammars/kotlin2, whose C source `make grammar` installs).
//
// Tree-sitter rules that callers must follow (measured, see docs/field-notes): a
// *sitter.Parser is used by one goroutine only; every *sitter.Tree is closed; a parser
// is Reset after a nil or timed-out parse.
package grammars

import (
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"

	sitter "github.com/smacker/go-tree-sitter"
)

// Definition kinds a Spec maps node types to. They match chunker's Kind values.
const (
	Function = "function"
	Class    = "class"
	Property = "property"
)

// Spec describes one language. All node-type sets use tree-sitter node type names.
type Spec struct {
	// Name is the language's lower-case name, e.g. "kotlin". Unique in the registry.
	Name string
	// Version identifies the grammar and these rules; bump it when either changes so
	// that cached chunks keyed by it are rebuilt.
	Version string
	// Extensions are the file name suffixes, with the dot, e.g. ".kt".
	Extensions []string
	// Language returns the tree-sitter language.
	Language func() *sitter.Language
	// Definitions maps definition node types to one of Function, Class or Property.
	Definitions map[string]string
	// Wrappers are definition-like node types whose kind and name come from the first
	// child that is a definition (Python's decorated_definition). The wrapper's span
	// (decorators included) is the definition's span.
	Wrappers map[string]bool
	// Bodies are node types that hold a definition's members or statements
	// (class_body, block, function_body). Splitting an oversized definition descends
	// into its last body child; a signature ends where the first body child starts.
	Bodies map[string]bool
	// IndentEnds says that the grammar may end a node after the line break and
	// indentation that follow its last token (tree-sitter-scala's indented blocks
	// end at the next line's indentation): the chunker then takes the node's last
	// line to be the one of that line break.
	IndentEnds bool
	// DefLines match a line that opens a definition, for text the parser could not
	// place (inside an ERROR node): the chunker recovers such definitions, with
	// their names, from the text (see [DefLine]). Nil: none.
	DefLines []DefLine
	// ErrorDefsFromText says that a definition node that holds a parse error (or
	// lies inside an ERROR node) is taken from its text by DefLines when the tree
	// misread it: its text, by its braces or indentation, runs past the node (a
	// broken `match` case ended the method, and the class holding it, at the
	// error), or a line inside it opens a definition that no definition node
	// starts on (the error hid the members after it). The definition's first line
	// must match a DefLine; the recovered definitions are flagged parse_error.
	ErrorDefsFromText bool
	// NotDefLine, if not nil, matches lines that open no definition though a
	// DefLine matches them (C++: a statement keyword where a return type is
	// expected, `if MACRO (x) {`).
	NotDefLine *Regexp
	// CharQuotes says that `'` quotes one character only (a char literal): a `'`
	// that opens none is a lifetime or a symbol ('a, 'static, 'sym), not the start
	// of a string, when the chunker matches braces in text (DefLines).
	CharQuotes bool
	// BlocksByIndent says that blocks end by indentation (or an `end` line), never
	// by braces (Python, Ruby): the chunker ends a definition it reads from the text
	// (DefLines) where its indentation ends, not at a brace.
	BlocksByIndent bool
	// SwallowLines match a line that, at column 0 inside a definition that starts at
	// column 0 and holds a parse error, opens a definition of its own: the parser let
	// the first definition swallow it (an object literal missing its closing brace
	// takes the functions after it). The first definition ends before that line; the
	// lines from there on are searched by DefLines (see [DefLine]). Nil: none.
	SwallowLines []DefLine
	// SelfBodies are definition node types that hold their members as direct
	// children, with no body node (Scala 3's `extension (s: String)` followed by
	// its methods): Body returns the definition itself, and its signature ends
	// where its first member starts.
	SelfBodies map[string]bool
	// Trailers are node types that belong to the definition before them, which a
	// grammar puts beside it (fwcd: a property's getter and setter on the next lines).
	Trailers map[string]bool
	// Comments are comment node types. A run of comment lines directly above a
	// definition (no blank line between) belongs to that definition.
	Comments map[string]bool
	// CommentBytes are bytes of which every comment node has one on its last line
	// (Kotlin "/", Python "#"). A node whose last line, up to the node's end, holds
	// none of them does not end in a comment, which lets the chunker skip a tree walk.
	// Empty means no such bytes are known.
	CommentBytes string
	// LeadingLine matches a line that, directly above a definition (no blank line
	// between), belongs to it: comments and annotations/decorators. Matching is by text
	// because grammars misplace such lines (a KDoc inside import_header, an annotation
	// parsed as an expression).
	LeadingLine *Regexp
	// CommentLine matches the leading lines that are comment text (not annotations or
	// decorators). A comment run that would make its definition's first chunk exceed the
	// size cap is not attached to it but becomes a chunk of its own; the annotation
	// lines below it stay with the definition. Nil means every leading line is comment.
	CommentLine *Regexp
	// SignatureSkip are node types left out of signature text (annotations, comments).
	SignatureSkip map[string]bool
	// SignatureSkipBytes are bytes one of which starts every node of a SignatureSkip
	// type (Kotlin "@/": annotations and comments, Python "#"). Signature skips its
	// search for such nodes when the signature text holds none of these bytes. Empty
	// means no such bytes are known.
	SignatureSkipBytes string
	// DefName returns the name a definition node defines, or "".
	DefName func(n *sitter.Node, src []byte) string
	// Rewrite, if not nil, returns a copy of src of the same length in bytes (so byte
	// offsets are unchanged) in which constructs the grammar mis-parses are replaced by
	// equivalent ones it parses. The rewritten text is only parsed, never shown. Set
	// by [Attach] from the language's package (see [Rules]), not in the spec file.
	Rewrite func(src []byte) []byte
	// Imports returns the file's package (Kotlin's package header; "" where the
	// language derives it from the path) and its imports, in source order.
	Imports func(root *sitter.Node, src []byte) (pkg string, imports []Import)
	// Keywords are the language's reserved words (used to tell identifiers from syntax).
	Keywords []string
	// Recover, if not nil, tells the chunker how to chunk a file with parse errors
	// along its text outline (see Recovery); nil keeps the chunker on the tree alone.
	// Set by [Attach], like Rewrite.
	Recover *Recovery
	// Family names the group of languages whose files a completion in this language
	// retrieves from and resolves names in (see [Family]): Kotlin and Java share
	// "jvm", TypeScript, TSX and JavaScript "javascript", C and C++ "c". Empty means
	// the language alone.
	Family string
	// Flatten are node types whose children count as items of the level that holds
	// them, for chunking and for the definitions of symbols: containers that are not
	// definitions themselves, such as the C preprocessor's #ifdef blocks (an include
	// guard holds a whole header) or Java's enum_body_declarations (an enum's methods).
	Flatten map[string]bool
	// BodyDepth is how deep below a definition node its body (a node of a Bodies type)
	// may be: 0 or 1 means a direct child only; more lets [Spec.Body] search named
	// descendants breadth-first, not entering other definitions, down to that depth
	// (JavaScript's `const f = () => {...}` holds its statement_block three levels
	// down, C's `typedef struct {...} T;` its field list two levels down).
	BodyDepth int
	// Strings are string literal node types (raw, multi-line, template and heredoc
	// strings included). `dataset from-git` takes no middle line that starts inside a
	// multi-line string or comment (found with these and Comments in the syntax tree;
	// Kotlin and Python use their own lexical scanners).
	Strings map[string]bool
	// SkipLine matches a line, without its indentation, that is not code worth
	// completing though it may look like it: comments, imports, package lines
	// (`dataset from-git` takes no middle with such a line). Nil: none.
	SkipLine *Regexp
	// ImportsByPath says that an import names files by their path (relative to the
	// importing file or as a suffix of a repository path: JavaScript's "./util",
	// Go's "github.com/a/b/pkg", C's "util/foo.h", Rust's "crate::model"), not by a
	// package the files declare (Kotlin, Java, C#). Import.Module then holds a
	// slash-separated path. Python keeps its own dotted-module rules.
	ImportsByPath bool

	kwOnce sync.Once
	kw     map[string]bool

	namesOnce sync.Once
	names     *symbolNames // for TypeOf
}

// DefLine is a pattern of a line that opens a definition of kind Kind (Function,
// Class or Property), whose first submatch is the defined name. A match whose name
// is a keyword of the language (`if (x) {`) does not count. The definition runs
// from that line to the line of the brace that closes the first `{` opened on it
// (or starting the next line, Allman style), or to the line before the next
// definition line indented no deeper, whichever comes first.
type DefLine struct {
	Kind string
	Re   *Regexp
}

var (
	mu     sync.RWMutex
	byName = map[string]*Spec{}
	byExt  = map[string]*Spec{}
)

// Register adds s to the registry. It returns an error if s has no name, language or
// extension, or if its name or one of its extensions is already registered.
func Register(s *Spec) error {
	if s == nil || s.Name == "" || s.Language == nil || len(s.Extensions) == 0 {
		return fmt.Errorf("grammars: spec needs a name, a language and extensions")
	}
	mu.Lock()
	defer mu.Unlock()
	if _, dup := byName[s.Name]; dup {
		return fmt.Errorf("grammars: language %q registered twice", s.Name)
	}
	for _, e := range s.Extensions {
		if o, dup := byExt[strings.ToLower(e)]; dup {
			return fmt.Errorf("grammars: extension %q claimed by %q and %q", e, o.Name, s.Name)
		}
	}
	byName[s.Name] = s
	for _, e := range s.Extensions {
		byExt[strings.ToLower(e)] = s
	}
	return nil
}

// MustRegister is Register that panics on error; for init functions.
func MustRegister(s *Spec) {
	if err := Register(s); err != nil {
		panic(err)
	}
}

// Lookup returns the spec registered under name, or nil.
func Lookup(name string) *Spec {
	mu.RLock()
	defer mu.RUnlock()
	return byName[name]
}

// ForPath returns the spec for a file path by its extension (case-insensitive), or nil
// if no registered language claims it.
func ForPath(p string) *Spec {
	mu.RLock()
	defer mu.RUnlock()
	return byExt[strings.ToLower(path.Ext(p))]
}

// Names returns the registered language names, sorted.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]string, 0, len(byName))
	for n := range byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Family returns the registered languages that a completion in language name
// retrieves from: those with name's [Spec.Family], sorted, or just name when it has
// no family (or is not registered).
func Family(name string) []string {
	mu.RLock()
	defer mu.RUnlock()
	s := byName[name]
	if s == nil || s.Family == "" {
		return []string{name}
	}
	var out []string
	for n, o := range byName {
		if o.Family == s.Family {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// IsKeyword reports whether word is a reserved word of the language.
func (s *Spec) IsKeyword(word string) bool {
	s.kwOnce.Do(func() {
		s.kw = make(map[string]bool, len(s.Keywords))
		for _, k := range s.Keywords {
			s.kw[k] = true
		}
	})
	return s.kw[word]
}

// TypeOf returns n.Type() for a node of a tree in s's language. It reads a table of
// the language's symbol names (one cgo call, no allocation) where Type copies a C
// string per call. tree-sitter names a node by its symbol, and Symbol returns the
// public symbol, which tree-sitter maps to a symbol of the same name.
func (s *Spec) TypeOf(n *sitter.Node) string {
	s.namesOnce.Do(func() { s.names = &symbolNames{lang: s.Language} })
	return s.names.typeOf(n)
}

// symbolNames is a lazily filled table of a language's symbol names (Spec.TypeOf).
type symbolNames struct {
	lang  func() *sitter.Language
	once  sync.Once
	names []string
}

// TypeOfSymbol is TypeOf for a node whose symbol is known (NodeInfo.Symbol): the
// same string, without the cgo call that reads the symbol.
func (s *Spec) TypeOfSymbol(n *sitter.Node, sym uint16) string {
	s.namesOnce.Do(func() { s.names = &symbolNames{lang: s.Language} })
	return s.names.typeOfSymbol(n, sym)
}

func (t *symbolNames) typeOf(n *sitter.Node) string {
	return t.typeOfSymbol(n, uint16(n.Symbol()))
}

func (t *symbolNames) typeOfSymbol(n *sitter.Node, sym uint16) string {
	t.once.Do(func() {
		lang := t.lang()
		t.names = make([]string, lang.SymbolCount())
		for i := range t.names {
			t.names[i] = lang.SymbolName(sitter.Symbol(i))
		}
	})
	if int(sym) < len(t.names) {
		return t.names[sym]
	}
	return n.Type() // ERROR and other built-in symbols past the table
}

// set is a helper for building node-type sets.
func set(types ...string) map[string]bool {
	m := make(map[string]bool, len(types))
	for _, t := range types {
		m[t] = true
	}
	return m
}

// firstChildOfType returns the text of the first direct child of n whose type is one of
// types, or "". names is the symbol table of n's language.
func firstChildOfType(names *symbolNames, n *sitter.Node, src []byte, types ...string) string {
	for i, cnt := 0, int(n.ChildCount()); i < cnt; i++ {
		c := n.Child(i)
		ct := names.typeOf(c)
		for _, t := range types {
			if ct == t {
				return c.Content(src)
			}
		}
	}
	return ""
}

package grammars

import (
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/c"
)

// C is the spec for C (tree-sitter-c 0.21 as bundled by smacker), for .c files;
// headers (.h) are C++ (see CPP), as universal-ctags has it: the C++ grammar reads
// C headers too, the C grammar not C++ ones. Preprocessor conditionals are
// flattened, so the definitions inside an include guard or an #ifdef are found;
// `typedef struct {...} T;` finds its field list through BodyDepth. #include
// names a path. Its Rewrite (package languages/c) blanks the `extern "C" {` idiom of
// headers, include guards and unbalanced conditionals, and macros around declarations.
var C = &Spec{
	Name:       "c",
	Version:    "c-0.21.4/r9",
	Extensions: []string{".c"},
	Language:   c.GetLanguage,
	Definitions: map[string]string{
		"function_definition":  Function,
		"struct_specifier":     Class,
		"union_specifier":      Class,
		"enum_specifier":       Class,
		"type_definition":      Property,
		"declaration":          Property,
		"preproc_def":          Property,
		"preproc_function_def": Property,
	},
	Bodies:             set("compound_statement", "field_declaration_list", "enumerator_list"),
	BodyDepth:          2,
	Flatten:            set("preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "preproc_elifdef"),
	Comments:           set("comment"),
	CommentBytes:       "/",
	SignatureSkip:      set("comment"),
	SignatureSkipBytes: "/",
	LeadingLine:        LazyRegexp(`^[ \t]*(//|/\*|\*)`),
	DefName:            cName(&symbolNames{lang: c.GetLanguage}),
	DefLines:           cDefLines,
	NotDefLine:         cppStatement,
	ErrorDefsFromText:  true,
	CharQuotes:         true,
	Imports:            cIncludes(&symbolNames{lang: c.GetLanguage}),
	Family:             "c",
	ImportsByPath:      true,
	Strings:            set("string_literal", "char_literal", "concatenated_string"),
	SkipLine:           LazyRegexp(`^(//|/\*|\*|#\s*(include|pragma|if|ifdef|ifndef|endif|else|elif)\b)`),
	Keywords:           cKeywords,
}

func init() { MustRegister(C) }

// cKeywords are C's reserved words, with the common macros that read as syntax.
var cKeywords = []string{
	"auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
	"enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
	"restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch",
	"typedef", "union", "unsigned", "void", "volatile", "while", "_Bool", "_Complex",
	"_Atomic", "_Generic", "_Noreturn", "_Static_assert", "_Thread_local", "bool", "true",
	"false", "NULL", "define", "include", "ifdef", "ifndef", "endif", "elif", "pragma",
}

// cName returns the DefName of the C-like grammar whose symbol table is names: the
// name of a struct, union, enum, class or namespace; for functions, declarations
// and typedefs the identifier their declarator declares (through pointers, arrays,
// parentheses, initialisers and function declarators; the last component of a
// qualified name such as Box<T>::get).
func cName(names *symbolNames) func(n *sitter.Node, src []byte) string {
	return func(n *sitter.Node, src []byte) string {
		switch names.typeOf(n) {
		case "function_definition":
			if nm, ok := testMacroName(names, n, src); ok {
				return nm
			}
			return declaratorName(names, n.ChildByFieldName("declarator"), src)
		case "declaration", "type_definition", "field_declaration":
			if nm := declaratorName(names, n.ChildByFieldName("declarator"), src); nm != "" {
				return nm
			}
			// `struct spec_handler {...};` in a class body, `enum {...};`: the
			// declaration declares its type only, which names it.
			if ty := n.ChildByFieldName("type"); ty != nil {
				switch names.typeOf(ty) {
				case "struct_specifier", "class_specifier", "union_specifier", "enum_specifier":
					return cName(names)(ty, src)
				}
			}
			return ""
		case "preproc_def", "preproc_function_def":
			return text(n.ChildByFieldName("name"), src)
		}
		if c := n.ChildByFieldName("name"); c != nil {
			return text(c, src)
		}
		if names.typeOf(n) == "enum_specifier" {
			// An unnamed enum (`enum { packed_arg_bits = 4 };`) is named by its
			// first enumerator, the constant a use refers to.
			if body := n.ChildByFieldName("body"); body != nil {
				for _, c := range Children(body) {
					if names.typeOf(c) == "enumerator" {
						return text(c.ChildByFieldName("name"), src)
					}
				}
			}
		}
		return ""
	}
}

// testMacroName returns the name of a function definition that is a test
// framework's macro heading a body (`TEST_CASE("adds", "[math]") {`, `TEST_F(Suite,
// Name) {`, `SCENARIO("x") {`): one with no return type whose declarator is an
// all-caps name with arguments. The name is the first string argument's text, or
// else the identifier arguments joined with "." (gtest's Suite.Name); ok is false
// for any other definition.
func testMacroName(names *symbolNames, n *sitter.Node, src []byte) (string, bool) {
	if n.ChildByFieldName("type") != nil {
		return "", false
	}
	d := n.ChildByFieldName("declarator")
	if d == nil || names.typeOf(d) != "function_declarator" {
		return "", false
	}
	id, params := d.ChildByFieldName("declarator"), d.ChildByFieldName("parameters")
	if id == nil || params == nil || names.typeOf(id) != "identifier" || !upperName(text(id, src)) {
		return "", false
	}
	args := text(params, src)
	args = strings.TrimSuffix(strings.TrimPrefix(args, "("), ")")
	var idents []string
	for _, a := range splitArgs(args) {
		a = strings.TrimSpace(a)
		if strings.HasPrefix(a, `"`) {
			if e := closingQuote(a); e > 1 { // an empty string names nothing
				return a[1:e], true
			}
			continue
		}
		if a != "" && isIdentifier(a) {
			idents = append(idents, a)
		}
	}
	if len(idents) == 0 {
		return "", false
	}
	return strings.Join(idents, "."), true
}

// upperName reports whether s is an all-caps macro name: 2+ bytes of A-Z, 0-9 and
// _, a letter first.
func upperName(s string) bool {
	if len(s) < 2 || s[0] < 'A' || s[0] > 'Z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !('A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// isIdentifier reports whether s is one C identifier.
func isIdentifier(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return s != ""
}

// splitArgs splits a macro call's argument text at its top-level commas (not
// those inside brackets or string and character literals).
func splitArgs(s string) []string {
	var out []string
	d, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '(', '[', '{':
			d++
		case ')', ']', '}':
			d--
		case '"', '\'':
			for i++; i < len(s) && s[i] != c; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		case ',':
			if d == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// closingQuote returns the offset of the '"' that closes the string literal
// starting at s[0], or -1.
func closingQuote(s string) int {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}

// declaratorName follows a declarator to the name it declares.
func declaratorName(names *symbolNames, d *sitter.Node, src []byte) string {
	for depth := 0; d != nil && depth < 16; depth++ {
		switch names.typeOf(d) {
		case "identifier", "field_identifier", "type_identifier", "destructor_name", "operator_name", "primitive_type":
			return text(d, src)
		case "operator_cast":
			// `operator bool() const`: "operator bool" (the conversion's type).
			return strings.Join(strings.Fields("operator "+text(d.ChildByFieldName("type"), src)), " ")
		case "qualified_identifier":
			if nm := d.ChildByFieldName("name"); nm != nil {
				d = nm
				continue
			}
			return text(d, src)
		case "template_function", "template_type":
			d = d.ChildByFieldName("name")
			continue
		}
		next := d.ChildByFieldName("declarator")
		if next == nil {
			// parenthesized_declarator and others without the field: first named child.
			for _, c := range Children(d) {
				if c.IsNamed() {
					next = c
					break
				}
			}
		}
		d = next
	}
	return ""
}

// cIncludes returns the Imports of the C-like grammar whose symbol table is names:
// every #include, at any depth of preprocessor conditionals, as a star import of its
// path ("util/foo.h", "stdio.h").
func cIncludes(names *symbolNames) func(root *sitter.Node, src []byte) (string, []Import) {
	return func(root *sitter.Node, src []byte) (string, []Import) {
		var out []Import
		var walk func(n *sitter.Node, depth int)
		walk = func(n *sitter.Node, depth int) {
			for _, c := range Children(n) {
				switch names.typeOf(c) {
				case "preproc_include":
					p := strings.Trim(text(c.ChildByFieldName("path"), src), `"<> `)
					if p != "" {
						out = append(out, Import{Module: p, Star: true, Line: line(c)})
					}
				case "preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "preproc_elifdef",
					"linkage_specification", "declaration_list":
					if depth < 8 {
						walk(c, depth+1)
					}
				}
			}
		}
		walk(root, 0)
		return "", out
	}
}

// cDefLines are the definition lines of C (see Spec.DefLines), for text the parser
// misread (a file cut inside a function): structs and unions with a body, and the
// function line of C++ (cppDefLines), never after a statement keyword.
var cDefLines = []DefLine{
	{Class, LazyRegexp(`^[ \t]*(?:typedef\s+)?(?:struct|union)\s+([A-Za-z_]\w*)\s*\{?\s*$`)},
	cppDefLines[1],
}

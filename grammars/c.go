package grammars

import (
	"regexp"
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
	Version:    "c-0.21.4/r7",
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
	LeadingLine:        regexp.MustCompile(`^[ \t]*(//|/\*|\*)`),
	DefName:            cName(&symbolNames{lang: c.GetLanguage}),
	Imports:            cIncludes(&symbolNames{lang: c.GetLanguage}),
	Family:             "c",
	ImportsByPath:      true,
	Strings:            set("string_literal", "char_literal", "concatenated_string"),
	SkipLine:           regexp.MustCompile(`^(//|/\*|\*|#\s*(include|pragma|if|ifdef|ifndef|endif|else|elif)\b)`),
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
		case "function_definition", "declaration", "type_definition", "field_declaration":
			return declaratorName(names, n.ChildByFieldName("declarator"), src)
		case "preproc_def", "preproc_function_def":
			return text(n.ChildByFieldName("name"), src)
		}
		if c := n.ChildByFieldName("name"); c != nil {
			return text(c, src)
		}
		return ""
	}
}

// declaratorName follows a declarator to the name it declares.
func declaratorName(names *symbolNames, d *sitter.Node, src []byte) string {
	for depth := 0; d != nil && depth < 16; depth++ {
		switch names.typeOf(d) {
		case "identifier", "field_identifier", "type_identifier", "destructor_name", "operator_name", "primitive_type":
			return text(d, src)
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

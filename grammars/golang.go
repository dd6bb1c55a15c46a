package grammars

import (
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/golang"
)

// Go is the spec for Go (tree-sitter-go as bundled by smacker). Methods are top-level
// declarations (their receiver is in the signature); a type declaration's struct or
// interface body is found by BodyDepth (type_declaration > type_spec > struct_type >
// field_declaration_list). Imports name package paths; a package is a folder.
var Go = &Spec{
	Name:       "go",
	Version:    "go-6204b73/r2",
	Extensions: []string{".go"},
	Language:   golang.GetLanguage,
	Definitions: map[string]string{
		"function_declaration": Function,
		"method_declaration":   Function,
		"type_declaration":     Class,
		"var_declaration":      Property,
		"const_declaration":    Property,
	},
	Bodies:             set("block", "field_declaration_list", "interface_type"),
	BodyDepth:          3,
	Comments:           set("comment"),
	CommentBytes:       "/",
	SignatureSkip:      set("comment"),
	SignatureSkipBytes: "/",
	LeadingLine:        LazyRegexp(`^[ \t]*(//|/\*|\*)`),
	DefName:            goName,
	DefLines:           goDefLines,
	ErrorDefsFromText:  true,
	CharQuotes:         true,
	Imports:            goImports,
	ImportsByPath:      true,
	Strings:            set("raw_string_literal", "interpreted_string_literal"),
	SkipLine:           LazyRegexp(`^(//|/\*|\*|import[\s(]|package\s)`),
	Keywords: []string{
		"break", "case", "chan", "const", "continue", "default", "defer", "else", "fallthrough",
		"for", "func", "go", "goto", "if", "import", "interface", "map", "package", "range",
		"return", "select", "struct", "switch", "type", "var", "true", "false", "nil", "iota",
	},
}

func init() { MustRegister(Go) }

// goNames is the Go symbol table for goName and goImports.
var goNames = &symbolNames{lang: golang.GetLanguage}

// goName returns the declared name; for a grouped declaration (`type (...)`,
// `var (...)`), the first one.
func goName(n *sitter.Node, src []byte) string {
	switch goNames.typeOf(n) {
	case "type_declaration", "var_declaration", "const_declaration":
		for _, c := range Children(n) {
			switch goNames.typeOf(c) {
			case "type_spec", "type_alias", "var_spec", "const_spec":
				return text(c.ChildByFieldName("name"), src)
			case "var_spec_list", "const_spec_list":
				for _, s := range Children(c) {
					if t := goNames.typeOf(s); t == "var_spec" || t == "const_spec" {
						return text(s.ChildByFieldName("name"), src)
					}
				}
			}
		}
		return ""
	}
	return text(n.ChildByFieldName("name"), src)
}

// goImports reads the import declarations: the package path as Module, an explicit
// package name as Alias, a dot import as Star (a blank import `_` is kept, unnamed).
// The package clause is not returned: a Go package is its folder.
func goImports(root *sitter.Node, src []byte) (string, []Import) {
	var out []Import
	add := func(spec *sitter.Node) {
		im := Import{Module: strings.Trim(text(spec.ChildByFieldName("path"), src), "\"`"), Line: line(spec)}
		switch name := text(spec.ChildByFieldName("name"), src); name {
		case ".":
			im.Star = true
		case "", "_":
		default:
			im.Alias = name
		}
		out = append(out, im)
	}
	for _, c := range Children(root) {
		if goNames.typeOf(c) != "import_declaration" {
			continue
		}
		for _, k := range Children(c) {
			switch goNames.typeOf(k) {
			case "import_spec":
				add(k)
			case "import_spec_list":
				for _, s := range Children(k) {
					if goNames.typeOf(s) == "import_spec" {
						add(s)
					}
				}
			}
		}
	}
	return "", out
}

// goDefLines are the definition lines of Go (see Spec.DefLines), for text the parser
// misread (an unclosed call that swallowed the functions after it): functions and
// methods, and struct and interface types. No statement starts with `func` and a
// name (a function literal has none) or with `type`.
var goDefLines = []DefLine{
	{Class, LazyRegexp(`^[ \t]*type\s+([A-Za-z_]\w*)(?:\[[^\]]*\])?\s+(?:struct|interface)\b`)},
	{Function, LazyRegexp(`^[ \t]*func\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)\s*[(\[]`)},
}

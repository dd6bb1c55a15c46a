package grammars

import (
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/rust"
)

// Rust is the spec for Rust (tree-sitter-rust 0.21 as bundled by smacker). impl, trait
// and mod blocks hold their items in a declaration_list; attributes (#[derive]) are
// sibling nodes above an item, attached as leading lines; inner doc comments are not. `use` paths become
// slash paths matched as path suffixes (crate::, self:: and super:: dropped).
var Rust = &Spec{
	Name:       "rust",
	Version:    "rust-0.21.2/r3",
	Extensions: []string{".rs"},
	Language:   rust.GetLanguage,
	Definitions: map[string]string{
		"function_item":           Function,
		"function_signature_item": Function,
		"macro_definition":        Function,
		"struct_item":             Class,
		"enum_item":               Class,
		"union_item":              Class,
		"trait_item":              Class,
		"impl_item":               Class,
		"mod_item":                Class,
		"const_item":              Property,
		"static_item":             Property,
		"type_item":               Property,
	},
	Bodies:             set("declaration_list", "block", "field_declaration_list", "enum_variant_list"),
	Comments:           set("line_comment", "block_comment"),
	CommentBytes:       "/",
	SignatureSkip:      set("line_comment", "block_comment", "attribute_item"),
	SignatureSkipBytes: "/#",
	// Inner doc comments (`//!`, `/*!`) document the enclosing crate or module,
	// not the item below them: they are no leading lines.
	LeadingLine: LazyRegexp(`^[ \t]*(//($|[^!])|/\*($|[^!])|\*|#\[)`),
	// An extern block's items (`extern "C" { fn abs(x: i32) -> i32; }`) are items of
	// the level that holds the block.
	Flatten:  set("foreign_mod_item", "declaration_list"),
	DefName:  rustName,
	DefLines: rustDefLines,
	// A broken match arm or macro call inside a function can end the function,
	// and the impl holding it, at the error.
	ErrorDefsFromText: true,
	CharQuotes:        true,
	Imports:           rustImports,
	ImportsByPath:     true,
	Strings:           set("string_literal", "raw_string_literal"),
	SkipLine:          LazyRegexp(`^(//|/\*|\*|use\s|extern\s+crate\s|mod\s+\w+;)`),
	Keywords: []string{
		"as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum",
		"extern", "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod",
		"move", "mut", "pub", "ref", "return", "self", "Self", "static", "struct", "super",
		"trait", "true", "type", "unsafe", "use", "where", "while", "union", "macro_rules",
		"Some", "None", "Ok", "Err",
	},
}

func init() { MustRegister(Rust) }

// rustNames is the Rust symbol table for rustName and rustImports.
var rustNames = &symbolNames{lang: rust.GetLanguage}

// rustName returns the item's name; an impl block is named by its type (`impl<T>
// Display for Foo<T>` is "Foo").
func rustName(n *sitter.Node, src []byte) string {
	if rustNames.typeOf(n) == "impl_item" {
		t := n.ChildByFieldName("type")
		for t != nil && rustNames.typeOf(t) == "generic_type" {
			t = t.ChildByFieldName("type")
		}
		s := text(t, src)
		if i := strings.LastIndex(s, "::"); i >= 0 {
			s = s[i+2:]
		}
		return s
	}
	return text(n.ChildByFieldName("name"), src)
}

// rustImports reads `use` declarations at the top level and in modules' bodies
// (`use a::b::C;`, `use a::{b, c as d};`, `use a::*;`, nested lists).
func rustImports(root *sitter.Node, src []byte) (string, []Import) {
	var out []Import
	var use func(n *sitter.Node, prefix string, ln int)
	use = func(n *sitter.Node, prefix string, ln int) {
		join := func(a, b string) string {
			if a == "" {
				return b
			}
			if b == "" {
				return a
			}
			return a + "::" + b
		}
		switch rustNames.typeOf(n) {
		case "scoped_identifier", "identifier", "crate", "self", "super":
			full := join(prefix, text(n, src))
			mod, name := full, ""
			if i := strings.LastIndex(full, "::"); i >= 0 {
				mod, name = full[:i], full[i+2:]
			}
			if name == "" || name == "self" {
				out = append(out, Import{Module: rustModule(mod), Line: ln})
			} else {
				out = append(out, Import{Module: rustModule(mod), Name: name, Line: ln})
			}
		case "use_as_clause":
			path := n.ChildByFieldName("path")
			before := len(out)
			use(path, prefix, ln)
			if len(out) > before {
				out[len(out)-1].Alias = text(n.ChildByFieldName("alias"), src)
			}
		case "use_wildcard":
			p := ""
			for _, c := range Children(n) {
				if c.IsNamed() {
					p = text(c, src)
				}
			}
			out = append(out, Import{Module: rustModule(join(prefix, p)), Star: true, Line: ln})
		case "scoped_use_list":
			p := join(prefix, text(n.ChildByFieldName("path"), src))
			if l := n.ChildByFieldName("list"); l != nil {
				use(l, p, ln)
			}
		case "use_list":
			for _, c := range Children(n) {
				if c.IsNamed() {
					use(c, prefix, ln)
				}
			}
		}
	}
	var walk func(n *sitter.Node, depth int)
	walk = func(n *sitter.Node, depth int) {
		for _, c := range Children(n) {
			switch rustNames.typeOf(c) {
			case "use_declaration":
				if a := c.ChildByFieldName("argument"); a != nil {
					use(a, "", line(c))
				}
			case "mod_item":
				if b := c.ChildByFieldName("body"); b != nil && depth < 4 {
					walk(b, depth+1)
				}
			}
		}
	}
	walk(root, 0)
	return "", out
}

// rustModule turns a use path into the slash path symbols matches as a path
// suffix: "crate::a::b" -> "a/b", "std::fmt" -> "std/fmt"; leading self:: and
// super:: go too ("super::util" -> "util"): where they lead depends on whether
// the file is a mod.rs, and a suffix match finds the module either way.
func rustModule(p string) string {
	parts := strings.Split(p, "::")
	i := 0
	for i < len(parts) && (parts[i] == "crate" || parts[i] == "self" || parts[i] == "super") {
		i++
	}
	return strings.Join(parts[i:], "/")
}

// rustVisibility is an item's optional visibility: pub, pub(crate), pub(in path).
const rustVisibility = `(?:pub(?:\s*\([^)]*\))?\s+)?`

// rustDefLines are the definition lines of Rust (see Spec.DefLines), for text the
// parser misread: structs, enums, unions, traits and modules, impl blocks (named by
// their type, as rustName names them: `impl<T> fmt::Display for Foo<T>` is Foo),
// functions with any qualifiers, and macro_rules! macros. A statement never starts
// with these keywords (`let`, calls, match arms and closures do not match).
var rustDefLines = []DefLine{
	{Class, LazyRegexp(`^[ \t]*` + rustVisibility + `(?:(?:unsafe|auto)\s+)*(?:struct|enum|union|trait|mod)\s+([A-Za-z_]\w*)`)},
	{Class, LazyRegexp(`^[ \t]*(?:unsafe\s+)?impl\b(?:\s*<[^{]*?>)?\s+!?(?:[^{]*?\s+for\s+)?(?:[\w]+::)*([A-Za-z_]\w*)`)},
	{Function, LazyRegexp(`^[ \t]*` + rustVisibility + `(?:(?:const|async|unsafe|safe|default|extern(?:\s+"[^"]*")?)\s+)*fn\s+([A-Za-z_]\w*)`)},
	{Function, LazyRegexp(`^[ \t]*macro_rules!\s*([A-Za-z_]\w*)`)},
}

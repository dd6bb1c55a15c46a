package grammars

import (
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/javascript"
)

// JavaScript is the spec for JavaScript with JSX (tree-sitter-javascript 0.21 as
// bundled by smacker). `const f = () => {...}` is a definition (a Property, whose
// body BodyDepth finds); export statements are wrappers; decorators above class
// members are leading lines.
var JavaScript = &Spec{
	Name:       "javascript",
	Version:    "javascript-0.21.4/r6",
	Extensions: []string{".js", ".mjs", ".cjs", ".jsx"},
	Language:   javascript.GetLanguage,
	Definitions: map[string]string{
		"class_declaration":              Class,
		"class":                          Class,
		"function_declaration":           Function,
		"generator_function_declaration": Function,
		"function_expression":            Function, // only as a wrapper's child: export default function () {}
		"method_definition":              Function,
		"lexical_declaration":            Property,
		"variable_declaration":           Property,
		"field_definition":               Property,
	},
	Wrappers:           set("export_statement"),
	Bodies:             set("class_body", "statement_block", "object", "array"),
	BodyDepth:          3,
	Comments:           set("comment", "html_comment"),
	CommentBytes:       "/>",
	SignatureSkip:      set("decorator", "comment"),
	SignatureSkipBytes: "@/",
	LeadingLine:        LazyRegexp(`^[ \t]*(//|/\*|\*|@)`),
	ErrorDefsFromText:  true,
	DefLines:           jsDefLines,
	SwallowLines:       jsSwallowLines,
	DefName:            jsName(&symbolNames{lang: javascript.GetLanguage}),
	Imports:            jsImports(&symbolNames{lang: javascript.GetLanguage}),
	Family:             "javascript",
	ImportsByPath:      true,
	Strings:            set("string", "template_string"),
	SkipLine:           LazyRegexp(`^(//|/\*|\*|import\s)`),
	Keywords:           jsKeywords,
}

func init() { MustRegister(JavaScript) }

// jsKeywords are JavaScript's reserved words and literals, with the contextual
// keywords that read as syntax.
var jsKeywords = []string{
	"break", "case", "catch", "class", "const", "continue", "debugger", "default", "delete",
	"do", "else", "export", "extends", "finally", "for", "function", "if", "import", "in",
	"instanceof", "new", "return", "super", "switch", "this", "throw", "try", "typeof", "var",
	"void", "while", "with", "yield", "let", "static", "enum", "await", "async", "of", "get",
	"set", "true", "false", "null", "undefined", "from", "as",
}

// jsName returns the DefName of the JavaScript-like grammar whose symbol table is
// names: the name field, the first declarator's name of a variable declaration,
// "default" for an anonymous default export.
func jsName(names *symbolNames) func(n *sitter.Node, src []byte) string {
	return func(n *sitter.Node, src []byte) string {
		switch names.typeOf(n) {
		case "lexical_declaration", "variable_declaration":
			for _, c := range Children(n) {
				if names.typeOf(c) == "variable_declarator" {
					return text(c.ChildByFieldName("name"), src)
				}
			}
			return ""
		case "class", "function_expression":
			if c := n.ChildByFieldName("name"); c != nil {
				return text(c, src)
			}
			return "default"
		case "module":
			return strings.Trim(text(n.ChildByFieldName("name"), src), `"'`)
		}
		if c := n.ChildByFieldName("name"); c != nil {
			return text(c, src)
		}
		if c := n.ChildByFieldName("property"); c != nil { // TypeScript's public_field_definition
			return text(c, src)
		}
		return ""
	}
}

// jsImports returns the Imports of the JavaScript-like grammar whose symbol table is
// names: import statements (default, namespace and named imports; side-effect
// imports as a module), `import x = require("m")` (TypeScript) and top-level
// `const x = require("m")` / `const {a, b: c} = require("m")`. Modules are the
// source strings ("./util", "lodash").
func jsImports(names *symbolNames) func(root *sitter.Node, src []byte) (string, []Import) {
	return func(root *sitter.Node, src []byte) (string, []Import) {
		var out []Import
		for _, c := range Children(root) {
			switch names.typeOf(c) {
			case "import_statement":
				mod := jsString(c.ChildByFieldName("source"), src)
				base := Import{Module: mod, Line: line(c)}
				n := len(out)
				for _, k := range Children(c) {
					switch names.typeOf(k) {
					case "import_clause":
						out = append(out, jsClause(names, k, src, base)...)
					case "import_require_clause":
						im := base
						for _, r := range Children(k) {
							switch names.typeOf(r) {
							case "identifier":
								im.Alias = text(r, src)
							case "string":
								im.Module = jsString(r, src)
							}
						}
						out = append(out, im)
					}
				}
				if len(out) == n && mod != "" {
					out = append(out, base)
				}
			case "lexical_declaration", "variable_declaration":
				for _, d := range Children(c) {
					if names.typeOf(d) != "variable_declarator" {
						continue
					}
					mod, ok := requireCall(names, d.ChildByFieldName("value"), src)
					if !ok {
						continue
					}
					base := Import{Module: mod, Line: line(c)}
					name := d.ChildByFieldName("name")
					switch names.typeOf(name) {
					case "identifier":
						im := base
						im.Alias = text(name, src)
						out = append(out, im)
					case "object_pattern":
						for _, p := range Children(name) {
							im := base
							switch names.typeOf(p) {
							case "shorthand_property_identifier_pattern":
								im.Name = text(p, src)
							case "pair_pattern":
								im.Name = text(p.ChildByFieldName("key"), src)
								im.Alias = text(p.ChildByFieldName("value"), src)
							default:
								continue
							}
							out = append(out, im)
						}
					default:
						out = append(out, base)
					}
				}
			}
		}
		return "", out
	}
}

// jsClause reads an import clause: `def`, `* as ns`, `{ a, b as c }`.
func jsClause(names *symbolNames, k *sitter.Node, src []byte, base Import) []Import {
	var out []Import
	for _, p := range Children(k) {
		switch names.typeOf(p) {
		case "identifier": // default import
			im := base
			im.Name, im.Alias = "default", text(p, src)
			out = append(out, im)
		case "namespace_import":
			im := base
			for _, q := range Children(p) {
				if names.typeOf(q) == "identifier" {
					im.Alias = text(q, src)
				}
			}
			out = append(out, im)
		case "named_imports":
			for _, s := range Children(p) {
				if names.typeOf(s) != "import_specifier" {
					continue
				}
				im := base
				im.Name = text(s.ChildByFieldName("name"), src)
				im.Alias = text(s.ChildByFieldName("alias"), src)
				out = append(out, im)
			}
		}
	}
	return out
}

// requireCall returns the module of a `require("m")` call.
func requireCall(names *symbolNames, v *sitter.Node, src []byte) (string, bool) {
	if v == nil || names.typeOf(v) != "call_expression" || text(v.ChildByFieldName("function"), src) != "require" {
		return "", false
	}
	args := v.ChildByFieldName("arguments")
	if args == nil {
		return "", false
	}
	for _, a := range Children(args) {
		if names.typeOf(a) == "string" {
			return jsString(a, src), true
		}
	}
	return "", false
}

// jsString returns a string literal's text without its quotes.
func jsString(n *sitter.Node, src []byte) string {
	return strings.Trim(text(n, src), "\"'`")
}

// jsDefLines are the definition lines of JavaScript and TypeScript (see
// Spec.DefLines): functions, classes (TypeScript: interfaces, enums and
// namespaces too), variables, get/set accessors (an indented `get name(...) {`, its
// body possibly on the same line: `get size() { return n }`), and methods (a name,
// parameters and `{` at the end of an indented line).
var jsDefLines = []DefLine{
	{Function, LazyRegexp(`^[ \t]*(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)`)},
	{Class, LazyRegexp(`^[ \t]*(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?(?:class|interface|enum|namespace)\s+([A-Za-z_$][\w$]*)`)},
	{Property, LazyRegexp(`^[ \t]*(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::[^=]*)?=`)},
	{Function, LazyRegexp(`^[ \t]+(?:(?:static|public|private|protected|override)\s+)*(?:get|set)\s+#?([A-Za-z_$][\w$]*)\s*\([^)]*\)\s*(?::\s*[^{;]+)?\{`)},
	{Function, LazyRegexp(`^[ \t]+(?:(?:static|async|get|set|public|private|protected|readonly|override)\s+)*\*?#?([A-Za-z_$][\w$]*)\s*(?:<[^>]*>)?\s*\([^;]*\)\s*(?::\s*[^{;]+)?\{\s*$`)},
}

// jsSwallowLines are the top-level definition openings of JavaScript and TypeScript
// that end a definition the parser let swallow them (see Spec.SwallowLines):
// functions, classes, and constants bound to an arrow function.
var jsSwallowLines = []DefLine{
	{Function, LazyRegexp(`^(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)`)},
	{Class, LazyRegexp(`^(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?(?:class|interface|enum|namespace)\s+([A-Za-z_$][\w$]*)`)},
	{Property, LazyRegexp(`^(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::[^=]*)?=\s*(?:async\s+)?(?:\([^)]*\)|[A-Za-z_$][\w$]*)\s*(?::[^=]*)?=>`)},
}

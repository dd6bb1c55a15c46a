package grammars

import (
	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/csharp"
)

// CSharp is the spec for C# (tree-sitter-c-sharp 0.21 as bundled by smacker).
// Attributes ([Serializable]) sit inside a declaration and are left out of headers;
// namespaces are flattened (a block namespace's types are items of the file, as
// after a file-scoped `namespace X;`), and the file's namespace is its package for
// `using` resolution. Its Rewrite (package languages/csharp) makes C# 12-14 constructs the grammar
// predates parse: empty collection expressions, file-based program directives, and
// conditionals around attributes or inside an expression. Definitions a parse error
// misread (a file cut inside a method) are taken from their text (csDefLines).
var CSharp = &Spec{
	Name:       "csharp",
	Version:    "csharp-0.21.3/r5",
	Extensions: []string{".cs"},
	Language:   csharp.GetLanguage,
	Definitions: map[string]string{
		"class_declaration":               Class,
		"struct_declaration":              Class,
		"interface_declaration":           Class,
		"enum_declaration":                Class,
		"record_declaration":              Class,
		"method_declaration":              Function,
		"constructor_declaration":         Function,
		"destructor_declaration":          Function,
		"operator_declaration":            Function,
		"conversion_operator_declaration": Function,
		"indexer_declaration":             Function,
		"property_declaration":            Property,
		"field_declaration":               Property,
		"event_field_declaration":         Property,
		"event_declaration":               Property,
		"delegate_declaration":            Property,
	},
	Bodies:             set("declaration_list", "block", "enum_member_declaration_list", "accessor_list"),
	Flatten:            set("namespace_declaration", "declaration_list"),
	Comments:           set("comment"),
	CommentBytes:       "/",
	SignatureSkip:      set("attribute_list", "comment"),
	SignatureSkipBytes: "[/",
	LeadingLine:        LazyRegexp(`^[ \t]*(//|/\*|\*|\[)`),
	DefName:            csName,
	DefLines:           csDefLines,
	ErrorDefsFromText:  true,
	Imports:            csImports,
	Strings:            set("string_literal", "verbatim_string_literal", "raw_string_literal", "interpolated_string_expression", "character_literal"),
	SkipLine:           LazyRegexp(`^(//|/\*|\*|using\s+[\w.=\s]+;|namespace\s|#(region|endregion|pragma|if|endif|else)\b)`),
	Keywords: []string{
		"abstract", "as", "base", "bool", "break", "byte", "case", "catch", "char", "checked",
		"class", "const", "continue", "decimal", "default", "delegate", "do", "double", "else",
		"enum", "event", "explicit", "extern", "false", "finally", "fixed", "float", "for",
		"foreach", "goto", "if", "implicit", "in", "int", "interface", "internal", "is", "lock",
		"long", "namespace", "new", "null", "object", "operator", "out", "override", "params",
		"private", "protected", "public", "readonly", "ref", "return", "sbyte", "sealed",
		"short", "sizeof", "stackalloc", "static", "string", "struct", "switch", "this",
		"throw", "true", "try", "typeof", "uint", "ulong", "unchecked", "unsafe", "ushort",
		"using", "virtual", "void", "volatile", "while", "var", "async", "await", "get", "set",
		"init", "value", "record", "where", "yield", "partial", "nameof", "dynamic",
	},
}

func init() { MustRegister(CSharp) }

// csNames is the C# symbol table for csName and csImports.
var csNames = &symbolNames{lang: csharp.GetLanguage}

// csName returns the declared name; a field or event field declaration is named by
// its first variable.
func csName(n *sitter.Node, src []byte) string {
	switch csNames.typeOf(n) {
	case "field_declaration", "event_field_declaration":
		for _, c := range Children(n) {
			if csNames.typeOf(c) != "variable_declaration" {
				continue
			}
			for _, d := range Children(c) {
				if csNames.typeOf(d) == "variable_declarator" {
					if nm := d.ChildByFieldName("name"); nm != nil {
						return text(nm, src)
					}
					return firstChildOfType(csNames, d, src, "identifier")
				}
			}
		}
		return ""
	case "indexer_declaration":
		return "this"
	case "destructor_declaration":
		return "~" + text(n.ChildByFieldName("name"), src)
	}
	return text(n.ChildByFieldName("name"), src)
}

// csImports reads using directives (`using A.B;` a star import of the namespace,
// `using static A.B;` of the type's members, `using X = A.B;` an alias) and the
// namespace (file-scoped, or the first block namespace) as the package.
func csImports(root *sitter.Node, src []byte) (string, []Import) {
	pkg := ""
	var out []Import
	var walk func(n *sitter.Node, depth int)
	walk = func(n *sitter.Node, depth int) {
		for _, c := range Children(n) {
			switch csNames.typeOf(c) {
			case "using_directive":
				im := Import{Line: line(c)}
				alias := c.ChildByFieldName("name")
				for _, k := range Children(c) {
					switch csNames.typeOf(k) {
					case "qualified_name", "identifier":
						if alias != nil && k.StartByte() == alias.StartByte() {
							continue
						}
						im.Module = text(k, src)
					}
				}
				if alias != nil {
					im = dottedImport(im, im.Module)
					im.Alias = text(alias, src)
				} else {
					im.Star = true
				}
				out = append(out, im)
			case "file_scoped_namespace_declaration", "namespace_declaration":
				if pkg == "" {
					pkg = text(c.ChildByFieldName("name"), src)
				}
				if b := c.ChildByFieldName("body"); b != nil && depth < 4 {
					walk(b, depth+1)
				}
			}
		}
	}
	walk(root, 0)
	return pkg, out
}

// csModifiers are the C# modifiers a member or type declaration may start with.
const csModifiers = `(?:(?:public|private|protected|internal|static|sealed|abstract|partial|readonly|virtual|override|async|extern|unsafe|new|file|required|ref)\s+)`

// csMemberStart is the first modifier of a C# member line that csDefLines take for a
// constructor, property or field: one no statement starts with (not `new`, which
// starts an object creation, nor `ref` or `const`, which start local declarations),
// after any attributes on the same line.
const csMemberStart = `^[ \t]*(?:\[[^\]]*\]\s*)*(?:public|private|protected|internal|static|readonly|volatile|virtual|override|abstract|sealed|extern|unsafe|required)\s+`

// csType is a C# type as written before a member's name: a dotted name with type
// arguments (which may hold blanks: `Dictionary<string, int>`), or a tuple
// (`(int, string)`), with any `?` and array ranks.
const csType = `(?:[\w.]+(?:\s*<[^;{}()=]*>)?|\([^;{}()=]*\))[?\[\],]*`

// csDefLines are the definition lines of C# (see Spec.DefLines), for text the parser
// could not place and definitions a parse error misread (Spec.ErrorDefsFromText):
// types (class, struct, interface, enum, record) with any modifiers; methods,
// which need at least one modifier, a return type, a name, and a parameter list
// not ended by `;` (a call statement never starts with a modifier), the `{` on
// the same line or the next; constructors (a modifier, the name and its
// parameters, a `: base(...)` or `: this(...)` initialiser); properties and fields
// (a modifier, a type, the name, then `{`, `=>`, `=`, `;` or the line's end).
// A line opening a constructor, property or field starts with csMemberStart.
var csDefLines = []DefLine{
	{Class, LazyRegexp(`^[ \t]*` + csModifiers + `*(?:class|struct|interface|enum|record(?:\s+(?:class|struct))?)\s+([A-Za-z_]\w*)`)},
	{Function, LazyRegexp(`^[ \t]*(?:\[[^\]]*\]\s*)*` + csModifiers + `+` + csType + `\s+([A-Za-z_]\w*)\s*(?:<[^>]*>)?\s*\([^;]*\)\s*(?:where\s[^{;]*)?(?:\{.*|=>.*)?$`)},
	{Function, LazyRegexp(csMemberStart + csModifiers + `*([A-Za-z_]\w*)\s*\([^;]*\)\s*(?::\s*(?:base|this)\s*\(.*)?(?:\{.*|=>.*)?$`)},
	{Property, LazyRegexp(csMemberStart + `(?:` + csModifiers + `|(?:const|event)\s+)*` + csType + `\s+([A-Za-z_]\w*)\s*(?:[{=;,].*)?$`)},
}

package grammars

import (
	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/swift"
)

// Swift is the spec for Swift (alex-pinkus tree-sitter-swift 0.5 as bundled by
// smacker). That grammar parses class, struct, enum, actor and extension alike as
// class_declaration. Attributes (@MainActor) sit in a declaration's modifiers and
// are left out of headers. Imports name modules (build targets), which a file does
// not declare: they are kept but do not resolve to files. Its Rewrite (package
// languages/swift) makes newer constructs (freestanding macros, `sending`) parse.
var Swift = &Spec{
	Name:       "swift",
	Version:    "swift-0.5.0/r4",
	Extensions: []string{".swift"},
	Language:   swift.GetLanguage,
	Definitions: map[string]string{
		"class_declaration":             Class,
		"protocol_declaration":          Class,
		"function_declaration":          Function,
		"init_declaration":              Function,
		"deinit_declaration":            Function,
		"subscript_declaration":         Function,
		"protocol_function_declaration": Function,
		"property_declaration":          Property,
		"typealias_declaration":         Property,
	},
	Bodies:             set("class_body", "enum_class_body", "protocol_body", "function_body", "statements", "computed_property"),
	Comments:           set("comment", "multiline_comment"),
	CommentBytes:       "/",
	SignatureSkip:      set("attribute", "comment", "multiline_comment"),
	SignatureSkipBytes: "@/",
	LeadingLine:        LazyRegexp(`^[ \t]*(//|/\*|\*|@)`),
	DefName:            swiftName,
	DefLines:           swiftDefLines,
	ErrorDefsFromText:  true,
	Imports:            swiftImports,
	Strings:            set("line_string_literal", "multi_line_string_literal", "raw_string_literal"),
	SkipLine:           LazyRegexp(`^(//|/\*|\*|(@\w+\s+)?import\s)`),
	Keywords: []string{
		"associatedtype", "class", "deinit", "enum", "extension", "fileprivate", "func", "import",
		"init", "inout", "internal", "let", "open", "operator", "private", "precedencegroup",
		"protocol", "public", "rethrows", "static", "struct", "subscript", "typealias", "var",
		"break", "case", "catch", "continue", "default", "defer", "do", "else", "fallthrough",
		"for", "guard", "if", "in", "repeat", "return", "throw", "switch", "where", "while",
		"as", "Any", "false", "is", "nil", "self", "Self", "super", "throws", "true", "try",
		"async", "await", "actor", "some", "any", "override", "final", "mutating", "lazy",
		"weak", "convenience", "required", "get", "set", "willSet", "didSet",
	},
}

func init() { MustRegister(Swift) }

// swiftNames is the Swift symbol table for swiftName and swiftImports.
var swiftNames = &symbolNames{lang: swift.GetLanguage}

// swiftName returns the declared name (the extended type of an extension); init,
// deinit and subscript are named so.
func swiftName(n *sitter.Node, src []byte) string {
	switch swiftNames.typeOf(n) {
	case "init_declaration":
		return "init"
	case "deinit_declaration":
		return "deinit"
	case "subscript_declaration":
		return "subscript"
	case "property_declaration":
		if p := n.ChildByFieldName("name"); p != nil {
			if b := p.ChildByFieldName("bound_identifier"); b != nil {
				return text(b, src)
			}
			return text(p, src)
		}
		return ""
	}
	return text(n.ChildByFieldName("name"), src)
}

// swiftImports reads `import Module` (and `import struct Module.Type`) as star
// imports of the module.
func swiftImports(root *sitter.Node, src []byte) (string, []Import) {
	var out []Import
	for _, c := range Children(root) {
		if swiftNames.typeOf(c) != "import_declaration" {
			continue
		}
		if id := firstChildOfType(swiftNames, c, src, "identifier"); id != "" {
			out = append(out, Import{Module: id, Star: true, Line: line(c)})
		}
	}
	return "", out
}

// swiftModifiers are the modifiers and attributes a Swift declaration may start with.
const swiftModifiers = `(?:(?:public|private|fileprivate|internal|open|final|static|class|override|mutating|nonmutating|indirect|convenience|required|dynamic|nonisolated|distributed|lazy|@\w+(?:\([^)]*\))?)(?:\(set\))?\s+)`

// swiftDefLines are the definition lines of Swift (see Spec.DefLines), for text the
// parser misread (an unbalanced bracket inside a method that hid the members after
// it): classes, structs, enums, protocols, actors and extensions (named by their
// type's last part), and functions. No statement starts with these keywords.
var swiftDefLines = []DefLine{
	{Class, LazyRegexp(`^[ \t]*` + swiftModifiers + `*(?:class|struct|enum|protocol|actor|extension)\s+(?:\w+\.)*([A-Za-z_]\w*)`)},
	{Function, LazyRegexp(`^[ \t]*` + swiftModifiers + `*func\s+([A-Za-z_]\w*|[-+*/%<=>!~^&|?.]+)\s*[(<]`)},
}

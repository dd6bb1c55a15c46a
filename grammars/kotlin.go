package grammars

import (
	sitter "github.com/smacker/go-tree-sitter"
)

// Kotlin is the spec for Kotlin. Its grammar is chosen at build time (KotlinGrammar):
// fwcd tree-sitter-kotlin 0.3.8 as bundled by smacker in a plain build, or
// tree-sitter-grammars/tree-sitter-kotlin 1.1.0 (package grammars/kotlin2) with the
// build tag kotlin2. The node types below are those of both grammars (most are
// shared; fwcd has simple_identifier, import_header and statements where the newer
// one has identifier, import and block, and the newer one has field names).
// Its Rewrite and Recover (package languages/kotlin) work around the grammars' known
// mis-parses (fwcd/tree-sitter-kotlin issues 75 and 87 and newer Kotlin syntax) and
// chunk what still fails along a text outline.
var Kotlin = &Spec{
	Name:       "kotlin",
	Version:    KotlinGrammar + "/r5",
	Extensions: []string{".kt", ".kts"},
	Language:   kotlinLanguage,
	Definitions: map[string]string{
		"class_declaration":     Class,
		"object_declaration":    Class,
		"companion_object":      Class,
		"function_declaration":  Function,
		"secondary_constructor": Function,
		"anonymous_initializer": Function,
		"property_declaration":  Property,
		"type_alias":            Property,
	},
	Bodies:             set("class_body", "enum_class_body", "function_body", "statements", "block"),
	Trailers:           set("getter", "setter"),
	Comments:           set("line_comment", "multiline_comment", "block_comment"),
	CommentBytes:       "/",
	SignatureSkip:      set("annotation", "line_comment", "multiline_comment", "block_comment"),
	SignatureSkipBytes: "@/",
	LeadingLine:        LazyRegexp(`^[ \t]*(//|/\*|\*|@)`),
	CommentLine:        LazyRegexp(`^[ \t]*(//|/\*|\*)`),
	DefName:            kotlinName,
	DefLines:           kotlinDefLines,
	Imports:            kotlinImports,
	Family:             "jvm",
	Strings:            set("string_literal", "character_literal"),
	SkipLine:           LazyRegexp(`^(//|/\*|\*|import\s|package\s)`),
	Keywords: []string{
		"as", "break", "class", "continue", "do", "else", "false", "for", "fun", "if", "in",
		"interface", "is", "null", "object", "package", "return", "super", "this", "throw",
		"true", "try", "typealias", "typeof", "val", "var", "when", "while", "by", "catch",
		"constructor", "delegate", "dynamic", "field", "file", "finally", "get", "import",
		"init", "param", "property", "receiver", "set", "setparam", "where", "abstract",
		"actual", "annotation", "companion", "const", "crossinline", "data", "enum", "expect",
		"external", "final", "infix", "inline", "inner", "internal", "lateinit", "noinline",
		"open", "operator", "out", "override", "private", "protected", "public", "reified",
		"sealed", "suspend", "tailrec", "vararg", "it",
	},
}

func init() { MustRegister(Kotlin) }

// kotlinNames is the Kotlin symbol table for kotlinName (Kotlin.TypeOf cannot be
// used there: Kotlin's initialiser refers to kotlinName).
var kotlinNames = &symbolNames{lang: kotlinLanguage}

// kotlinName reads a definition's name: the field "name" (or, for type_alias, "type")
// in the newer grammar, the first identifier child in fwcd's, which has no fields.
func kotlinName(n *sitter.Node, src []byte) string {
	switch kotlinNames.typeOf(n) {
	case "secondary_constructor":
		return "constructor"
	case "anonymous_initializer":
		return "init"
	case "companion_object":
		if c := n.ChildByFieldName("name"); c != nil {
			return c.Content(src)
		}
		if s := firstChildOfType(kotlinNames, n, src, "type_identifier"); s != "" {
			return s
		}
		return "Companion"
	case "property_declaration":
		for i := 0; i < int(n.ChildCount()); i++ {
			c := n.Child(i)
			switch kotlinNames.typeOf(c) {
			case "variable_declaration":
				return firstChildOfType(kotlinNames, c, src, "simple_identifier", "identifier")
			case "multi_variable_declaration":
				return c.Content(src)
			}
		}
		return ""
	case "type_alias":
		if c := n.ChildByFieldName("type"); c != nil {
			return c.Content(src)
		}
	}
	if c := n.ChildByFieldName("name"); c != nil {
		return c.Content(src)
	}
	return firstChildOfType(kotlinNames, n, src, "simple_identifier", "type_identifier")
}

// kotlinModifiers are the modifiers and annotations a Kotlin declaration may start with.
const kotlinModifiers = `(?:(?:public|private|protected|internal|open|final|abstract|sealed|data|enum|annotation|inner|value|inline|companion|override|suspend|operator|infix|tailrec|external|expect|actual|const|lateinit|@[\w.]+(?:\([^)]*\))?)\s+)`

// kotlinDefLines are the definition lines of Kotlin (see Spec.DefLines), for text
// the parser misread (an unbalanced bracket inside a function that hid the members
// after it): classes, interfaces (fun interfaces too) and named objects, and
// functions (with type parameters and receivers). Properties are left out: in a
// function body they are statements (`val x = foo(`); no statement starts with the
// other keywords.
var kotlinDefLines = []DefLine{
	{Class, LazyRegexp(`^[ \t]*` + kotlinModifiers + `*(?:fun\s+)?(?:class|interface|object)\s+([A-Za-z_]\w*)`)},
	{Function, LazyRegexp(`^[ \t]*` + kotlinModifiers + "*fun\\s+(?:<[^>]*>\\s*)?(?:[\\w<>?, ]+\\.)?([A-Za-z_]\\w*|`[^`]+`)\\s*\\(")},
}

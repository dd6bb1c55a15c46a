package grammars

import (
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/scala"
)

// Scala is the spec for Scala 2 and 3 (tree-sitter-scala 0.22 as bundled by smacker):
// classes, objects, traits, enums and extensions with braces or indentation,
// methods, vals and givens; package clauses are the package, imports resolve like
// Java's.
var Scala = &Spec{
	Name:       "scala",
	Version:    "scala-0.22.5/r3",
	Extensions: []string{".scala", ".sc"},
	Language:   scala.GetLanguage,
	Definitions: map[string]string{
		"class_definition":     Class,
		"object_definition":    Class,
		"trait_definition":     Class,
		"enum_definition":      Class,
		"extension_definition": Class,
		"function_definition":  Function,
		"function_declaration": Function,
		"given_definition":     Function,
		"val_definition":       Property,
		"var_definition":       Property,
		"val_declaration":      Property,
		"var_declaration":      Property,
		"type_definition":      Property,
	},
	Bodies:             set("template_body", "with_template_body", "enum_body", "block", "indented_block"),
	SelfBodies:         set("extension_definition"),
	IndentEnds:         true,
	Comments:           set("comment", "block_comment"),
	CommentBytes:       "/",
	SignatureSkip:      set("annotation", "comment", "block_comment"),
	SignatureSkipBytes: "@/",
	LeadingLine:        LazyRegexp(`^[ \t]*(//|/\*|\*|@)`),
	DefName:            scalaName,
	DefLines:           scalaDefLines,
	ErrorDefsFromText:  true,
	CharQuotes:         true,
	Imports:            scalaImports,
	Strings:            set("string", "interpolated_string_expression"),
	SkipLine:           LazyRegexp(`^(//|/\*|\*|import\s|package\s)`),
	Keywords: []string{
		"abstract", "case", "catch", "class", "def", "do", "else", "extends", "false", "final",
		"finally", "for", "forSome", "if", "implicit", "import", "lazy", "match", "new", "null",
		"object", "override", "package", "private", "protected", "return", "sealed", "super",
		"this", "throw", "trait", "try", "true", "type", "val", "var", "while", "with", "yield",
		"given", "using", "enum", "export", "then", "end", "extension", "derives", "inline",
		"opaque", "open", "transparent", "Unit", "Int", "String", "Boolean",
	},
}

func init() { MustRegister(Scala) }

// scalaNames is the Scala symbol table for scalaName and scalaImports.
var scalaNames = &symbolNames{lang: scala.GetLanguage}

// scalaName returns the declared name; a val or var is named by its pattern, an
// anonymous given by its type, an extension "extension".
func scalaName(n *sitter.Node, src []byte) string {
	switch scalaNames.typeOf(n) {
	case "val_definition", "var_definition", "val_declaration", "var_declaration":
		if p := n.ChildByFieldName("pattern"); p != nil {
			return text(p, src)
		}
		return text(n.ChildByFieldName("name"), src)
	case "given_definition":
		if c := n.ChildByFieldName("name"); c != nil {
			return text(c, src)
		}
		return text(n.ChildByFieldName("return_type"), src)
	case "extension_definition":
		return "extension"
	}
	return text(n.ChildByFieldName("name"), src)
}

// scalaImports reads package clauses (joined: `package a` then `package b` is
// "a.b") and imports: `import a.b.C`, `import a.b.{C, D => E}`, `import a.b._`
// (or `*`), several per declaration when separated by commas.
func scalaImports(root *sitter.Node, src []byte) (string, []Import) {
	var pkgs []string
	var out []Import
	for _, c := range Children(root) {
		switch scalaNames.typeOf(c) {
		case "package_clause":
			if nm := c.ChildByFieldName("name"); nm != nil {
				pkgs = append(pkgs, text(nm, src))
			}
		case "import_declaration":
			var path []string
			ln := line(c)
			for _, k := range Children(c) {
				switch scalaNames.typeOf(k) {
				case "identifier":
					path = append(path, text(k, src))
				case "namespace_wildcard":
					out = append(out, Import{Module: strings.Join(path, "."), Star: true, Line: ln})
					path = nil
				case "namespace_selectors":
					mod := strings.Join(path, ".")
					for _, s := range Children(k) {
						switch scalaNames.typeOf(s) {
						case "identifier":
							out = append(out, Import{Module: mod, Name: text(s, src), Line: ln})
						case "arrow_renamed_identifier", "as_renamed_identifier":
							im := Import{Module: mod, Name: text(s.ChildByFieldName("name"), src), Alias: text(s.ChildByFieldName("alias"), src), Line: ln}
							if im.Alias == "_" {
								continue // a hidden name
							}
							out = append(out, im)
						case "namespace_wildcard":
							out = append(out, Import{Module: mod, Star: true, Line: ln})
						}
					}
					path = nil
				case ",":
					if len(path) > 0 {
						out = append(out, dottedImport(Import{Line: ln}, strings.Join(path, ".")))
					}
					path = nil
				}
			}
			if len(path) > 0 {
				out = append(out, dottedImport(Import{Line: ln}, strings.Join(path, ".")))
			}
		}
	}
	return strings.Join(pkgs, "."), out
}

// scalaModifiers are the modifiers a Scala definition may start with.
const scalaModifiers = `(?:(?:(?:private|protected)(?:\[\w*\])?|final|sealed|abstract|implicit|case|open|transparent|inline|lazy|override|infix|opaque)\s+)`

// scalaDefLines are the definition lines of Scala (see Spec.DefLines), for text the
// parser misread: classes, objects (package objects too), traits and enums with any
// modifiers, and methods (`def` and a name, symbolic or back-quoted ones too) and
// named givens. A statement never starts with one of these keywords; a `case` arm
// is a definition only as `case class` or `case object`. Vals and vars are left
// out: in a method body they are statements (`val x = foo(`).
var scalaDefLines = []DefLine{
	{Class, LazyRegexp(`^[ \t]*` + scalaModifiers + `*(?:package\s+)?(?:class|object|trait|enum)\s+([A-Za-z_$][\w$]*)`)},
	{Function, LazyRegexp(`^[ \t]*` + scalaModifiers + "*def\\s+([A-Za-z_$][\\w$]*|`[^`]+`|[!#%&*+\\-/:<=>?@\\\\^|~]+)")},
	{Function, LazyRegexp(`^[ \t]*` + scalaModifiers + `*given\s+([A-Za-z_$][\w$]*)\s*(?:\[[^\]]*\]\s*)?(?:\([^)]*\)\s*)*:`)},
}

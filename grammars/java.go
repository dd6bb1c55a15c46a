package grammars

import (
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/java"
)

// Java is the spec for Java (tree-sitter-java 0.21 as bundled by smacker). Annotations
// sit inside a declaration's modifiers, so a definition's span holds them; an enum's
// methods are in enum_body_declarations, which Flatten makes members of the enum.
var Java = &Spec{
	Name:       "java",
	Version:    "java-0.21.0/r2",
	Extensions: []string{".java"},
	Language:   java.GetLanguage,
	Definitions: map[string]string{
		"class_declaration":                   Class,
		"interface_declaration":               Class,
		"enum_declaration":                    Class,
		"record_declaration":                  Class,
		"annotation_type_declaration":         Class,
		"method_declaration":                  Function,
		"constructor_declaration":             Function,
		"compact_constructor_declaration":     Function,
		"static_initializer":                  Function,
		"annotation_type_element_declaration": Function,
		"field_declaration":                   Property,
		"constant_declaration":                Property,
	},
	Bodies:             set("class_body", "interface_body", "enum_body", "annotation_type_body", "constructor_body", "block"),
	Flatten:            set("enum_body_declarations"),
	Comments:           set("line_comment", "block_comment"),
	CommentBytes:       "/",
	SignatureSkip:      set("annotation", "marker_annotation", "line_comment", "block_comment"),
	SignatureSkipBytes: "@/",
	LeadingLine:        LazyRegexp(`^[ \t]*(//|/\*|\*|@)`),
	DefName:            javaName,
	DefLines:           javaDefLines,
	NotDefLine:         javaStatement,
	ErrorDefsFromText:  true,
	CharQuotes:         true,
	Imports:            javaImports,
	Family:             "jvm",
	Strings:            set("string_literal", "character_literal"),
	SkipLine:           LazyRegexp(`^(//|/\*|\*|import\s|package\s)`),
	Keywords: []string{
		"abstract", "assert", "boolean", "break", "byte", "case", "catch", "char", "class",
		"const", "continue", "default", "do", "double", "else", "enum", "extends", "final",
		"finally", "float", "for", "goto", "if", "implements", "import", "instanceof", "int",
		"interface", "long", "native", "new", "package", "private", "protected", "public",
		"return", "short", "static", "strictfp", "super", "switch", "synchronized", "this",
		"throw", "throws", "transient", "try", "void", "volatile", "while", "true", "false",
		"null", "var", "record", "yield", "sealed", "permits", "non-sealed",
	},
}

func init() { MustRegister(Java) }

// javaNames is the Java symbol table for javaName.
var javaNames = &symbolNames{lang: java.GetLanguage}

func javaName(n *sitter.Node, src []byte) string {
	switch javaNames.typeOf(n) {
	case "static_initializer":
		return "static"
	case "field_declaration", "constant_declaration":
		if d := n.ChildByFieldName("declarator"); d != nil {
			return text(d.ChildByFieldName("name"), src)
		}
		return ""
	}
	return text(n.ChildByFieldName("name"), src)
}

// javaImports reads the package declaration and the import declarations
// (`import a.b.C;`, `import a.b.*;`, `import static a.b.C.m;`).
func javaImports(root *sitter.Node, src []byte) (string, []Import) {
	pkg := ""
	var out []Import
	for _, c := range Children(root) {
		switch javaNames.typeOf(c) {
		case "package_declaration":
			for _, k := range Children(c) {
				if t := javaNames.typeOf(k); t == "scoped_identifier" || t == "identifier" {
					pkg = text(k, src)
				}
			}
		case "import_declaration":
			im := Import{Line: line(c)}
			path := ""
			for _, k := range Children(c) {
				switch javaNames.typeOf(k) {
				case "scoped_identifier", "identifier":
					path = text(k, src)
				case "asterisk":
					im.Star = true
				}
			}
			out = append(out, dottedImport(im, path))
		}
	}
	return pkg, out
}

// dottedImport fills im from a dotted import path: the module itself for a star
// import, else the module and the last component as the name.
func dottedImport(im Import, path string) Import {
	if im.Star {
		im.Module = path
	} else if i := strings.LastIndexByte(path, '.'); i >= 0 {
		im.Module, im.Name = path[:i], path[i+1:]
	} else {
		im.Name = path
	}
	return im
}

// javaModifiers are the modifiers and annotations a Java declaration may start with.
const javaModifiers = `(?:(?:public|private|protected|static|final|abstract|sealed|non-sealed|strictfp|synchronized|native|default|transient|volatile|@[\w.]+(?:\([^)]*\))?)\s+)`

// javaDefLines are the definition lines of Java (see Spec.DefLines), for text the
// parser misread (a file cut inside a method): classes, interfaces, enums, records
// and annotation types, and methods and constructors whose line holds a type (or a
// modifier), a name, a parameter list without `;` and the body's `{`. A call has
// no type before its name, a declaration with an initialiser has `=`, a line
// starting with a statement keyword (`new Foo(x) {`) is none (javaStatement).
var javaDefLines = []DefLine{
	{Class, LazyRegexp(`^[ \t]*` + javaModifiers + `*(?:class|interface|enum|record|@interface)\s+([A-Za-z_$][\w$]*)`)},
	{Function, LazyRegexp(`^[ \t]*` + javaModifiers + `*(?:<[^>]*>\s+)?[\w$.<>\[\],?]+(?:\s*<[^>]*>)?\s+([A-Za-z_$][\w$]*)\s*\([^;]*\)\s*(?:throws\s+[\w$.,\s]+)?\{`)},
}

// javaStatement matches a line that starts with a statement keyword, which
// javaDefLines' method line would take for a type.
var javaStatement = LazyRegexp(`^[ \t]*(?:if|else|while|for|switch|return|case|do|throw|new|try|catch|yield|assert|synchronized\s*\()\b`)

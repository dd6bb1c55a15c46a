package grammars

import (
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/php"
)

// PHP is the spec for PHP (tree-sitter-php 0.22 as bundled by smacker, the grammar
// that also reads the HTML around <?php ... ?>). Namespaces are packages: a file's
// `namespace App\Models;` is its package "App.Models", and `use App\Models\User;`
// imports User from it (backslashes become dots).
var PHP = &Spec{
	Name:       "php",
	Version:    "php-0.22.8/r2",
	Extensions: []string{".php", ".phtml"},
	Language:   php.GetLanguage,
	Definitions: map[string]string{
		"class_declaration":     Class,
		"interface_declaration": Class,
		"trait_declaration":     Class,
		"enum_declaration":      Class,
		"method_declaration":    Function,
		"function_definition":   Function,
		"property_declaration":  Property,
		"const_declaration":     Property,
	},
	Bodies:             set("declaration_list", "compound_statement", "enum_declaration_list"),
	Flatten:            set("namespace_definition"),
	Comments:           set("comment"),
	CommentBytes:       "/#",
	SignatureSkip:      set("attribute_list", "comment"),
	SignatureSkipBytes: "#/",
	LeadingLine:        LazyRegexp(`^[ \t]*(//|/\*|\*|#)`),
	DefName:            phpName,
	DefLines:           phpDefLines,
	ErrorDefsFromText:  true,
	Imports:            phpImports,
	Strings:            set("string", "encapsed_string", "heredoc", "nowdoc"),
	SkipLine:           LazyRegexp(`^(//|/\*|\*|#|use\s|namespace\s|(require|include)(_once)?[\s(])`),
	Keywords: []string{
		"abstract", "and", "array", "as", "break", "callable", "case", "catch", "class", "clone",
		"const", "continue", "declare", "default", "do", "echo", "else", "elseif", "empty",
		"enddeclare", "endfor", "endforeach", "endif", "endswitch", "endwhile", "enum", "extends",
		"final", "finally", "fn", "for", "foreach", "function", "global", "goto", "if",
		"implements", "include", "include_once", "instanceof", "insteadof", "interface", "isset",
		"list", "match", "namespace", "new", "or", "print", "private", "protected", "public",
		"readonly", "require", "require_once", "return", "static", "switch", "throw", "trait",
		"try", "unset", "use", "var", "while", "xor", "yield", "true", "false", "null", "self",
		"parent", "this", "int", "string", "bool", "float", "void", "mixed", "php",
	},
}

func init() { MustRegister(PHP) }

// phpNames is the PHP symbol table for phpName and phpImports.
var phpNames = &symbolNames{lang: php.GetLanguage}

// phpName returns the declared name; a property or constant declaration is named by
// its first element (without the $ of a property).
func phpName(n *sitter.Node, src []byte) string {
	switch phpNames.typeOf(n) {
	case "property_declaration", "const_declaration":
		for _, c := range Children(n) {
			switch phpNames.typeOf(c) {
			case "property_element":
				return strings.TrimPrefix(firstChildOfType(phpNames, c, src, "variable_name"), "$")
			case "const_element":
				return firstChildOfType(phpNames, c, src, "name")
			}
		}
		return ""
	}
	return text(n.ChildByFieldName("name"), src)
}

// phpNamespace turns `App\Models` into "App.Models".
func phpNamespace(s string) string {
	return strings.Trim(strings.ReplaceAll(strings.TrimSpace(s), `\`, "."), ".")
}

// phpImports reads the namespace (as the package) and `use` declarations:
// `use A\B\C;`, `use A\B\C as D;`, `use A\B\{C, D as E};`, `use function A\f;`.
func phpImports(root *sitter.Node, src []byte) (string, []Import) {
	pkg := ""
	var out []Import
	for _, c := range Children(root) {
		switch phpNames.typeOf(c) {
		case "namespace_definition":
			if pkg == "" {
				pkg = phpNamespace(text(c.ChildByFieldName("name"), src))
			}
		case "namespace_use_declaration":
			prefix := ""
			for _, k := range Children(c) {
				switch phpNames.typeOf(k) {
				case "namespace_name":
					prefix = phpNamespace(text(k, src))
				case "namespace_use_clause", "namespace_use_group_clause":
					im := Import{Line: line(c)}
					path := ""
					for _, p := range Children(k) {
						switch phpNames.typeOf(p) {
						case "qualified_name", "namespace_name", "name":
							if path == "" {
								path = phpNamespace(text(p, src))
							} else {
								im.Alias = text(p, src) // `use A\B as C` without an aliasing clause node
							}
						case "namespace_aliasing_clause":
							im.Alias = firstChildOfType(phpNames, p, src, "name")
						}
					}
					if prefix != "" {
						path = prefix + "." + path
					}
					out = append(out, dottedImport(im, path))
				case "namespace_use_group":
					for _, g := range Children(k) {
						if phpNames.typeOf(g) != "namespace_use_group_clause" {
							continue
						}
						im := Import{Line: line(c)}
						path := ""
						for _, p := range Children(g) {
							switch phpNames.typeOf(p) {
							case "namespace_name", "name":
								path = phpNamespace(text(p, src))
							case "namespace_aliasing_clause":
								im.Alias = firstChildOfType(phpNames, p, src, "name")
							}
						}
						if prefix != "" {
							path = prefix + "." + path
						}
						out = append(out, dottedImport(im, path))
					}
				}
			}
		}
	}
	return pkg, out
}

// phpDefLines are the definition lines of PHP (see Spec.DefLines), for text the
// parser misread (a file cut inside a method): classes, interfaces, traits and
// enums, and named functions and methods. A closure (`function (`) has no name; no
// statement starts with these keywords.
var phpDefLines = []DefLine{
	{Class, LazyRegexp(`^[ \t]*(?:(?:abstract|final|readonly)\s+)*(?:class|interface|trait|enum)\s+([A-Za-z_]\w*)`)},
	{Function, LazyRegexp(`^[ \t]*(?:(?:public|private|protected|static|abstract|final)\s+)*function\s+&?([A-Za-z_]\w*)\s*\(`)},
}

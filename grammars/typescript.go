package grammars

import (
	"github.com/smacker/go-tree-sitter/typescript/tsx"
	"github.com/smacker/go-tree-sitter/typescript/typescript"
)

// TypeScript is the spec for TypeScript (tree-sitter-typescript 0.21 as bundled by
// smacker); TSX is the same rules on the grammar's TSX dialect. Beyond JavaScript's
// definitions: interfaces, enums, type aliases, namespaces (`namespace X {}` is an
// expression statement, a wrapper here), ambient `declare module` blocks, abstract
// classes and overload signatures.
var TypeScript = tsSpec("typescript", "typescript-0.21.2/r6", []string{".ts", ".mts", ".cts"}, &symbolNames{lang: typescript.GetLanguage})

// TSX is TypeScript with JSX, for .tsx files.
var TSX = tsSpec("tsx", "tsx-0.21.2/r6", []string{".tsx"}, &symbolNames{lang: tsx.GetLanguage})

func init() {
	MustRegister(TypeScript)
	MustRegister(TSX)
}

func tsSpec(name, version string, exts []string, names *symbolNames) *Spec {
	return &Spec{
		Name:       name,
		Version:    version,
		Extensions: exts,
		Language:   names.lang,
		Definitions: map[string]string{
			"class_declaration":              Class,
			"abstract_class_declaration":     Class,
			"class":                          Class,
			"interface_declaration":          Class,
			"enum_declaration":               Class,
			"internal_module":                Class,
			"module":                         Class,
			"function_declaration":           Function,
			"generator_function_declaration": Function,
			"function_signature":             Function,
			"function_expression":            Function, // only as a wrapper's child
			"method_definition":              Function,
			"abstract_method_signature":      Function,
			"lexical_declaration":            Property,
			"variable_declaration":           Property,
			"public_field_definition":        Property,
			"type_alias_declaration":         Property,
		},
		Wrappers:           set("export_statement", "ambient_declaration", "expression_statement"),
		Bodies:             set("class_body", "statement_block", "interface_body", "object_type", "enum_body", "object", "array"),
		BodyDepth:          3,
		Comments:           set("comment", "html_comment"),
		CommentBytes:       "/>",
		SignatureSkip:      set("decorator", "comment"),
		SignatureSkipBytes: "@/",
		LeadingLine:        LazyRegexp(`^[ \t]*(//|/\*|\*|@)`),
		ErrorDefsFromText:  true,
		DefLines:           jsDefLines,
		SwallowLines:       jsSwallowLines,
		DefName:            jsName(names),
		Imports:            jsImports(names),
		Family:             "javascript",
		ImportsByPath:      true,
		Strings:            set("string", "template_string"),
		SkipLine:           LazyRegexp(`^(//|/\*|\*|import\s)`),
		Keywords: append([]string{
			"interface", "type", "namespace", "module", "declare", "abstract", "implements",
			"private", "protected", "public", "readonly", "keyof", "infer", "is", "asserts",
			"unique", "override", "satisfies", "any", "unknown", "never", "number", "string",
			"boolean", "symbol", "object", "bigint",
		}, jsKeywords...),
	}
}

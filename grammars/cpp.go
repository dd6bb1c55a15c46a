package grammars

import (
	"github.com/smacker/go-tree-sitter/cpp"
)

// CPP is the spec for C++ (tree-sitter-cpp 0.22 as bundled by smacker), also used for
// .h headers (see C). Templates are wrappers; namespaces, extern "C" blocks and
// preprocessor conditionals are flattened (a namespace's classes and functions are
// items of the file, and top-level names for #include resolution). Its Rewrite
// (package languages/c) is C's and C++ syntax the grammar has no rule for.
var CPP = &Spec{
	Name:       "cpp",
	Version:    "cpp-0.22.3/r10",
	Extensions: []string{".cc", ".cpp", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h++", ".ipp", ".inl", ".h"},
	Language:   cpp.GetLanguage,
	Definitions: map[string]string{
		"function_definition":  Function,
		"class_specifier":      Class,
		"struct_specifier":     Class,
		"union_specifier":      Class,
		"enum_specifier":       Class,
		"type_definition":      Property,
		"alias_declaration":    Property,
		"concept_definition":   Property,
		"declaration":          Property,
		"field_declaration":    Property,
		"preproc_def":          Property,
		"preproc_function_def": Property,
	},
	Wrappers:           set("template_declaration"),
	Bodies:             set("compound_statement", "field_declaration_list", "enumerator_list", "declaration_list"),
	BodyDepth:          2,
	Flatten:            set("preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "preproc_elifdef", "linkage_specification", "namespace_definition", "declaration_list"),
	Comments:           set("comment"),
	CommentBytes:       "/",
	SignatureSkip:      set("comment"),
	SignatureSkipBytes: "/",
	LeadingLine:        LazyRegexp(`^[ \t]*(//|/\*|\*)`),
	DefName:            cName(&symbolNames{lang: cpp.GetLanguage}),
	DefLines:           cppDefLines,
	NotDefLine:         cppStatement,
	ErrorDefsFromText:  true,
	CharQuotes:         true,
	Imports:            cIncludes(&symbolNames{lang: cpp.GetLanguage}),
	Family:             "c",
	ImportsByPath:      true,
	Strings:            set("string_literal", "char_literal", "raw_string_literal", "concatenated_string"),
	SkipLine:           LazyRegexp(`^(//|/\*|\*|#\s*(include|pragma|if|ifdef|ifndef|endif|else|elif)\b|using\s+namespace\s)`),
	Keywords: append([]string{
		"alignas", "alignof", "and", "asm", "catch", "class", "concept", "consteval",
		"constexpr", "constinit", "const_cast", "co_await", "co_return", "co_yield", "decltype",
		"delete", "dynamic_cast", "explicit", "export", "friend", "mutable", "namespace", "new",
		"noexcept", "not", "nullptr", "operator", "or", "private", "protected", "public",
		"reinterpret_cast", "requires", "static_assert", "static_cast", "template", "this",
		"thread_local", "throw", "try", "typeid", "typename", "using", "virtual", "wchar_t",
		"override", "final", "std",
	}, cKeywords...),
}

func init() { MustRegister(CPP) }

// cppDefLines are the definition lines of C++ (see Spec.DefLines), for text the
// parser misread (an unbalanced bracket inside a method that hid the members after
// it): classes, structs and unions with a body (not `class X;`), and functions
// whose line holds a return type, a name (qualified and destructor names too), a
// parameter list without `;` and the body's `{`. A statement never has
// that shape: a call has no return type before its name, a declaration with an
// initialiser has `=`, a line starting with a statement keyword is none
// (cppStatement).
var cppDefLines = []DefLine{
	{Class, LazyRegexp(`^[ \t]*(?:template\s*<[^>]*>\s*)?(?:class|struct|union)\s+(?:[A-Z_][A-Z0-9_]*\s+)?([A-Za-z_]\w*)\s*(?:final\s*)?(?::[^;{]*)?\{?\s*$`)},
	{Function, LazyRegexp(`^[ \t]*(?:(?:static|inline|virtual|explicit|constexpr|consteval|friend|extern|const|unsigned|signed|long|short|typename|template\s*<[^>]*>)\s+)*[A-Za-z_][\w:<>,]*(?:\s*[*&]+\s*|\s+)(?:[A-Za-z_]\w*::)*([A-Za-z_~]\w*)\s*\([^;]*\)\s*(?:const|override|final|noexcept|volatile|&|\s)*\{`)},
}

// cppStatement matches a line that starts with a statement keyword, which
// cppDefLines' function line would take for a return type (`if FMT_CONSTEXPR20
// (x) {`, a macro before the condition).
var cppStatement = LazyRegexp(`^[ \t]*(?:if|else|while|for|switch|return|case|do|throw|co_return|co_yield|co_await|delete|new|goto|catch|sizeof|using|typedef|try)\b`)

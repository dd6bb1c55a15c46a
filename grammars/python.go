package grammars

import (
	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/python"
)

// Python is the spec for Python 3 (tree-sitter-python 0.23 as bundled by smacker).
var Python = &Spec{
	Name:       "python",
	Version:    "python-0.23.0/r3",
	Extensions: []string{".py", ".pyi"},
	Language:   python.GetLanguage,
	Definitions: map[string]string{
		"function_definition": Function,
		"class_definition":    Class,
	},
	Wrappers:           set("decorated_definition"),
	Bodies:             set("block"),
	Comments:           set("comment"),
	CommentBytes:       "#",
	SignatureSkip:      set("comment"),
	SignatureSkipBytes: "#",
	LeadingLine:        LazyRegexp(`^[ \t]*[#@]`),
	CommentLine:        LazyRegexp(`^[ \t]*#`),
	DefName: func(n *sitter.Node, src []byte) string {
		if c := n.ChildByFieldName("name"); c != nil {
			return c.Content(src)
		}
		return firstChildOfType(pythonNames, n, src, "identifier")
	},
	Imports:           pythonImports,
	DefLines:          pythonDefLines,
	ErrorDefsFromText: true,
	BlocksByIndent:    true,
	Strings:           set("string"),
	// Comments, imports (`from x import` at the end of the line, or followed by "(" or
	// a backslash, also counts) and docstring openings.
	SkipLine: LazyRegexp(`^(#|import\s|from\s+\S+\s+import(\s|\(|\\|$)|[rRuUbBfF]{0,2}("""|'''))`),
	Keywords: []string{
		"False", "None", "True", "and", "as", "assert", "async", "await", "break", "class",
		"continue", "def", "del", "elif", "else", "except", "finally", "for", "from", "global",
		"if", "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise",
		"return", "try", "while", "with", "yield", "match", "case", "self",
	},
}

func init() { MustRegister(Python) }

// pythonNames is the Python symbol table for DefName.
var pythonNames = &symbolNames{lang: python.GetLanguage}

// pythonDefLines are the definition lines of Python (see Spec.DefLines), for text
// the parser misread (an unclosed call that swallowed the methods after it):
// `def` and `async def`, and `class`. No statement starts with these keywords.
var pythonDefLines = []DefLine{
	{Class, LazyRegexp(`^[ \t]*class\s+([A-Za-z_]\w*)\s*[(:]`)},
	{Function, LazyRegexp(`^[ \t]*(?:async\s+)?def\s+([A-Za-z_]\w*)\s*[(\[]`)},
}

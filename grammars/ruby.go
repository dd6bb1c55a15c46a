package grammars

import (
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/ruby"
)

// Ruby is the spec for Ruby (tree-sitter-ruby 0.21 as bundled by smacker). Classes,
// modules and `class << self` blocks hold their methods in a body_statement;
// require and require_relative are star imports of a path.
var Ruby = &Spec{
	Name:       "ruby",
	Version:    "ruby-0.21.0/r3",
	Extensions: []string{".rb", ".rake", ".gemspec", ".ru"},
	Language:   ruby.GetLanguage,
	Definitions: map[string]string{
		"class":            Class,
		"module":           Class,
		"singleton_class":  Class,
		"method":           Function,
		"singleton_method": Function,
	},
	Bodies:             set("body_statement"),
	Comments:           set("comment"),
	CommentBytes:       "#",
	SignatureSkip:      set("comment"),
	SignatureSkipBytes: "#",
	LeadingLine:        LazyRegexp(`^[ \t]*#`),
	DefName:            rubyName,
	DefLines:           rubyDefLines,
	ErrorDefsFromText:  true,
	BlocksByIndent:     true,
	Imports:            rubyImports,
	ImportsByPath:      true,
	Strings:            set("string", "heredoc_body", "string_array", "symbol_array", "regex", "subshell"),
	SkipLine:           LazyRegexp(`^(#|require(_relative)?[\s(]|load[\s(])`),
	Keywords: []string{
		"BEGIN", "END", "alias", "and", "begin", "break", "case", "class", "def", "defined?",
		"do", "else", "elsif", "end", "ensure", "false", "for", "if", "in", "module", "next",
		"nil", "not", "or", "redo", "rescue", "retry", "return", "self", "super", "then", "true",
		"undef", "unless", "until", "when", "while", "yield", "attr_reader", "attr_writer",
		"attr_accessor", "private", "protected", "public", "require", "require_relative",
		"include", "extend", "raise", "lambda", "proc", "puts", "new",
	},
}

func init() { MustRegister(Ruby) }

// rubyNames is the Ruby symbol table for rubyName and rubyImports.
var rubyNames = &symbolNames{lang: ruby.GetLanguage}

// rubyName returns the class, module or method name (the last part of A::B);
// `class << self` is "self".
func rubyName(n *sitter.Node, src []byte) string {
	if rubyNames.typeOf(n) == "singleton_class" {
		return text(n.ChildByFieldName("value"), src)
	}
	s := text(n.ChildByFieldName("name"), src)
	if i := strings.LastIndex(s, "::"); i >= 0 {
		s = s[i+2:]
	}
	return s
}

// rubyImports reads top-level `require "x"` (a path matched as a suffix) and
// `require_relative "x"` (relative to the file's folder), as star imports.
func rubyImports(root *sitter.Node, src []byte) (string, []Import) {
	var out []Import
	for _, c := range Children(root) {
		if rubyNames.typeOf(c) != "call" {
			continue
		}
		m := text(c.ChildByFieldName("method"), src)
		if m != "require" && m != "require_relative" {
			continue
		}
		args := c.ChildByFieldName("arguments")
		if args == nil {
			continue
		}
		for _, a := range Children(args) {
			if rubyNames.typeOf(a) != "string" {
				continue
			}
			p := strings.Trim(text(a, src), `"'`)
			if p == "" || strings.Contains(p, "#{") {
				continue
			}
			if m == "require_relative" && !strings.HasPrefix(p, "../") && !strings.HasPrefix(p, "./") {
				p = "./" + p
			}
			out = append(out, Import{Module: p, Star: true, Line: line(c)})
		}
	}
	return "", out
}

// rubyDefLines are the definition lines of Ruby (see Spec.DefLines), for text the
// parser misread (an unclosed call that swallowed the methods after it): `def`
// (singleton methods named without their `self.`, as rubyName names them),
// `class` (not `class << self`) and `module`, named by their last `::` part.
var rubyDefLines = []DefLine{
	{Class, LazyRegexp(`^[ \t]*(?:class|module)\s+(?:[A-Z]\w*::)*([A-Z]\w*)`)},
	{Function, LazyRegexp(`^[ \t]*def\s+(?:self\.)?([A-Za-z_]\w*[?!=]?|\[\]=?|[-+*/%<=>!~^&|]+@?)`)},
}

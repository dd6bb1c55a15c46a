package grammars

import (
	"bytes"
	"regexp"
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/swift"
)

// Swift is the spec for Swift (alex-pinkus tree-sitter-swift 0.5 as bundled by
// smacker). That grammar parses class, struct, enum, actor and extension alike as
// class_declaration. Attributes (@MainActor) sit in a declaration's modifiers and
// are left out of headers. Imports name modules (build targets), which a file does
// not declare: they are kept but do not resolve to files. The Rewrite makes two
// newer constructs (freestanding macros, `sending`) parse.
var Swift = &Spec{
	Name:       "swift",
	Version:    "swift-0.5.0/r3",
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
	LeadingLine:        regexp.MustCompile(`^[ \t]*(//|/\*|\*|@)`),
	DefName:            swiftName,
	Imports:            swiftImports,
	Strings:            set("line_string_literal", "multi_line_string_literal", "raw_string_literal"),
	SkipLine:           regexp.MustCompile(`^(//|/\*|\*|(@\w+\s+)?import\s)`),
	Rewrite:            swiftRewrite,
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

// swiftDirectives are the #-words the bundled grammar knows (compiler directives and
// literal expressions); swiftRewrite leaves them alone.
var swiftDirectives = map[string]bool{
	"if": true, "elseif": true, "else": true, "endif": true, "available": true, "unavailable": true,
	"selector": true, "keyPath": true, "file": true, "fileID": true, "filePath": true, "line": true,
	"column": true, "function": true, "dsohandle": true, "sourceLocation": true, "warning": true,
	"error": true, "colorLiteral": true, "imageLiteral": true, "fileLiteral": true,
}

// swiftRewrite returns src with Swift constructs the bundled grammar (0.5, older)
// cannot parse made into ones it can, same length, or src itself when there is none:
// a freestanding macro `#expect(...)` becomes the call ` expect(...)`; the parameter
// modifier `sending` (`_ e: sending T`) is blanked, and so are `(unsafe)` after
// `nonisolated` and the ownership operators `consume x` and `copy x` (Swift 5.9);
// the empty tuple as an expression, which the grammar reads as a call missing its
// callee (`.success(())`, `g((), 1)`, `let x = ()`, `return ()`), becomes ` 0`. An
// empty tuple type (`-> ()`, `: ()`, `(()) -> Void`) stays.
func swiftRewrite(src []byte) []byte {
	out, copied := src, false
	edit := func(i int, repl string) {
		if !copied {
			out, copied = append([]byte(nil), src...), true
		}
		copy(out[i:], repl)
	}
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '#':
			j := i + 1
			for j < len(src) && isWordByte(src[j]) {
				j++
			}
			if j > i+1 && !swiftDirectives[string(src[i+1:j])] && !('0' <= src[i+1] && src[i+1] <= '9') {
				edit(i, " ")
			}
		case '(':
			if i+1 < len(src) && src[i+1] == ')' && swiftTupleExpr(src, i) {
				edit(i, " 0")
			}
		case 'n':
			if swiftWordAt(src, i, "nonisolated(unsafe)") {
				edit(i+len("nonisolated"), "        ")
			}
		case 'c':
			for _, kw := range []string{"consume ", "copy "} {
				if j := i + len(kw); swiftWordAt(src, i, kw) &&
					j < len(src) && (isWordByte(src[j]) && !('0' <= src[j] && src[j] <= '9')) && swiftOperandPosition(src, i) {
					edit(i, strings.Repeat(" ", len(kw)))
				}
			}
		case 's':
			if swiftWordAt(src, i, "sending ") && i > 0 {
				if p := src[skipBack(src, i)]; p == ':' || p == '>' { // a type annotation or `-> sending T`
					edit(i, "       ")
				}
			}
		}
	}
	return out
}

// swiftWordAt reports whether the word kw starts at src[i] (no word byte before it).
func swiftWordAt(src []byte, i int, kw string) bool {
	return bytes.HasPrefix(src[i:], []byte(kw)) && (i == 0 || !isWordByte(src[i-1]))
}

// swiftOperandPosition reports whether an expression starts at src[i]: the last
// byte before it other than spaces and tabs is '(', ',', '=' or ends the word return.
func swiftOperandPosition(src []byte, i int) bool {
	if i == 0 {
		return false
	}
	k := skipBack(src, i) // a blank when only blanks come before i
	switch src[k] {
	case '(', ',', '=':
		return true
	}
	return k >= 5 && swiftWordAt(src, k-5, "return")
}

// swiftTupleExpr reports whether the `()` at src[i] is an empty tuple expression: it
// stands where an expression starts (swiftOperandPosition) and is followed by ',' or
// ')' or the end of its line, and, when the bracket after it closes an enclosing
// one, that one is not a closure type's parameter list (`(()) -> Void`).
func swiftTupleExpr(src []byte, i int) bool {
	if !swiftOperandPosition(src, i) {
		return false
	}
	j := skipBlanks(src, i+2)
	if j >= len(src) || src[j] == '\n' || src[j] == '\r' || src[j] == ',' {
		return true
	}
	if src[j] != ')' {
		return false
	}
	rest := src[skipBlanks(src, j+1):]
	return !bytes.HasPrefix(rest, []byte("->")) && !bytes.HasPrefix(rest, []byte("throws")) &&
		!bytes.HasPrefix(rest, []byte("async")) && !bytes.HasPrefix(rest, []byte("rethrows"))
}

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

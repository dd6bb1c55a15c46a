// Package swift holds Swift's text-level rules (see grammars.Rules): the
// length-preserving rewrite ([Rewrite]) that lets alex-pinkus tree-sitter-swift 0.5
// (as bundled by smacker) parse newer Swift. The spec is grammars.Swift; package
// languages attaches the rewrite to it.
package swift

import (
	"bytes"
	"strings"

	"github.com/repoctx/repoctx/languages/internal/lex"
)

// swiftDirectives are the #-words the bundled grammar knows (compiler directives and
// literal expressions); Rewrite leaves them alone.
var swiftDirectives = map[string]bool{
	"if": true, "elseif": true, "else": true, "endif": true, "available": true, "unavailable": true,
	"selector": true, "keyPath": true, "file": true, "fileID": true, "filePath": true, "line": true,
	"column": true, "function": true, "dsohandle": true, "sourceLocation": true, "warning": true,
	"error": true, "colorLiteral": true, "imageLiteral": true, "fileLiteral": true,
}

// Rewrite returns src with Swift constructs the bundled grammar (0.5, older)
// cannot parse made into ones it can, same length, or src itself when there is none:
// a freestanding macro `#expect(...)` becomes the call ` expect(...)`; the parameter
// modifier `sending` (`_ e: sending T`) is blanked, and so are `(unsafe)` after
// `nonisolated` and the ownership operators `consume x` and `copy x` (Swift 5.9);
// the empty tuple as an expression, which the grammar reads as a call missing its
// callee (`.success(())`, `g((), 1)`, `let x = ()`, `return ()`), becomes ` 0`. An
// empty tuple type (`-> ()`, `: ()`, `(()) -> Void`) stays.
func Rewrite(src []byte) []byte {
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
			for j < len(src) && lex.IsWordByte(src[j]) {
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
					j < len(src) && (lex.IsWordByte(src[j]) && !('0' <= src[j] && src[j] <= '9')) && swiftOperandPosition(src, i) {
					edit(i, strings.Repeat(" ", len(kw)))
				}
			}
		case 's':
			if swiftWordAt(src, i, "sending ") && i > 0 {
				if p := src[lex.SkipBack(src, i)]; p == ':' || p == '>' { // a type annotation or `-> sending T`
					edit(i, "       ")
				}
			}
		}
	}
	return out
}

// swiftWordAt reports whether the word kw starts at src[i] (no word byte before it).
func swiftWordAt(src []byte, i int, kw string) bool {
	return bytes.HasPrefix(src[i:], []byte(kw)) && (i == 0 || !lex.IsWordByte(src[i-1]))
}

// swiftOperandPosition reports whether an expression starts at src[i]: the last
// byte before it other than spaces and tabs is '(', ',', '=' or ends the word return.
func swiftOperandPosition(src []byte, i int) bool {
	if i == 0 {
		return false
	}
	k := lex.SkipBack(src, i) // a blank when only blanks come before i
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
	j := lex.SkipBlanks(src, i+2)
	if j >= len(src) || src[j] == '\n' || src[j] == '\r' || src[j] == ',' {
		return true
	}
	if src[j] != ')' {
		return false
	}
	rest := src[lex.SkipBlanks(src, j+1):]
	return !bytes.HasPrefix(rest, []byte("->")) && !bytes.HasPrefix(rest, []byte("throws")) &&
		!bytes.HasPrefix(rest, []byte("async")) && !bytes.HasPrefix(rest, []byte("rethrows"))
}

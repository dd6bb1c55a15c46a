// Package csharp holds C#'s text-level rules (see grammars.Rules): the
// length-preserving rewrite ([Rewrite]) that lets tree-sitter-c-sharp 0.21 (as
// bundled by smacker) parse C# 12-14. The spec is grammars.CSharp; package languages
// attaches the rewrite to it.
package csharp

import (
	"bytes"
	"regexp"

	"github.com/repoctx/repoctx/languages/internal/lex"
)

// Rewrite returns src with C# constructs the bundled grammar (tree-sitter-c-sharp
// 0.21.3, older than C# 12) cannot parse made into ones it can, same length and line
// breaks, or src itself when there is none:
//
//   - an empty collection expression `[]` (C# 12: `List<int> xs = [];`, `f([], x)`)
//     becomes the identifier `__`: the grammar reads `[1, 2]` as an element binding
//     but `[]` as one missing an identifier (an error without an ERROR node);
//   - an extension block (C# 14: `extension(string s) { public int Twice() ... }`
//     inside a static class), indented by at least six spaces or tabs, becomes the
//     nested class `class extension { ... }` (the last six bytes of its
//     indentation take `class `, its receiver parameter is blanked), so that its
//     members are named methods under the header `extension(string s)` (signatures
//     are read from the original text);
//   - a file-based program's `#:sdk`, `#:package` and `#!` lines (C# 14) become `//`
//     comments;
//   - a conditional (#if ... #endif) whose first branch holds only attributes
//     (`#if !NETCOREAPP` `[Serializable]` `#endif` above a class), or that opens in
//     the middle of a statement (after `=>`, `=`, `return`, `?`, `(`, `,`: one
//     expression per target framework) has its directive lines and every branch but
//     the first blanked, so the parser sees the first branch inline (as package
//     languages/c does for C's conditionals whose branches do not balance braces).
//
// Comments, string and character literals are left alone; the scan is lexical and
// errs towards leaving text alone.
func Rewrite(src []byte) []byte {
	ext := bytes.Contains(src, []byte("extension"))
	if bytes.IndexByte(src, '[') < 0 && bytes.IndexByte(src, '#') < 0 && !ext {
		return src
	}
	code, directives := csCodeMask(src)
	out, copied := src, false
	edit := func(i int, repl string) {
		if !copied {
			out, copied = append([]byte(nil), src...), true
		}
		copy(out[i:], repl)
	}
	blank := func(start, end int) {
		for i := start; i < end; i++ {
			if src[i] != '\n' && src[i] != '\r' && out[i] != ' ' {
				edit(i, " ")
			}
		}
	}
	for i := 0; i+1 < len(src); i++ {
		if src[i] == '[' && src[i+1] == ']' && code[i] && csExpressionStart(src, code, i) {
			edit(i, "__")
		}
	}
	if ext {
		for _, m := range csExtensionBlock.FindAllSubmatchIndex(src, -1) {
			if code[m[3]] { // m[3]: where `extension` starts
				edit(m[2], "class ")                 // the indentation's last six bytes
				blank(m[3]+len("extension"), m[1]-1) // the type parameters and receiver
			}
		}
	}
	if bytes.IndexByte(src, '#') < 0 {
		return out
	}
	lines := lex.Lines(src)
	for _, l := range lines {
		ln := bytes.TrimLeft(src[l[0]:l[1]], " \t")
		if !directives[l[1]-len(ln)] {
			continue
		}
		if bytes.HasPrefix(ln, []byte("#:")) || bytes.HasPrefix(ln, []byte("#!")) {
			edit(l[1]-len(ln), "//")
		}
	}
	for _, r := range csInlineConditionals(src, code, directives, lines) {
		blank(r[0], r[1])
	}
	return out
}

// csExtensionBlock matches a C# 14 extension block's opening on its own line:
// indentation whose last six bytes are submatch 1, then `extension`, an optional type parameter list, the
// receiver parameter in parentheses (one level of nested parentheses), and the
// `{` that opens the block, on the same line or the next.
var csExtensionBlock = regexp.MustCompile(`(?m)^[ \t]*([ \t]{6})extension[ \t]*(?:<[^<>\n]*>)?[ \t]*\((?:[^()\n]|\([^()\n]*\))*\)[ \t]*\n?[ \t]*\{`)

// csCodeMask reports for each byte of src whether it is code: not inside a comment,
// a string or character literal (regular, verbatim @"", interpolated $"", raw
// """...""") or a preprocessor line. Interpolation holes count as string. It also
// returns the offsets of the "#" that start preprocessor lines.
func csCodeMask(src []byte) ([]bool, map[int]bool) {
	code := make([]bool, len(src))
	directives := map[int]bool{}
	lineStart := true
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case lineStart && (c == ' ' || c == '\t'):
			code[i] = true
			i++
			continue
		case lineStart && c == '#':
			directives[i] = true
			for i < len(src) && src[i] != '\n' {
				i++
			}
			continue
		}
		lineStart = false
		switch {
		case c == '\n':
			code[i] = true
			lineStart = true
			i++
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			if j := bytes.Index(src[i+2:], []byte("*/")); j >= 0 {
				i += 2 + j + 2
			} else {
				i = len(src)
			}
		case c == '"' || c == '\'' || (c == '@' || c == '$') && i+1 < len(src) && (src[i+1] == '"' || src[i+1] == '@' || src[i+1] == '$'):
			i = csLiteralEnd(src, i)
		default:
			code[i] = true
			i++
		}
	}
	return code, directives
}

// csLiteralEnd returns the end of the string or character literal starting at i
// (its prefix @, $ or $$ included).
func csLiteralEnd(src []byte, i int) int {
	verbatim := false
	for i < len(src) && (src[i] == '@' || src[i] == '$') {
		verbatim = verbatim || src[i] == '@'
		i++
	}
	if i >= len(src) {
		return i
	}
	q := src[i]
	if q != '"' && q != '\'' {
		return i
	}
	n := 0
	for i+n < len(src) && src[i+n] == '"' && q == '"' {
		n++
	}
	if n >= 3 { // raw string: ends at the same run of quotes
		if j := bytes.Index(src[i+n:], src[i:i+n]); j >= 0 {
			return i + n + j + n
		}
		return len(src)
	}
	if n == 2 { // ""
		return i + 2
	}
	for j := i + 1; j < len(src); j++ {
		switch {
		case verbatim && src[j] == '"' && j+1 < len(src) && src[j+1] == '"':
			j++
		case !verbatim && src[j] == '\\':
			j++
		case src[j] == q:
			return j + 1
		case src[j] == '\n' && !verbatim:
			return j // an unterminated literal ends at the line
		}
	}
	return len(src)
}

// csExpressionStart reports whether the `[` at i starts an expression: the code
// before it (white space skipped) ends in `=`, `=>`, `(`, `,`, `:`, `[`, `{`, `??`,
// a `?` followed by white space, or the word return, yield, await or in. After a
// type (`int[]`, `List<T>[]`, `int?[]`, `new[]`) it does not.
func csExpressionStart(src []byte, code []bool, i int) bool {
	j := i - 1
	for j >= 0 && (!code[j] || src[j] == ' ' || src[j] == '\t' || src[j] == '\n' || src[j] == '\r') {
		j--
	}
	if j < 0 {
		return false
	}
	switch src[j] {
	case '=', '(', ',', ':', '[', '{':
		return true
	case '>':
		return j > 0 && src[j-1] == '='
	case '?':
		return j+1 < i && (src[j+1] == ' ' || src[j+1] == '\t' || src[j+1] == '\n') || j > 0 && src[j-1] == '?'
	}
	k := j
	for k >= 0 && lex.IsWordByte(src[k]) {
		k--
	}
	switch string(src[k+1 : j+1]) {
	case "return", "yield", "await", "in":
		return true
	}
	return false
}

// csDirective matches a C# conditional directive line and names it.
var csDirective = regexp.MustCompile(`^[ \t]*#[ \t]*(if|elif|else|endif)\b`)

// csInlineConditionals returns the byte ranges Rewrite blanks: the directive
// lines and the later branches of each conditional whose first branch holds only
// attribute lines, or whose #if follows code that ends mid-statement (its last code
// byte is not `;`, `{`, `}`, `]` or `)`). Nested conditionals are judged alone; an
// #if left open at the end is left alone.
func csInlineConditionals(src []byte, code []bool, directives map[int]bool, lines [][2]int) [][2]int {
	type frame struct {
		directives [][2]int
		branches   [][2]int // line index ranges [first, last) of each branch
		first      int
		inline     bool // opens mid-statement
	}
	var stack []*frame
	var out [][2]int
	lastCode := func(before int) byte { // the last code byte before offset before
		for j := before - 1; j >= 0; j-- {
			if code[j] && src[j] != ' ' && src[j] != '\t' && src[j] != '\n' && src[j] != '\r' {
				return src[j]
			}
		}
		return ';' // the start of the file
	}
	for i, l := range lines {
		ln := src[l[0]:l[1]]
		if !directives[l[1]-len(bytes.TrimLeft(ln, " \t"))] {
			continue
		}
		m := csDirective.FindSubmatch(ln)
		if m == nil {
			continue
		}
		switch kw := string(m[1]); kw {
		case "if":
			b := lastCode(l[0])
			stack = append(stack, &frame{directives: [][2]int{l}, first: i + 1,
				inline: b != ';' && b != '{' && b != '}' && b != ']' && b != ')'})
		case "elif", "else":
			if len(stack) == 0 {
				continue
			}
			f := stack[len(stack)-1]
			f.branches = append(f.branches, [2]int{f.first, i})
			f.directives = append(f.directives, l)
			f.first = i + 1
		case "endif":
			if len(stack) == 0 {
				continue
			}
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			f.branches = append(f.branches, [2]int{f.first, i})
			f.directives = append(f.directives, l)
			if !f.inline && !csOnlyAttributes(src, code, lines, f.branches[0]) {
				continue
			}
			out = append(out, f.directives...)
			for _, b := range f.branches[1:] {
				if b[0] < b[1] {
					out = append(out, [2]int{lines[b[0]][0], lines[b[1]-1][1]})
				}
			}
		}
	}
	return out
}

// csOnlyAttributes reports whether the lines [br[0], br[1]) hold code and every line
// with code is an attribute line (its code starts with `[` and ends with `]`).
func csOnlyAttributes(src []byte, code []bool, lines [][2]int, br [2]int) bool {
	n := 0
	for _, l := range lines[br[0]:br[1]] {
		first, last := -1, -1
		for j := l[0]; j < l[1]; j++ {
			if code[j] && src[j] != ' ' && src[j] != '\t' && src[j] != '\r' {
				if first < 0 {
					first = j
				}
				last = j
			}
		}
		if first < 0 {
			continue
		}
		if src[first] != '[' || src[last] != ']' {
			return false
		}
		n++
	}
	return n > 0
}

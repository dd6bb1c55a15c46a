// Package c holds the text-level rules of C and C++ (see grammars.Rules): the
// length-preserving rewrites that let tree-sitter-c 0.21 and tree-sitter-cpp 0.22 (as
// bundled by smacker) parse preprocessor idioms, macros around declarations and C++
// syntax they have no rule for. The specs themselves are grammars.C and grammars.CPP;
// package languages attaches [Rewrite] and [RewriteCPP] to them. C++ shares the
// package because its rewrite is C's (cRewrite) followed by its own edits.
package c

import (
	"bytes"
	"regexp"
	"strings"

	"github.com/repoctx/repoctx/languages/internal/lex"
)

// Rewrite is the C spec's Rewrite: cRewrite with loop macros.
func Rewrite(src []byte) []byte { return cRewrite(src, true) }

// cExternOpen and cBraceLine match the lines of the `extern "C" {` ... `}` idiom
// that cRewrite blanks; cplusplusIf the #if or #ifdef guarding them.
var (
	cplusplusIf = regexp.MustCompile(`^[ \t]*#[ \t]*if(def[ \t]+__cplusplus\b|[ \t]+defined[ \t]*\(?[ \t]*__cplusplus\b)`)
	cExternOpen = regexp.MustCompile(`^[ \t]*extern[ \t]+"C"[ \t]*\{[ \t]*(//.*|/\*.*\*/[ \t]*)?$`)
	cBraceLine  = regexp.MustCompile(`^[ \t]*\}[ \t]*;?[ \t]*(//.*|/\*.*\*/[ \t]*)?$`)
)

// cRewrite returns src with two kinds of preprocessor use that neither grammar can
// parse blanked (spaces, same length, line breaks kept), or src itself when there is
// none:
//
//   - the `extern "C" {` and `}` lines between `#ifdef __cplusplus` and the next
//     #endif: a C header opens the block in one conditional and closes it in another
//     (the lone "}" is an error);
//   - conditionals whose branches do not balance their braces, such as a function
//     header that differs between an #if and its #else, and conditionals inside a
//     declaration or expression (the code line before the #if ends in ">", "=", "(",
//     "&", "|", "," or "= {", an initialiser list, or in a lone ":" or ") :", a
//     constructor's initialiser list: `template <...>` then `#if` and an attribute): the directive
//     lines and every branch but the first are blanked, so the parser sees the
//     first branch's code inline (what ctags and other tree-based tools do with
//     such code);
//   - include guards (`#ifndef X_H`, `#define X_H`, the closing `#endif`; see
//     includeGuards): tree-sitter's error recovery turns the whole guarded text
//     into one ERROR node at the first error inside it, which loses every
//     definition of the header; without the guard the error stays local;
//   - `__has_include(<x.h>)` in #if conditions, which becomes `__has_include(_x_h_)`;
//   - macros around declarations and loop macros (see declarationMacros).
func cRewrite(src []byte, loopMacros bool) []byte {
	out := src
	copied := false
	own := func() { // out becomes a copy of src before its first change
		if !copied {
			out, copied = append([]byte(nil), src...), true
		}
	}
	// an is the text the passes below read: src with raw string literals blanked
	// (their braces, quotes and "#" lines are no code), getting the blanks out gets.
	an, masked := src, false
	if m := maskRawStrings(src); m != nil {
		an, masked = m, true
	}
	blank := func(start, end int) {
		own()
		blankRange(out, start, end)
		if masked {
			blankRange(an, start, end)
		} else {
			an = out
		}
	}
	var lines [][2]int
	if bytes.IndexByte(src, '#') >= 0 {
		lines = lex.Lines(src)
	}
	if bytes.Contains(src, []byte("__cplusplus")) {
		inside := false
		for _, l := range lines {
			ln := an[l[0]:l[1]]
			switch {
			case cplusplusIf.Match(ln):
				inside = true
			case inside && bytes.HasPrefix(bytes.TrimLeft(ln, " \t"), []byte("#")):
				inside = false // #endif, #else: the block's end
			case inside && (cExternOpen.Match(ln) || cBraceLine.Match(ln)):
				blank(l[0], l[1])
			}
		}
	}
	if bytes.IndexByte(src, '#') >= 0 {
		for _, r := range includeGuards(an, lines) {
			blank(r[0], r[1])
		}
		for _, r := range unbalancedConditionals(an, lines) {
			blank(r[0], r[1])
		}
		for _, l := range lines {
			if t := bytes.TrimSpace(out[l[0]:l[1]]); len(t) == 1 && t[0] == '#' {
				blank(l[0], l[1]) // the null directive, a lone "#": the grammars fail on it
				continue
			}
			// `#if __has_include(<x/y.h>)`: the grammars read <x/y.h> in a
			// condition as comparisons and fail, and a string there too; (_x_y_h_),
			// an identifier, parses (only the condition's value is lost, which no
			// chunk depends on).
			ln := out[l[0]:l[1]]
			if !isDirectiveLine(an[l[0]:l[1]]) || !bytes.Contains(ln, []byte("(<")) && !bytes.Contains(ln, []byte("(\"")) && !bytes.Contains(ln, []byte("::")) || !cDirective.Match(ln) {
				continue
			}
			// `#if __has_cpp_attribute(clang::lifetimebound)`: a scoped name,
			// which no condition can hold, becomes one identifier.
			for x := bytes.Index(ln, []byte("::")); x > 0; x = bytes.Index(ln, []byte("::")) {
				own()
				ln = out[l[0]:l[1]]
				ln[x], ln[x+1] = '_', '_'
			}
			for i := 0; i+1 < len(ln); i++ {
				if ln[i] != '(' || ln[i+1] != '<' && ln[i+1] != '"' {
					continue
				}
				closer := byte('>')
				if ln[i+1] == '"' {
					closer = '"'
				}
				if j := bytes.IndexByte(ln[i+2:], closer); j >= 0 && i+2+j+1 < len(ln) && ln[i+2+j+1] == ')' {
					own()
					ln = out[l[0]:l[1]]
					for k := i + 1; k <= i+2+j; k++ {
						if !lex.IsWordByte(ln[k]) && ln[k] != '\r' { // line breaks stay
							ln[k] = '_'
						}
					}
				}
			}
		}
	}
	if !masked {
		an = out // the edits of __has_include conditions too
	}
	for _, e := range declarationMacros(an, loopMacros) {
		own()
		e.apply(out)
	}
	return out
}

// maskRawStrings returns a copy of src with each C++ raw string literal
// (`R"delim( ... )delim"`, with an L, u, U or u8 prefix too) blanked, line breaks
// kept, or nil when src holds none. Other string and character literals and
// comments are read past, so an `R"` inside them starts nothing.
func maskRawStrings(src []byte) []byte {
	if !bytes.Contains(src, []byte(`R"`)) {
		return nil
	}
	var out []byte
	for i := 0; i < len(src); i++ {
		switch c := src[i]; {
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			e := bytes.Index(src[i+2:], []byte("*/"))
			if e < 0 {
				return out
			}
			i += 2 + e + 1
		case c == '\'':
			for i++; i < len(src) && src[i] != '\'' && src[i] != '\n'; i++ {
				if src[i] == '\\' {
					i++
				}
			}
		case c == '"':
			if !rawPrefix(src, i) {
				for i++; i < len(src) && src[i] != '"' && src[i] != '\n'; i++ {
					if src[i] == '\\' {
						i++
					}
				}
				continue
			}
			open := bytes.IndexByte(src[i:min(i+18, len(src))], '(')
			if open < 0 {
				continue
			}
			closer := append([]byte{')'}, src[i+1:i+open]...)
			closer = append(closer, '"')
			e := bytes.Index(src[i+open:], closer)
			if e < 0 {
				return out
			}
			end := i + open + e + len(closer)
			if out == nil {
				out = bytes.Clone(src)
			}
			blankRange(out, i+1, end-1)
			out[i], out[end-1] = ' ', ' ' // a literal over lines is no literal to the line scanners
			i = end - 1
		}
	}
	return out
}

// rawPrefix reports whether the '"' at i ends a raw string prefix: R, LR, uR, UR
// or u8R, not preceded by a word byte.
func rawPrefix(src []byte, i int) bool {
	if i == 0 || src[i-1] != 'R' {
		return false
	}
	b := i - 1
	for b > 0 && lex.IsWordByte(src[b-1]) {
		b--
	}
	switch string(src[b : i-1]) {
	case "", "L", "u", "U", "u8":
		return true
	}
	return false
}

// blankRange replaces the bytes of out[start:end] with spaces, line breaks kept.
func blankRange(out []byte, start, end int) {
	for i := start; i < end; i++ {
		if out[i] != '\n' && out[i] != '\r' {
			out[i] = ' '
		}
	}
}

// macroEdit is one change declarationMacros asks for: bytes [start, end) become
// repl padded with spaces to the same length ("" blanks them).
type macroEdit struct {
	start, end int
	repl       string
}

// apply makes the edit in out (same length: line breaks in the range are kept).
func (e macroEdit) apply(out []byte) {
	blankRange(out, e.start, e.end)
	copy(out[e.start:e.end], e.repl)
}

// knownUnderscored are double-underscore words the grammars know (GNU and
// Microsoft extensions) or that are expressions; declarationMacros keeps them.
var knownUnderscored = map[string]bool{
	"__attribute__": true, "__attribute": true, "__declspec": true, "__cdecl": true, "__clrcall": true,
	"__stdcall": true, "__fastcall": true, "__thiscall": true, "__vectorcall": true, "__restrict": true,
	"__restrict__": true, "__inline": true, "__inline__": true, "__forceinline": true, "__extension__": true,
	"__asm__": true, "__asm": true, "__volatile__": true, "__thread": true, "__based": true,
	"__unaligned": true, "__ptr32": true, "__ptr64": true, "__sptr": true, "__uptr": true,
	"__alignof__": true, "__alignof": true, "__typeof__": true, "__typeof": true, "__int64": true,
	"__int128": true, "__complex__": true, "__real__": true, "__imag__": true, "__label__": true,
	"__auto_type": true, "__func__": true, "__FUNCTION__": true, "__PRETTY_FUNCTION__": true,
	"__LINE__": true, "__FILE__": true, "__builtin_va_list": true, "__signed__": true, "__const": true,
	"__volatile": true, "__nonnull": true, "__nullable": true, "_Nonnull": true, "_Nullable": true,
}

// notBeforeMacro are words after which an all-caps word is a type or a name,
// not a macro between a type and a declarator (`static FILE *f`, `struct FOO x`).
var notBeforeMacro = map[string]bool{
	"static": true, "extern": true, "const": true, "volatile": true, "inline": true, "register": true,
	"struct": true, "union": true, "enum": true, "typedef": true, "return": true, "case": true,
	"goto": true, "sizeof": true, "else": true, "do": true, "restrict": true, "auto": true,
	"signed": true, "unsigned": true, "class": true, "typename": true, "using": true, "new": true,
	"delete": true, "throw": true, "namespace": true, "friend": true, "virtual": true, "explicit": true,
	"constexpr": true, "mutable": true, "public": true, "private": true, "protected": true, "operator": true,
}

// declarationMacros returns the byte ranges of macros that decorate declarations,
// which the grammars cannot know are macros (tree-sitter does not expand them), in
// code at brace depth 0 (declarations and parameter lists, outside comments, string
// and character literals and preprocessor lines; the braces of namespaces and
// extern "C" blocks do not count):
//
//   - an unknown double-underscore word followed by a word (`__unused int x`,
//     BSD's attribute macros);
//   - an all-caps word (2+ characters of A-Z, 0-9 and _, a letter first) between a
//     type word and a declared name (`int CJSON_CDECL main(void)`,
//     `void API_EXPORT f(void)`), or before a declaration keyword
//     (`FMT_CONSTEXPR inline void f()`, `SQLITE_API int f()`);
//   - a function-like all-caps macro wrapping a declaration's type at the start of
//     a line (`CJSON_PUBLIC(cJSON *) cJSON_Parse(...)`): the name, "(" and ")";
//   - a line holding only an all-caps word or function-like macro call, no ";"
//     (`FMT_BEGIN_NAMESPACE`, `FMT_PRAGMA_GCC(push_options)`);
//
// also, at any depth, an all-caps function-like macro used as a type at the start of
// a declaration (`static TAILQ_HEAD(, w) list;`, see typeMacro), which becomes one
// identifier; an attribute macro with integer arguments ending a line after a type
// (`static void printflike(3, 4)`); a lone comparison operator or an empty macro
// argument (`timercmp(a, b, >)`, `RB_NEXT(t, , e)`), which becomes "_"; block
// comments on directive lines (`#define X (7 /* o+rwx */)`); an attribute macro
// call after a declarator (`int n GUARDED_BY(mu);`); a format macro of
// <inttypes.h> next to a string literal (`"%" PRIu64`), which becomes a string;
// and, with loopMacros (C, where no constructor can look the same), at any depth,
// a function-like all-caps macro that starts a line and is followed by a block or
// by nothing (its body on the next line), a loop macro
// (`TAILQ_FOREACH(c, &clients, entry) {`, a blank before "(" allowed): its
// name becomes `while` (or `if` when shorter than 5 bytes), so the block parses as
// a loop body. Also by kind: a noexcept or attribute macro after a parameter list
// (`f() const LIB_NOEXCEPT;`, see afterParameters), a specifier macro before a
// qualified declarator (declaratorFollows), a macro holding an array's initialiser,
// a statement macro before "}", a test macro heading a body (string arguments
// become identifiers, see stringArguments), a macro the file defines as specifiers
// (specifierDefines), a type of keywords as an argument (typeArgument), a ";" after
// a member function's body (strayMemberSemicolon) and, in C, a call statement macro
// without its ";". These are heuristics on the text; they err towards leaving text
// alone.
func declarationMacros(src []byte, loopMacros bool) []macroEdit {
	var out []macroEdit
	localSpecifiers := specifierDefines(src)
	stmtMacroEnd := -1           // the ")" of the last call statement macro (C), see below
	depth := 0                   // braces open, not counting those of namespaces, extern "C" blocks and class bodies
	var opened []braceKind       // for each open brace, what it opened
	var classNames []string      // for each open brace, the class's name when it opened a class body
	var openedAt []int           // for each open brace, its offset
	container := false           // a namespace or extern "C" head is open: its brace does not count
	externHead := false          // the open container head is extern's, not a namespace's
	head := classHead{}          // the class head being read, if any
	tmplAngle, tmplParen := 0, 0 // inside `template <...>`: "<" nesting, "(" nesting in it
	tmplPending := false         // the word "template" was just read
	inComment := false
	lineStart, lineCode := true, false // at the start of a line; the line has code before i
	var prevWord []byte                // the previous word on the line, nil after other tokens
	prevFirst := false                 // prevWord is the line's first token
	inClass := func() string {         // the innermost brace's class name, "" when not a class body
		if n := len(opened); n > 0 && opened[n-1] == braceClass {
			return classNames[n-1]
		}
		return ""
	}
	lastCode := -1     // the offset of the last code byte before the token at i (not in a comment or directive)
	codeToken := false // the loop's last pass read code (a token), which ended at i-1
	for i := 0; i < len(src); i++ {
		if codeToken {
			lastCode, codeToken = i-1, false
		}
		c := src[i]
		switch {
		case inComment:
			if c == '*' && i+1 < len(src) && src[i+1] == '/' {
				inComment = false
				i++
			}
			continue
		case c == '\n':
			lineStart, lineCode, prevWord = true, false, nil
			continue
		case c == ' ' || c == '\t' || c == '\r':
			continue
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			i--
			continue
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			inComment = true
			i++
			continue
		case c == '#' && !lineCode:
			// A preprocessor line, with its continuations. Its block comments are
			// blanked: the grammars fail on `#define X (7 /* o+rwx */)`; but not one
			// that ends the line: `#define X /* empty */` would become a define
			// followed by blanks, whose value then swallows the next line.
			for i < len(src) && (src[i] != '\n' || i > 0 && src[i-1] == '\\') {
				if src[i] == '/' && i+1 < len(src) && src[i+1] == '*' {
					if e := bytes.Index(src[i+2:], []byte("*/")); e >= 0 && bytes.IndexByte(src[i:i+2+e], '\n') < 0 && !onlyOnLine(src, i+2+e+2) {
						out = append(out, macroEdit{i, i + 2 + e + 2, ""})
						i += 2 + e + 1
					}
				}
				i++
			}
			i--
			continue
		case c == '"' || c == '\'':
			codeToken = true
			for i++; i < len(src) && src[i] != c && src[i] != '\n'; i++ {
				if src[i] == '\\' {
					i++
				}
			}
			prevWord, lineCode = nil, true
			continue
		case c == '{':
			kind := braceCounted
			switch {
			case container:
				kind = braceContainer
			case head.open:
				kind = braceClass
			}
			opened = append(opened, kind)
			classNames = append(classNames, head.name)
			openedAt = append(openedAt, i)
			if kind == braceCounted {
				depth++
			}
			container, head = false, classHead{}
		case c == '}':
			if n := len(opened); n > 0 {
				if opened[n-1] == braceCounted {
					depth--
					if n >= 2 && opened[n-2] == braceClass {
						if e, ok := strayMemberSemicolon(src, openedAt[n-1], i); ok {
							out = append(out, e)
						}
					}
				}
				opened, classNames, openedAt = opened[:n-1], classNames[:n-1], openedAt[:n-1]
			}
			head = classHead{}
		case c == ';':
			container, head = false, classHead{}
		case c == '=':
			head = classHead{}
		case c == ':' && head.open && !(i+1 < len(src) && src[i+1] == ':') && !(i > 0 && src[i-1] == ':'):
			head.named = true // the base list: the name is read
		case c == '<' && head.open:
			head.named = true // a specialization's arguments
		}
		codeToken = true
		if tmplPending && c != '<' && !lex.IsWordByte(c) {
			tmplPending = false
		}
		switch {
		case tmplPending && c == '<':
			tmplPending, tmplAngle, tmplParen = false, 1, 0
		case tmplAngle > 0 && c == '(':
			tmplParen++
		case tmplAngle > 0 && c == ')':
			tmplParen--
		case tmplAngle > 0 && tmplParen == 0 && c == '<':
			tmplAngle++
		case tmplAngle > 0 && tmplParen == 0 && c == '>':
			tmplAngle--
		}
		if (c == '(' || c == ')') && head.open && tmplAngle == 0 {
			head = classHead{} // `struct foo f(struct bar b) {`, `f(struct bar b) {`: a function
		}
		if c == '(' && container && externHead {
			// `extern "C" int f(int a) {`: a function's body, not a container (a
			// namespace's "(" is an attribute's: `namespace [[deprecated("x")]] n {`)
			container = false
		}
		switch {
		case c == ',' || c == '(':
			if e, ok := emptyOrOperatorArgument(src, i); ok {
				out = append(out, e)
			}
			if depth > 0 {
				if e, ok := typeArgument(src, i); ok {
					out = append(out, e)
				}
			}
		}
		first := lineStart
		lineStart, lineCode = false, true
		if !lex.IsWordByte(c) {
			prevWord = nil
			continue
		}
		j := i
		for j < len(src) && lex.IsWordByte(src[j]) {
			j++
		}
		w := src[i:j] // string(w) in comparisons and map keys does not allocate
		if (depth == 0 || inClass() != "") && localSpecifiers[string(w)] && !allCaps(w) {
			// `ffc_inline uint64_t f(double d)` after `#define ffc_inline inline`: a
			// macro the file defines as specifiers only goes where a declaration
			// starts (an all-caps one is handled by the rules below).
			out = append(out, macroEdit{i, j, ""})
			i = j - 1
			continue
		}
		k := lex.SkipBlanks(src, j)
		switch string(w) {
		case "namespace", "extern":
			container = true // `extern int x;` ends at its ";"
			externHead = string(w) == "extern"
		case "class", "struct", "union":
			if tmplAngle == 0 && string(prevWord) != "enum" && !head.enum {
				head = classHead{open: true}
			}
		case "enum":
			head = classHead{enum: true}
		case "template":
			tmplPending = true
		case "throw":
			// `EXPECT_THROW(throw x, y)`: the grammars read throw as a statement
			// only; `!x` is an expression of the same shape.
			if p := lex.SkipBack(src, i); i > 0 && (src[p] == '(' || src[p] == ',') {
				out = append(out, macroEdit{i, j, "!"})
			}
		default:
			if head.open && !head.named && tmplAngle == 0 && string(w) != "final" && !allCaps(w) {
				head.name = string(w)
			}
		}
		if inttypesMacro.Match(w) && (src[lex.SkipBack(src, i)] == '"' || k < len(src) && src[k] == '"') {
			// `"%8" PRIu64 " ops"`: a format macro of <inttypes.h> in a string
			// concatenation becomes a string literal of its length.
			out = append(out, macroEdit{i, j, `"` + strings.Repeat(" ", j-i-2) + `"`})
			prevWord, prevFirst = nil, false
			i = j - 1
			continue
		}
		if tmplAngle == 1 && tmplParen == 0 && allCaps(w) && k < len(src) && src[k] == '(' && j-i >= 4 {
			// `template <typename T, FMT_ENABLE_IF(cond)>`: a parameter that is
			// a macro call becomes the unnamed parameter `int =(cond)`.
			if p := skipSpaceBack(src, i); src[p] == '<' || src[p] == ',' {
				if end := closingParenAcross(src, k); end > 0 {
					if q := skipSpace(src, end+1); q < len(src) && (src[q] == '>' || src[q] == ',') {
						out = append(out, macroEdit{i, j, "int" + strings.Repeat(" ", j-i-4) + "="})
						prevWord, prevFirst = nil, false
						i = end
						continue
					}
				}
			}
		}
		if (first || storageWords[string(prevWord)] && prevFirst) && allCaps(w) && j < len(src) && src[j] == '(' {
			if e, ok := typeMacro(src, i, j); ok {
				out = append(out, e)
				prevWord, prevFirst = nil, false
				i = e.end - 1
				continue
			}
		}
		if allCaps(w) && (prevWord == nil || allCaps(prevWord) || specifierWords[string(prevWord)]) && specifierMacro(src, j, inClass()) ||
			allCaps(w) && string(prevWord) == "if" && k < len(src) && src[k] == '(' || // `if FMT_CONSTEXPR20 (x)`
			allCaps(w) && head.open && !head.named && classKeywords[string(prevWord)] && classNameFollows(src, k) { // `class FMT_API file {`
			out = append(out, macroEdit{i, j, ""})
			prevWord, prevFirst = w, first
			i = j - 1
			continue
		}
		if allCaps(w) && head.open && !head.named && classKeywords[string(prevWord)] && k < len(src) && src[k] == '(' {
			// `class FMT_SO_VISIBILITY("default") format_error : ...`
			if end := closingParen(src, k); end > 0 && classNameFollows(src, lex.SkipBlanks(src, end+1)) {
				out = append(out, macroEdit{i, end + 1, ""})
				prevWord, prevFirst = w, first
				i = end
				continue
			}
		}
		if first && (depth == 0 || inClass() != "") && allCaps(w) && k < len(src) && src[k] == '(' && string(w) != inClass() && startsDeclaration(src, i) {
			// `MOCK_METHOD(void, f, ());`, `VISIT_TYPE(long, int);` among
			// declarations (also in the body of a class declared in a function): a
			// macro call that expands to declarations. It goes (types and
			// parenthesised lists as arguments are no expressions).
			if end := closingParenAcross(src, k); end > 0 {
				if q := skipSpace(src, end+1); q < len(src) && src[q] == ';' {
					out = append(out, macroEdit{i, q + 1, ""})
					prevWord, prevFirst = nil, false
					i = q
					continue
				}
			}
		}
		if allCaps(w) && k < len(src) && src[k] == '(' && (first || depth == 0) {
			// `TEST(format_test, enum) {`: a keyword as a macro argument becomes
			// an identifier (its first byte "_").
			if end := closingParenAcross(src, k); end > 0 {
				out = append(out, keywordArguments(src, k, end)...)
				if depth == 0 && first && src[skipCode(src, end+1)] == '{' {
					// `TEST_CASE("name", "[tag]") {` (Catch2, doctest): a test
					// macro heading a body; its string arguments become identifiers,
					// so that the grammar reads a function (named after them, see
					// grammars.C's DefName).
					out = append(out, stringArguments(src, k, end)...)
				}
			}
		}
		if (depth == 0 || inClass() != "") && allCaps(w) && (k >= len(src) || src[k] != '(') && afterParameters(src, lastCode, prevWord) && trailingSpecifierFollows(src, j) {
			// `void swap(T &other) SPDLOG_NOEXCEPT;`, `f() const FMT_NOEXCEPT {`:
			// a noexcept or attribute macro after a function's parameter list goes,
			// with the all-caps words after it.
			out = append(out, macroEdit{i, j, ""})
			for q := skipCode(src, j); q < len(src) && lex.IsWordByte(src[q]) && allCaps(src[q:wordEnd(src, q)]); q = skipCode(src, j) {
				j = wordEnd(src, q)
				out = append(out, macroEdit{q, j, ""})
			}
			prevWord, prevFirst = nil, false
			i = j - 1
			continue
		}
		if depth == 0 && allCaps(w) && prevWord != nil && !notBeforeMacro[string(prevWord)] && !declKeywords[string(prevWord)] &&
			k < len(src) && (src[k] == ',' || src[k] == ')') && !allCaps(prevWord) {
			// `const Tuple& t FMT_LIFETIMEBOUND, string_view sep`: an attribute
			// macro after a parameter's name.
			out = append(out, macroEdit{i, j, ""})
			prevWord, prevFirst = nil, false
			i = j - 1
			continue
		}
		if (depth == 0 || inClass() != "") && allCaps(w) && k < len(src) && src[k] == '(' && i > 0 {
			// `int count_ GUARDED_BY(mu_);`, `void Lock() EXCLUSIVE_LOCK_FUNCTION() {`,
			// `Status Recover(...)` then `EXCLUSIVE_LOCKS_REQUIRED(mutex_);`: an
			// attribute macro after a declarator (clang's thread-safety annotations
			// and the like). It goes.
			// p: the code byte before, which may be on an earlier line (a ")" in
			// a comment or a #define above is none: `// (bool)` then `PCRE(const
			// PCRE&) = delete;`).
			p := max(lastCode, 0)
			b := p + 1 // the word ending at p
			for b > 0 && lex.IsWordByte(src[b-1]) {
				b--
			}
			before := src[b : p+1]
			// After a name, `Status OK();` and `T NAME(int x);` are functions: the
			// macro's name holds a "_" and its arguments read as an expression.
			end := closingParenAcross(src, k)
			after := lastCode >= 0 && (src[p] == ')' || src[p] == ']') ||
				b <= p && !('0' <= src[b] && src[b] <= '9') && !allCaps(before) && bytes.IndexByte(w, '_') > 0 &&
					!notBeforeMacro[string(before)] && !declKeywords[string(before)] && !cppWordOperators[string(before)] &&
					end > 0 && expressionLike(src[k+1:end])
			if after && end > 0 {
				if q := skipSpace(src, end+1); q < len(src) && (bytes.IndexByte([]byte(";{:=,"), src[q]) >= 0 || lex.IsWordByte(src[q])) {
					out = append(out, macroEdit{i, end + 1, ""})
					prevWord, prevFirst = nil, false
					i = end
					continue
				}
			}
		}
		if depth == 0 && (prevWord != nil || i > 0 && src[lex.SkipBack(src, i)] == '*') && j < len(src) && src[j] == '(' && !declKeywords[string(w)] {
			if end := closingParen(src, j); end > 0 && integerArguments(src[j+1:end]) && onlyOnLine(src, end+1) {
				out = append(out, macroEdit{i, end + 1, ""}) // `static void printflike(3, 4)`
				prevWord, prevFirst = nil, false
				i = end
				continue
			}
		}
		if (depth == 0 || inClass() != "") && allCaps(w) && (k >= len(src) || src[k] != '(') && lastCode >= 0 &&
			(prevWord != nil && !allCaps(prevWord) && !notBeforeMacro[string(prevWord)] && !cppWordOperators[string(prevWord)] ||
				bytes.IndexByte([]byte(">*&"), src[lastCode]) >= 0 && prevWord == nil) && declaratorFollows(src, j) {
			// `std::future<void> SPDLOG_INLINE pool::post(`, `void API` then
			// `ns::f(` on the next line: a specifier macro between a return type
			// and a (qualified) function name.
			out = append(out, macroEdit{i, j, ""})
			prevWord, prevFirst = nil, false
			i = j - 1
			continue
		}
		if (depth == 0 || inClass() != "") && allCaps(w) && lastCode >= 0 && src[lastCode] == ']' && src[skipCode(src, j)] == ';' {
			// `static const char *names[] LEVEL_NAMES;`: a macro holding an array's
			// initialiser goes.
			out = append(out, macroEdit{i, j, ""})
			prevWord, prevFirst = nil, false
			i = j - 1
			continue
		}
		if depth == 0 && (i == 0 || !lex.IsWordByte(src[i-1])) {
			nextWord := k > j && k < len(src) && (lex.IsWordByte(src[k]) && !('0' <= src[k] && src[k] <= '9'))
			switch {
			case bytes.HasPrefix(w, []byte("__")) && !knownUnderscored[string(w)] && nextWord:
				out = append(out, macroEdit{i, j, ""})
			case allCaps(w) && prevWord != nil && !notBeforeMacro[string(prevWord)] && nextWord:
				out = append(out, macroEdit{i, j, ""})
			case allCaps(w) && nextWord && declKeywords[string(src[k:wordEnd(src, k)])]:
				out = append(out, macroEdit{i, j, ""})
			case first && allCaps(w) && onlyOnLine(src, j):
				out = append(out, macroEdit{i, j, ""})
			case first && allCaps(w) && k < len(src) && src[k] == '(' && onlyOnLine(src, closingParenAcross(src, k)+1) &&
				(closingParenAcross(src, k) < 0 || src[skipCode(src, closingParenAcross(src, k)+1)] != '{'): // `TEST_CASE("x")` then `{`: a test
				out = append(out, macroEdit{i, closingParenAcross(src, k) + 1, ""})
			case first && allCaps(w) && k < len(src) && src[k] == '(':
				if end := closingParen(src, k); end > 0 {
					m := end + 1
					for m < len(src) && (src[m] == ' ' || src[m] == '\t') {
						m++
					}
					n := m
					for n < len(src) && lex.IsWordByte(src[n]) {
						n++
					}
					p := n
					for p < len(src) && (src[p] == ' ' || src[p] == '\t') {
						p++
					}
					if n > m && p < len(src) && src[p] == '(' {
						out = append(out, macroEdit{i, k + 1, ""}, macroEdit{end, end + 1, ""})
					}
				}
			}
		} else if depth > 0 && allCaps(w) && inClass() == "" && (first || bytes.IndexByte([]byte("{};"), src[lex.SkipBack(src, i)]) >= 0) && k < len(src) && src[k] == '{' {
			out = append(out, macroEdit{i, j, ""}) // `FMT_TRY {`: a block
		} else if depth > 0 && allCaps(w) && inClass() == "" && first && (k >= len(src) || src[k] != '(') && statementEnd(src, lastCode) && src[skipCode(src, j)] == '}' {
			out = append(out, macroEdit{i, j, ""}) // `SPDLOG_CATCH_STD` then `}`: a statement macro
		} else if loopMacros && depth > 0 && first && !allCaps(w) && j-i >= 2 && k < len(src) && src[k] == '(' && !cStatementWords[string(w)] &&
			(lastCode < 0 || bytes.IndexByte([]byte(";{}"), src[lastCode]) >= 0 || lastCode == stmtMacroEnd) {
			// `test_cond("len", n == 3)` then a statement on the next line: a call
			// statement macro that brings its own ";" (C). Before a statement it
			// is read as a loop heading it (see the loop macros below), before
			// "}" it goes.
			if end := closingParenAcross(src, k); end > 0 && onlyOnLine(src, end+1) {
				stmtMacroEnd = end // the next statement may start after it
				switch n := skipCode(src, end+1); {
				case n < len(src) && (src[n] == '}' || len(bytes.TrimSpace(src[k+1:end])) == 0) && (src[n] == '}' || src[n] == '{' || lex.IsWordByte(src[n])):
					out = append(out, macroEdit{i, end + 1, ""}) // no loop without a condition
				case n < len(src) && (src[n] == '{' || lex.IsWordByte(src[n]) && !('0' <= src[n] && src[n] <= '9') && string(src[n:wordEnd(src, n)]) != "else"):
					kw := "while"
					if j-i < len(kw) {
						kw = "if"
					}
					out = append(out, macroEdit{i, j, kw})
				}
			}
		} else if (loopMacros || inClass() == "") && depth > 0 && (first || src[lex.SkipBack(src, i)] == '}') && allCaps(w) && k < len(src) && src[k] == '(' {
			if end := closingParen(src, k); end > 0 {
				m := end + 1
				for m < len(src) && (src[m] == ' ' || src[m] == '\t') {
					m++
				}
				// A call alone on its line heads a block or statement on the next
				// line, unless that line goes on with an operator (`GTEST_CHECK_(x)`
				// then `<< "message";`).
				block := m < len(src) && src[m] == '{' ||
					onlyOnLine(src, end+1) && bytes.IndexByte([]byte("<>.-+?:&|=,)[*/%^"), src[skipCode(src, end+1)]) < 0
				closes := onlyOnLine(src, end+1) && src[skipCode(src, end+1)] == '}' && statementEnd(src, lastCode)
				if closes || block && (!first || !expressionLike(src[k+1:end])) {
					// `SPDLOG_LOGGER_CATCH(loc)` then `}`: a statement macro
					// (a whole catch clause) that ends its block goes too.
					out = append(out, macroEdit{i, end + 1, ""}) // `FMT_CATCH(...) {`
				} else if block {
					kw := "while"
					if j-i < len(kw) {
						kw = "if"
					}
					if j-i >= len(kw) {
						out = append(out, macroEdit{i, j, kw})
					}
				}
			}
		}
		prevWord, prevFirst = w, first
		i = j - 1
	}
	return out
}

// braceKind is what an open brace opened, for declarationMacros.
type braceKind uint8

const (
	braceCounted   braceKind = iota // a function body, an initialiser, an enum's list: code
	braceContainer                  // a namespace or extern "C" block: declarations
	braceClass                      // a class, struct or union body: declarations (members)
)

// classHead is the head of a class, struct or union declaration being read (from its
// keyword to its "{", ";", "=" or a "(" that makes it a function's return type).
type classHead struct {
	open  bool   // a class keyword was read
	enum  bool   // after "enum": `enum class e {` opens no class body
	named bool   // the name is read (a base list or template arguments follow)
	name  string // the name, the last word not a macro after the keyword
}

// specifierWords may come before a specifier macro (`explicit FMT_CONSTEXPR
// basic_fstring(...)`, `static FMT_INLINE auto f()`).
var specifierWords = map[string]bool{
	"explicit": true, "inline": true, "constexpr": true, "static": true, "virtual": true,
	"friend": true, "extern": true, "consteval": true,
}

// specifierMacro reports whether the all-caps word ending at j (with any all-caps
// words after it) is a macro used as an attribute or specifier before a declaration,
// which C++ syntax allows nowhere else: what follows is
//
//   - a declaration keyword (`FMT_CONSTEXPR inline void f()`, `FMT_API void close();`);
//   - "~" or "operator" (`FMT_API ~file()`, `FMT_CONSTEXPR operator int()`);
//   - in the body of class class, its name and "(" (a constructor:
//     `FMT_CONSTEXPR typed_node(const Arg& arg)`);
//   - a qualified constructor or destructor name (`FMT_FUNC format_error::format_error(`,
//     `X::~X(`);
//   - a type and a declared name, then "(", "=", ";", "{" or "[" (`FMT_API
//     std::system_error vwindows_error(...)`, `FMT_CONSTEXPR20 size_t n = 1;`): three
//     names in a row where only two can be (a type and its declarator), the type not
//     all-caps (`LPCSTR WINAPI f()` keeps its type).
//
// An all-caps type (`FILE *f`, `DWORD GetVersion()`) matches none of these.
func specifierMacro(src []byte, j int, class string) bool {
	k := lex.SkipBlanks(src, j)
	for k < len(src) && lex.IsWordByte(src[k]) && allCaps(src[k:wordEnd(src, k)]) {
		k = lex.SkipBlanks(src, wordEnd(src, k))
	}
	if k >= len(src) {
		return false
	}
	if src[k] == '~' {
		return true
	}
	if !lex.IsWordByte(src[k]) || '0' <= src[k] && src[k] <= '9' || k == lex.SkipBlanks(src, j) && k == j {
		return false
	}
	e := wordEnd(src, k)
	w := string(src[k:e])
	switch {
	case declKeywords[w] || w == "operator":
		return true
	case class != "" && w == class && lex.SkipBlanks(src, e) < len(src) && src[lex.SkipBlanks(src, e)] == '(':
		return true
	}
	// A type: a name with "::" qualifications and template arguments on this line
	// (`std::shared_ptr<logger>`, `sink<Mutex>::sink(`: a qualified constructor).
	comps, e, ok := qualifiedName(src, k)
	if !ok {
		return false
	}
	if e < 0 {
		return true // `X::~X(`
	}
	if n := len(comps); n >= 2 && comps[n-1] == comps[n-2] && lex.SkipBlanks(src, e) < len(src) && src[lex.SkipBlanks(src, e)] == '(' {
		return true // `format_error::format_error(`
	}
	for e < len(src) && (src[e] == ' ' || src[e] == '\t' || src[e] == '*' || src[e] == '&') {
		e++
	}
	n := wordEnd(src, e)
	if n == e || '0' <= src[e] && src[e] <= '9' || allCaps([]byte(w)) && len(comps) == 1 || notBeforeMacro[string(src[e:n])] && string(src[e:n]) != "operator" {
		return false
	}
	if string(src[e:n]) == "operator" {
		return true
	}
	// The declared name, which may be qualified too (`logger::clone(`, `sink<M>::log(`).
	names, n, ok := qualifiedName(src, e)
	if !ok || n < 0 || names[len(names)-1] == "operator" {
		return ok
	}
	p := lex.SkipBlanks(src, n)
	return p < len(src) && bytes.IndexByte([]byte("(=;{["), src[p]) >= 0
}

// qualifiedName reads the name starting at k (a word) with its "::" qualifications
// and template arguments (on k's line): it returns the components and the offset
// after the name, with e = -1 for a destructor's qualified name (`X::~X`); ok is
// false when the text there is no such name (unbalanced template arguments, "::"
// then no word).
func qualifiedName(src []byte, k int) (comps []string, e int, ok bool) {
	e = wordEnd(src, k)
	comps = append(comps, string(src[k:e]))
	for {
		if e < len(src) && src[e] == '<' {
			d := 0
			for ; e < len(src) && src[e] != '\n'; e++ {
				if src[e] == '<' {
					d++
				} else if src[e] == '>' {
					if d--; d == 0 {
						e++
						break
					}
				}
			}
			if d != 0 {
				return nil, 0, false
			}
		}
		if e+1 >= len(src) || src[e] != ':' || src[e+1] != ':' {
			return comps, e, true
		}
		if e+2 < len(src) && src[e+2] == '~' {
			return comps, -1, true
		}
		n := wordEnd(src, e+2)
		if n == e+2 {
			return nil, 0, false
		}
		comps, e = append(comps, string(src[e+2:n])), n
	}
}

// closingParenAcross returns the offset of the ")" matching the "(" at open, which
// may be on a later line (at most 8 KiB on), skipping string and character literals
// and comments; -1 when there is none.
func closingParenAcross(src []byte, open int) int {
	d := 0
	for i := open; i < len(src) && i < open+8192; i++ {
		switch c := src[i]; {
		case c == '(':
			d++
		case c == ')':
			if d--; d == 0 {
				return i
			}
		case c == '"' || c == '\'':
			for i++; i < len(src) && src[i] != c && src[i] != '\n'; i++ {
				if src[i] == '\\' {
					i++
				}
			}
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			e := bytes.Index(src[i+2:], []byte("*/"))
			if e < 0 {
				return -1
			}
			i += 2 + e + 1
		case c == ';' || c == '{' || c == '}':
			return -1 // not an argument list
		}
	}
	return -1
}

// skipSpace returns the offset of the first byte at or after i that is not white
// space (line breaks included).
func skipSpace(src []byte, i int) int {
	for i < len(src) && (src[i] == ' ' || src[i] == '\t' || src[i] == '\r' || src[i] == '\n') {
		i++
	}
	return i
}

// argKeywords are the reserved words that cannot be an expression, which a macro
// call's argument may still be (`TEST(format_test, enum)`, gtest's test names).
var argKeywords = map[string]bool{
	"enum": true, "class": true, "struct": true, "union": true, "template": true, "typename": true,
	"namespace": true, "using": true, "typedef": true, "operator": true, "virtual": true, "friend": true,
	"public": true, "private": true, "protected": true, "default": true, "case": true, "switch": true,
	"if": true, "else": true, "for": true, "while": true, "do": true, "return": true, "goto": true,
	"break": true, "continue": true, "try": true, "catch": true, "static": true, "extern": true,
	"inline": true, "explicit": true, "export": true, "module": true, "import": true, "concept": true,
	"requires": true, "register": true, "asm": true, "delete": true, "new": true,
}

// keywordArguments returns the edits for the arguments of the macro call whose "("
// is at open and ")" at end that are a lone keyword of argKeywords: the keyword's
// first byte becomes "_" (an identifier of the same length).
func keywordArguments(src []byte, open, end int) []macroEdit {
	var out []macroEdit
	start := open + 1
	for x := open + 1; x <= end; x++ {
		if src[x] != ',' && x != end {
			continue
		}
		a := bytes.TrimSpace(src[start:x])
		if argKeywords[string(a)] {
			off := start + bytes.Index(src[start:x], a)
			out = append(out, macroEdit{off, off + 1, "_"})
		}
		start = x + 1
	}
	return out
}

// stringArguments returns the edits for the arguments of the macro call whose "("
// is at open and ")" at end that are string literals (or concatenations of them):
// each byte of a literal that is not a word byte, its quotes included, becomes "_",
// so that the argument is an identifier of the same length (`"adds two"` becomes
// `_adds_two_`). Only the parse sees it: names and headers come from the source.
func stringArguments(src []byte, open, end int) []macroEdit {
	var out []macroEdit
	for x := open + 1; x < end; x++ {
		c := src[x]
		if c == '\'' {
			for x++; x < end && src[x] != '\'' && src[x] != '\n'; x++ {
				if src[x] == '\\' {
					x++
				}
			}
			continue
		}
		if c != '"' {
			continue
		}
		s := x
		for x++; x < end && src[x] != '"' && src[x] != '\n'; x++ {
			if src[x] == '\\' && x+1 < end && src[x+1] != '\n' {
				x++
			}
		}
		if x >= end || src[x] != '"' {
			return out // an unterminated literal: no edit past it
		}
		repl := []byte(string(src[s : x+1]))
		for y := range repl {
			if !lex.IsWordByte(repl[y]) || repl[y] >= 0x80 {
				repl[y] = '_'
			}
		}
		out = append(out, macroEdit{s, x + 1, string(repl)})
	}
	return out
}

// afterParameters reports whether the code before a word ends a function's
// parameter list: its last code byte (at lastCode) is ")", or the word before it
// (prevWord, on its line) is a qualifier (const, volatile, override, final,
// noexcept) that follows a ")".
func afterParameters(src []byte, lastCode int, prevWord []byte) bool {
	if lastCode < 0 {
		return false
	}
	if src[lastCode] == ')' {
		return true
	}
	if !trailingQualifiers[string(prevWord)] || lastCode+1 < len(prevWord) {
		return false
	}
	p := lex.SkipBack(src, lastCode+1-len(prevWord))
	return src[p] == ')' || src[p] == '&'
}

// trailingQualifiers are the words between a parameter list and a trailing
// specifier macro (`int size() const SPDLOG_NOEXCEPT`).
var trailingQualifiers = map[string]bool{"const": true, "volatile": true, "override": true, "final": true, "noexcept": true}

// trailingSpecifierFollows reports whether what follows the all-caps word ending at
// j (after more all-caps words) ends or continues a function's declarator: ";",
// "{", "=" (`= default`), ":" (a constructor's initialiser list, not "::"), "->",
// or a qualifier word (`override`, `final`, `const`, `noexcept`, `try`).
func trailingSpecifierFollows(src []byte, j int) bool {
	k := skipCode(src, j)
	for k < len(src) && lex.IsWordByte(src[k]) && allCaps(src[k:wordEnd(src, k)]) {
		k = skipCode(src, wordEnd(src, k))
	}
	if k >= len(src) {
		return false
	}
	switch src[k] {
	case ';', '{', '=':
		return k+1 >= len(src) || src[k+1] != '='
	case ':':
		return k+1 >= len(src) || src[k+1] != ':'
	case '-':
		return k+1 < len(src) && src[k+1] == '>'
	}
	w := string(src[k:wordEnd(src, k)])
	return trailingQualifiers[w] || w == "try"
}

// specifierDirective matches `#define NAME VALUE` where VALUE is only declaration
// specifiers and attributes (`inline`, `static inline`, `__forceinline`,
// `__attribute__((always_inline)) inline`, `__declspec(dllexport)`), or nothing.
var specifierDirective = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]*((?:(?:static|inline|extern|__inline|__inline__|__forceinline|constexpr|__attribute__[ \t]*\(\([^()\n]*(?:\([^()\n]*\)[^()\n]*)*\)\)|__declspec[ \t]*\([^()\n]*\))[ \t]*)*)(?://.*|/\*.*\*/[ \t]*)?\r?$`)

// specifierDefines returns the names of the object-like macros src defines as
// declaration specifiers (see specifierDirective), with at least one specifier in
// some definition: a lowercase one (`ffc_inline`) is no name the other rules take
// for a macro.
func specifierDefines(src []byte) map[string]bool {
	if !bytes.Contains(src, []byte("define")) {
		return nil
	}
	var out map[string]bool
	for _, m := range specifierDirective.FindAllSubmatch(src, -1) {
		if len(bytes.TrimSpace(m[2])) == 0 || declKeywords[string(m[1])] {
			continue
		}
		if out == nil {
			out = map[string]bool{}
		}
		out[string(m[1])] = true
	}
	return out
}

// cStatementWords are C keywords that may start a line with "(" after them; a
// call statement macro is none of them.
var cStatementWords = map[string]bool{
	"if": true, "while": true, "for": true, "switch": true, "return": true, "sizeof": true, "do": true,
	"else": true, "case": true, "goto": true, "_Alignof": true, "_Generic": true, "_Static_assert": true,
	"__asm__": true, "asm": true, "__asm": true, "defined": true, "typeof": true, "__typeof__": true,
	"alignof": true, "static_assert": true, "__attribute__": true, "__extension__": true,
}

// typeKeywords are the words a type argument of a macro call may consist of
// (`va_arg(ap, unsigned long long)`), with "*".
var typeKeywords = map[string]bool{
	"void": true, "char": true, "short": true, "int": true, "long": true, "float": true, "double": true,
	"signed": true, "unsigned": true, "const": true, "volatile": true, "_Bool": true, "bool": true,
}

// notTypeCalls are the words before "(" whose type arguments the grammars read.
var notTypeCalls = map[string]bool{
	"sizeof": true, "alignof": true, "_Alignof": true, "__alignof__": true, "__alignof": true, "typeof": true,
	"__typeof__": true, "__typeof": true, "decltype": true, "_Generic": true, "offsetof": true,
	"__builtin_offsetof": true, "__builtin_va_arg": true, "_Atomic": true, "static_assert": true,
	"_Static_assert": true, "if": true, "while": true, "for": true, "switch": true, "return": true,
}

// typeArgument returns the edit for a macro argument that is a type of keywords
// (`va_arg(ap, char *)`, `WIDTH_TEST("ld", long long)`), after the "," or "(" at i
// (inside a function body): the grammars read types as arguments of sizeof and the
// like only. Its bytes that are not word bytes, and its first byte, become "_": one
// identifier of the same length (`_har__`).
func typeArgument(src []byte, i int) (macroEdit, bool) {
	if src[i] == '(' {
		p := lex.SkipBack(src, i)
		if i == 0 || !lex.IsWordByte(src[p]) {
			return macroEdit{}, false
		}
		b := p + 1
		for b > 0 && lex.IsWordByte(src[b-1]) {
			b--
		}
		if notTypeCalls[string(src[b:p+1])] || typeKeywords[string(src[b:p+1])] {
			return macroEdit{}, false
		}
	}
	s := lex.SkipBlanks(src, i+1)
	e, words := s, 0
	for e < len(src) {
		switch {
		case src[e] == '*' || src[e] == ' ' || src[e] == '\t':
			e++
		case lex.IsWordByte(src[e]):
			w := wordEnd(src, e)
			if !typeKeywords[string(src[e:w])] {
				return macroEdit{}, false
			}
			e, words = w, words+1
		case src[e] == ',' || src[e] == ')':
			for e > s && (src[e-1] == ' ' || src[e-1] == '\t') {
				e--
			}
			if words == 0 {
				return macroEdit{}, false
			}
			repl := []byte(string(src[s:e]))
			for x := range repl {
				if x == 0 || !lex.IsWordByte(repl[x]) {
					repl[x] = '_'
				}
			}
			return macroEdit{s, e, string(repl)}, true
		default:
			return macroEdit{}, false
		}
	}
	return macroEdit{}, false
}

// strayMemberSemicolon returns the edit that blanks the ";" after the body of a
// member function defined in a class (`X(int i) : i_(i) {};`, which compilers
// accept and tree-sitter-cpp does not), whose "{" is at open and "}" at close: the
// body follows a ")" whose "(" follows a name (a parameter list or a member
// initialiser), not an "=" (`T x = (T){1};` needs its ";").
func strayMemberSemicolon(src []byte, open, close int) (macroEdit, bool) {
	q := skipCode(src, close+1)
	if q >= len(src) || src[q] != ';' {
		return macroEdit{}, false
	}
	p := skipSpaceBack(src, open)
	if src[p] != ')' {
		return macroEdit{}, false
	}
	d := 0
	for x := p; x >= 0 && x > p-8192; x-- {
		switch src[x] {
		case ')':
			d++
		case '(':
			if d--; d == 0 {
				b := skipSpaceBack(src, x)
				if x > 0 && lex.IsWordByte(src[b]) {
					return macroEdit{q, q + 1, ""}, true
				}
				return macroEdit{}, false
			}
		case ';', '{', '}':
			return macroEdit{}, false
		}
	}
	return macroEdit{}, false
}

// declaratorFollows reports whether a function's declarator follows the word
// ending at j (on its line or the next): pointers or references, a name with
// qualifications and template arguments (`ns::sink<M>::log`), then "(".
func declaratorFollows(src []byte, j int) bool {
	q := skipCode(src, j)
	for q < len(src) && (src[q] == '*' || src[q] == '&') {
		q = lex.SkipBlanks(src, q+1)
	}
	if q >= len(src) || !lex.IsWordByte(src[q]) || '0' <= src[q] && src[q] <= '9' || allCaps(src[q:wordEnd(src, q)]) {
		return false
	}
	comps, e, ok := qualifiedName(src, q)
	if !ok || e < 0 || declKeywords[comps[0]] || notBeforeMacro[comps[0]] {
		return false
	}
	p := lex.SkipBlanks(src, e)
	return p < len(src) && src[p] == '('
}

// statementEnd reports whether the code byte at lastCode (-1: none) ends a
// statement: ";" or "}" (not "," or "{", after which a word may be an enumerator
// or an initialiser).
func statementEnd(src []byte, lastCode int) bool {
	return lastCode >= 0 && (src[lastCode] == ';' || src[lastCode] == '}')
}

// classKeywords start a class head.
var classKeywords = map[string]bool{"class": true, "struct": true, "union": true}

// classNameFollows reports whether a name and then "{", ":" (a base list, not "::")
// or "final" follow at k: the all-caps word before k, after a class keyword, is an
// export macro (`class FMT_API file {`), not the class's name.
func classNameFollows(src []byte, k int) bool {
	e := wordEnd(src, k)
	if e == k {
		return false
	}
	p := skipCode(src, e) // the base list may start on the next line
	switch {
	case p >= len(src):
		return false
	case src[p] == '{':
		return true
	case src[p] == ':':
		return !(p+1 < len(src) && src[p+1] == ':')
	}
	return string(src[p:wordEnd(src, p)]) == "final"
}

// skipSpaceBack returns the offset of the last byte before i that is not white
// space, line breaks included (0 when there is none).
func skipSpaceBack(src []byte, i int) int {
	for i > 0 && (src[i-1] == ' ' || src[i-1] == '\t' || src[i-1] == '\r' || src[i-1] == '\n') {
		i--
	}
	return max(i-1, 0)
}

// startsDeclaration reports whether the code before offset i (at the start of a
// line) ends a declaration or opens a body: its last code byte, on the lines
// before that are not blank, comments or directives, is ";", "{", "}" or ":" (or
// there is none). `static T x =` then `    T_INITIALIZER(x);` does not.
func startsDeclaration(src []byte, i int) bool {
	end := i
	for n := 0; end > 0 && n < 64; n++ {
		start := bytes.LastIndexByte(src[:end-1], '\n') + 1
		ln := src[start : end-1]
		end = start
		if x := bytes.Index(ln, []byte("//")); x >= 0 {
			ln = ln[:x]
		}
		t := bytes.TrimSpace(ln)
		if len(t) == 0 || t[0] == '#' || bytes.HasPrefix(t, []byte("/*")) || t[0] == '*' && !bytes.HasSuffix(t, []byte(";")) {
			continue
		}
		if bytes.HasSuffix(t, []byte("*/")) {
			if x := bytes.LastIndex(t, []byte("/*")); x >= 0 {
				t = bytes.TrimSpace(t[:x])
			}
			if len(t) == 0 {
				continue
			}
		}
		return bytes.IndexByte([]byte(";{}:"), t[len(t)-1]) >= 0
	}
	return true
}

// skipCode returns the offset of the first byte at or after i that is neither
// white space nor in a comment (len(src)-1 when there is none, so that it can be
// indexed).
func skipCode(src []byte, i int) int {
	for i < len(src) {
		switch {
		case src[i] == ' ' || src[i] == '\t' || src[i] == '\r' || src[i] == '\n':
			i++
		case src[i] == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case src[i] == '/' && i+1 < len(src) && src[i+1] == '*':
			e := bytes.Index(src[i+2:], []byte("*/"))
			if e < 0 {
				return len(src) - 1
			}
			i += 2 + e + 2
		default:
			return i
		}
	}
	return len(src) - 1
}

// expressionLike reports whether args (a macro call's argument text) can be read as
// an expression: not empty, no two names in a row (`const std::bad_variant_access&`,
// `diagnostic push`) and no "..." (`FMT_CATCH(...)`). String literals do not count.
func expressionLike(args []byte) bool {
	if bytes.Contains(args, []byte("...")) || len(bytes.TrimSpace(args)) == 0 {
		return false
	}
	wordBefore := false // the last token was a name, with only blanks since
	for i := 0; i < len(args); i++ {
		c := args[i]
		switch {
		case c == '"' || c == '\'':
			for i++; i < len(args) && args[i] != c; i++ {
				if args[i] == '\\' {
					i++
				}
			}
			wordBefore = false
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
		case lex.IsWordByte(c):
			if wordBefore && !('0' <= c && c <= '9') {
				return false
			}
			i = wordEnd(args, i) - 1
			wordBefore = true
		default:
			wordBefore = false
		}
	}
	return true
}

// storageWords may come before a type macro at the start of a declaration.
var storageWords = map[string]bool{"static": true, "extern": true, "const": true, "volatile": true, "register": true}

// typeMacro returns the edit for an all-caps function-like macro used as a type
// (BSD's `TAILQ_HEAD(, window) list;`, `RB_HEAD(tree, node) t = RB_INITIALIZER();`,
// `TAILQ_ENTRY(ibuf) entry;`): the call whose name starts at i and whose "(" is at
// j, followed by a declarator (pointers and a name) and one of ";", "=", "[" or ",",
// becomes one identifier of the same length (the call's other bytes become "_"),
// which the grammars read as a type name. The grammars' macro_type_specifier takes
// one type argument only, and no empty one.
func typeMacro(src []byte, i, j int) (macroEdit, bool) {
	end := closingParen(src, j)
	if end < 0 || bytes.IndexByte(src[j:end], '\n') >= 0 {
		return macroEdit{}, false
	}
	k := lex.SkipBlanks(src, end+1)
	for k < len(src) && src[k] == '*' {
		k = lex.SkipBlanks(src, k+1)
	}
	n := k
	for n < len(src) && lex.IsWordByte(src[n]) {
		n++
	}
	if n == k || '0' <= src[k] && src[k] <= '9' {
		return macroEdit{}, false
	}
	if p := lex.SkipBlanks(src, n); p >= len(src) || bytes.IndexByte([]byte(";=[,"), src[p]) < 0 {
		return macroEdit{}, false
	}
	repl := []byte(string(src[i : end+1]))
	for x := range repl {
		if !lex.IsWordByte(repl[x]) {
			repl[x] = '_'
		}
	}
	return macroEdit{i, end + 1, string(repl)}, true
}

// integerArguments reports whether args (the text between a call's parentheses)
// is a non-empty list of integer literals: the arguments of an attribute macro such
// as `printflike(3, 4)`, never those of a declarator.
func integerArguments(args []byte) bool {
	digits := 0
	for _, a := range bytes.Split(args, []byte(",")) {
		a = bytes.TrimSpace(a)
		if len(a) == 0 {
			return false
		}
		for _, b := range a {
			if b < '0' || b > '9' {
				return false
			}
		}
		digits++
	}
	return digits > 0
}

// emptyOrOperatorArgument returns the edit for a macro argument the grammars cannot
// read, after the "," or "(" at i: an empty one (`RB_NEXT(t, , e)`, `F(, x)`, with
// white space to put a "_" in) or a lone comparison operator (`timercmp(a, b, >)`),
// which become the identifier "_" (padded).
func emptyOrOperatorArgument(src []byte, i int) (macroEdit, bool) {
	k := lex.SkipBlanks(src, i+1)
	if k >= len(src) {
		return macroEdit{}, false
	}
	if src[k] == ',' && (src[i] == ',' && k > i+1 || src[i] == '(') {
		if src[i] == '(' { // "(, x" -> "(_,x": needs a blank after the comma
			if k+1 < len(src) && (src[k+1] == ' ' || src[k+1] == '\t') && k == i+1 {
				return macroEdit{i + 1, k + 2, "_,"}, true
			}
			return macroEdit{}, false
		}
		return macroEdit{i + 1, i + 2, "_"}, true
	}
	if src[i] != ',' {
		return macroEdit{}, false
	}
	o := k
	for o < len(src) && o-k < 2 && bytes.IndexByte([]byte("<>=!"), src[o]) >= 0 {
		o++
	}
	if o == k || string(src[k:o]) == "=" || string(src[k:o]) == "!" {
		return macroEdit{}, false
	}
	if p := lex.SkipBlanks(src, o); p < len(src) && (src[p] == ')' || src[p] == ',') {
		return macroEdit{k, o, "_"}, true
	}
	return macroEdit{}, false
}

// declKeywords are the keywords that can start a declaration's specifiers: an
// all-caps word right before one is a macro (`FMT_CONSTEXPR inline void f()`,
// `SQLITE_API int f()`), never a type or a name.
var declKeywords = map[string]bool{
	"void": true, "char": true, "short": true, "int": true, "long": true, "float": true, "double": true,
	"signed": true, "unsigned": true, "bool": true, "_Bool": true, "auto": true, "static": true,
	"extern": true, "inline": true, "const": true, "volatile": true, "constexpr": true, "consteval": true,
	"constinit": true, "virtual": true, "explicit": true, "friend": true, "template": true, "struct": true,
	"class": true, "union": true, "enum": true, "typedef": true, "register": true, "_Noreturn": true,
	"mutable": true, "thread_local": true, "typename": true,
}

// inttypesMacro matches the format macros of <inttypes.h> (PRIu64, SCNd32, PRIxPTR).
var inttypesMacro = regexp.MustCompile(`^(PRI|SCN)[diouxX](8|16|32|64|MAX|PTR|LEAST(8|16|32|64)|FAST(8|16|32|64))$`)

// cppWordOperators are the words after which a macro call is an operand, not an
// attribute of a declarator (`return FOO(x);`).
var cppWordOperators = map[string]bool{
	"return": true, "case": true, "sizeof": true, "alignof": true, "decltype": true, "noexcept": true,
	"throw": true, "co_return": true, "co_yield": true, "co_await": true, "new": true, "delete": true,
	"and": true, "or": true, "not": true, "else": true, "do": true, "goto": true,
}

// wordEnd returns the end of the word starting at i.
func wordEnd(src []byte, i int) int {
	for i < len(src) && lex.IsWordByte(src[i]) {
		i++
	}
	return i
}

// onlyOnLine reports whether nothing but white space and a // comment follows
// offset end (> 0) on its line.
func onlyOnLine(src []byte, end int) bool {
	if end <= 0 {
		return false
	}
	for i := end; i < len(src) && src[i] != '\n'; i++ {
		switch {
		case src[i] == ' ' || src[i] == '\t' || src[i] == '\r':
		case src[i] == '/' && i+1 < len(src) && src[i+1] == '/':
			return true
		default:
			return false
		}
	}
	return true
}

// allCaps reports whether w is an all-caps macro-like word: 2+ bytes of A-Z, 0-9
// and _, starting with a letter, with at least one letter after it.
func allCaps(w []byte) bool {
	if len(w) < 2 || w[0] < 'A' || w[0] > 'Z' {
		return false
	}
	for i := 1; i < len(w); i++ {
		if !('A' <= w[i] && w[i] <= 'Z' || '0' <= w[i] && w[i] <= '9' || w[i] == '_') {
			return false
		}
	}
	return true
}

// closingParen returns the offset of the ")" matching the "(" at open on the same
// line, or -1.
func closingParen(src []byte, open int) int {
	d := 0
	for i := open; i < len(src) && src[i] != '\n'; i++ {
		switch src[i] {
		case '(':
			d++
		case ')':
			d--
			if d == 0 {
				return i
			}
		}
	}
	return -1
}

// isDirectiveLine reports whether ln's first non-blank byte is "#" (a cheap test
// before cDirective).
func isDirectiveLine(ln []byte) bool {
	t := bytes.TrimLeft(ln, " \t")
	return len(t) > 0 && t[0] == '#'
}

// cDirective matches a conditional directive line and names it.
var cDirective = regexp.MustCompile(`^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|elifdef|elifndef|else|endif)\b`)

// includeGuards returns the line ranges of include guards: `#ifndef X` (or `#if
// !defined(X)`), then as the next code line `#define X` with no value, code, and
// the #endif that closes the #ifndef, with no #else or #elif of its own. A header's
// guard is one; an amalgamated source (gtest-all.cc, sqlite3.c) holds one per
// header it pasted in. `#ifndef FMT_API` / `#define FMT_API` / `#endif` (a default
// for a macro, no code inside) is none. Lines that are blank or only comments may
// come between (a block comment is taken as a comment only on lines starting with
// "/*" or "*").
func includeGuards(src []byte, lines [][2]int) [][2]int {
	code := func(l [2]int) bool {
		t := bytes.TrimSpace(src[l[0]:l[1]])
		return len(t) > 0 && !bytes.HasPrefix(t, []byte("//")) && !bytes.HasPrefix(t, []byte("/*")) && !bytes.HasPrefix(t, []byte("*"))
	}
	nextCode := func(x int) int {
		for x++; x < len(lines) && !code(lines[x]); x++ {
		}
		return x
	}
	var out [][2]int
	for x := 0; x < len(lines); x++ {
		ln := src[lines[x][0]:lines[x][1]]
		if !isDirectiveLine(ln) {
			continue
		}
		m := guardIf.FindSubmatch(ln)
		if m == nil {
			continue
		}
		d := nextCode(x)
		if d >= len(lines) {
			break
		}
		dm := guardDefine.FindSubmatch(src[lines[d][0]:lines[d][1]])
		if dm == nil || !bytes.Equal(append(m[1], m[2]...), dm[1]) {
			continue
		}
		depth, inner, end := 1, false, -1
		for y := d + 1; y < len(lines) && end < 0; y++ {
			l := src[lines[y][0]:lines[y][1]]
			if !isDirectiveLine(l) {
				inner = inner || code(lines[y])
				continue
			}
			dir := cDirective.FindSubmatch(l)
			switch {
			case dir == nil:
				inner = true // #include, #define, ...
			case strings.HasPrefix(string(dir[1]), "if"):
				depth++
				inner = true
			case string(dir[1]) == "endif":
				if depth--; depth == 0 {
					end = y
				}
			case depth == 1: // #else or #elif of the guard: no guard
				y = len(lines)
			}
		}
		if end > 0 && inner {
			out = append(out, lines[x], lines[d], lines[end])
		}
	}
	return out
}

// guardIf and guardDefine match the first lines of an include guard.
var (
	guardIf     = regexp.MustCompile(`^[ \t]*#[ \t]*(?:ifndef[ \t]+(\w+)|if[ \t]+!defined[ \t]*\(?[ \t]*(\w+)[ \t]*\)?)[ \t]*(//.*|/\*.*\*/[ \t]*)?$`)
	guardDefine = regexp.MustCompile(`^[ \t]*#[ \t]*define[ \t]+(\w+)[ \t]*(//.*|/\*.*\*/[ \t]*)?$`)
)

// unbalancedConditionals returns the byte ranges cRewrite blanks for conditionals
// whose branches do not each balance their braces: their directive lines (with
// backslash continuations) and all lines of every branch but the first. Braces in
// comments, string and character literals are not counted; an #if left open at the
// end of the text is left alone.
func unbalancedConditionals(src []byte, lines [][2]int) [][2]int {
	type frame struct {
		directives    [][2]int // line ranges of #if, #elif, #else, #endif (with continuations)
		branches      [][2]int // line index ranges [first, last) of each branch's content
		nets          []int    // net braces of each branch
		first         int      // content start of the current branch
		directiveLine int      // the line of the #if
		code          int      // the last line of code seen in the first branch (-1: none)
		mid           bool     // the #if stands inside a declaration or expression
		open          bool     // every branch so far ends in an open header (see headerEnd)
	}
	lastCode, lastCode2 := byte(';'), byte(0) // the last two code bytes of the last code line before i
	var stack []*frame
	var out [][2]int
	inComment := false
	for i := 0; i < len(lines); i++ {
		ln := src[lines[i][0]:lines[i][1]]
		if !inComment && isDirectiveLine(ln) {
			if m := cDirective.FindSubmatch(ln); m != nil {
				// The directive with its continuation lines.
				j := i
				for j+1 < len(lines) && bytes.HasSuffix(bytes.TrimRight(src[lines[j][0]:lines[j][1]], " \t\r"), []byte("\\")) {
					j++
				}
				dir := [2]int{lines[i][0], lines[j][1]}
				switch kw := string(m[1]); {
				case strings.HasPrefix(kw, "if"):
					stack = append(stack, &frame{directives: [][2]int{dir}, first: j + 1, nets: []int{0}, open: true, directiveLine: i,
						mid: bytes.IndexByte([]byte(">=(&|,"), lastCode) >= 0 || lastCode == '{' && lastCode2 == '=' ||
							lastCode == ':' && (lastCode2 == ')' || lastCode2 == ':' || lastCode2 == 0) ||
							nextCodeByte(src, lines, j+1) == ',', // `time(t)` / `#ifndef X` / `, id(x)`: a list goes on
						code: -1})
				case len(stack) == 0:
					// a stray #else or #endif: nothing to pair it with
				case kw == "endif":
					f := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					f.branches = append(f.branches, [2]int{f.first, i})
					f.directives = append(f.directives, dir)
					// Alternative headers of one definition (`#ifndef X` / `int f(a)` /
					// `#else` / `int g(a)` / `#endif` / `{`): the body after the #endif
					// belongs to the first branch's header.
					split := f.open && len(f.branches) > 1 && headerEnd(lastCode) && bodyFollows(src, lines, j+1)
					// A specifier chosen by the conditional (`#if X` / `constexpr` /
					// `#endif` / `static int t[] = ...;`): the first branch's code
					// ends in a word and a declaration goes on after the #endif.
					cont := f.open && f.code > f.directiveLine && lex.IsWordByte(lastCode) &&
						lex.IsWordByte(nextCodeByte(src, lines, j+1))
					unbalanced := f.mid || split || cont
					for _, n := range f.nets {
						unbalanced = unbalanced || n != 0
					}
					if unbalanced {
						out = append(out, f.directives...)
						for _, b := range f.branches[1:] {
							if b[0] < b[1] {
								out = append(out, [2]int{lines[b[0]][0], lines[b[1]-1][1]})
							}
						}
					}
					if len(stack) > 0 { // the parser sees the first branch in the enclosing one
						p := stack[len(stack)-1]
						p.nets[len(p.nets)-1] += f.nets[0]
					}
				default: // elif, else
					f := stack[len(stack)-1]
					f.open = f.open && headerEnd(lastCode)
					f.branches = append(f.branches, [2]int{f.first, i})
					f.directives = append(f.directives, dir)
					f.nets = append(f.nets, 0)
					f.first = j + 1
				}
				i = j
				continue
			}
		}
		net, ic := braceBalance(ln, inComment)
		if c, c2 := lastCodeBytes(ln, inComment); c != 0 && !isDirectiveLine(ln) {
			lastCode, lastCode2 = c, c2
			if len(stack) > 0 && len(stack[len(stack)-1].nets) == 1 {
				stack[len(stack)-1].code = i
			}
		}
		inComment = ic
		if len(stack) > 0 {
			f := stack[len(stack)-1]
			f.nets[len(f.nets)-1] += net
		}
	}
	return out
}

// headerEnd reports whether c, the last code byte of a branch, can end the header
// of a definition whose body follows: ")" of a parameter list, or a word
// (`struct name`, `int f(void) const`).
func headerEnd(c byte) bool { return c == ')' || lex.IsWordByte(c) }

// nextCodeByte returns the first byte of the first line from line i on that is not
// blank, a comment or a directive (0 when there is none).
func nextCodeByte(src []byte, lines [][2]int, i int) byte {
	for ; i < len(lines); i++ {
		ln := bytes.TrimLeft(src[lines[i][0]:lines[i][1]], " \t\r\n")
		if len(ln) == 0 || ln[0] == '#' || bytes.HasPrefix(ln, []byte("//")) || bytes.HasPrefix(ln, []byte("/*")) {
			continue
		}
		return ln[0]
	}
	return 0
}

// bodyFollows reports whether the first line from line i on that is not blank or a
// line comment starts with "{".
func bodyFollows(src []byte, lines [][2]int, i int) bool {
	for ; i < len(lines); i++ {
		ln := bytes.TrimLeft(src[lines[i][0]:lines[i][1]], " \t\r\n")
		if len(ln) == 0 || bytes.HasPrefix(ln, []byte("//")) {
			continue
		}
		return ln[0] == '{'
	}
	return false
}

// lastCodeBytes returns the last byte of a line of C that is not white space or in
// a comment, and the one of those before it (0 when there is none; inComment: a block
// comment is open at its start).
// String literals are not told apart: a "//" in one ends the code early, which only
// makes unbalancedConditionals see a line of other code.
func lastCodeBytes(ln []byte, inComment bool) (last, before byte) {
	for i := 0; i < len(ln); i++ {
		c := ln[i]
		switch {
		case inComment:
			if c == '*' && i+1 < len(ln) && ln[i+1] == '/' {
				inComment = false
				i++
			}
		case c == '/' && i+1 < len(ln) && ln[i+1] == '/':
			return last, before
		case c == '/' && i+1 < len(ln) && ln[i+1] == '*':
			inComment = true
			i++
		case c != ' ' && c != '\t' && c != '\r':
			last, before = c, last
		}
	}
	return last, before
}

// braceBalance returns the number of "{" minus "}" on a line of C, outside
// comments and string and character literals, and whether a block comment is open
// at its end (inComment: open at its start).
func braceBalance(ln []byte, inComment bool) (int, bool) {
	net := 0
	for i := 0; i < len(ln); i++ {
		c := ln[i]
		switch {
		case inComment:
			if c == '*' && i+1 < len(ln) && ln[i+1] == '/' {
				inComment = false
				i++
			}
		case c == '/' && i+1 < len(ln) && ln[i+1] == '/':
			return net, false
		case c == '/' && i+1 < len(ln) && ln[i+1] == '*':
			inComment = true
			i++
		case c == '"' || c == '\'':
			for i++; i < len(ln) && ln[i] != c; i++ {
				if ln[i] == '\\' {
					i++
				}
			}
		case c == '{':
			net++
		case c == '}':
			net--
		}
	}
	return net, inComment
}

package c

import (
	"bytes"

	"github.com/repoctx/repoctx/languages/internal/lex"
)

// RewriteCPP is the C++ spec's Rewrite: cRewrite, then the C++ syntax of
// cppSyntaxEdits, each edit of the same length.
func RewriteCPP(src []byte) []byte {
	out := cRewrite(src, false)
	edits := cppSyntaxEdits(out)
	if len(edits) == 0 {
		return out
	}
	if len(src) > 0 && &out[0] == &src[0] {
		out = bytes.Clone(out)
	}
	for _, e := range edits {
		e.apply(out)
	}
	return out
}

// cppSyntaxEdits returns the edits (same length, see macroEdit) that let
// tree-sitter-cpp 0.22 read C++ it has no rule for, outside comments, string and
// character literals (raw strings included) and preprocessor lines:
//
//   - a braced default argument in a parameter list, `locale_ref loc = {}` or
//     `= {1, 2}` (the grammar reads `{}` there as a compound literal missing its
//     type): `{}` becomes `0 `, other braces `(` and `)`;
//   - an unnamed enum with a base type, `enum : unsigned {` (the grammar wants a
//     name): `enum _:unsigned {`;
//   - `extern template` (an explicit instantiation declaration): `extern` is blanked,
//     leaving an explicit instantiation, which the grammar knows;
//   - `using typename Base::type;`: `typename` is blanked;
//   - an array of pointers in a new-expression, `new Handle*[n]`: the "*"s are
//     blanked;
//   - a deleted function, `f(T) = delete;`, which the grammar reads only as a
//     member that is no template: `= 0;` (a pure specifier, which it reads
//     everywhere);
//   - a functional cast to a multi-word type's keyword, `unsigned(x)`, `long(x)`,
//     `short(x)`, `signed(x)`: its first letter becomes "_", a call;
//   - a member initialised with 0, `int count_ = 0;`, which the grammar reads as
//     a pure virtual function: the 0 becomes 1 (a pure specifier after ")" or a
//     qualifier such as const or override is left alone);
//   - C++20 modules: an `export module m;` or `export import m;` line is blanked (it
//     declares nothing a chunk needs), and `export` before a declaration or a "{".
//
// Each case was seen as a parse error in fmtlib/fmt; the rewritten text is only
// parsed, never shown, so chunk text and headers keep the original bytes.
func cppSyntaxEdits(src []byte) []macroEdit {
	var out []macroEdit
	var brackets []openBracket // the open "(", "[" and "{", innermost last
	lastSemi := -1             // the offset of the last ";" in code
	lineCode := false          // the line has code before i
	var prevWord []byte        // the word before i, nil after other tokens
	prev := byte(0)            // the last code byte before i
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '\n':
			lineCode = false
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
			e := bytes.Index(src[i+2:], []byte("*/"))
			if e < 0 {
				return out
			}
			i += 2 + e + 1
			continue
		case c == '#' && !lineCode:
			for i < len(src) && (src[i] != '\n' || i > 0 && src[i-1] == '\\') {
				i++
			}
			i--
			continue
		case c == '"' && prevWord != nil && src[i-1] == 'R':
			// A raw string R"delim( ... )delim" (u8R, LR, ... too).
			// The delimiter has at most 16 characters: the "(" is within 17 bytes.
			open := bytes.IndexByte(src[i:min(i+18, len(src))], '(')
			if open < 0 {
				break
			}
			closer := append([]byte{')'}, src[i+1:i+open]...)
			closer = append(closer, '"')
			e := bytes.Index(src[i+open:], closer)
			if e < 0 {
				return out
			}
			i += open + e + len(closer) - 1
			prevWord, prev, lineCode = nil, '"', true
			continue
		}
		if c == '"' || c == '\'' {
			for i++; i < len(src) && src[i] != c && src[i] != '\n'; i++ {
				if src[i] == '\\' {
					i++
				}
			}
			prevWord, prev, lineCode = nil, c, true
			continue
		}
		if lex.IsWordByte(c) {
			j := wordEnd(src, i)
			w := src[i:j]
			if c < '0' || c > '9' {
				out = cppWordEdits(src, i, j, w, prevWord, lineCode, prev, out)
			}
			prevWord, prev, lineCode = w, src[j-1], true
			i = j - 1
			continue
		}
		switch c {
		case '(', '[':
			brackets = append(brackets, openBracket{c: c, at: i})
		case '{':
			// After "=" in a parameter list: a braced default argument if its "}"
			// comes before any ";" and is followed by "," or ")".
			arg := prev == '=' && len(brackets) > 0 && brackets[len(brackets)-1].c == '('
			brackets = append(brackets, openBracket{c: c, arg: arg, at: i})
		case '=':
			// `int count_ = 0;` in a class body: the grammar reads it as a pure virtual
			// function (a declarator, `= 0`) and the chunk as a function; `= 1` makes it
			// the field it is. A pure specifier follows ")" or a qualifier, never a name.
			if len(brackets) > 0 && brackets[len(brackets)-1].c == '{' && prevWord != nil && !('0' <= prevWord[0] && prevWord[0] <= '9') &&
				!cppPureSpecifierAfter[string(prevWord)] && (i+1 >= len(src) || src[i+1] != '=') {
				if z := lex.SkipBlanks(src, i+1); z < len(src) && src[z] == '0' {
					if e := lex.SkipBlanks(src, z+1); e < len(src) && src[e] == ';' {
						out = append(out, macroEdit{z, z + 1, "1"})
					}
				}
			}
		case ';':
			lastSemi = i
		case '*':
			// A pointer-to-member access, `obj->*field` or `obj.*field` (not `1.*x`):
			// tree-sitter-cpp 0.22 has no rule for it; `obj-> field` is a field
			// expression of the same shape.
			if i >= 2 && (src[i-1] == '>' && src[i-2] == '-' || src[i-1] == '.' && !('0' <= src[i-2] && src[i-2] <= '9')) {
				if n := lex.SkipBlanks(src, i+1); n < len(src) && (lex.IsWordByte(src[n]) && !('0' <= src[n] && src[n] <= '9')) {
					out = append(out, macroEdit{i, i + 1, ""})
				}
			}
		case ')', ']', '}':
			if n := len(brackets); n > 0 {
				if b := brackets[n-1]; b.arg && c == '}' && lastSemi < b.at {
					out = defaultArgumentBraces(src, b.at, i, out)
				}
				brackets = brackets[:n-1]
			}
		}
		prevWord, prev, lineCode = nil, c, true
	}
	return out
}

// cppWordEdits appends to out the edits cppSyntaxEdits makes for the word w =
// src[i:j]; prevWord is the word right before it (nil if another token is),
// lineCode whether code precedes it on its line, prev the code byte before it.
func cppWordEdits(src []byte, i, j int, w, prevWord []byte, lineCode bool, prev byte, out []macroEdit) []macroEdit {
	next := lex.SkipBlanks(src, j)
	nextWord := func() []byte {
		if next < len(src) && lex.IsWordByte(src[next]) {
			return src[next:wordEnd(src, next)]
		}
		return nil
	}
	switch string(w) {
	case "enum":
		// `enum : unsigned {`: at least one blank on each side of the ":".
		if next > j && next+1 < len(src) && src[next] == ':' && src[next+1] != ':' && (src[next+1] == ' ' || src[next+1] == '\t') {
			out = append(out, macroEdit{next, next + 2, "_:"})
		}
	case "new":
		// `new Handle*[n]`: the grammar reads no declarator before an array size;
		// the "*"s are blanked (`new Handle [n]`).
		k := next
		for k < len(src) && (lex.IsWordByte(src[k]) || src[k] == ':') {
			k++
		}
		stars := lex.SkipBlanks(src, k)
		m := stars
		for m < len(src) && src[m] == '*' {
			m++
		}
		if k > next && m > stars && lex.SkipBlanks(src, m) < len(src) && src[lex.SkipBlanks(src, m)] == '[' {
			out = append(out, macroEdit{stars, m, ""})
		}
	case "delete":
		// `template <typename T> void f(T) = delete;`: the grammar knows a deleted
		// function only as a member that is no template; `= 0` (a pure specifier)
		// parses everywhere.
		if prev == '=' && next < len(src) && src[next] == ';' {
			out = append(out, macroEdit{i, j, "0"})
		}
	case "__cdecl", "__stdcall", "__fastcall", "__thiscall", "__vectorcall", "__clrcall":
		// A calling convention between a return type and a function's name
		// (`void __stdcall f();`), which tree-sitter-cpp 0.22 fails on (its C
		// grammar reads it): blanked.
		if prevWord != nil || prev == '*' || prev == '&' || prev == '>' {
			out = append(out, macroEdit{i, j, ""})
		}
	case "template":
		// An explicit instantiation of a class template, `template class
		// X<int, &Y::z>;`, which the grammar reads only for functions: `class
		// X<...>;` is a declaration it reads.
		if nw := string(nextWord()); (nw == "class" || nw == "struct" || nw == "union") && (prevWord == nil || string(prevWord) == "extern") && prev != '<' && prev != ':' && prev != '.' && prev != '>' {
			if e := bytes.IndexByte(src[j:], ';'); e >= 0 && bytes.IndexByte(src[j:j+e], '{') < 0 && bytes.IndexByte(src[j:j+e], '<') >= 0 &&
				bytes.HasSuffix(bytes.TrimRight(src[j:j+e], " \t\r\n"), []byte(">")) {
				out = append(out, macroEdit{i, j, ""})
			}
		}
	case "extern":
		if string(nextWord()) == "template" {
			out = append(out, macroEdit{i, j, ""})
		}
	case "using":
		if nw := nextWord(); string(nw) == "typename" {
			out = append(out, macroEdit{next, next + len(nw), ""})
		}
	case "unsigned", "signed", "short", "long":
		if next < len(src) && src[next] == '(' && prev != '~' && !cppTypeWords[string(prevWord)] {
			if a := lex.SkipBlanks(src, next+1); a < len(src) && src[a] != '*' && src[a] != '&' && src[a] != '^' && src[a] != ')' {
				out = append(out, macroEdit{i, i + 1, "_"})
			}
		}
	case "export":
		if lineCode {
			break
		}
		switch nw := nextWord(); string(nw) {
		case "module", "import":
			line := src[j:] // the rest of the line: the statement must end on it
			if e := bytes.IndexByte(line, '\n'); e >= 0 {
				line = line[:e]
			}
			if k := bytes.IndexByte(line, ';'); k >= 0 {
				out = append(out, macroEdit{i, j + k + 1, ""})
			}
		default:
			if nw != nil || next < len(src) && src[next] == '{' {
				out = append(out, macroEdit{i, j, ""})
			}
		}
	}
	return out
}

// cppPureSpecifierAfter are the words a pure specifier `= 0` may follow in a member
// function declaration (`void f() const = 0;`, `int g() override = 0;`).
var cppPureSpecifierAfter = map[string]bool{
	"const": true, "volatile": true, "override": true, "final": true, "noexcept": true, "throw": true,
}

// cppTypeWords are the type keywords that, before `long(` or `unsigned(`, make it
// part of a type (`unsigned long(x)` is not a cast the grammar must read).
var cppTypeWords = map[string]bool{
	"unsigned": true, "signed": true, "short": true, "long": true, "int": true, "char": true,
	"double": true, "const": true, "volatile": true, "typedef": true, "using": true,
}

// openBracket is an open bracket of cppSyntaxEdits: c is "(", "[" or "{" at offset
// at; arg marks a "{" after "=" in a parameter list, which may open a braced
// default argument.
type openBracket struct {
	c   byte
	arg bool
	at  int
}

// defaultArgumentBraces appends the edits for the braced default argument whose "{"
// is at open (after "=" in a parameter list) and whose "}" is at end (no ";"
// between them): `{}` becomes `0 `, a non-empty list's braces "(" and ")". Nothing
// when the "}" is not followed by "," or ")". cppSyntaxEdits pairs the braces as it
// reads (a scan from each "{" to its "}" was quadratic in nested lists).
func defaultArgumentBraces(src []byte, open, end int, out []macroEdit) []macroEdit {
	if a := skipCode(src, end+1); a >= len(src) || src[a] != ',' && src[a] != ')' {
		return out
	}
	if skipCode(src, open+1) == end {
		return append(out, macroEdit{open, open + 1, "0"}, macroEdit{end, end + 1, ""})
	}
	return append(out, macroEdit{open, open + 1, "("}, macroEdit{end, end + 1, ")"})
}

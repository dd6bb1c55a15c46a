// Package rust holds Rust's text-level rules (see grammars.Rules): the
// length-preserving rewrite ([Rewrite]) that lets tree-sitter-rust as bundled by
// smacker (older than the 2024 edition) parse the 2024 edition's new syntax. The
// spec is grammars.Rust; package languages attaches the rewrite to it.
package rust

import (
	"bytes"

	"github.com/repoctx/repoctx/languages/internal/lex"
)

// Rewrite returns src with Rust 2024 constructs the bundled grammar cannot parse
// made into ones it can, same length, or src itself when there is none. Each is a
// word blanked (made spaces), which leaves an older form the grammar knows:
//
//   - `unsafe extern "C" {` (2024: extern blocks must be unsafe): `unsafe` goes;
//   - `safe fn` and `safe static` items in extern blocks: `safe` goes;
//   - raw borrows `&raw const x` and `&raw mut x`: `raw const` and `raw` go (`&x`,
//     `&mut x`);
//   - async closures `async |x| ...` and `async move |x| ...`: `async` goes;
//   - generator blocks `gen { ... }` and `gen move { ... }` where an expression
//     starts (after `=`, `(`, `,` or `return`): `gen` goes, leaving a block.
//
// Definition names and bodies stay where they were, so a file using these keeps
// its definitions' names and flags no parse error for them. Words inside comments
// and strings are rewritten too; that text is never shown, and blanking a word
// there changes no definition.
func Rewrite(src []byte) []byte {
	out, copied := src, false
	blank := func(i, n int) {
		if !copied {
			out, copied = append([]byte(nil), src...), true
		}
		for k := i; k < i+n; k++ {
			out[k] = ' '
		}
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c != 'u' && c != 's' && c != '&' && c != 'a' && c != 'g' {
			continue
		}
		if c != '&' && i > 0 && lex.IsWordByte(src[i-1]) {
			continue // inside a word
		}
		switch c {
		case 'u':
			if wordThen(src, i, "unsafe", "extern") {
				blank(i, len("unsafe"))
			}
		case 's':
			if wordThen(src, i, "safe", "fn") || wordThen(src, i, "safe", "static") {
				blank(i, len("safe"))
			}
		case '&':
			switch {
			case wordThen(src, i+1, "raw", "const"):
				j := lex.SkipBlanks(src, i+1+len("raw"))
				blank(i+1, j+len("const")-(i+1))
			case wordThen(src, i+1, "raw", "mut"):
				blank(i+1, len("raw"))
			}
		case 'a':
			if wordThen(src, i, "async", "|") || (wordThen(src, i, "async", "move") &&
				bytes.HasPrefix(src[lex.SkipBlanks(src, lex.SkipBlanks(src, i+len("async"))+len("move")):], []byte("|"))) {
				blank(i, len("async"))
			}
		case 'g':
			if (wordThen(src, i, "gen", "{") || wordThen(src, i, "gen", "move")) && expressionStart(src, i) {
				blank(i, len("gen"))
			}
		}
	}
	return out
}

// wordThen reports whether the word w stands at src[i] and is followed, after at
// least one blank (none when next is punctuation), by next, itself not followed
// by a word byte when it is a word.
func wordThen(src []byte, i int, w, next string) bool {
	if !bytes.HasPrefix(src[i:], []byte(w)) {
		return false
	}
	j := i + len(w)
	if j < len(src) && lex.IsWordByte(src[j]) {
		return false
	}
	k := lex.SkipBlanks(src, j)
	if lex.IsWordByte(next[0]) && k == j {
		return false
	}
	if !bytes.HasPrefix(src[k:], []byte(next)) {
		return false
	}
	e := k + len(next)
	return !lex.IsWordByte(next[len(next)-1]) || e >= len(src) || !lex.IsWordByte(src[e])
}

// expressionStart reports whether an expression starts at src[i]: the last byte
// before it other than spaces and tabs is '=', '(', ',' or ends the word return.
func expressionStart(src []byte, i int) bool {
	if i == 0 {
		return false
	}
	k := lex.SkipBack(src, i)
	switch src[k] {
	case '=', '(', ',':
		return true
	}
	return k >= 5 && bytes.Equal(src[k-5:k+1], []byte("return")) && (k == 5 || !lex.IsWordByte(src[k-6]))
}

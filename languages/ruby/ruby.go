// Package ruby holds Ruby's text-level rules (see grammars.Rules): the
// length-preserving rewrite ([Rewrite]) that re-synchronises the heredocs
// tree-sitter-ruby 0.21 (as bundled by smacker) misreads. The spec is grammars.Ruby;
// package languages attaches the rewrite to it.
package ruby

import (
	"bytes"

	"github.com/repoctx/repoctx/languages/internal/lex"
)

// Rewrite returns src with the body of every heredoc that holds another heredoc
// blanked (each byte but line breaks made a space, the terminator line kept), or
// src itself when there is none. tree-sitter-ruby's external scanner keeps one
// queue of open heredocs, so a heredoc opened inside an interpolation of another's
// body (`<<~TEXT` ... `#{ <<~INNER.strip` ... `INNER` ... `}` ... `TEXT`) ends
// the outer body at the wrong line and the rest of the file becomes string content
// or one ERROR (tree-sitter-ruby issue 148): the methods after it lose their
// names. With the outer body blank the grammar reads one plain heredoc and
// resynchronises at its terminator. The blanked text is only parsed, never shown:
// chunks keep the heredocs byte for byte.
//
// Heredocs are found on the text: an opener `<<~ID`, `<<-ID`, `<<ID` (ID a word
// starting with an upper-case letter or `_`, or any word when quoted: `<<~'ID'`,
// `<<"ID"`) outside comments and quoted strings; its body runs from the line after
// the opener (after the bodies of earlier openers on that line) to the line that
// is ID (`~` and `-`: after leading blanks). A body holds another heredoc when an
// opener of the `~` or `-` form, or quoted, or a bare upper-case one, stands inside
// an interpolation `#{...}` of a body that interpolates (ID not single-quoted). A
// body with no terminator is left alone.
func Rewrite(src []byte) []byte {
	lines := lex.Lines(src)
	out, copied := src, false
	var pending []opener // heredocs opened on the code line just read, in order
	for i := 0; i < len(lines); i++ {
		line := src[lines[i][0]:lines[i][1]]
		if len(pending) == 0 {
			if bytes.HasPrefix(line, []byte("__END__")) && len(bytes.TrimSpace(line)) == len("__END__") {
				break // data after the program
			}
			if bytes.HasPrefix(line, []byte("=begin")) { // an embedded document
				for i+1 < len(lines) && !bytes.HasPrefix(src[lines[i+1][0]:lines[i+1][1]], []byte("=end")) {
					i++
				}
				i++
				continue
			}
			pending = codeOpeners(line)
			continue
		}
		// Line i starts the body of pending[0]; the bodies of the others follow it.
		for len(pending) > 0 && i < len(lines) {
			h := pending[0]
			pending = pending[1:]
			end, nested := h.body(src, lines, i)
			if end < 0 {
				return out // no terminator: the rest is the body, as the grammar reads it
			}
			if nested {
				if !copied {
					out, copied = append([]byte(nil), src...), true
				}
				for k := lines[i][0]; k < lines[end][0]; k++ {
					if out[k] != '\n' {
						out[k] = ' '
					}
				}
			}
			i = end + 1 // the line after the terminator
		}
		i-- // the loop's i++ reads the line after the last terminator as code
		pending = nil
	}
	return out
}

// opener is one heredoc opener: its identifier, whether its terminator may be
// indented (`~` and `-`) and whether its body interpolates (not `<<~'ID'`).
type opener struct {
	id          []byte
	indented    bool
	interpolate bool
}

// body returns the line of h's terminator, the body starting on line first, and
// whether the body holds another heredoc's opener inside an interpolation; -1 when
// no line terminates it.
func (h opener) body(src []byte, lines [][2]int, first int) (int, bool) {
	nested := false
	depth := 0 // open interpolation braces, carried across lines
	for i := first; i < len(lines); i++ {
		line := src[lines[i][0]:lines[i][1]]
		t := line
		if h.indented {
			t = bytes.TrimLeft(t, " \t")
		}
		if bytes.Equal(t, h.id) {
			return i, nested
		}
		if !h.interpolate {
			continue
		}
		for j := 0; j < len(line); j++ {
			switch c := line[j]; {
			case c == '\\':
				j++
			case c == '#' && j+1 < len(line) && line[j+1] == '{':
				depth++
				j++
			case depth > 0 && c == '{':
				depth++
			case depth > 0 && c == '}':
				depth--
			case depth > 0 && c == '<':
				if _, _, ok := openerAt(line, j); ok {
					nested = true
				}
			}
		}
	}
	return -1, nested
}

// codeOpeners returns the heredoc openers of a line of code, in order, skipping
// comments and the contents of quoted strings on the line.
func codeOpeners(line []byte) []opener {
	var out []opener
	for j := 0; j < len(line); j++ {
		switch c := line[j]; c {
		case '#':
			return out // a comment to the end of the line
		case '"', '\'', '`':
			j = skipQuoted(line, j)
		case '<':
			if o, n, ok := openerAt(line, j); ok {
				out = append(out, o)
				j += n - 1
			}
		}
	}
	return out
}

// skipQuoted returns the offset of the quote closing the string that opens at
// line[j] (a backslash escapes the next byte), or the line's last offset when it
// does not close on the line.
func skipQuoted(line []byte, j int) int {
	q := line[j]
	for k := j + 1; k < len(line); k++ {
		switch line[k] {
		case '\\':
			k++
		case q:
			return k
		}
	}
	return len(line) - 1
}

// openerAt reads a heredoc opener at line[j] ("<<"): it returns the opener, its
// length and true, or false when none starts there. A bare `<<ID` must have an ID
// starting with an upper-case letter or `_`, and not follow a word, `)` or `]`
// directly (`a<<B` is a shift); `x << y` and `class << self` are no openers.
func openerAt(line []byte, j int) (opener, int, bool) {
	if j+2 >= len(line) || line[j+1] != '<' || (j > 0 && line[j-1] == '<') {
		return opener{}, 0, false
	}
	k := j + 2
	o := opener{interpolate: true}
	if line[k] == '~' || line[k] == '-' {
		o.indented = true
		k++
	}
	var q byte
	if k < len(line) && (line[k] == '\'' || line[k] == '"' || line[k] == '`') {
		q = line[k]
		k++
	}
	s := k
	for k < len(line) && lex.IsWordByte(line[k]) {
		k++
	}
	if k == s || ('0' <= line[s] && line[s] <= '9') {
		return opener{}, 0, false
	}
	o.id = line[s:k]
	if q != 0 {
		if k >= len(line) || line[k] != q {
			return opener{}, 0, false
		}
		k++
		o.interpolate = q != '\''
	} else if !o.indented {
		if !(line[s] == '_' || 'A' <= line[s] && line[s] <= 'Z') {
			return opener{}, 0, false
		}
		if j > 0 && (lex.IsWordByte(line[j-1]) || line[j-1] == ')' || line[j-1] == ']') {
			return opener{}, 0, false
		}
	}
	return o, k - j, true
}

package kotlin

import (
	"bytes"
	"strings"

	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/languages/internal/lex"
)

// Byte classes of ktClassify.
const (
	ktCode    byte = iota
	ktInStr        // inside a string or character literal, templates included
	ktComment      // inside a comment
)

// ktClassify returns, for each byte of src, whether it is code, inside a string or
// character literal (a template's code counts as string), or inside a comment.
func ktClassify(src []byte) []byte {
	cls := make([]byte, len(src))
	type str struct {
		raw bool // a triple-quoted string
	}
	var strs []str // open strings, innermost last
	var tmpl []int // brace depth of each open template
	inTemplate := func() bool { return len(tmpl) > 0 && len(tmpl) == len(strs) }
	for i := 0; i < len(src); {
		c := src[i]
		if len(strs) > len(tmpl) { // in string content
			s := &strs[len(strs)-1]
			cls[i] = ktInStr
			switch {
			case c == '\\' && !s.raw:
				if i+1 < len(src) {
					cls[i+1] = ktInStr
				}
				i += 2
				continue
			case c == '\n' && !s.raw:
				strs = strs[:len(strs)-1] // unclosed: ends with its line
				cls[i] = ktCode
			case c == '"' && !s.raw:
				strs = strs[:len(strs)-1]
			case c == '"' && s.raw && i+2 < len(src) && src[i+1] == '"' && src[i+2] == '"':
				j := i + 3
				for j < len(src) && src[j] == '"' {
					j++
				}
				for k := i; k < j; k++ {
					cls[k] = ktInStr
				}
				strs = strs[:len(strs)-1]
				i = j
				continue
			case c == '$' && i+1 < len(src) && src[i+1] == '{':
				cls[i+1] = ktInStr
				tmpl = append(tmpl, 0)
				i += 2
				continue
			}
			i++
			continue
		}
		// code (possibly inside a template, which counts as string)
		mark := ktCode
		if inTemplate() {
			mark = ktInStr
		}
		switch {
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				cls[i] = ktComment
				i++
			}
			continue
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			e := skipKtBlockComment(src, i)
			for k := i; k < e; k++ {
				if src[k] != '\n' {
					cls[k] = ktComment
				}
			}
			i = e
			continue
		case c == '"':
			raw := i+2 < len(src) && src[i+1] == '"' && src[i+2] == '"'
			n := 1
			if raw {
				n = 3
			}
			for k := i; k < i+n; k++ {
				cls[k] = ktInStr
			}
			strs = append(strs, str{raw: raw})
			i += n
			continue
		case c == '\'':
			e := skipKtChar(src, i)
			for k := i; k < e; k++ {
				cls[k] = ktInStr
			}
			i = e
			continue
		case c == '{' && inTemplate():
			tmpl[len(tmpl)-1]++
		case c == '}' && inTemplate():
			if tmpl[len(tmpl)-1] == 0 {
				tmpl = tmpl[:len(tmpl)-1] // the template ends: back in the string
				cls[i] = ktInStr
				i++
				continue
			}
			tmpl[len(tmpl)-1]--
		}
		cls[i] = mark
		i++
	}
	return cls
}

// ktOutline is Kotlin's Recovery.Outline: declarations found from the text alone,
// by brackets outside strings and comments and by the keyword that starts a line
// (after annotations, modifiers and a context clause).
func ktOutline(parsed, src []byte) []grammars.Decl {
	if len(src) != len(parsed) {
		src = parsed
	}
	o := &ktOutliner{src: parsed, orig: src, cls: ktClassify(parsed)}
	o.index()
	return o.level(0, len(o.starts)-1, 0)
}

type ktOutliner struct {
	src, cls []byte
	orig     []byte // the source, for names and signatures (src is the parsed text)
	starts   []int  // line starts; starts[n] = len(src)+1
	first    []int  // offset of each line's first code byte, or -1
	depth    []int  // brace depth before that byte
	paren    []int  // parenthesis and bracket depth before that byte
	match    map[int]int
}

func (o *ktOutliner) code(i int) bool { return o.cls[i] == ktCode }

func (o *ktOutliner) index() {
	src := o.src
	o.match = map[int]int{}
	var stack []int
	depth, paren := 0, 0
	lineStart := true
	for i := 0; i <= len(src); i++ {
		if lineStart {
			o.starts = append(o.starts, i)
			o.first = append(o.first, -1)
			o.depth = append(o.depth, depth)
			o.paren = append(o.paren, paren)
			lineStart = false
		}
		if i == len(src) {
			break
		}
		c := src[i]
		if c == '\n' {
			lineStart = true
			continue
		}
		if !o.code(i) || c == ' ' || c == '\t' || c == '\r' || c == '\f' {
			continue
		}
		ln := len(o.starts) - 1
		if o.first[ln] < 0 {
			o.first[ln], o.depth[ln], o.paren[ln] = i, depth, paren
		}
		switch c {
		case '{':
			stack = append(stack, i)
			depth++
		case '}':
			if len(stack) > 0 {
				o.match[stack[len(stack)-1]] = i
				stack = stack[:len(stack)-1]
				depth--
			}
		case '(', '[':
			paren++
		case ')', ']':
			if paren > 0 {
				paren--
			}
		}
	}
	o.starts = append(o.starts, len(src)+1)
}

func (o *ktOutliner) lineOf(b int) int {
	lo, hi := 0, len(o.starts)-2
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if o.starts[mid] <= b {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// lineEnd returns the offset of line i's line break (or len(src)).
func (o *ktOutliner) lineEnd(i int) int { return o.starts[i+1] - 1 }

// continues reports whether line i continues the statement of the lines before it
// (it starts with an operator, a closing bracket or a continuing keyword).
func (o *ktOutliner) continues(i int) bool {
	p := o.first[i]
	if p < 0 {
		return false
	}
	rest := o.src[p:o.lineEnd(i)]
	switch rest[0] {
	case '.', '?', ':', '&', '|', '+', '-', '*', '/', '%', '=', '<', '>', ')', ']', ',', '{':
		return true
	}
	for _, kw := range []string{"as", "is", "in", "else", "catch", "finally", "where", "by", "get", "set"} {
		if bytes.HasPrefix(rest, []byte(kw)) && (len(rest) == len(kw) || !isKtIdentByte(rest[len(kw)])) {
			return true
		}
	}
	return false
}

// level returns the declarations that start lines [lo, hi) at brace depth d. A line
// inside unclosed parentheses counts when it starts a function, class, object,
// interface or type alias (broken code leaves parentheses open).
func (o *ktOutliner) level(lo, hi, d int) []grammars.Decl {
	var out []grammars.Decl
	for i := lo; i < hi; i++ {
		if o.first[i] < 0 || o.depth[i] != d || o.continues(i) || o.paren[i] != 0 && !o.strongDecl(i) {
			continue
		}
		dc, ok := o.decl(i, hi, d)
		if !ok {
			continue
		}
		out = append(out, dc)
		i = o.lineOf(dc.End)
	}
	return out
}

// skipSpace returns the first offset at or after i that is code and not white space.
func (o *ktOutliner) skipSpace(i int) int {
	for i < len(o.src) && (!o.code(i) || lex.IsRegexpSpace(o.src[i])) {
		i++
	}
	return i
}

// word returns the identifier at i and the offset after it.
func (o *ktOutliner) word(i int) (string, int) {
	j := i
	for j < len(o.src) && isKtIdentByte(o.src[j]) && o.code(j) {
		j++
	}
	return string(o.src[i:j]), j
}

// balanced returns the offset after the bracket group opening at i (src[i] is
// open), brackets counted in code only; or len(src).
func (o *ktOutliner) balanced(i int, open, close byte) int {
	n := 0
	for k := i; k < len(o.src); k++ {
		if !o.code(k) {
			continue
		}
		switch o.src[k] {
		case open:
			n++
		case close:
			n--
			if n == 0 {
				return k + 1
			}
		}
	}
	return len(o.src)
}

// decl reads the declaration starting line i (at depth d, before line hi), if any.
func (o *ktOutliner) decl(i, hi, d int) (grammars.Decl, bool) {
	src := o.src
	p := o.first[i]
	var skips [][2]int // annotations, left out of the signature
	sigStart := -1
	kw, kwEnd := "", 0
	for p < len(src) {
		if src[p] == '@' {
			e := skipKtAnnotation(src, p)
			if e <= p+1 {
				return grammars.Decl{}, false
			}
			if o.orig[p] == src[p] { // a rewritten context clause stays
				skips = append(skips, [2]int{p, e})
			} else if sigStart < 0 {
				sigStart = p
			}
			p = o.skipSpace(e)
			continue
		}
		w, e := o.word(p)
		if w == "" {
			return grammars.Decl{}, false
		}
		if sigStart < 0 {
			sigStart = p
		}
		if w == "context" && e < len(src) && src[e] == '(' {
			p = o.skipSpace(o.balanced(e, '(', ')'))
			continue
		}
		if w == "fun" {
			if nw, _ := o.word(o.skipSpace(e)); nw == "interface" {
				p = o.skipSpace(e)
				continue
			}
		}
		switch w {
		case "class", "interface", "object", "fun", "constructor", "init", "val", "var", "typealias":
			kw, kwEnd = w, e
		}
		if kw != "" {
			break
		}
		if !ktModifier(w) {
			return grammars.Decl{}, false
		}
		p = o.skipSpace(e)
	}
	if kw == "" {
		return grammars.Decl{}, false
	}
	dc := grammars.Decl{Start: o.starts[i], Body: -1, BodyEnd: -1}
	switch kw {
	case "class", "interface", "object":
		dc.Kind = grammars.Class
	case "fun", "constructor", "init":
		dc.Kind = grammars.Function
	default:
		dc.Kind = grammars.Property
	}
	dc.Name = o.name(kw, kwEnd)
	// The header runs to a `{` at this depth (a body), an `=` (an expression body or
	// initializer), or the end of the statement.
	end := -1  // offset of the last byte of the declaration
	stop := -1 // where the signature ends
	paren := 0
	k := kwEnd
	line := o.lineOf(k)
scan:
	for ; k < len(src); k++ {
		if src[k] == '\n' {
			line++
			if line >= hi || o.first[line] >= 0 && o.depth[line] <= d && (paren == 0 && !o.continues(line) || o.strongDecl(line) || o.src[o.first[line]] == '}') {
				break
			}
			continue
		}
		if !o.code(k) {
			continue
		}
		switch src[k] {
		case '(', '[':
			paren++
		case ')', ']':
			if paren > 0 {
				paren--
			}
		case '=':
			if paren == 0 && !(k+1 < len(src) && (src[k+1] == '=' || src[k+1] == '>')) && !(k > 0 && strings.IndexByte("=!<>", src[k-1]) >= 0) {
				stop = k
				break scan
			}
		case '{':
			if paren == 0 || o.lastOnLine(k) { // a `{` ending its line: a body, even after a broken `(`
				stop = k
				if dc.Kind == grammars.Class {
					dc.Body = k
				}
				if m, ok := o.match[k]; ok {
					dc.BodyEnd = m
					end = m
				}
				break scan
			}
		case '}':
			if paren == 0 {
				break scan // the enclosing block closes
			}
		case ';':
			if paren == 0 {
				end = k
				break scan
			}
		}
	}
	if dc.Body < 0 {
		dc.BodyEnd = -1
	}
	if stop < 0 {
		stop = k
	}
	// The declaration's last line: after a body, through continuation lines; else
	// up to the next statement at this depth.
	var last int
	if end >= 0 {
		last = o.lineOf(end)
		for last+1 < hi && o.first[last+1] >= 0 && o.continues(last+1) && o.depth[last+1] <= d {
			last = o.nextStatementLine(last+1, hi, d) - 1
		}
	} else {
		last = o.nextStatementLine(o.lineOf(stop), hi, d) - 1
	}
	for last > i && o.first[last] < 0 { // blank or comment lines
		last--
	}
	if last < i {
		last = i
	}
	dc.End = o.lineEnd(last)
	dc.Signature = o.signature(sigStart, stop, skips)
	if dc.Body >= 0 && dc.BodyEnd > dc.Body {
		dc.Members = o.level(o.lineOf(dc.Body)+1, o.lineOf(dc.BodyEnd)+1, d+1)
	}
	return dc, true
}

// lastOnLine reports whether no code follows offset k on its line.
func (o *ktOutliner) lastOnLine(k int) bool {
	for j := k + 1; j < len(o.src) && o.src[j] != '\n'; j++ {
		if o.code(j) && !lex.IsRegexpSpace(o.src[j]) {
			return false
		}
	}
	return true
}

// strongDecl reports whether line i starts (after annotations and modifiers) a
// named function, a class, interface or named object, or a type alias: lines that
// never continue a statement or sit in a parameter list.
func (o *ktOutliner) strongDecl(i int) bool {
	p := o.first[i]
	if p < 0 {
		return false
	}
	end := o.lineEnd(i)
	for p < end {
		if o.src[p] == '@' {
			e := skipKtAnnotation(o.src, p)
			if e <= p+1 || e > end {
				return false
			}
			p = o.skipSpace(e)
			continue
		}
		w, e := o.word(p)
		switch w {
		case "class", "interface", "typealias":
			return true
		case "fun", "object":
			n := o.skipSpace(e)
			return n < end && (isKtIdentStart(o.src[n]) || o.src[n] == '<' || o.src[n] == '`')
		}
		if !ktModifier(w) {
			return false
		}
		p = o.skipSpace(e)
	}
	return false
}

// nextStatementLine returns the first line after line i (before hi) that starts a
// new statement at depth d or closes the block (depth below d), or hi.
func (o *ktOutliner) nextStatementLine(i, hi, d int) int {
	open := o.endsOpen(i)
	for j := i + 1; j < hi; j++ {
		if o.first[j] < 0 {
			continue
		}
		if o.depth[j] < d || o.depth[j] == d && (o.paren[j] == 0 && !o.continues(j) && !open || o.strongDecl(j) || o.src[o.first[j]] == '}') {
			return j
		}
		open = o.endsOpen(j)
	}
	return hi
}

// endsOpen reports whether line i's code ends with an operator that continues the
// expression on the next line (`=`, `+`, `.`, `,`, `(`, `&&`, `->`, ...).
func (o *ktOutliner) endsOpen(i int) bool {
	for k := o.lineEnd(i) - 1; k >= o.starts[i]; k-- {
		if !o.code(k) || lex.IsRegexpSpace(o.src[k]) {
			continue
		}
		switch o.src[k] {
		case '=', '+', '-', '*', '/', '%', '.', ',', '(', '[', ':', '&', '|', '?':
			return true
		case '>':
			return k > 0 && o.src[k-1] == '-'
		}
		return false
	}
	return false
}

// name returns the name a declaration with keyword kw (ending at e) declares.
func (o *ktOutliner) name(kw string, e int) string {
	switch kw {
	case "constructor", "init":
		return kw
	}
	p := o.skipSpace(e)
	if p >= len(o.src) {
		return ""
	}
	if kw == "val" || kw == "var" {
		if o.src[p] == '(' {
			return string(o.orig[p:o.balanced(p, '(', ')')])
		}
	}
	if kw == "fun" && o.src[p] == '<' {
		p = o.skipSpace(o.balanced(p, '<', '>'))
	}
	name := ""
	for p < len(o.src) {
		w, e := o.word(p)
		if w == "" {
			if o.src[p] == '`' {
				j := bytes.IndexByte(o.src[p+1:], '`')
				if j < 0 {
					break
				}
				w, e = string(o.orig[p:p+2+j]), p+2+j // with its backticks, as the tree's name
			} else {
				break
			}
		} else {
			w = string(o.orig[p:e])
		}
		name = w
		p = e
		if kw != "fun" && kw != "val" && kw != "var" {
			break
		}
		if p < len(o.src) && o.src[p] == '<' { // a receiver's type arguments
			p = o.balanced(p, '<', '>')
		}
		if p < len(o.src) && o.src[p] == '?' {
			p++
		}
		if p < len(o.src) && o.src[p] == '.' {
			p++
			continue
		}
		break
	}
	if name == "" && kw == "object" {
		return "Companion"
	}
	return name
}

// signature returns src[start:stop] without the annotation spans and comments,
// tidied.
func (o *ktOutliner) signature(start, stop int, skips [][2]int) string {
	if start < 0 || stop <= start {
		return ""
	}
	var sb strings.Builder
	for k := start; k < stop; k++ {
		if o.cls[k] == ktComment {
			continue
		}
		skip := false
		for _, s := range skips {
			if k >= s[0] && k < s[1] {
				skip = true
				break
			}
		}
		if !skip {
			sb.WriteByte(o.orig[k])
		}
	}
	return grammars.TidySignature(sb.String())
}

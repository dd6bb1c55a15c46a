package chunker

import (
	"bytes"

	sitter "github.com/smacker/go-tree-sitter"

	"github.com/repoctx/repoctx/grammars"
)

// Definitions whose parse error made the tree misread them (grammars.Spec.
// ErrorDefsFromText): a broken `match` case inside a method can end the method,
// and the class holding it, at the error, so that the method's opening line lands
// in the class chunk and the members after it leave the class; or it can hide the
// members after it inside an ERROR node. Such a definition is taken from its text
// instead: DefLines name it and the definitions inside it, its braces or its
// indentation give its end.

// maxTreeDefWalk bounds the nodes treeDefLines visits in one definition.
const maxTreeDefWalk = 200000

// errorDefText returns the definitions that the text of item it opens, by the
// spec's DefLines, and their last line, when the tree misread them. it is the first
// item on its line; errCtx says that it holds a parse error or lies inside one.
//   - A definition node (def) is misread when its kind is not the text's (a
//     function where the text opens a class), or when it is in errCtx or its text holds a
//     parse error, and its text, by braces or indentation (see textEnd), runs past
//     the node's last line (the error ended it early), or the definition nodes
//     under def misread the lines inside it that open definitions (see
//     hiddenDefLine). A function whose inner definitions the tree read right is
//     only run to its text's end: the tree's statements stay its parts.
//   - Glue in errCtx whose line opens a definition is text the parser could not
//     place: it is taken from the text with its whole extent, so that the
//     definitions inside it are its members.
//
// It returns nil when the tree stands: the text names no definition on the item's
// first line, or agrees with the tree.
func (b *builder) errorDefText(it *item, def *sitter.Node, errCtx bool) ([]item, int) {
	first := it.first
	name, kind := b.defLine(first)
	if name == "" || b.inLiteral(first) {
		return nil, 0
	}
	end := b.textEnd(first)
	switch {
	case def != nil && (kind == grammars.Class) != (it.kind == grammars.Class) && it.kind != grammars.Property:
		// The tree reads a function where the text opens a class, or the other way
		// round (a class whose `;` an error took became a function's return type).
		end = max(end, it.last)
	case def == nil:
		if !errCtx {
			return nil, 0
		}
		end = max(end, it.last)
	case !errCtx && !b.inError(first, end+1):
		return nil, 0
	case end <= it.last:
		end = it.last
		if !b.hiddenDefLine(def, first+1, end) {
			return nil, 0
		}
	case it.kind != grammars.Class && !b.hiddenDefLine(def, first+1, end):
		// A function the error ended early whose inner definitions the tree read
		// right: the node, run to its text's end, keeps its statements to split at.
		ext := *it
		ext.last = end
		return []item{ext}, end
	}
	defs := b.textDefs(first, end+1)
	if len(defs) == 0 || defs[0].first != first {
		return nil, 0
	}
	return defs, end
}

// hiddenDefLine reports whether the tree under def misread the definitions that
// lines [lo, hi] open by the spec's DefLines: such a line starts no definition
// node (the error hid it), or lies inside a definition node that starts on an
// earlier line indented no less (the error let that node swallow its sibling or
// the rest of its class). A line outside every parse error that lies inside a
// function node starting on an earlier line indented less opens a local
// definition the grammar does not count as one (C#'s local functions): it starts
// no definition node, yet the tree read it right.
func (b *builder) hiddenDefLine(def *sitter.Node, lo, hi int) bool {
	var lines []int // DefLine lines of [lo, hi]
	for i := lo; i <= hi; i++ {
		if b.defLineName(i) != "" && !b.inLiteral(i) {
			lines = append(lines, i)
		}
	}
	if len(lines) == 0 {
		return false
	}
	spans := b.treeDefSpans(def)
	var memberErrs [][2]int // the ERROR members of def's body: their items recover their definitions
	if body := b.spec.Body(def); body != nil && !body.Equal(def) {
		for _, c := range grammars.Children(body) {
			if c.IsError() {
				memberErrs = append(memberErrs, [2]int{b.firstLine(c), b.endLine(c)})
			}
		}
	}
	for _, l := range lines {
		if _, ok := spans[l]; !ok && !b.localDefLine(l, spans) && !b.bodilessDefLine(l) && !inRanges(memberErrs, l) {
			return true
		}
	}
	for first, s := range spans {
		ind := lineIndent(b.li.lineText(first))
		for _, l := range lines {
			if l > first && l <= s.last && lineIndent(b.li.lineText(l)) <= ind {
				return true
			}
		}
	}
	return false
}

// localDefLine reports whether line l, which opens a definition by the spec's
// DefLines and starts no definition node, lies outside every parse error inside a
// function node of spans that starts on an earlier line indented less (see
// hiddenDefLine).
func (b *builder) localDefLine(l int, spans map[int]treeDef) bool {
	if b.inError(l, l+1) {
		return false
	}
	ind := lineIndent(b.li.lineText(l))
	for first, s := range spans {
		if s.fn && first < l && l <= s.last && lineIndent(b.li.lineText(first)) < ind {
			return true
		}
	}
	return false
}

// bodilessDefLine reports whether line l opens a definition without a body that
// ends on it with `;` (C# 12's `class Empty;`, a field): a parse error there
// hides no member after it, and the parser's text around it is glue whose
// definitions are recovered from their text anyway (see place), so the tree of
// the definition holding it stands.
func (b *builder) bodilessDefLine(l int) bool {
	t := bytes.TrimSpace(b.li.lineText(l))
	return len(t) > 0 && t[len(t)-1] == ';' && b.textEnd(l) == l
}

// treeDef is the extent of a definition node under the one errorDefText checks:
// its last line, and whether it is a function.
type treeDef struct {
	last int
	fn   bool
}

// treeDefSpans returns, by first line, the definition nodes under n (n
// included), ERROR nodes searched too; at most maxTreeDefWalk nodes are visited.
// A node's first line is the first one that is not a leading line (C#'s
// attributes, Java's annotations: inside the declaration node, above the line
// its DefLines match).
func (b *builder) treeDefSpans(n *sitter.Node) map[int]treeDef {
	out := map[int]treeDef{}
	visited := 0
	var walk func(n *sitter.Node)
	walk = func(n *sitter.Node) {
		if visited++; visited > maxTreeDefWalk {
			return
		}
		if d, kind := b.spec.DefinitionOfType(n, b.spec.TypeOf(n)); d != nil {
			first, last := b.firstLine(d), b.endLine(d)
			for first < last && b.leadingLine(first) {
				first++
			}
			s := out[first]
			out[first] = treeDef{last: max(s.last, last), fn: s.fn || kind == grammars.Function}
		}
		for _, c := range grammars.Children(n) {
			if c.IsNamed() || c.IsError() {
				walk(c)
			}
		}
	}
	walk(n)
	return out
}

// defLineName returns the name line i opens a definition of by the spec's
// DefLines, or "".
func (b *builder) defLineName(i int) string {
	name, _ := b.defLine(i)
	return name
}

// defLine returns the name and the kind of the definition line i opens by the
// spec's DefLines, or "" and "".
func (b *builder) defLine(i int) (name, kind string) {
	t := b.li.lineText(i)
	for _, d := range b.spec.DefLines {
		if m := d.Re.FindSubmatch(t); m != nil && !b.spec.IsKeyword(string(m[1])) && !b.notDefLine(t) {
			return string(m[1]), d.Kind
		}
	}
	return "", ""
}

// inLiteral reports whether line i starts (at its first non-blank byte) inside a
// string literal or a comment that began on an earlier line, by the syntax tree:
// the text of a multi-line string or comment opens no definition.
func (b *builder) inLiteral(i int) bool {
	if b.root == nil {
		return false
	}
	t := b.li.lineText(i)
	col := len(t) - len(bytes.TrimLeft(t, " \t"))
	start := b.li.starts[i]
	p := sitter.Point{Row: uint32(i), Column: uint32(col)}
	n := b.root.NamedDescendantForPointRange(p, p)
	for depth := 0; n != nil && depth < 64; depth++ {
		typ := b.spec.TypeOf(n)
		if (b.spec.Strings[typ] || b.spec.Comments[typ]) && grammars.StartByte(n) < start {
			return true
		}
		if n.IsError() {
			return false
		}
		n = n.Parent()
	}
	return false
}

// textEnd returns the last line of the definition that line first opens, by its
// text: the line of the brace that closes the first `{` on its line, when that
// closes within its indentation (see indentEnd), else (and always in a language
// whose blocks end by indentation) its indentation's end.
func (b *builder) textEnd(first int) int {
	e := b.indentEnd(first)
	if b.spec.BlocksByIndent {
		return e
	}
	if be := b.braceEnd(first, e); be >= 0 {
		return be
	}
	return e
}

// indentEnd returns the last line of the block that line first opens by
// indentation: the lines after it indented deeper (blank lines, comment lines and
// lines inside a multi-line string or comment skipped, and in a language whose
// blocks end by braces lines starting with `#`), and a line at its own indentation that closes it (`}`, `)`, `]` or
// `end` first; when that line opens a bracket again, as `) -> T {` after a long
// parameter list, the block goes on), trailing blank lines left out. In a language
// whose blocks end by braces, a `{` that starts the next line at the definition's
// indentation (Allman style, see allmanBrace) opens its block: the block goes on.
func (b *builder) indentEnd(first int) int {
	ind := lineIndent(b.li.lineText(first))
	k := first
	if open := b.allmanBrace(first); open > 0 {
		k = open
	}
	for i := k + 1; i < b.li.lines(); i++ {
		if b.li.blank[i] {
			continue
		}
		t := bytes.TrimSpace(b.li.lineText(i))
		if bytes.HasPrefix(t, []byte("//")) || bytes.HasPrefix(t, []byte("/*")) || bytes.HasPrefix(t, []byte("*")) {
			continue
		}
		if t[0] == '#' && !b.spec.BlocksByIndent {
			continue // a preprocessor directive (`#if`, `#region`), often at column 0 inside a body
		}
		d := lineIndent(b.li.lineText(i))
		if d > ind || b.inLiteral(i) {
			k = i
			continue
		}
		if d == ind && closesBlock(t) {
			k = i
			if c := t[len(t)-1]; c == '{' || c == '(' || c == '[' {
				continue
			}
		}
		break
	}
	return k
}

// allmanBrace returns the line of the `{` that opens the block of the definition
// line first opens when it stands, in Allman style, at the start of the next
// non-blank line at first's indentation (`public void Run()` then `{`), or 0: line
// first opens no `{` and ends with no `;`. Never in a language whose blocks end by
// indentation.
func (b *builder) allmanBrace(first int) int {
	if b.spec.BlocksByIndent {
		return 0
	}
	t := bytes.TrimSpace(b.li.lineText(first))
	if len(t) == 0 || t[len(t)-1] == ';' || bytes.IndexByte(t, '{') >= 0 {
		return 0
	}
	for i := first + 1; i < b.li.lines(); i++ {
		if b.li.blank[i] {
			continue
		}
		n := b.li.lineText(i)
		if lineIndent(n) == lineIndent(b.li.lineText(first)) && bytes.HasPrefix(bytes.TrimSpace(n), []byte("{")) {
			return i
		}
		return 0
	}
	return 0
}

// closesBlock reports whether the trimmed line t starts by closing a block.
func closesBlock(t []byte) bool {
	if len(t) == 0 {
		return false
	}
	switch t[0] {
	case '}', ')', ']':
		return true
	}
	return bytes.HasPrefix(t, []byte("end")) && (len(t) == 3 || !isWordByte(t[3]))
}

// isWordByte reports whether c may be part of an identifier.
func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// lineIndent returns the bytes of blanks (spaces and tabs) line t starts with.
func lineIndent(t []byte) int { return len(t) - len(bytes.TrimLeft(t, " \t")) }

// notDefLine reports whether line text t opens no definition by the spec's
// NotDefLine, whatever its DefLines say.
func (b *builder) notDefLine(t []byte) bool {
	return b.spec.NotDefLine != nil && b.spec.NotDefLine.Match(t)
}

// inRanges reports whether line l lies in one of the line ranges rs.
func inRanges(rs [][2]int, l int) bool {
	for _, r := range rs {
		if r[0] <= l && l <= r[1] {
			return true
		}
	}
	return false
}

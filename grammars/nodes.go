package grammars

import (
	"bytes"
	"strings"
	"sync"

	sitter "github.com/smacker/go-tree-sitter"
)

// cursorChildren returns n's children in order by walking smacker's TreeCursor (two
// cgo calls per child): Children's fallback, and the reference its test compares
// with. It walks a cursor because tree-sitter's ts_node_child(i) scans siblings from
// the start, so indexing every child of a wide node (a 400,000-element list literal)
// would cost quadratic time. Cursors are reused (Reset) rather than made per call:
// making one costs a cgo call and a finalizer.
func cursorChildren(n *sitter.Node) []*sitter.Node {
	cnt := int(n.ChildCount())
	if cnt == 0 {
		return nil
	}
	out := make([]*sitter.Node, 0, cnt)
	c, _ := cursors.Get().(*sitter.TreeCursor)
	if c == nil {
		c = sitter.NewTreeCursor(n) // closed by its finalizer when the pool drops it
	} else {
		c.Reset(n)
	}
	for ok := c.GoToFirstChild(); ok; ok = c.GoToNextSibling() {
		out = append(out, c.CurrentNode())
	}
	cursors.Put(c)
	return out
}

// cursors holds idle tree cursors for cursorChildren. An idle cursor still names the
// last tree it walked, but Reset never reads that tree, so it may be closed.
var cursors sync.Pool

// Definition returns the definition node and its kind (Function, Class or Property)
// for n, looking through wrappers (Python's decorated_definition), or nil and "".
func (s *Spec) Definition(n *sitter.Node) (*sitter.Node, string) {
	return s.DefinitionOfType(n, s.TypeOf(n))
}

// DefinitionOfType is Definition for a node whose type t is known (TypeOf or
// TypeOfSymbol of it).
func (s *Spec) DefinitionOfType(n *sitter.Node, t string) (*sitter.Node, string) {
	if k, ok := s.Definitions[t]; ok {
		return n, k
	}
	if s.Wrappers[t] {
		for _, c := range Children(n) {
			if k, ok := s.Definitions[s.TypeOf(c)]; ok && c.IsNamed() {
				return c, k
			}
		}
	}
	return nil, ""
}

// Body returns the last child of def whose type is one of s.Bodies, else def itself
// when its type is one of s.SelfBodies, else, when s.BodyDepth > 1, the first node
// of a Bodies type found breadth-first among def's named descendants down to
// s.BodyDepth levels, not inside another definition (see [Spec.BodyDepth]); nil
// when there is none.
func (s *Spec) Body(def *sitter.Node) *sitter.Node {
	kids := Children(def)
	for i := len(kids) - 1; i >= 0; i-- {
		if s.Bodies[s.TypeOf(kids[i])] {
			return kids[i]
		}
	}
	if s.SelfBodies[s.TypeOf(def)] {
		return def
	}
	return s.deepBody(kids)
}

// deepBody is Body's breadth-first search below def, whose children are kids.
func (s *Spec) deepBody(kids []*sitter.Node) *sitter.Node {
	for depth := 2; depth <= s.BodyDepth && len(kids) > 0; depth++ {
		var next []*sitter.Node
		for _, k := range kids {
			if !k.IsNamed() || k.ChildCount() == 0 || k.ChildCount() > maxBodySearchWidth {
				continue
			}
			if _, ok := s.Definitions[s.TypeOf(k)]; ok {
				continue
			}
			for _, c := range Children(k) {
				if s.Bodies[s.TypeOf(c)] {
					return c
				}
				next = append(next, c)
			}
		}
		kids = next
	}
	return nil
}

// maxBodySearchWidth is the most children a node may have for deepBody to look at
// them (a wide node is a literal or a list, not the way to a body).
const maxBodySearchWidth = 64

// Signature returns a definition's text up to its body, without the node types in
// s.SignatureSkip (annotations, comments; but a rewritten construct parsed as one,
// such as Kotlin's context clause, stays), white space collapsed and brackets tidied:
// "class Foo(val a: Int) : Bar()", "def load(path):". src is the original text and
// parsed the text given to the parser (the result of s.Rewrite, or src): bytes that
// the rewrite blanked just before the node on its line (Kotlin's `fun` of
// `fun interface`) are put back.
func (s *Spec) Signature(def *sitter.Node, src, parsed []byte) string {
	end := int(def.EndByte())
	kids := Children(def)
	found := false
	for _, c := range kids {
		if s.Bodies[s.TypeOf(c)] {
			end, found = StartByte(c), true
			break
		}
	}
	if !found && s.SelfBodies[s.TypeOf(def)] {
		for _, c := range kids {
			if _, ok := s.Definitions[s.TypeOf(c)]; ok {
				end, found = StartByte(c), true
				break
			}
		}
	}
	if !found && s.BodyDepth > 1 {
		if b := s.deepBody(kids); b != nil {
			end = StartByte(b)
		}
	}
	start := StartByte(def)
	for p := start; p > 0 && p <= len(parsed) && parsed[p-1] == ' ' && src[p-1] != '\n'; p-- {
		if src[p-1] != parsed[p-1] {
			for start = p - 1; start > 0 && src[start-1] != ' ' && src[start-1] != '\t' && src[start-1] != '\n'; start-- {
			}
		}
	}
	if ds := StartByte(def); s.SignatureSkipBytes != "" && ds <= end && end <= len(parsed) &&
		!bytes.ContainsAny(parsed[ds:end], s.SignatureSkipBytes) {
		// No node of a SignatureSkip type can start in [ds, end): nothing to skip.
		return TidySignature(string(src[start:end]))
	}
	var sb strings.Builder
	pos := start
	var skip func(n *sitter.Node, depth int)
	skip = func(n *sitter.Node, depth int) {
		for _, c := range Children(n) {
			cs, ce := StartByte(c), int(c.EndByte())
			if cs >= end {
				return
			}
			// A skipped type whose first byte the rewrite changed stands in for a
			// construct the grammar lacks (Kotlin's context clause as `@ontext(…)`):
			// it stays.
			if s.SignatureSkip[s.TypeOf(c)] && cs >= pos && (cs >= len(parsed) || src[cs] == parsed[cs]) {
				sb.Write(src[pos:cs])
				pos = min(ce, end)
				continue
			}
			if depth < 2 && ce <= end {
				skip(c, depth+1)
			}
		}
	}
	skip(def, 0)
	if pos < end {
		sb.Write(src[pos:end])
	}
	return TidySignature(sb.String())
}

// TidySignature collapses white space, drops spaces inside brackets and trailing
// commas before a closing bracket: "f(\n  a,\n)" -> "f(a)". It scans bytes; the tests
// check it against its definition by regular expressions: replace `\s+` by " ", trim
// white space, replace `([(\[<]) ` by "$1", then ` ?,? ?([)\]>])` by "$1", and trim.
func TidySignature(s string) string {
	b := make([]byte, 0, len(s))
	// White space runs (regexp's \s: ASCII only, no \v) become one space.
	for i := 0; i < len(s); i++ {
		if isRegexpSpace(s[i]) {
			if i == 0 || !isRegexpSpace(s[i-1]) {
				b = append(b, ' ')
			}
			continue
		}
		b = append(b, s[i])
	}
	b = bytes.TrimSpace(b)
	// A space after an opening bracket goes.
	w := 0
	for i := 0; i < len(b); i++ {
		b[w] = b[i]
		w++
		if (b[i] == '(' || b[i] == '[' || b[i] == '<') && i+1 < len(b) && b[i+1] == ' ' {
			i++
		}
	}
	b = b[:w]
	// Before a closing bracket, the longest tail of the preceding run of spaces and
	// commas that matches ` ?,? ?` goes (where the regexp's leftmost match starts).
	w = 0
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c == ')' || c == ']' || c == '>' {
			run := 0
			for run < 3 && w-run > 0 && (b[w-run-1] == ' ' || b[w-run-1] == ',') {
				run++
			}
			tail := string(b[w-run : w])
			switch {
			case len(tail) == 3 && tail == " , ":
				w -= 3
			case len(tail) >= 2 && (tail[len(tail)-2:] == "  " || tail[len(tail)-2:] == " ," || tail[len(tail)-2:] == ", "):
				w -= 2
			case len(tail) >= 1:
				w--
			}
		}
		b[w] = c
		w++
	}
	return string(bytes.TrimSpace(b[:w]))
}

// isRegexpSpace reports whether c is white space as regexp's \s defines it.
func isRegexpSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

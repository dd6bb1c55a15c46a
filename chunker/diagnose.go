package chunker

import (
	sitter "github.com/smacker/go-tree-sitter"

	"github.com/repoctx/repoctx/grammars"
)

// TokenWindows is a diagnostic for `repoctx chunk --stats`: it returns how many of
// cs (the chunks s made of f, in file order) are Fallback windows cut only inside
// string literals or comments, where the syntax has no finer boundary to offer (an
// embedded shell script in a raw string, a doc comment longer than a chunk). It
// changes nothing in cs: such windows stay Fallback.
//
// A Fallback chunk without ParseError counts when each of its two ends is either a
// syntax boundary (the file's start or end, or a neighbour that is not Fallback) or a
// cut inside a token: strictly inside a node of a Spec.Strings or Spec.Comments type,
// or in the white space between two comment nodes (a run of line comments); and at
// least one end is such a cut. Adjacent fallback chunks of different pieces meet at
// a syntax boundary that this rule cannot tell from a cut in code, so it errs
// towards not counting.
//
// It parses f again (only when cs holds a Fallback chunk without ParseError) and
// returns 0 for a language without a spec, string or comment types, or when that
// parse fails; it parses the text the chunker parses (see flattenDeep). The error is
// reserved for future use and is always nil.
func (s *Structural) TokenWindows(f *File, cs []Chunk) (int, error) {
	candidates := 0
	for _, c := range cs {
		if c.Fallback && !c.ParseError {
			candidates++
		}
	}
	if candidates == 0 {
		return 0, nil
	}
	spec := grammars.Lookup(f.Lang)
	if spec == nil || len(spec.Strings)+len(spec.Comments) == 0 {
		return 0, nil
	}
	text, _ := flattenDeep(f.Text)
	tree, _, err := s.parsers.Parse(spec, text)
	if err != nil {
		return 0, nil // the chunker windowed the whole file too
	}
	defer tree.Close()
	d := tokenDiag{spec: spec, root: tree.RootNode(), li: newLineIndex(f.Text), text: f.Text}
	n := 0
	for i, c := range cs {
		if !c.Fallback || c.ParseError {
			continue
		}
		startCut := i > 0 && cs[i-1].Fallback
		endCut := i+1 < len(cs) && cs[i+1].Fallback
		if !startCut && !endCut {
			continue
		}
		if (!startCut || d.inside(c.StartByte)) && (!endCut || d.inside(c.EndByte)) {
			n++
		}
	}
	return n, nil
}

// tokenDiag finds string and comment tokens around byte offsets of one file's tree.
type tokenDiag struct {
	spec *grammars.Spec
	root *sitter.Node
	li   *lineIndex
	text []byte
}

// point returns the tree-sitter point (row, byte column) of byte offset x.
func (d *tokenDiag) point(x int) sitter.Point {
	l := d.li.lineOf(x)
	return sitter.Point{Row: uint32(l), Column: uint32(x - d.li.starts[l])}
}

func (d *tokenDiag) isToken(n *sitter.Node) bool {
	t := d.spec.TypeOf(n)
	return d.spec.Strings[t] || d.spec.Comments[t]
}

// maxDiagAncestors bounds the ancestors inside and commentAt look at above the
// smallest named node at an offset: a string or comment token is a few levels up at
// most, and each Parent call of tree-sitter walks down from the root, so an unbounded
// walk cost depth² per offset (a 16 KB file of nested `<c` took 50 s of chunk --stats).
const maxDiagAncestors = 32

// inside reports whether byte offset x lies strictly inside a string or comment
// node (among the smallest named node there and its maxDiagAncestors nearest
// ancestors), or in white space between two comment nodes.
func (d *tokenDiag) inside(x int) bool {
	if x <= 0 || x >= len(d.text) {
		return false
	}
	up := 0
	for n := d.root.NamedDescendantForPointRange(d.point(x), d.point(x)); n != nil && up <= maxDiagAncestors; n, up = n.Parent(), up+1 {
		if int(n.StartByte()) < x && x < int(n.EndByte()) && d.isToken(n) {
			return true
		}
	}
	w, y := x, x // white space [w, y) around x
	for w > 0 && isSpace(rune(d.text[w-1])) {
		w--
	}
	for y < len(d.text) && isSpace(rune(d.text[y])) {
		y++
	}
	if w == 0 || y == len(d.text) {
		return false
	}
	return d.commentAt(w-1, w, func(n *sitter.Node) bool { return int(n.EndByte()) == w }) &&
		d.commentAt(y, y+1, func(n *sitter.Node) bool { return int(n.StartByte()) == y })
}

// commentAt reports whether a comment node spanning bytes [a, b) satisfies edge
// (ends or starts there), among the smallest named node there and its ancestors
// that satisfy edge too.
func (d *tokenDiag) commentAt(a, b int, edge func(*sitter.Node) bool) bool {
	up := 0
	for n := d.root.NamedDescendantForPointRange(d.point(a), d.point(b)); n != nil && edge(n) && up <= maxDiagAncestors; n, up = n.Parent(), up+1 {
		if d.spec.Comments[d.spec.TypeOf(n)] {
			return true
		}
	}
	return false
}

package chunker

// Recovery of files whose parse has errors (grammars.Recovery). One syntax error can
// make tree-sitter's error recovery swallow a class header, end a class early, or
// flatten the rest of a file into one ERROR node, which loses the definitions after
// it or puts members at the top level without their class. Here the file is cut
// along its text outline instead, and each declaration is parsed on its own (the
// parser sees only its bytes: included ranges keep node offsets those of the file).
// A declaration that parses cleanly gives its tree's items; a class that still fails
// is cut into its members, each parsed alone inside a stand-in class, under a header
// recovered from the text; any other declaration that fails gives its own tree's
// items, whose ERROR nodes become windows as before. Errors are then those of the
// fragments, so parse_error marks the declarations that failed, not the whole file.

import (
	"bytes"

	sitter "github.com/smacker/go-tree-sitter"

	"github.com/repoctx/repoctx/grammars"
)

// textDef is a definition recovered from the text: its name, its signature (for a
// class, the header of its members) and a class's members' items.
type textDef struct {
	name, sig string
	members   []item
}

// maxRecoverBytes bounds the bytes parsed again by recovery, as a multiple of the
// file's size (each declaration is parsed once at each level it is recovered at).
const maxRecoverFactor = 4

type recoverer struct {
	b      *builder
	rc     *grammars.Recovery
	parse  func(text []byte, ranges []sitter.Range) (*sitter.Tree, error)
	doc    []byte // b.parsed, then room for the wrappers' suffixes
	trees  []*sitter.Tree
	errs   [][2]int
	budget int // bytes that may still be parsed
	failed bool
}

// recoverFile returns the file's items rebuilt from its outline, the trees they come
// from (the caller closes them once the chunks are emitted) and the fragments' error
// line ranges; ok is false when the outline gives nothing to work with or the
// budget ran out (the caller keeps the whole file's tree).
func (b *builder) recoverFile(parse func([]byte, []sitter.Range) (*sitter.Tree, error)) (its []item, trees []*sitter.Tree, errs [][2]int, ok bool) {
	rc := b.spec.Recover
	decls := rc.Outline(b.parsed, b.src)
	if len(decls) == 0 {
		return nil, nil, nil, false
	}
	pad := len(rc.MemberSuffix)
	if len(rc.GapSuffix) > pad {
		pad = len(rc.GapSuffix)
	}
	doc := make([]byte, len(b.parsed)+1+pad)
	copy(doc, b.parsed)
	doc[len(b.parsed)] = '\n'
	r := &recoverer{b: b, rc: rc, parse: parse, doc: doc, budget: maxRecoverFactor * (len(b.parsed) + 1)}
	its = r.level(decls, 0, b.li.lines(), false)
	if r.failed {
		for _, t := range r.trees {
			t.Close()
		}
		return nil, nil, nil, false
	}
	return its, r.trees, r.errs, true
}

// level returns the items of lines [lo, hi), whose declarations are decls: each
// declaration and each stretch of text between them is parsed on its own (wrapped
// as a member or as enum entries when inClass).
func (r *recoverer) level(decls []grammars.Decl, lo, hi int, inClass bool) []item {
	li := r.b.li
	var out []item
	pos := lo
	for _, d := range decls {
		dlo, dhi := li.lineOf(d.Start), li.lineOf(max(d.End-1, d.Start))+1
		if dlo < pos || dhi > hi {
			continue // overlaps what is done (an outline that disagrees with itself)
		}
		if dlo > pos {
			out = append(out, r.fragment(pos, dlo, inClass, true)...)
		}
		out = append(out, r.decl(d, dlo, dhi, inClass)...)
		pos = dhi
	}
	if pos < hi {
		out = append(out, r.fragment(pos, hi, inClass, true)...)
	}
	return out
}

// decl returns the items of declaration d (lines [lo, hi)).
func (r *recoverer) decl(d grammars.Decl, lo, hi int, inClass bool) []item {
	its, clean := r.parseLines(lo, hi, inClass, false)
	if clean {
		return its
	}
	whole := []item{{first: lo, last: hi - 1, kind: d.Kind, synth: &textDef{name: d.Name, sig: d.Signature}}}
	if d.Kind != grammars.Class || len(d.Members) == 0 || d.Body < 0 {
		// The tree's items when its errors left the definition whole (an error
		// inside a function body), else one definition from the text; both flagged,
		// and windowed where over the cap.
		for _, it := range its {
			if it.def != nil && it.first == lo && it.last >= hi-1 {
				return its
			}
		}
		if len(r.b.spec.DefLines) > 0 && d.Kind == grammars.Class {
			// The outline found no members (an unbalanced bracket inside one): the
			// definition lines inside the class are its members.
			if t := r.b.textDefs(lo, hi); len(t) == 1 && t[0].first == lo && t[0].synth != nil && len(t[0].synth.members) > 0 {
				t[0].last, t[0].kind, t[0].synth.name = hi-1, d.Kind, d.Name
				return t
			}
		}
		return whole
	}
	// The class fails as a whole: a header from the text, members parsed one by one.
	// Its body ends before the line of its closing brace, unless code precedes that.
	li := r.b.li
	blo, bhi := li.lineOf(d.Body)+1, li.lineOf(d.BodyEnd)
	if len(bytes.TrimSpace(r.b.parsed[li.starts[bhi]:d.BodyEnd])) > 0 {
		bhi++
	}
	if blo >= hi || bhi > hi || blo >= bhi {
		return whole
	}
	r.dropErrors(lo, hi)
	n := len(r.errs)
	members := r.level(d.Members, blo, bhi, true)
	if len(r.errs) == n { // the members parse: the fault is in the header or the close
		r.errs = append(r.errs, [2]int{lo, blo - 1})
	}
	return []item{{first: lo, last: hi - 1, kind: grammars.Class, synth: &textDef{name: d.Name, sig: d.Signature, members: members}}}
}

// fragment returns the items of lines [lo, hi) that hold no declaration; none for
// blank lines and closing brackets.
func (r *recoverer) fragment(lo, hi int, inClass, gap bool) []item {
	li := r.b.li
	if len(bytes.Trim(r.b.parsed[li.starts[lo]:li.starts[hi]], " \t\r\n\f});]")) == 0 {
		return nil
	}
	its, _ := r.parseLines(lo, hi, inClass, gap)
	return its
}

// parseLines parses lines [lo, hi) on their own, wrapped when inClass (as a member,
// or as enum entries when gap), records the errors inside them, and returns the
// items of the lines and whether the parse was clean.
func (r *recoverer) parseLines(lo, hi int, inClass, gap bool) ([]item, bool) {
	b, li := r.b, r.b.li
	s, e := li.starts[lo], li.starts[hi]
	for e > s && (b.parsed[e-1] == '\n' || b.parsed[e-1] == '\r') {
		e--
	}
	if e <= s {
		return nil, true
	}
	prefix, suffix := "", ""
	if inClass {
		prefix, suffix = r.rc.MemberPrefix, r.rc.MemberSuffix
		if gap {
			prefix, suffix = r.rc.GapPrefix, r.rc.GapSuffix
		}
		if s < len(prefix) {
			prefix, suffix = "", ""
		}
	}
	r.budget -= e - s + len(prefix) + len(suffix)
	if r.budget < 0 {
		r.failed = true
		return nil, false
	}
	var ranges []sitter.Range
	var saved []byte
	if prefix != "" {
		ps := s - len(prefix)
		saved = append(saved, r.doc[ps:s]...)
		copy(r.doc[ps:s], prefix)
		ranges = append(ranges, r.rng(ps, s))
	}
	ranges = append(ranges, r.rng(s, e))
	if suffix != "" {
		ss := len(b.parsed) + 1
		copy(r.doc[ss:], suffix)
		ranges = append(ranges, r.rng(ss, ss+len(suffix)))
	}
	tree, err := r.parse(r.doc, ranges)
	if prefix != "" {
		copy(r.doc[s-len(prefix):s], saved)
	}
	if err != nil {
		r.failed = true
		return nil, false
	}
	r.trees = append(r.trees, tree)
	root := tree.RootNode()
	clean := !root.HasError()
	if !clean {
		r.collect(root, lo, hi-1)
	}
	var its []item
	if prefix != "" {
		// The stand-in class's body holds the member (or the enum entries).
		if kids := grammars.Children(root); len(kids) > 0 {
			if body := b.spec.Body(kids[0]); body != nil {
				its = b.items(body, !clean)
			}
		}
	} else {
		its = b.items(root, false)
	}
	out := its[:0]
	for _, it := range its {
		if it.first >= lo && it.first < hi {
			it.last = min(it.last, hi-1)
			out = append(out, it)
		}
	}
	return out, clean
}

// rng returns the tree-sitter range of bytes [s, e) of r.doc.
func (r *recoverer) rng(s, e int) sitter.Range {
	return sitter.Range{StartPoint: r.point(s), EndPoint: r.point(e), StartByte: uint32(s), EndByte: uint32(e)}
}

// point returns the row and column of byte b of r.doc (past the text: the row after
// its last line).
func (r *recoverer) point(b int) sitter.Point {
	li := r.b.li
	if b >= len(li.text) {
		return sitter.Point{Row: uint32(li.lines()), Column: uint32(b - len(li.text))}
	}
	ln := li.lineOf(b)
	return sitter.Point{Row: uint32(ln), Column: uint32(b - li.starts[ln])}
}

// collect records the error line ranges of a fragment's tree, clamped to the
// fragment's lines [first, last] (a stand-in wrapper lies outside them).
func (r *recoverer) collect(root *sitter.Node, first, last int) {
	saved := r.b.errs
	r.b.errs = nil
	r.b.collectErrors(root)
	for _, e := range r.b.errs {
		lo, hi := max(e[0], first), min(e[1], last)
		if lo > hi {
			lo, hi = min(max(e[0], first), last), min(max(e[0], first), last)
		}
		r.errs = append(r.errs, [2]int{lo, hi})
	}
	r.b.errs = saved
}

// dropErrors forgets the errors recorded for lines [lo, hi) (a class whose members
// are recovered one by one: their own parses say where the errors are).
func (r *recoverer) dropErrors(lo, hi int) {
	out := r.errs[:0]
	for _, e := range r.errs {
		if e[0] < lo || e[1] >= hi {
			out = append(out, e)
		}
	}
	r.errs = out
}

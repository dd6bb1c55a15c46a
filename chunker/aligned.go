package chunker

import (
	"math"

	sitter "github.com/smacker/go-tree-sitter"

	"github.com/repoctx/repoctx/grammars"
)

// Aligned cuts files into overlapping windows of about Options.WindowLines lines,
// like [Fixed], whose boundaries are snapped to the syntax tree: a window starts and
// ends where a statement, member or definition starts, preferring the outermost such
// boundary within a quarter of the window's size of the target line (so small
// top-level siblings ride together and a window rarely starts inside an expression),
// and the next window starts near Options.WindowOverlap lines before the previous
// one ended, again on a boundary. Each window carries in Header the signatures of the
// definitions enclosing its first line, outermost first (retrieval indexes them;
// Options.NoHeader leaves them out). The retrieval unit is thus a fixed-size window,
// which measured better than definition-sized chunks as a unit of lexical retrieval
// and relative positioning (docs/structure.md), aligned to the structure the
// structural chunker finds (the "statement-block" units of cAST's split step, Zhang
// et al. 2025, §3, without its merge to definition size).
//
// Files the parser cannot serve (no grammar, nesting deeper than MaxNesting, a
// parse failure or one over its CPU time limit) are windowed as [Structural] windows
// them (Fallback, with their Limit). An Aligned chunker holds parsers: it is not safe
// for concurrent use; Close it when done.
type Aligned struct {
	opts Options
	s    *Structural // its parsers, and the windows of the files it cannot parse
}

// NewAligned returns an aligned-window chunker with the given options (zero fields:
// the defaults of [StrategyAligned], 20-line windows overlapping by 10).
func NewAligned(opts Options) *Aligned {
	opts = opts.withDefaults(true)
	return &Aligned{opts: opts, s: NewStructural(opts)}
}

// Close frees the parsers. The chunker must not be used afterwards.
func (a *Aligned) Close() { a.s.Close() }

// Chunk implements Chunker. All chunks have Kind KindWindow.
func (a *Aligned) Chunk(f *File) ([]Chunk, error) { return a.ChunkTree(f, nil) }

// ChunkTree is Chunk that also hands the file's syntax tree to visit (when not nil),
// as [Structural.ChunkTree] does.
func (a *Aligned) ChunkTree(f *File, visit func(root *sitter.Node, parsed []byte)) ([]Chunk, error) {
	li := newLineIndex(f.Text)
	if li.size(0, li.lines()) == 0 {
		return nil, nil
	}
	spec := grammars.Lookup(f.Lang)
	if spec == nil {
		return a.s.windowFile(f, li), nil
	}
	if TooDeep(f.Text) {
		return a.s.limitedFile(f, li, LimitNesting), nil
	}
	tree, parsed, err := a.s.parsers.Parse(spec, f.Text)
	if err != nil {
		return a.s.limitedFile(f, li, parseLimit(err)), nil
	}
	defer tree.Close()
	root := tree.RootNode()
	if visit != nil {
		visit(root, parsed)
	}
	b := &builder{opts: a.opts, spec: spec, li: li, src: f.Text, parsed: parsed}
	if root.HasError() {
		b.collectErrors(root)
	}
	w := &alignWalk{b: b, depth: make([]int32, li.lines()), headers: !a.opts.NoHeader}
	for i := range w.depth {
		w.depth[i] = noBoundary
	}
	w.walk(root, 0)
	spans := alignedWindows(li, w.depth, a.opts.WindowLines, a.opts.WindowOverlap, a.opts.MaxChars)
	out := make([]Chunk, 0, len(spans))
	text := string(f.Text)
	open := w.opener()
	for _, s := range spans {
		c := Chunk{Path: f.Path, Lang: f.Lang, Ordinal: len(out), Kind: KindWindow,
			StartLine: s.firstLine + 1, EndLine: s.lastLine + 1, StartByte: s.start, EndByte: s.end,
			ParseError: b.inError(s.firstLine, s.lastLine+1), Text: text[s.start:s.end]}
		first := s.firstLine
		for first < s.lastLine && li.blank[first] {
			first++
		}
		c.Header = open(first)
		c.ID = ChunkID(f.Path, c.Ordinal)
		out = append(out, c)
	}
	link(out)
	return out, nil
}

// noBoundary marks a line where no statement, member or definition starts.
const noBoundary = math.MaxInt32

// alignWalk records, for every line, the depth of the shallowest named node that
// starts at the line's first non-white-space byte (noBoundary when none does), and
// the multi-line definitions, in tree order (outer before inner).
type alignWalk struct {
	b       *builder
	depth   []int32
	headers bool
	defs    []openDef
}

// openDef is a definition spanning lines [first, last], with its node for the
// signature.
type openDef struct {
	first, last int
	def         *sitter.Node
}

// walk visits n's named children at depth d+1, descending only into nodes spanning
// several lines (nothing inside a one-line node starts a line of its own).
func (w *alignWalk) walk(n *sitter.Node, d int) {
	b := w.b
	if d > 0 && n.ChildCount() > maxWide {
		return // a huge flat literal: no boundary inside it is worth preferring
	}
	kids, infos := grammars.ChildrenInfo(n)
	for i, c := range kids {
		ci := &infos[i]
		if !ci.Named && !ci.IsError() {
			continue
		}
		s, e := int(ci.Start), int(ci.End)
		line := b.li.lineOf(s)
		if s == firstNonSpace(b.li, line) && int32(d+1) < w.depth[line] {
			w.depth[line] = int32(d + 1)
		}
		last := b.endLineAt(s, e)
		if last == line || d+1 >= maxItemDepth {
			continue
		}
		if def, _ := b.spec.DefinitionOfType(c, b.spec.TypeOfSymbol(c, ci.Symbol)); def != nil {
			if w.headers {
				w.defs = append(w.defs, openDef{first: line, last: last, def: def})
			}
			w.walk(c, d+1)
			// The lines of a multi-line signature (parameters, supertypes) after its
			// first are no boundary: a window starting there has lost its opening.
			if body := b.spec.Body(def); body != nil {
				for l := b.firstLine(def) + 1; l <= b.firstLine(body) && l <= last; l++ {
					w.depth[l] = noBoundary
				}
			}
			continue
		}
		w.walk(c, d+1)
	}
}

// opener returns a function giving the signatures of the definitions that started
// before line l and end at or after it, outermost first, at most maxHeaderDepth
// (the innermost); nil when there are none. Its calls must come with non-decreasing
// lines (a stack walks the definitions once).
func (w *alignWalk) opener() func(l int) []string {
	var stack []openDef
	var sigs []string
	next := 0
	return func(l int) []string {
		for len(stack) > 0 && stack[len(stack)-1].last < l {
			stack, sigs = stack[:len(stack)-1], sigs[:len(sigs)-1]
		}
		for ; next < len(w.defs) && w.defs[next].first < l; next++ {
			d := w.defs[next]
			for len(stack) > 0 && stack[len(stack)-1].last < d.first {
				stack, sigs = stack[:len(stack)-1], sigs[:len(sigs)-1]
			}
			if d.last < l {
				continue
			}
			stack = append(stack, d)
			sigs = append(sigs, w.b.spec.Signature(d.def, w.b.src, w.b.parsed))
		}
		if len(sigs) == 0 {
			return nil
		}
		return append([]string(nil), sigs[max(0, len(sigs)-maxHeaderDepth):]...)
	}
}

// firstNonSpace returns the byte offset of line l's first byte that is not a space
// or tab (the line's end when it has none).
func firstNonSpace(li *lineIndex, l int) int {
	p, end := li.starts[l], li.starts[l+1]
	for p < end && (li.text[p] == ' ' || li.text[p] == '\t') {
		p++
	}
	return p
}

// alignedWindows cuts lines [0, n) into windows of about size lines (at most
// size+size/4, at least 3/4 of size when the file goes on) and at most maxChars
// non-white-space runes, each but the first starting about overlap lines before the
// previous one ended (within overlap/2), cuts placed on the line of smallest depth
// (a boundary of the outermost node) in the allowed range, ties broken by the
// distance to the target line, then by the earlier line. Blank lines never start a
// window after the first; where no boundary lies in range the window is cut at its
// target line. A line over maxChars alone becomes rune windows (splitLine).
func alignedWindows(li *lineIndex, depth []int32, size, overlap, maxChars int) []span {
	n := li.lines()
	size = max(size, 1)
	overlap = min(max(overlap, 0), size-1)
	good := func(l int) bool { return l < n && !li.blank[l] && depth[l] != noBoundary }
	pick := func(lo, hi, target int) int {
		best := -1
		for l := lo; l <= hi; l++ {
			if !good(l) {
				continue
			}
			if best < 0 || depth[l] < depth[best] || (depth[l] == depth[best] && abs(l-target) < abs(best-target)) {
				best = l
			}
		}
		return best
	}
	var out []span
	s, prevEnd := 0, 0
	for s < n {
		var k int
		var ok bool
		if out, k, ok = windowLead(li, out, s, n, maxChars); !ok {
			if k == n {
				break
			}
			s, prevEnd = k+1, k+1
			continue
		}
		longest := size + size/4
		hard := k + 1 // the farthest end the line count and maxChars allow
		for hard < n && hard-s < longest && li.size(s, hard+1) <= maxChars {
			hard++
		}
		var end int
		if hard == n || li.blankRange(hard, n) {
			end = n
		} else {
			target := min(s+size, hard)
			lo := max(prevEnd+1, k+1, s+(target-s)*3/4)
			if end = pick(lo, hard, target); end < 0 {
				end = max(target, lo)
				if end > hard {
					end = hard
				}
			}
			if end <= prevEnd {
				end = prevEnd + 1
			}
		}
		out = append(out, span{li.starts[s], li.starts[end], s, end - 1})
		if end >= n {
			break
		}
		next := end
		if overlap > 0 {
			lo, hi := max(end-overlap-overlap/2, k+1), end-overlap+overlap/2
			hi = min(hi, end-1)
			if m := pick(lo, hi, end-overlap); m >= 0 && li.size(m, end+1) <= maxChars {
				next = m
			}
		}
		s, prevEnd = next, end
	}
	return out
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

package chunker

// Design note. The structural chunker works on whole lines: tree-sitter gives the byte
// ranges of definitions, and each definition becomes the line range from its first
// line (extended upwards over the comment lines directly above it, while its first
// chunk still fits the cap; else the comment run is a chunk of its own) to its last line.
// At one level (the file, or a class body) the definitions cut the lines into pieces;
// the lines between definitions form "glue" pieces (imports, statements, comments).
// Pieces tile the level exactly, blank lines joining the piece before them. A piece
// over the size cap, or a class with methods, is split by descending into its body
// (its signature lines stay as a header piece); oversized glue is split at its
// statements, recursively (the parts of a statement carry its opening as a header);
// what cannot be split becomes line windows (Fallback), those after the first of a
// definition carrying its signature. Finally adjacent small pieces of a level (glue,
// properties, tiny definitions) are merged up to the cap. Line numbers are derived from
// byte offsets, never from tree-sitter rows, so length-preserving rewrites that change
// line breaks (grammars.Spec.Rewrite) are safe.

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	sitter "github.com/smacker/go-tree-sitter"

	"github.com/repoctx/repoctx/grammars"
)

// Options configures both strategies. The zero value of a field means its default.
type Options struct {
	// MaxChars is the size cap of a chunk in non-white-space runes (the cAST paper's
	// measure). Default DefaultMaxChars.
	MaxChars int
	// WindowLines and WindowOverlap are the size and overlap, in lines, of the windows
	// of the Fixed strategy and of structural fallback windows. Defaults 20 and 5
	// (structural fallback) or 20 and 10 (Fixed, RepoCoder's setting).
	WindowLines, WindowOverlap int
	// ParseCPULimit bounds the CPU time of its thread one tree-sitter parse may use
	// (not wall-clock time: the chunks of a file must not depend on the machine's
	// load); a file whose parse runs over it is windowed, its chunks flagged
	// LimitParseCPU. A safety net against parser hangs, far above what real files
	// need. Default grammars.DefaultParseCPULimit. It is no part of [Options.Key].
	ParseCPULimit time.Duration
	// NoMerge turns the merging of small adjacent siblings off (see merge): every
	// definition, property and run of glue stays a chunk of its own. An ablation
	// switch for measuring what merging brings; off by default. Key names it
	// ("/nomerge") only when set, so default keys are unchanged.
	NoMerge bool
	// NoHeader leaves the enclosing definitions' signatures out of the windows of the
	// Aligned strategy (their Header); the other strategies ignore it.
	NoHeader bool
}

// DefaultMaxChars is the default chunk size cap in non-white-space runes. At about
// 3 such runes per model token it keeps a chunk near 250-300 tokens, under
// all-MiniLM-L6-v2's 256 word-piece limit for most code and near the 512-character
// chunks of peers (Tabby) measured with white space.
const DefaultMaxChars = 800

func (o Options) withDefaults(fixed bool) Options {
	if o.MaxChars <= 0 {
		o.MaxChars = DefaultMaxChars
	}
	if o.WindowLines <= 0 {
		o.WindowLines = 20
		if o.WindowOverlap <= 0 {
			o.WindowOverlap = 5
			if fixed {
				o.WindowOverlap = 10
			}
		}
	}
	if o.WindowOverlap < 0 || o.WindowOverlap >= o.WindowLines {
		o.WindowOverlap = o.WindowLines / 4
	}
	if o.ParseCPULimit <= 0 {
		o.ParseCPULimit = grammars.DefaultParseCPULimit
	}
	return o
}

// DefaultOptions returns the options a zero Options means for strategy s (the
// window overlap differs: 5 lines for structural fallback windows, 10 for fixed and
// aligned windows).
func DefaultOptions(s Strategy) Options { return Options{}.withDefaults(s.windowed()) }

// Revision names the chunking algorithm's behaviour across languages; bump it with
// any change that alters chunks for unchanged options and grammar specs (a grammar's
// own changes bump its Spec.Version). It is part of [Options.CacheKey], so cached
// chunks made by an older revision are made again, never reused.
const Revision = "r14"

// Key returns a string that changes whenever an option that changes the output of
// strategy s does, e.g. "structural/c800/w20/o5", or "aligned/c800/w20/o10/nh" for
// aligned windows without headers; it names a configuration (compare's tables).
// Cache keys use [Options.CacheKey].
func (o Options) Key(s Strategy) string {
	if s == "" {
		s = StrategyStructural
	}
	o = o.withDefaults(s.windowed())
	k := fmt.Sprintf("%s/c%d/w%d/o%d", s, o.MaxChars, o.WindowLines, o.WindowOverlap)
	if o.NoMerge && s == StrategyStructural {
		k += "/nomerge"
	}
	if s == StrategyAligned && o.NoHeader {
		k += "/nh"
	}
	return k
}

// CacheKey is [Options.Key] with the [Revision]: "structural/c800/w20/o5/r3". It
// changes whenever the chunks of strategy s may, for the keys of cached chunks and
// of the indexes built from them.
func (o Options) CacheKey(s Strategy) string { return o.Key(s) + "/" + Revision }

// Structural is the tree-sitter chunker. It holds one parser per language and is not
// safe for concurrent use: give each goroutine its own, and Close it when done.
type Structural struct {
	opts    Options
	parsers *grammars.Parsers
}

// NewStructural returns a structural chunker with the given options.
func NewStructural(opts Options) *Structural {
	opts = opts.withDefaults(false)
	return &Structural{opts: opts, parsers: grammars.NewParsers(opts.ParseCPULimit)}
}

// Close frees the parsers. The chunker must not be used afterwards.
func (s *Structural) Close() {
	s.parsers.Close()
}

// Chunk implements Chunker. Files in a language without a grammar, and files whose
// parse fails or runs over its CPU time limit, are cut into line windows flagged
// Fallback (the last two also with their Limit, see [Chunk.Limit]); a region whose
// brackets nest deeper than MaxNesting is windows flagged LimitNesting, the rest of
// its file chunked along its syntax.
func (s *Structural) Chunk(f *File) ([]Chunk, error) {
	return s.ChunkTree(f, nil)
}

// ChunkTree is Chunk that also hands the file's syntax tree to visit (when not nil)
// before chunking, so that a caller needing the same parse (e.g. symbol extraction)
// does not parse the file again. visit gets the root node and the text the tree was
// parsed from (the language's Rewrite of f.Text, same length, with the inside of
// regions nested deeper than MaxNesting blanked, see [flattenDeep]); it is not
// called when the file is windowed without a parse (unknown language, parse failure
// or CPU limit), and may be called for a file windowed when a later parse of its
// fragments runs over the limit. The tree is closed when ChunkTree returns: visit
// must not keep nodes.
func (s *Structural) ChunkTree(f *File, visit func(root *sitter.Node, parsed []byte)) ([]Chunk, error) {
	li := newLineIndex(f.Text)
	if li.size(0, li.lines()) == 0 {
		return nil, nil
	}
	spec := grammars.Lookup(f.Lang)
	if spec == nil {
		return s.windowFile(f, li), nil
	}
	text, deep := flattenDeep(f.Text)
	tree, parsed, err := s.parsers.Parse(spec, text)
	if err != nil {
		return s.limitedFile(f, li, parseLimit(err)), nil
	}
	defer tree.Close()
	b := &builder{opts: s.opts, spec: spec, li: li, src: f.Text, parsed: parsed}
	root := tree.RootNode()
	b.root = root
	if visit != nil {
		visit(root, parsed)
	}
	var its []item
	limit := LimitNone // of a parse of fragments (recoverFile)
	if root.HasError() {
		b.collectErrors(root)
		if spec.Recover != nil {
			parse := func(text []byte, ranges []sitter.Range) (*sitter.Tree, error) {
				t, err := s.parsers.ParseRanges(spec, text, ranges)
				if errors.Is(err, grammars.ErrCPULimit) {
					limit = LimitParseCPU
				}
				return t, err
			}
			if rits, trees, errs, ok := b.recoverFile(parse); ok {
				defer func() {
					for _, t := range trees {
						t.Close()
					}
				}()
				its = rits
				if len(errs) > 0 { // else keep the whole file's errors: the fragments hide them
					b.errs = errs
				}
			}
		}
	}
	if limit != LimitNone {
		return s.limitedFile(f, li, limit), nil
	}
	if its == nil {
		// A root that is itself an ERROR (the grammar's recovery gave up on the
		// whole file) vouches for none of its text: its glue is fallback.
		its = b.items(root, root.IsError())
	}
	b.level(its, 0, li.lines(), nil, nil, false)
	cs := b.emit(f)
	markDeep(cs, deep)
	return cs, nil
}

// limitedFile is windowFile for a file that hit limit: its windows carry the limit,
// and those of a failed parse are flagged ParseError, so that stats count the file.
func (s *Structural) limitedFile(f *File, li *lineIndex, limit Limit) []Chunk {
	cs := s.windowFile(f, li)
	for i := range cs {
		cs[i].Limit = limit
		cs[i].ParseError = limit != LimitNesting
	}
	return cs
}

// MaxNesting is the deepest bracket nesting, in brackets ("(", "[" and "{" not yet
// closed, counted on the raw text, strings and comments included), of a region the
// structural chunker parses; the inside of a deeper region is blanked for the parser
// (see flattenDeep) and the region windowed. It bounds the depth of the trees the
// chunker walks, and spares the parse of regions whose structure would be windows of
// a few long lines anyway: tree-sitter's error recovery on the input "fun a() {" *
// 20000 (180 KB) costs 2-4 s for Python, Java, JavaScript, Go, Rust and TypeScript.
// Real code, generated tables included, nests tens deep. It is a defence for one
// shape only: a file dense with syntax errors at any depth costs tree-sitter a
// fraction of a second (200 KB of "fun a() {" 30 deep: 0.2 s of CPU by
// /usr/bin/time of `repoctx chunk`), bounded by ParseCPULimit alone.
const MaxNesting = 1000

// deepKeep is the bracket depth flattenDeep keeps of a region nested deeper than
// MaxNesting: the brackets of its first deepKeep levels stay for the parser (the
// statement or definition holding the region parses, with its name and header),
// what they enclose deeper is blanked.
const deepKeep = 64

// flattenDeep returns text with the inside of every region whose brackets nest deeper
// than MaxNesting blanked (each byte but line breaks made a space), and the byte
// ranges blanked; text itself and nil when no region is that deep. A region is the
// inside of the bracket opened at depth deepKeep on the way to the too-deep one, up to
// its matching bracket (kinds are not matched, as in tooDeep), or to the end of the
// text when it does not close. The brackets around it stay, so what holds it parses
// as a shallow expression (`x = [[[  ...  ]]]` nested deepKeep deep) and the rest of
// the file as usual. The work is linear in the text: one pass, a stack of deepKeep
// offsets.
func flattenDeep(text []byte) ([]byte, [][2]int) {
	if !TooDeep(text) {
		return text, nil
	}
	out := append([]byte(nil), text...)
	var regions [][2]int
	d, keep := 0, -1 // depth; the offset of the bracket opened at depth deepKeep
	for i := 0; i < len(out); i++ {
		dd := bracketStep[out[i]]
		if dd == 0 {
			continue
		}
		if d += int(dd); d < 0 {
			d = 0
		}
		if d == deepKeep && dd > 0 {
			keep = i
		}
		if d <= MaxNesting {
			continue
		}
		// Too deep: blank from after the bracket at depth deepKeep to its close.
		end := len(out)
		for j := i + 1; j < len(out); j++ {
			if d += int(bracketStep[out[j]]); d < deepKeep {
				end = j
				break
			}
		}
		for k := keep + 1; k < end; k++ {
			if out[k] != '\n' {
				out[k] = ' '
			}
		}
		regions = append(regions, [2]int{keep + 1, end})
		d, i = deepKeep-1, end
	}
	return out, regions
}

// markDeep flags the chunks that overlap a region flattenDeep blanked (byte ranges
// deep) as windows made under LimitNesting.
func markDeep(cs []Chunk, deep [][2]int) {
	for i := range cs {
		for _, r := range deep {
			if cs[i].StartByte < r[1] && cs[i].EndByte > r[0] {
				cs[i].Limit, cs[i].Fallback = LimitNesting, true
				if cs[i].Kind == KindCode {
					cs[i].Kind = KindWindow
				}
				break
			}
		}
	}
}

// TooDeep reports whether text's brackets nest deeper than MaxNesting: the texts the
// structural chunker parses with a region blanked (see MaxNesting), so that the
// symbols taken from that parse are not those of text. A closing bracket never takes
// the depth below 0, and the three kinds are not matched against each other: the
// count is an upper bound of the syntactic nesting, cheap and independent of the
// language (brackets in comments and strings count).
func TooDeep[T ~string | ~[]byte](text T) bool {
	d := 0
	for i := 0; i < len(text); i++ {
		if dd := bracketStep[text[i]]; dd != 0 { // a table lookup: most bytes are no bracket
			if d += int(dd); d > MaxNesting {
				return true
			} else if d < 0 {
				d = 0
			}
		}
	}
	return false
}

// bracketStep is tooDeep's change of depth for each byte: +1 for an opening bracket,
// -1 for a closing one.
var bracketStep = [256]int8{'(': 1, '[': 1, '{': 1, ')': -1, ']': -1, '}': -1}

func (s *Structural) windowFile(f *File, li *lineIndex) []Chunk {
	b := &builder{opts: s.opts, li: li, src: f.Text}
	b.pieces = []*piece{{lo: 0, hi: li.lines(), kind: KindWindow, fallback: true}}
	return b.emit(f)
}

// item is one child node at a level, with its line range.
type item struct {
	node    *sitter.Node
	def     *sitter.Node // the definition node (inner node of a wrapper), or nil for glue
	kind    string       // grammars.Function/Class/Property for definitions
	first   int          // first line (0-based)
	last    int          // last line holding non-comment content
	inError bool         // found by descending into an ERROR node
	synth   *textDef     // a definition recovered from the text (node and def are nil)
}

// isDef reports whether the item is a definition (of the tree, or recovered).
func (it *item) isDef() bool { return it.def != nil || it.synth != nil }

// piece is a line range [lo, hi) on its way to becoming one or more chunks.
type piece struct {
	lo, hi     int
	kind       Kind
	name       string   // the name of the first definition it holds
	names      []string // the names of the definitions it holds when several, in file order
	header     []string // pieces of one level share this slice (merge compares it by identity)
	base       []string // header of the definition level it was cut at, without statement openings
	parent     *piece
	fallback   bool
	parseError bool
	mergeable  bool
	head       bool   // the signature piece of a split definition: takes members, never joins what precedes it
	defs       int    // definitions it holds as siblings (a head counts as one, its members not)
	small      bool   // it holds a function or class merged for being small (see merge)
	sig        string // the definition's own header, for its windows after the first (see emit)
	merged     *piece // set when this piece was merged into another
	firstChunk int    // ordinal of the first chunk emitted for it
}

func (p *piece) final() *piece {
	for p.merged != nil {
		p = p.merged
	}
	return p
}

type builder struct {
	opts   Options
	spec   *grammars.Spec
	li     *lineIndex
	src    []byte   // the file text
	parsed []byte   // the text given to the parser (spec.Rewrite of src)
	errs   [][2]int // line ranges [first, last] of ERROR/MISSING nodes
	pieces []*piece
	base   []string // the header of the definition level being cut (see add)
	// visited counts the nodes items looked at (children listed or examined), a
	// measure of its work that tests bound.
	visited int
	// leading caches leadingLine by line: 0 not computed yet, 1 yes, -1 no.
	leading []int8
	// inTextDefs is set while the definitions textDefs recovered are placed.
	inTextDefs bool
	// root is the file's syntax tree (for inLiteral), nil when none.
	root *sitter.Node
	// skipThrough is the last line of a definition appendItems took from the text
	// (see errorDefText): the items of its level up to that line are covered by it.
	// -1: none.
	skipThrough int
}

// add appends a finished piece, recording the header of the definition level it
// was cut at: merge joins pieces of one such level, across the ends of statements
// whose parts carry the statement's opening in their header.
func (b *builder) add(p *piece) {
	p.base = b.base
	b.pieces = append(b.pieces, p)
}

// collectErrors records the line ranges of ERROR and MISSING nodes, descending only
// into subtrees that contain errors.
func (b *builder) collectErrors(n *sitter.Node) {
	if n.IsError() || n.IsMissing() {
		b.errs = append(b.errs, [2]int{b.firstLine(n), b.endLine(n)})
		if n.IsMissing() {
			return
		}
	}
	found := false
	for _, c := range grammars.Children(n) {
		if c.HasError() || c.IsMissing() {
			b.collectErrors(c)
			found = true
		}
	}
	if !found && !n.IsError() && !n.IsMissing() {
		// tree-sitter marks some nodes as holding an error without an ERROR or
		// MISSING node below them (a zero-width leaf of its recovery): the node is
		// where the error is.
		b.errs = append(b.errs, [2]int{b.firstLine(n), b.endLine(n)})
	}
}

func (b *builder) inError(lo, hi int) bool {
	for _, e := range b.errs {
		if e[0] < hi && e[1] >= lo {
			return true
		}
	}
	return false
}

func (b *builder) firstLine(n *sitter.Node) int { return b.li.lineOf(grammars.StartByte(n)) }

// endLine returns the line of the node's last byte.
func (b *builder) endLine(n *sitter.Node) int {
	return b.endLineAt(grammars.StartByte(n), int(n.EndByte()))
}

// endLineAt returns the line of the last byte of a node spanning bytes [s, e).
//
// In a language whose nodes may end after the indentation of the next line
// (grammars.Spec.IndentEnds: tree-sitter-scala's indented blocks), that
// indentation does not count: a method's node reached into the line of the next
// method, which was lost inside it.
func (b *builder) endLineAt(s, e int) int {
	if b.spec != nil && b.spec.IndentEnds && e > s+1 && e <= len(b.src) && (b.src[e-1] == ' ' || b.src[e-1] == '\t') {
		k := e - 1
		for k > s && (b.src[k-1] == ' ' || b.src[k-1] == '\t') {
			k--
		}
		if k > s && b.src[k-1] == '\n' {
			e = k
		}
	}
	if e > s {
		e--
	}
	return b.li.lineOf(e)
}

// contentEndAt returns the last line of n, which spans bytes [s, e), that holds
// something other than trailing comments (grammars attach comments that precede the
// next definition to the node before it: fwcd/tree-sitter-kotlin puts a KDoc inside
// import_header).
//
// A node on one line needs no walk: whatever the walk finds lies on that line (most
// of them are comments, which the walk would descend into).
func (b *builder) contentEndAt(n *sitter.Node, s, e int) int {
	if last := b.endLineAt(s, e); last == b.li.lineOf(s) || b.noTrailingComment(s, e) {
		return last
	}
	for depth := 0; depth < 64 && n.ChildCount() <= maxWide; depth++ {
		// Direct child access: only the last one or two children are looked at, and one
		// ts_node_child call is cheaper than walking a cursor over all of them.
		cnt := int(n.ChildCount())
		if cnt == 0 {
			break
		}
		i := cnt - 1
		for i >= 0 && b.spec.Comments[b.spec.TypeOf(n.Child(i))] {
			i--
		}
		if i < 0 {
			return b.firstLine(n)
		}
		c := n.Child(i)
		if i < cnt-1 || (c.IsNamed() && c.ChildCount() > 0) {
			n = c
			continue
		}
		break
	}
	return b.endLine(n)
}

// noTrailingComment reports, from the text alone, that contentEndAt(n, s, e) is endLine(n)
// for the node n spanning bytes [s, e):
// n's last line up to its end holds none of the spec's CommentBytes, so no comment
// ends where n ends (a node ends where its last child ends, so a trailing comment at
// any depth would end there), and n's last byte is not a line break (so a zero-width
// node at the end of n, where contentEndAt's walk may stop, is on the same line). It
// looks at most 256 bytes back and answers false when unsure.
func (b *builder) noTrailingComment(s, e int) bool {
	cb := b.spec.CommentBytes
	if cb == "" || e <= s || e > len(b.parsed) || b.src[e-1] == '\n' {
		return false
	}
	for i := e - 1; ; i-- {
		if i < s || b.parsed[i] == '\n' {
			return true
		}
		if i < e-256 || strings.IndexByte(cb, b.parsed[i]) >= 0 {
			return false
		}
	}
}

// maxHeaderDepth is the most enclosing signatures a chunk's Header keeps (the
// innermost ones); deeper nesting is pathological and would make headers quadratic.
const maxHeaderDepth = 8

// maxWide is the most children a node may have for the chunker to descend into it
// (other than the root). Wider nodes are minified data or generated tables: their
// text is windowed instead, which keeps chunking linear and fast.
const maxWide = 4096

// items lists the named children of n as items, descending into ERROR nodes and into
// non-definition nodes that contain errors, so definitions inside them are found.
func (b *builder) items(n *sitter.Node, inErr bool) []item {
	saved := b.skipThrough
	b.skipThrough = -1
	out := b.appendItems(nil, n, inErr, 0)
	b.skipThrough = saved
	return out
}

// maxItemDepth is the most nested ERROR, error-holding or Flatten nodes items descends
// through; a node deeper than that is one item (windowed when over the cap). Real code
// stays far below it; deeper nesting is a syntax error repeated thousands of times
// (such as "fun a() {" * 20000), whose recovery tree nests that deep.
const maxItemDepth = 256

// appendItems appends the items of n (see items) to out and returns it. The items of
// the nodes it descends into are appended to the same slice, so that the work is
// linear in the number of nodes visited whatever their nesting (copying each nested
// level's items into its parent made deeply nested syntax errors quadratic). depth is
// the number of nodes descended through so far.
func (b *builder) appendItems(out []item, n *sitter.Node, inErr bool, depth int) []item {
	if n.ChildCount() > maxWide && n.Parent() != nil {
		return out // a huge flat literal or statement list: windows serve it as well
	}
	b.visited++
	base := len(out)                        // the items of n start here: out[:base] belong to enclosing levels
	kids, infos := grammars.ChildrenInfo(n) // what it reads of each child, without a cgo call each
	for i, c := range kids {
		ci := &infos[i]
		isErr := ci.IsError()
		if !isErr && !ci.Named {
			continue
		}
		b.visited++
		deeper := depth < maxItemDepth
		t := b.spec.TypeOfSymbol(c, ci.Symbol)
		if b.skipThrough >= 0 && b.li.lineOf(int(ci.Start)) <= b.skipThrough {
			// It starts inside a definition taken from the text (see errorDefText):
			// that holds it, or the part of it on the definition's lines when it
			// runs past them and is no definition; its children after those lines
			// are items (a definition line there, which the node's start would
			// otherwise hide, opens a definition).
			if b.endLineAt(int(ci.Start), int(ci.End)) <= b.skipThrough {
				continue
			}
			if !isErr && b.spec.Definitions[t] == "" && !b.spec.Wrappers[t] {
				if deeper && ci.ChildCount > 0 {
					out = b.appendItems(out, c, inErr, depth+1)
				}
				continue
			}
		}
		if deeper && len(b.spec.Flatten) > 0 && b.spec.Flatten[t] && ci.ChildCount > 0 {
			// A container such as #ifdef: its children are items of this level.
			k := len(out)
			if out = b.appendItems(out, c, inErr, depth+1); len(out) > k {
				continue
			}
		}
		def, kind := b.spec.DefinitionOfType(c, t)
		if deeper && (isErr || (ci.HasError && ci.ChildCount > 0 && def == nil && !b.spec.Bodies[t])) {
			k := len(out)
			if out = b.appendItems(out, c, true, depth+1); len(out) > k {
				continue
			}
		}
		it := item{node: c, first: b.li.lineOf(int(ci.Start)), inError: inErr || isErr, def: def, kind: kind}
		it.last = b.contentEndAt(c, int(ci.Start), int(ci.End))
		if it.last < it.first {
			it.last = it.first
		}
		if def == nil && b.skipThrough >= it.first {
			// Glue that runs past a definition taken from the text (an ERROR node
			// whose children are tokens): its part on the definition's lines is the
			// definition's; it starts at the next non-blank line.
			for it.first = b.skipThrough + 1; it.first < it.last && b.li.blank[it.first]; it.first++ {
			}
			if it.first > it.last {
				continue // only comments after the definition's lines
			}
		}
		if b.spec.ErrorDefsFromText && !b.inTextDefs && len(b.errs) > 0 && (len(out) == 0 || out[len(out)-1].last < it.first) {
			if defs, end := b.errorDefText(&it, def, inErr || isErr || ci.HasError); len(defs) > 0 {
				out = append(out, defs...)
				b.skipThrough = end
				continue
			}
		}
		if def != nil && (inErr || isErr || ci.HasError) && len(b.spec.SwallowLines) > 0 && !b.inTextDefs {
			if name := b.swallowName(it.first); inErr && name != "" && b.spec.DefName != nil && b.spec.DefName(def, b.src) != name {
				// The parser misread the opening (`const Page = () => {` inside an
				// unclosed literal as a method named const): the text decides.
				if rest := b.textDefs(it.first, it.last+1); len(rest) > 0 {
					out = append(out, rest...)
					continue
				}
			}
			if k := b.swallowed(it.first, it.last); k > 0 {
				rest := b.textDefs(k, it.last+1)
				for it.last = k - 1; it.last > it.first && b.li.blank[it.last]; it.last-- {
				}
				out = append(out, it)
				out = append(out, rest...)
				continue
			}
		}
		if k := len(out); k > base && out[k-1].def != nil && it.def == nil && b.spec.Trailers[t] {
			out[k-1].last = max(out[k-1].last, it.last) // a property's accessor beside it
			continue
		}
		out = append(out, it)
	}
	return out
}

// leadingLine reports whether line i is a comment or annotation line that belongs to
// a definition directly below it (grammars.Spec.LeadingLine).
func (b *builder) leadingLine(i int) bool {
	if b.spec.LeadingLine == nil || b.li.blank[i] {
		return false
	}
	if b.leading == nil {
		b.leading = make([]int8, len(b.li.blank))
	}
	switch b.leading[i] {
	case 1:
		return true
	case -1:
		return false
	}
	lead := b.spec.LeadingLine.Match(b.li.lineText(i))
	b.leading[i] = -1
	if lead {
		b.leading[i] = 1
	}
	return lead
}

// allLeading reports whether lines [lo, hi] are all leading lines.
func (b *builder) allLeading(lo, hi int) bool {
	for i := lo; i <= hi; i++ {
		if !b.leadingLine(i) {
			return false
		}
	}
	return true
}

// level cuts lines [lo, hi) holding its into pieces and appends the finished pieces
// to b.pieces. header is the enclosing signatures, parent the enclosing definition's
// first piece. splitAll cuts glue at every item, not only at definitions; with
// splitAll, level places nothing and returns false when it cannot cut [lo, hi) into
// two or more pieces, so the caller can descend further instead.
func (b *builder) level(its []item, lo, hi int, header []string, parent *piece, splitAll bool) bool {
	type cut struct {
		line int
		it   *item // definition starting here, or glue item when splitAll, or nil
	}
	cuts := make([]cut, 0, 2*len(its))
	prevEnd := lo - 1
	for k := range its {
		it := &its[k]
		if it.first < lo || it.first >= hi {
			if it.last > prevEnd && it.first < hi {
				prevEnd = min(it.last, hi-1)
			}
			continue
		}
		if it.isDef() || splitAll {
			start := it.first
			for start-1 > prevEnd && b.leadingLine(start-1) {
				start--
			}
			if start > prevEnd {
				cuts = append(cuts, cut{start, it})
			}
		}
		if it.last > prevEnd && (it.isDef() || !b.allLeading(it.first, it.last)) {
			prevEnd = min(it.last, hi-1)
		}
		if it.isDef() || splitAll {
			if e := it.last + 1; e < hi && e > lo {
				cuts = append(cuts, cut{e, nil})
			}
		}
	}
	// Turn cuts into pieces [cut_i, cut_{i+1}).
	type rawPiece struct {
		lo, hi int
		it     *item
	}
	raw := make([]rawPiece, 0, len(cuts)+1)
	pos := lo
	var cur *item
	for _, c := range cuts {
		if c.line < pos {
			continue
		}
		if c.line > pos {
			raw = append(raw, rawPiece{pos, c.line, cur})
		} else if len(raw) > 0 && raw[len(raw)-1].hi == pos && c.it == nil {
			continue
		}
		pos, cur = c.line, c.it
	}
	if pos < hi {
		raw = append(raw, rawPiece{pos, hi, cur})
	}
	// Blank-only pieces, and pieces holding no item (closing brackets), join the piece
	// before them; blank pieces at the start join the piece after them.
	rs := make([]rawPiece, 0, len(raw))
	for _, r := range raw {
		if b.li.blankRange(r.lo, r.hi) || (r.it == nil && !hasItemIn(its, r.lo, r.hi)) {
			if len(rs) > 0 {
				rs[len(rs)-1].hi = r.hi
				continue
			}
		}
		if len(rs) > 0 && b.li.blankRange(rs[len(rs)-1].lo, rs[len(rs)-1].hi) {
			r.lo = rs[len(rs)-1].lo
			rs = rs[:len(rs)-1]
		}
		rs = append(rs, r)
	}
	for i := 1; i < len(rs); i++ { // leading blank lines join the piece before
		for rs[i].lo < rs[i].hi && b.li.blank[rs[i].lo] {
			rs[i].lo++
			rs[i-1].hi++
		}
	}
	if splitAll && len(rs) < 2 {
		return false
	}
	start := len(b.pieces)
	for _, r := range rs {
		b.place(r.lo, r.hi, r.it, its, header, parent)
	}
	if parent != nil && start > 0 && b.pieces[start-1] == parent {
		start-- // a definition's signature piece may take the members that follow it
	}
	b.merge(start)
	return true
}

// hasItemIn reports whether some item starts in lines [lo, hi).
func hasItemIn(its []item, lo, hi int) bool {
	for k := range its {
		if its[k].first >= lo && its[k].first < hi {
			return true
		}
	}
	return false
}

// place turns one raw piece into finished pieces, splitting it when needed.
func (b *builder) place(lo, hi int, it *item, its []item, header []string, parent *piece) {
	size := b.li.size(lo, hi)
	perr := b.inError(lo, hi)
	if it != nil && it.isDef() {
		kind := Kind(it.kind)
		name := ""
		if it.synth != nil {
			name = it.synth.name
		} else if b.spec.DefName != nil {
			name = b.spec.DefName(it.def, b.src)
		}
		var members []item
		firstMember := 0
		if it.synth != nil {
			members, firstMember = b.firstMember(it.synth.members, it.first, hi)
		} else if size > b.opts.MaxChars || it.kind == grammars.Class { // only these may be split
			members, firstMember = b.members(it.def, it.first, hi)
		}
		// A class is split when it holds two definitions besides properties; one
		// taken from its text (which holds a parse error) already when it holds
		// one, so that the definition keeps its name and its class as header.
		split := func(lo, size int) bool {
			return len(members) > 0 && firstMember > lo && (size > b.opts.MaxChars ||
				(it.kind == grammars.Class && nestedDefinitions(members) >= minSplitDefs(it)))
		}
		// The comment run above the definition stays attached only while the
		// definition's first chunk (the whole definition, or its signature piece when
		// it is split) fits the cap; else it becomes a chunk of its own, so that it
		// neither pushes a definition that fits over the cap nor swallows the
		// signature. When that first chunk is windowed anyway, a comment run of at most
		// half a window (lines and size) rides in its first window.
		if size > b.opts.MaxChars && lo < it.first {
			if k := b.commentEnd(lo, it.first); k > lo {
				alone := b.li.size(k, hi)
				firstHi := hi // the end of the definition's first chunk
				if split(k, alone) {
					firstHi = firstMember
				}
				keep := b.li.size(lo, firstHi) <= b.opts.MaxChars
				if !keep && b.li.size(k, firstHi) > b.opts.MaxChars {
					keep = k-lo <= b.opts.WindowLines/2 && b.li.size(lo, k) <= b.opts.MaxChars/2
				}
				if !keep {
					b.addCommentRun(lo, k, header, parent)
					lo, size = k, alone
					perr = b.inError(lo, hi)
				}
			}
		}
		if !split(lo, size) {
			small := kind != KindProperty && size <= b.opts.MaxChars/smallDefDivisor
			p := &piece{lo: lo, hi: hi, kind: kind, name: name, header: header, parent: parent,
				parseError: perr, mergeable: kind == KindProperty || small, defs: 1, small: small}
			if size > b.opts.MaxChars {
				p.fallback = true
				if it.synth != nil {
					p.sig = it.synth.sig
				} else {
					p.sig = b.declHeader(it.def)
				}
			}
			b.add(p)
			return
		}
		var sig string
		if it.synth != nil {
			sig = it.synth.sig
		} else {
			sig = b.spec.Signature(it.def, b.src, b.parsed)
		}
		head := &piece{lo: lo, hi: firstMember, kind: kind, name: name, header: header, parent: parent,
			parseError: b.inError(lo, firstMember), mergeable: true, head: true, defs: 1, sig: sig}
		b.add(head)
		sub := appendHeader(header, sig)
		saved := b.base
		b.base = sub
		if !b.level(members, firstMember, hi, sub, head, it.kind != grammars.Class) {
			b.level(members, firstMember, hi, sub, head, false)
		}
		b.base = saved
		return
	}
	fallback := it != nil && it.inError
	if it == nil {
		for k := range its {
			if its[k].first >= lo && its[k].first < hi && its[k].inError {
				fallback = true
				break
			}
		}
	}
	if fallback && len(b.spec.DefLines) > 0 && !b.inTextDefs {
		// Text the parser could not place: the definitions its lines open keep
		// their names (flagged parse_error), the rest stays glue.
		if defs := b.textDefs(lo, hi); len(defs) > 0 {
			b.inTextDefs = true
			b.level(defs, lo, hi, header, parent, false)
			b.inTextDefs = false
			return
		}
	}
	if size <= b.opts.MaxChars {
		b.add(&piece{lo: lo, hi: hi, kind: KindCode, header: header, parent: parent,
			parseError: perr, fallback: fallback, mergeable: true})
		return
	}
	// Oversized glue: cut it at its items; when that gives a single piece, descend into
	// the biggest item's children (each step goes one level down the tree, so this ends;
	// at most maxItemDepth steps, past which the piece is windowed).
	var inside []item
	for k := range its {
		if its[k].first < hi && its[k].last >= lo {
			inside = append(inside, its[k])
		}
	}
	// The parts of the first item descended into (a statement: an assignment of a giant
	// literal, a long if block) carry its opening as a header ("HELP =", "if x:"), like
	// the members of a split definition carry its signature.
	sub, named := header, false
	for depth := 0; len(inside) > 0 && depth < maxItemDepth; depth++ {
		if b.level(inside, lo, hi, sub, parent, true) {
			return
		}
		big := -1
		for k := range inside {
			if inside[k].node != nil && inside[k].node.ChildCount() > 0 && (big < 0 || inside[k].last-inside[k].first > inside[big].last-inside[big].first) {
				big = k
			}
		}
		if big < 0 {
			if b.spec.Family == "c" && len(inside) == 1 && inside[0].node != nil && b.spec.Comments[b.spec.TypeOf(inside[0].node)] {
				// One comment over the cap (a license block): cut at its paragraphs
				// (see blockCommentLines), windowed only where one does not fit.
				b.addCommentRun(lo, hi, header, parent)
				return
			}
			break
		}
		if !named {
			if h := b.declHeader(inside[big].node); h != "" {
				sub, named = appendHeader(header, h), true
			}
		}
		inside = b.items(inside[big].node, inside[big].inError)
	}
	b.add(&piece{lo: lo, hi: hi, kind: KindCode, header: sub, parent: parent,
		parseError: perr, fallback: true})
}

// swallowed returns the first line after first, up to last, that opens a definition
// by the spec's SwallowLines (at column 0) when line first starts at column 0, or 0
// when there is none: a definition holding a parse error that the parser let run
// over the definitions after it ends before that line.
func (b *builder) swallowed(first, last int) int {
	if t := b.li.lineText(first); len(t) == 0 || t[0] == ' ' || t[0] == '\t' {
		return 0
	}
	for i := first + 1; i <= last; i++ {
		if b.swallowName(i) != "" {
			return i
		}
	}
	return 0
}

// swallowName returns the name that line i opens a definition of by the spec's
// SwallowLines (at column 0), or "".
func (b *builder) swallowName(i int) string {
	t := b.li.lineText(i)
	if len(t) == 0 || t[0] == ' ' || t[0] == '\t' || t[0] == '}' {
		return ""
	}
	for _, d := range b.spec.SwallowLines {
		if m := d.Re.FindSubmatch(t); m != nil && !b.spec.IsKeyword(string(m[1])) {
			return string(m[1])
		}
	}
	return ""
}

// textDefs returns the definitions that lines [lo, hi) open by the spec's DefLines
// (text the parser could not place), as recovered items: each runs from its line
// to the line of the brace closing the first `{` opened on it (or on the next
// line, Allman style), or to the line before the next definition line indented no
// deeper and the comment and attribute lines directly above it, whichever comes
// first (trailing blank lines left out); a definition holds the definitions inside
// it as members. A definition whose lines a definition node of the tree, free of
// parse errors, spans alike (see cleanDefAt) is that node's item instead. nil when
// no line opens a definition.
func (b *builder) textDefs(lo, hi int) []item {
	type hdr struct {
		line, indent, end int
		kind, name, sig   string
		node, def         *sitter.Node // the tree's definition that the text's agrees with, or nil
	}
	var hs []hdr
	for i := lo; i < hi; i++ {
		t := b.li.lineText(i)
		for _, d := range b.spec.DefLines {
			m := d.Re.FindSubmatch(t)
			if m == nil || b.spec.IsKeyword(string(m[1])) || b.notDefLine(t) || b.inLiteral(i) {
				continue
			}
			sig := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(string(t)), "{"))
			hs = append(hs, hdr{line: i, indent: len(t) - len(bytes.TrimLeft(t, " \t")), kind: d.Kind,
				name: string(m[1]), sig: grammars.TidySignature(sig)})
			break
		}
	}
	for k := range hs {
		end, next := hi-1, false
		for j := k + 1; j < len(hs); j++ {
			if hs[j].indent <= hs[k].indent {
				end, next = hs[j].line-1, true
				break
			}
		}
		if b.spec.BlocksByIndent {
			end = min(end, b.indentEnd(hs[k].line))
		} else if e := b.braceEnd(hs[k].line, end); e >= 0 {
			end, next = e, false
		}
		// Ended by the next definition line: the comments and attributes directly
		// above that line lead it.
		for next && end > hs[k].line && b.leadingLine(end) {
			end--
		}
		for end > hs[k].line && b.li.blank[end] {
			end--
		}
		hs[k].end = end
		if n, d, kind := b.cleanDefAt(hs[k].line); d != nil && (kind == grammars.Class) == (hs[k].kind == grammars.Class) {
			// It agrees when it ends where the text does, or before lines that
			// lead the next definition (its comments and attributes).
			if last := b.contentEndAt(n, grammars.StartByte(n), int(n.EndByte())); last <= end && (last == end || b.allLeadingOrBlank(last+1, end)) {
				hs[k].end, hs[k].kind, hs[k].node, hs[k].def = last, kind, n, d
			}
		}
	}
	var nest func(hs []hdr) []item
	nest = func(hs []hdr) []item {
		var out []item
		for k := 0; k < len(hs); {
			h := hs[k]
			j := k + 1
			for j < len(hs) && hs[j].line <= h.end {
				j++
			}
			it := item{node: h.node, def: h.def, first: h.line, last: h.end, kind: h.kind}
			if h.def == nil {
				it.inError, it.synth = true, &textDef{name: h.name, sig: h.sig}
				it.synth.members = nest(hs[k+1 : j])
			}
			out = append(out, it)
			k = j
		}
		return out
	}
	return nest(hs)
}

// allLeadingOrBlank reports whether lines [lo, hi] are all blank or leading lines.
func (b *builder) allLeadingOrBlank(lo, hi int) bool {
	for i := lo; i <= hi; i++ {
		if !b.li.blank[i] && !b.leadingLine(i) {
			return false
		}
	}
	return true
}

// cleanDefAt returns the tree's definition that starts on line i (its first line
// that is not a leading line: C#'s attributes and Java's annotations are inside the
// node) and holds no parse error, as an item's node (a wrapper or the definition),
// the definition and its kind; nil when there is none, or the spec does not take
// definitions a parse error misread from their text (ErrorDefsFromText). A
// definition taken from the text that the tree read right is the tree's, with its
// statements to split at.
func (b *builder) cleanDefAt(i int) (node, def *sitter.Node, kind string) {
	if b.root == nil || !b.spec.ErrorDefsFromText {
		return nil, nil, ""
	}
	t := b.li.lineText(i)
	p := sitter.Point{Row: uint32(i), Column: uint32(lineIndent(t))}
	n := b.root.NamedDescendantForPointRange(p, p)
	for depth := 0; n != nil && depth < 64; depth++ {
		if d, k := b.spec.DefinitionOfType(n, b.spec.TypeOf(n)); d != nil && d.Equal(n) {
			first, last := b.firstLine(d), b.endLine(d)
			for first < last && b.leadingLine(first) {
				first++
			}
			if first == i {
				if d.HasError() {
					return nil, nil, ""
				}
				if p := d.Parent(); p != nil && b.spec.Wrappers[b.spec.TypeOf(p)] {
					return p, d, k
				}
				return d, d, k
			}
			if first < i {
				return nil, nil, ""
			}
		}
		n = n.Parent()
	}
	return nil, nil, ""
}

// braceEnd returns the line, at most limit, of the brace that closes the first `{`
// on line first, or on the line that opens its block in Allman style (see
// allmanBrace), or -1 when neither opens one or it does not close by line limit.
// Quoted strings and line comments are skipped, roughly: a definition that ends
// later than its text says is cut at the next definition line instead.
func (b *builder) braceEnd(first, limit int) int {
	depth, opened := 0, false
	open := first // the line that must open the block
	if k := b.allmanBrace(first); k > 0 {
		open = k
	}
	for i := first; i <= limit; i++ {
		t := b.li.lineText(i)
		var q byte
		for j := 0; j < len(t); j++ {
			c := t[j]
			switch {
			case q != 0:
				if c == '\\' {
					j++
				} else if c == q {
					q = 0
				}
			case c == '\'' && b.spec.CharQuotes:
				j += charLiteralLen(t[j:]) // 0 for a lifetime or symbol: not a quote
			case c == '"' || c == '\'' || c == '`':
				q = c
			case c == '/' && j+1 < len(t) && t[j+1] == '/':
				j = len(t)
			case c == '{':
				depth, opened = depth+1, true
			case c == '}' && opened:
				if depth--; depth == 0 {
					return i
				}
			}
		}
		if !opened && i >= open {
			return -1
		}
	}
	return -1
}

// charLiteralLen returns the bytes after the opening quote of the character
// literal t starts with ('x', '\n', '\u{1F600}', a multi-byte character), or 0
// when t starts with no character literal (a lifetime 'a or a symbol 'sym).
func charLiteralLen(t []byte) int {
	if len(t) > 1 && t[1] == '\\' {
		for k := 3; k < len(t) && k < 16; k++ {
			if t[k] == '\'' {
				return k
			}
		}
		return 0
	}
	_, size := utf8.DecodeRune(t[1:])
	if size > 0 && 1+size < len(t) && t[1+size] == '\'' {
		return 1 + size
	}
	return 0
}

// addCommentRun adds the comment run of lines [lo, hi) above a definition as pieces
// of its own. A run over the size cap is cut at line breaks outside block comments
// (see blockCommentLines: each such break lies between two comment nodes, so the cut
// is a syntax boundary, like a cut between statements), packing whole lines
// greedily up to the cap; only a stretch with no such cut that is over the cap (a
// long block comment, one long line) is a Fallback piece, windowed.
func (b *builder) addCommentRun(lo, hi int, header []string, parent *piece) {
	add := func(lo, hi int) {
		b.add(&piece{lo: lo, hi: hi, kind: KindCode, header: header, parent: parent,
			parseError: b.inError(lo, hi), fallback: b.li.size(lo, hi) > b.opts.MaxChars})
	}
	if b.li.size(lo, hi) <= b.opts.MaxChars {
		add(lo, hi)
		return
	}
	inBlock := b.blockCommentLines(lo, hi)
	start, last := lo, -1 // the piece being packed; its last cut at which it fits
	for x := lo + 1; x <= hi; x++ {
		if x < hi && inBlock[x-lo] {
			continue // inside a block comment: no cut here
		}
		if b.li.size(start, x) <= b.opts.MaxChars {
			last = x
			continue
		}
		if last > start {
			add(start, last)
			start, last = last, -1
			if b.li.size(start, x) <= b.opts.MaxChars {
				last = x
				continue
			}
		}
		add(start, x) // no cut in [start, x) gives a piece that fits
		start, last = x, -1
	}
	if start < hi {
		add(start, hi)
	}
}

// blockCommentLines returns, for each line of [lo, hi) (a comment run that starts
// outside any comment), whether it starts inside a block comment ("/*" to "*/",
// not counting those in line comments: "//" to the end of the line, or "#" where
// the spec says every comment holds one, as Python's). A line break outside block
// comments ends a line comment or follows a block comment's end: a boundary
// between comment nodes.
//
// In the C family a line inside a block comment after a blank comment line ("" or
// "*" alone: a paragraph break of a license or a doc comment) starts a paragraph
// and may be cut at too: C files open with long license blocks that had no other
// cut.
func (b *builder) blockCommentLines(lo, hi int) []bool {
	out := make([]bool, hi-lo)
	hash := b.spec.CommentBytes == "#"
	paragraphs := b.spec.Family == "c"
	in := false
	for x := lo; x < hi; x++ {
		t := b.li.lineText(x)
		out[x-lo] = in && !(paragraphs && x > lo && blankCommentLine(b.li.lineText(x-1)) && !blankCommentLine(t))
		for i := 0; i < len(t); i++ {
			switch {
			case in:
				if t[i] == '*' && i+1 < len(t) && t[i+1] == '/' {
					in = false
					i++
				}
			case t[i] == '/' && i+1 < len(t) && t[i+1] == '/', hash && t[i] == '#':
				i = len(t)
			case t[i] == '/' && i+1 < len(t) && t[i+1] == '*':
				in = true
				i++
			}
		}
	}
	return out
}

// blankCommentLine reports whether t, a line inside a block comment, holds nothing
// but white space and at most one "*".
func blankCommentLine(t []byte) bool {
	t = bytes.TrimSpace(t)
	return len(t) == 0 || len(t) == 1 && t[0] == '*'
}

// appendHeader returns a new slice: header, keeping its innermost maxHeaderDepth-1
// entries, then h.
func appendHeader(header []string, h string) []string {
	if len(header) >= maxHeaderDepth {
		header = header[len(header)-maxHeaderDepth+1:]
	}
	return append(append(make([]string, 0, len(header)+1), header...), h)
}

// commentEnd returns the first line of the annotation lines directly above a
// definition starting on line first, below the comment lines of the piece [lo, first):
// lines [lo, commentEnd) are the comment run (and blank lines above it) that may be
// detached from the definition. It returns lo when there is no comment line to detach.
func (b *builder) commentEnd(lo, first int) int {
	k := first
	for k > lo && b.leadingLine(k-1) && !b.commentLine(k-1) {
		k--
	}
	for i := lo; i < k; i++ {
		if b.commentLine(i) {
			return k
		}
	}
	return lo
}

// commentLine reports whether line i is a leading line that is comment text
// (grammars.Spec.CommentLine; every leading line when the spec has no such rule).
func (b *builder) commentLine(i int) bool {
	if !b.leadingLine(i) {
		return false
	}
	return b.spec.CommentLine == nil || b.spec.CommentLine.Match(b.li.lineText(i))
}

// maxDeclHeader is the longest declaration header declHeader returns, in bytes.
const maxDeclHeader = 200

// declHeader returns the header naming the declaration or statement n for the chunks
// cut from inside it: the signature (grammars.Spec.Signature) of a definition with a
// body, else n's text before its largest child ("HELP =" of an assignment of a giant
// string, "val table =" of a Kotlin property, "if x:" of an if statement), looking
// through nodes that only wrap one child of the same span (Python's
// expression_statement). It returns "" when that text is empty, spans several lines
// (n is a block of statements) or is longer than maxDeclHeader bytes.
func (b *builder) declHeader(n *sitter.Node) string {
	if d, _ := b.spec.Definition(n); d != nil && b.spec.Body(d) != nil {
		return b.spec.Signature(d, b.src, b.parsed)
	}
	s, found := grammars.StartByte(n), ""
	for depth := 0; depth < 8 && n.ChildCount() <= maxWide; depth++ {
		if t := b.spec.TypeOf(n); b.spec.Comments[t] || b.spec.Strings[t] {
			return found // a header never comes from inside a comment or string ("/*!")
		}
		var big *sitter.Node
		for _, c := range grammars.Children(n) {
			if big == nil || c.EndByte()-c.StartByte() > big.EndByte()-big.StartByte() {
				big = c
			}
		}
		if big == nil {
			return found
		}
		e := grammars.StartByte(big)
		if e > s {
			text := bytes.TrimSpace(b.src[s:e])
			if len(text) == 0 || len(text) > maxDeclHeader || bytes.IndexByte(text, '\n') >= 0 {
				return found
			}
			found = grammars.TidySignature(string(text))
			if big.EndByte() != n.EndByte() || !keywordsBefore(n, big) || big.ChildByFieldName("name") == nil {
				return found
			}
			// Only keywords so far ("var" of Go's var_declaration): the name
			// is inside big (Go's var_spec), which declares it.
		} else if big.EndByte() != n.EndByte() {
			return found // the largest child starts n but does not span it: n is a list
		}
		n = big
	}
	return found
}

// keywordsBefore reports whether every child of n before big is an anonymous node
// (a keyword or punctuation, not a name).
func keywordsBefore(n, big *sitter.Node) bool {
	for _, c := range grammars.Children(n) {
		if c.Equal(big) {
			return true
		}
		if c.IsNamed() || c.IsError() {
			return false
		}
	}
	return true
}

// nestedDefinitions counts the function and class definitions among its. A class
// with two or more is split into its members even when it fits the cap, so that each
// method is its own chunk; a smaller class stays whole.
func nestedDefinitions(its []item) int {
	n := 0
	for _, it := range its {
		if it.isDef() && it.kind != grammars.Property {
			n++
		}
	}
	return n
}

// minSplitDefs returns the number of definitions besides properties a class item
// must hold to be split at its members when it fits the size cap: 2, or 1 for a
// class taken from its text.
func minSplitDefs(it *item) int {
	if it.synth != nil {
		return 1
	}
	return 2
}

// members returns the items of def's body and the first line a member starts on, or
// nil when def has no body with members on lines after its own first line.
func (b *builder) members(def *sitter.Node, lo, hi int) ([]item, int) {
	body := b.spec.Body(def)
	for depth := 0; body != nil && depth < 8; depth++ {
		its := b.items(body, false)
		var named []item
		for _, it := range its {
			if it.first >= lo && it.first < hi {
				named = append(named, it)
			}
		}
		if len(named) == 1 && named[0].node != nil && b.spec.Bodies[b.spec.TypeOf(named[0].node)] {
			body = named[0].node
			continue
		}
		return b.firstMember(named, lo, hi)
	}
	return nil, 0
}

// firstMember returns the members among its that start in lines [lo, hi) and the
// first line a member starts on after lo (comment lines directly above it
// included), or nil when none starts after lo.
func (b *builder) firstMember(its []item, lo, hi int) ([]item, int) {
	var named []item
	for _, it := range its {
		if it.first >= lo && it.first < hi {
			named = append(named, it)
		}
	}
	first := -1
	for _, it := range named {
		if it.first > lo {
			first = it.first
			break
		}
	}
	if first < 0 {
		return nil, 0
	}
	// Comment lines directly above the first member belong to it.
	for first-1 > lo && b.leadingLine(first-1) {
		first--
	}
	return named, first
}

// smallDefDivisor sets which functions and classes merge may join with their
// siblings: those of at most MaxChars/smallDefDivisor non-white-space runes (40 at
// the default cap, about a dozen model tokens: one-line functions, two-line
// accessors), into pieces of at most MaxChars/smallMergeDivisor runes (200: about ten
// one-line functions). Properties and glue merge up to the cap, as cAST merges every
// sibling. Merging every sibling up to the cap nearly halves the chunk count on
// repoctx's dev sets and does not help retrieval (a file's small methods become one
// chunk, each losing its class header; a merged chunk of 800 runes no longer fits a
// tight context budget where the one definition needed would), so only definitions
// too small to be a useful chunk alone are merged, into chunks still small.
const (
	smallDefDivisor   = 20
	smallMergeDivisor = 4
)

// merge greedily merges adjacent mergeable siblings from b.pieces[start:] (pieces of
// one definition level: same base header; a piece that reaches past the end of an
// oversized statement loses that statement's opening from its header), or a signature
// piece and the glue and property members after it (never its function or class
// members, which keep the definition's header), while the merged size stays within the
// cap, or within a fourth of it for pieces holding small functions or classes (cAST's
// merge, Zhang et al. 2025 §3: adjacent siblings, by non-white-space size; see
// smallDefDivisor; a small definition joins only other small ones and glue, see
// smallFits). Pieces merge only when both or neither have parse errors, so that only
// the declarations that fail are flagged. A merged piece holding one
// definition has its kind and name; one holding several has the first one's name,
// all their names in names, and their kind when they share it, else KindCode; a signature piece that takes
// its members stays that definition.
func (b *builder) merge(start int) {
	if b.opts.NoMerge {
		return
	}
	w := start // in-place compaction: b.pieces[start:w] are the kept pieces
	for _, p := range b.pieces[start:] {
		if w > start {
			q := b.pieces[w-1]
			member := p.parent == q
			if q.mergeable && p.mergeable && !p.head && q.hi == p.lo && !q.fallback && !p.fallback &&
				(member || sameHeader(q.base, p.base)) && (!member || p.defs == 0 || p.kind == KindProperty) &&
				q.parseError == p.parseError && smallFits(q, p) &&
				b.li.size(q.lo, p.hi) <= b.mergeCap(q.small || p.small) {
				if !member && !sameHeader(q.header, p.header) {
					q.header = q.base // the merged piece reaches past a statement: no longer inside it
				}
				q.hi = p.hi
				q.small = q.small || p.small
				switch {
				case member || p.defs == 0:
				case q.defs == 0:
					q.kind, q.name, q.names, q.defs = p.kind, p.name, p.names, p.defs
				default:
					if q.kind != p.kind {
						q.kind = KindCode
					}
					q.name, q.names = joinNames(q, p)
					q.defs += p.defs
				}
				p.merged = q
				continue
			}
		}
		b.pieces[w] = p
		w++
	}
	clear(b.pieces[w:])
	b.pieces = b.pieces[:w]
}

// smallFits reports whether q and p may merge as far as small definitions go: a small
// function or class joins other small ones and glue (defs == 0), not a property or a
// definition of normal size, which stay chunks of their own.
func smallFits(q, p *piece) bool {
	ok := func(a, b *piece) bool { return !a.small || b.small || b.defs == 0 }
	return ok(q, p) && ok(p, q)
}

// mergeCap returns the largest size, in non-white-space runes, of a merged piece:
// the cap, or MaxChars/smallMergeDivisor when it holds a function or class merged for
// being small.
func (b *builder) mergeCap(small bool) int {
	if small {
		return b.opts.MaxChars / smallMergeDivisor
	}
	return b.opts.MaxChars
}

// sameHeader reports whether two header slices are the same one: the pieces of one
// level share their header slice, and those of one definition level their base.
func sameHeader(a, b []string) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// joinNames returns the name and name list of q and p merged, q first: the first
// non-empty name, and every non-empty name in order (nil when fewer than two).
func joinNames(q, p *piece) (string, []string) {
	all := make([]string, 0, max(len(q.names), 1)+max(len(p.names), 1))
	for _, x := range []*piece{q, p} {
		switch {
		case len(x.names) > 0:
			all = append(all, x.names...)
		case x.name != "":
			all = append(all, x.name)
		}
	}
	switch len(all) {
	case 0:
		return "", nil
	case 1:
		return all[0], nil
	}
	return all[0], all
}

// emit turns the pieces into chunks, windowing fallback pieces over the cap.
func (b *builder) emit(f *File) []Chunk {
	out := make([]Chunk, 0, len(b.pieces))
	li := b.li
	text := string(li.text) // one copy; chunk texts are substrings of it
	add := func(p *piece, s span, kind Kind, fallback bool, header []string, inside bool) {
		c := Chunk{
			Path: f.Path, Lang: f.Lang, Ordinal: len(out), Kind: kind, Name: p.name, Names: p.names,
			StartLine: s.firstLine + 1, EndLine: s.lastLine + 1, StartByte: s.start, EndByte: s.end,
			Header: header, Fallback: fallback, ParseError: p.parseError,
			Text: text[s.start:s.end],
		}
		c.ID = ChunkID(f.Path, c.Ordinal)
		if inside {
			// A later window of a definition: its first window starts the definition.
			c.Parent = ChunkID(f.Path, p.firstChunk)
		} else {
			pp := p.parent
			for pp != nil && pp.final() == p {
				pp = pp.parent
			}
			if pp != nil {
				c.Parent = ChunkID(f.Path, pp.final().firstChunk)
			}
		}
		out = append(out, c)
	}
	for _, p := range b.pieces {
		p.firstChunk = len(out)
		if li.size(p.lo, p.hi) <= b.opts.MaxChars {
			add(p, span{li.starts[p.lo], li.starts[p.hi], p.lo, p.hi - 1}, p.kind, p.fallback, p.header, false)
			continue
		}
		kind := p.kind
		if kind == KindCode || kind == "" {
			kind = KindWindow
		}
		// The windows of a definition after the first (which holds the signature) carry
		// the definition's signature, like the members of a split definition.
		var inner []string
		if p.sig != "" {
			inner = appendHeader(p.header, p.sig)
		}
		for i, s := range windows(li, p.lo, p.hi, b.opts.WindowLines, b.opts.WindowOverlap, b.opts.MaxChars) {
			if i == 0 || inner == nil {
				add(p, s, kind, true, p.header, false)
			} else {
				add(p, s, kind, true, inner, true)
			}
		}
	}
	link(out)
	return out
}

package chunker

import "fmt"

// Fixed cuts files into windows of Options.WindowLines lines overlapping by
// Options.WindowOverlap lines (default 20/10, RepoCoder's setting, Zhang et al. 2023
// §3.2; the seed submission used 8/2), shrinking a window that would exceed
// Options.MaxChars non-white-space runes and cutting a single longer line into rune
// windows. It ignores syntax; it is safe for concurrent use.
type Fixed struct{ opts Options }

// NewFixed returns a fixed-window chunker.
func NewFixed(opts Options) *Fixed { return &Fixed{opts: opts.withDefaults(true)} }

// Chunk implements Chunker. All chunks have Kind KindWindow; Fallback is false.
func (x *Fixed) Chunk(f *File) ([]Chunk, error) {
	li := newLineIndex(f.Text)
	if li.size(0, li.lines()) == 0 {
		return nil, nil
	}
	out := make([]Chunk, 0, li.lines()/max(1, x.opts.WindowLines-x.opts.WindowOverlap)+1)
	text := string(f.Text) // one copy; the overlapping windows are substrings of it
	for _, s := range windows(li, 0, li.lines(), x.opts.WindowLines, x.opts.WindowOverlap, x.opts.MaxChars) {
		c := Chunk{Path: f.Path, Lang: f.Lang, Ordinal: len(out), Kind: KindWindow,
			StartLine: s.firstLine + 1, EndLine: s.lastLine + 1, StartByte: s.start, EndByte: s.end,
			Text: text[s.start:s.end]}
		c.ID = ChunkID(f.Path, c.Ordinal)
		out = append(out, c)
	}
	link(out)
	return out, nil
}

// Close does nothing: a fixed chunker holds no resources.
func (*Fixed) Close() {}

// link sets Prev and Next to the neighbours in file order.
func link(cs []Chunk) {
	for i := range cs {
		if i > 0 {
			cs[i].Prev = cs[i-1].ID
		}
		if i+1 < len(cs) {
			cs[i].Next = cs[i+1].ID
		}
	}
}

// Strategy names a chunking strategy.
type Strategy string

// The chunking strategies.
const (
	// StrategyStructural splits along tree-sitter definition boundaries ([Structural]).
	StrategyStructural Strategy = "structural"
	// StrategyFixed cuts overlapping windows of lines ([Fixed]).
	StrategyFixed Strategy = "fixed"
	// StrategyAligned cuts overlapping windows of lines with boundaries on the syntax
	// tree's statements and members, headed by their enclosing signatures ([Aligned]).
	StrategyAligned Strategy = "aligned"
)

// StrategyNames lists the strategies' names for help and error messages.
const StrategyNames = "structural, fixed or aligned"

// windowed reports whether the strategy's chunks are overlapping windows (fixed and
// aligned), whose default overlap is 10 lines instead of the 5 of structural
// fallback windows.
func (s Strategy) windowed() bool { return s == StrategyFixed || s == StrategyAligned }

// ParseStrategy returns the strategy named s (see [StrategyNames]), or an error
// naming s.
func ParseStrategy(s string) (Strategy, error) {
	switch Strategy(s) {
	case StrategyStructural, StrategyFixed, StrategyAligned:
		return Strategy(s), nil
	}
	return "", fmt.Errorf("chunker: unknown strategy %q (want %s)", s, StrategyNames)
}

// New returns the chunker of strategy s ("" means structural). It returns an error for
// an unknown strategy. A structural or aligned chunker holds parsers: Close it when done (see
// [Chunker]).
func New(s Strategy, opts Options) (Chunker, error) {
	switch s {
	case StrategyStructural, "":
		return NewStructural(opts), nil
	case StrategyFixed:
		return NewFixed(opts), nil
	case StrategyAligned:
		return NewAligned(opts), nil
	}
	return nil, fmt.Errorf("chunker: unknown strategy %q (want %s)", s, StrategyNames)
}

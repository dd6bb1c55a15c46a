package tokens

import (
	"strings"
	"unicode"

	"github.com/dlclark/regexp2/v2"
)

// A preTokenizer splits each piece of text into smaller pieces, appending them
// to out. Pieces are substrings of the input (no copies) unless the step adds
// text (ByteLevel's add_prefix_space). Empty pieces are dropped, as the Rust
// library's PreTokenizedString.split drops them.
type preTokenizer interface {
	split(s string, sc *scratch, out []string) []string
}

// behavior is a Split pre-tokenizer's SplitDelimiterBehavior: what becomes of
// the matches.
type behavior uint8

const (
	removed behavior = iota
	isolated
	mergedWithPrevious
	mergedWithNext
	contiguous
)

var behaviors = map[string]behavior{
	"Removed": removed, "Isolated": isolated, "MergedWithPrevious": mergedWithPrevious,
	"MergedWithNext": mergedWithNext, "Contiguous": contiguous,
}

// matcher finds the spans a Split pre-tokenizer splits on.
type matcher interface {
	matches(s string, out [][2]int) [][2]int
}

// splitPre is the Split pre-tokenizer: pattern, behavior and invert, as
// NormalizedString.split in the Rust library.
type splitPre struct {
	m        matcher
	behavior behavior
	invert   bool
}

func (p *splitPre) split(s string, sc *scratch, out []string) []string {
	sc.spans = p.m.matches(s, sc.spans[:0])
	return applyBehavior(s, sc.spans, p.behavior, p.invert, sc, out)
}

// applyBehavior splits s by the match spans (ascending, non-overlapping) under
// behavior b, as tokenizers' NormalizedString::split: the spans between matches
// are non-matches; invert swaps the two.
func applyBehavior(s string, spans [][2]int, b behavior, invert bool, sc *scratch, out []string) []string {
	// The alternating list of (span, isMatch) covering s.
	segs := sc.segs[:0]
	prev := 0
	for _, m := range spans {
		if prev != m[0] {
			segs = append(segs, segment{prev, m[0], invert})
		}
		segs = append(segs, segment{m[0], m[1], !invert})
		prev = m[1]
	}
	if prev != len(s) {
		segs = append(segs, segment{prev, len(s), invert})
	}
	sc.segs = segs
	// Translated from the folds of NormalizedString::split (tokenizers
	// src/tokenizer/normalizer.rs).
	acc := sc.pieces[:0]
	switch b {
	case isolated, removed:
		for _, g := range segs {
			if b == isolated || !g.match {
				acc = append(acc, [2]int{g.start, g.end})
			}
		}
	case contiguous:
		prevMatch := false
		for _, g := range segs {
			if g.match == prevMatch && len(acc) > 0 {
				acc[len(acc)-1][1] = g.end
			} else {
				acc = append(acc, [2]int{g.start, g.end})
			}
			prevMatch = g.match
		}
	case mergedWithPrevious:
		prevMatch := false
		for _, g := range segs {
			if g.match && !prevMatch && len(acc) > 0 {
				acc[len(acc)-1][1] = g.end
			} else {
				acc = append(acc, [2]int{g.start, g.end})
			}
			prevMatch = g.match
		}
	case mergedWithNext:
		prevMatch := false
		for i := len(segs) - 1; i >= 0; i-- {
			g := segs[i]
			if g.match && !prevMatch && len(acc) > 0 {
				acc[len(acc)-1][0] = g.start
			} else {
				acc = append(acc, [2]int{g.start, g.end})
			}
			prevMatch = g.match
		}
		for i, j := 0, len(acc)-1; i < j; i, j = i+1, j-1 {
			acc[i], acc[j] = acc[j], acc[i]
		}
	}
	sc.pieces = acc
	for _, p := range acc {
		if p[1] > p[0] {
			out = append(out, s[p[0]:p[1]])
		}
	}
	return out
}

// segment is a span of a string to split and whether it is a match.
type segment struct {
	start, end int
	match      bool
}

// regexMatcher finds matches with regexp2, for patterns the scanner does not know.
type regexMatcher struct{ re *regexp2.Regexp }

func (m regexMatcher) matches(s string, out [][2]int) [][2]int {
	idx, err := m.re.FindAllStringIndex(s, -1)
	if err != nil {
		// Only a match timeout or a stack limit returns an error, and both are off
		// (compileRegex): unreachable; the text is left unsplit.
		return out
	}
	for _, p := range idx {
		out = append(out, [2]int{p[0], p[1]})
	}
	return out
}

// compileRegex compiles a pattern of a tokenizer.json with regexp2's default
// (.NET) syntax, whose \s, \d, \p{..} and look-arounds are those of Oniguruma for
// these patterns, with no backtracking limit (a long run of spaces backtracks
// once per space in \s+(?!\S)).
func compileRegex(pattern string) (*regexp2.Regexp, error) {
	return regexp2.Compile(pattern, regexp2.OptionMaxBacktrackingStackSize(-1))
}

// literalMatcher finds the occurrences of a fixed string (a Split pattern
// {"String": ...}).
type literalMatcher string

func (m literalMatcher) matches(s string, out [][2]int) [][2]int {
	if m == "" {
		return out
	}
	for i := 0; ; {
		j := strings.Index(s[i:], string(m))
		if j < 0 {
			return out
		}
		out = append(out, [2]int{i + j, i + j + len(m)})
		i += j + len(m)
	}
}

// funcMatcher matches every single rune for which f is true (the Rust library's
// Pattern for Fn(char) -> bool).
type funcMatcher func(rune) bool

func (f funcMatcher) matches(s string, out [][2]int) [][2]int {
	for i, r := range s {
		if f(r) {
			out = append(out, [2]int{i, i + len(string(r))})
		}
	}
	return out
}

// byteLevelPre is the ByteLevel pre-tokenizer: add_prefix_space, then the GPT-2
// split when use_regex. The mapping of bytes to characters itself is left to
// the BPE model, which works on bytes (see bpe.byteLevel); so ByteLevel must be
// the last pre-tokenizer.
type byteLevelPre struct {
	addPrefixSpace bool
	split2         *splitPre // nil unless use_regex
}

func (p *byteLevelPre) split(s string, sc *scratch, out []string) []string {
	if p.addPrefixSpace && !strings.HasPrefix(s, " ") {
		s = " " + s
	}
	if p.split2 == nil {
		if s != "" {
			out = append(out, s)
		}
		return out
	}
	return p.split2.split(s, sc, out)
}

// sequencePre runs pre-tokenizers one after the other on all pieces.
type sequencePre []preTokenizer

func (q sequencePre) split(s string, sc *scratch, out []string) []string {
	cur := append(sc.seqBuf(), s)
	for _, p := range q {
		next := sc.seqBuf()
		for _, piece := range cur {
			next = p.split(piece, sc, next)
		}
		sc.putSeqBuf(cur)
		cur = next
	}
	out = append(out, cur...)
	sc.putSeqBuf(cur)
	return out
}

// isRustWhitespace is Rust's char::is_whitespace (White_Space), which
// unicode.IsSpace implements.
func isRustWhitespace(r rune) bool { return unicode.IsSpace(r) }

// isBertPunct is the BertPreTokenizer's punctuation: ASCII punctuation
// (!"#$%&'()*+,-./:;<=>?@[\]^_`{|}~) or a Unicode P* category.
func isBertPunct(r rune) bool {
	if r < 0x80 {
		return r > ' ' && r < 0x7f && !(r >= '0' && r <= '9') && !(r >= 'a' && r <= 'z') && !(r >= 'A' && r <= 'Z')
	}
	return unicode.IsPunct(r)
}

// bertPre is the BertPreTokenizer: split on white space (removed), then each
// punctuation character is a piece of its own.
type bertPre struct{}

func (bertPre) split(s string, sc *scratch, out []string) []string {
	for _, w := range strings.FieldsFunc(s, isRustWhitespace) {
		a := 0
		for i, r := range w {
			if isBertPunct(r) {
				if i > a {
					out = append(out, w[a:i])
				}
				n := i + len(string(r))
				out = append(out, w[i:n])
				a = n
			}
		}
		if a < len(w) {
			out = append(out, w[a:])
		}
	}
	return out
}

// whitespaceSplitPre is WhitespaceSplit: split on white space, removed.
type whitespaceSplitPre struct{}

func (whitespaceSplitPre) split(s string, sc *scratch, out []string) []string {
	return append(out, strings.FieldsFunc(s, isRustWhitespace)...)
}

// whitespacePre is Whitespace: the pieces are the matches of Rust regex
// `\w+|[^\w\s]+` (white space removed).
type whitespacePre struct{}

func (whitespacePre) split(s string, sc *scratch, out []string) []string {
	const none, word, other = 0, 1, 2
	start, kind := 0, none
	for i, r := range s {
		k := other
		if isRustWord(r) {
			k = word
		} else if unicode.IsSpace(r) {
			k = none
		}
		if k != kind {
			if kind != none {
				out = append(out, s[start:i])
			}
			start, kind = i, k
		}
	}
	if kind != none {
		out = append(out, s[start:])
	}
	return out
}

// isRustWord is \w of Rust's regex crate: Alphabetic, Mark, Decimal_Number,
// Connector_Punctuation or Join_Control.
func isRustWord(r rune) bool {
	if r < 0x80 {
		return r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
	}
	return unicode.IsLetter(r) || unicode.IsMark(r) || unicode.Is(unicode.Nd, r) || unicode.Is(unicode.Nl, r) ||
		unicode.Is(unicode.Pc, r) || unicode.Is(unicode.Other_Alphabetic, r) || r == 0x200C || r == 0x200D
}

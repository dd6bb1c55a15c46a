package eval

import (
	"sort"
	"strings"

	"github.com/repoctx/repoctx/complete"
)

// Identifiers returns the matches of the regular expression
// [A-Za-z_][A-Za-z0-9_]* in s, leftmost first, in order, with repeats. Only
// ASCII letters count; a match may start after a digit ("0x1F" yields "x1F").
func Identifiers(s string) []string {
	var out []string
	complete.EachToken(s, func(w string) {
		// Within a run of [A-Za-z0-9_], the match starts at the first non-digit.
		for len(w) > 0 && w[0] >= '0' && w[0] <= '9' {
			w = w[1:]
		}
		if w != "" {
			out = append(out, w)
		}
	})
	return out
}

// NewIdentifiers returns the identifiers the middle introduces: the distinct
// [Identifiers] of middle that are at least 2 bytes long, are not keywords
// (isKeyword may be nil: no keywords) and are not among the identifiers of
// prefix or suffix. The result is sorted.
func NewIdentifiers(middle, prefix, suffix string, isKeyword func(string) bool) []string {
	seen := map[string]bool{}
	for _, id := range Identifiers(prefix) {
		seen[id] = true
	}
	for _, id := range Identifiers(suffix) {
		seen[id] = true
	}
	var out []string
	for _, id := range Identifiers(middle) {
		if len(id) < 2 || seen[id] || (isKeyword != nil && isKeyword(id)) {
			continue
		}
		seen[id] = true
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// IDRecall returns the metric idrec for one datapoint: the fraction of
// [NewIdentifiers](middle, prefix, suffix, isKeyword) that occur among the
// [Identifiers] of context (whole, case-sensitive matches), and n, the number
// of those new identifiers. prefix and suffix are what the model is given
// (a prediction's overrides when it has them). When n is 0 the recall is
// undefined and returned as 0; callers leave such datapoints out of the mean.
func IDRecall(middle, prefix, suffix, context string, isKeyword func(string) bool) (recall float64, n int) {
	ids := NewIdentifiers(middle, prefix, suffix, isKeyword)
	if len(ids) == 0 {
		return 0, 0
	}
	return shareIn(ids, context), len(ids)
}

// shareIn returns the share of ids (not empty) that occur among the
// [Identifiers] of any of texts.
func shareIn(ids []string, texts ...string) float64 {
	in := map[string]bool{}
	for _, t := range texts {
		for _, id := range Identifiers(t) {
			in[id] = true
		}
	}
	found := 0
	for _, id := range ids {
		if in[id] {
			found++
		}
	}
	return float64(found) / float64(len(ids))
}

// MainLine returns the longest line of middle after stripping white space at
// both ends (lines split at "\n"; length in bytes; the first of equally long
// lines), stripped. It is "" for a middle without non-blank lines.
func MainLine(middle string) string {
	best := ""
	for _, l := range strings.Split(middle, "\n") {
		if l = strings.TrimSpace(l); len(l) > len(best) {
			best = l
		}
	}
	return best
}

// LineChrF returns the metric line_chrf for one datapoint: the highest
// [ChrF] of a line of context (as hypothesis) against [MainLine](middle) (as
// reference), both stripped. It bounds what copying one line of the context
// could score on the middle's main line. It is 0 for an empty context or a
// blank middle.
func LineChrF(middle, context string) float64 {
	scores := lineChrFs(middle, splitLines(context), nil)
	best := 0.0
	for _, s := range scores {
		best = max(best, s)
	}
	return best
}

// lineChrFs returns ChrF(line, MainLine(middle)) for each line (the lines may
// end in "\n"). cache, if not nil, maps a stripped line to its score for this
// middle and is filled as lines are scored.
func lineChrFs(middle string, lines []string, cache map[string]float64) []float64 {
	out := make([]float64, len(lines))
	main := MainLine(middle)
	if main == "" {
		return out
	}
	ref := newChrFRef(main)
	if cache == nil {
		cache = map[string]float64{}
	}
	for i, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		s, ok := cache[l]
		if !ok {
			s = ref.score(l)
			cache[l] = s
		}
		out[i] = s
	}
	return out
}

// Copy completer parameters: CopyQueryLines prefix lines are matched against
// windows of CopyWindowLines context lines (see complete.CopyLines).
const (
	CopyQueryLines  = complete.CopyQueryLines
	CopyWindowLines = complete.CopyWindowLines
)

// CopyPredict is a simple non-oracle completer that copies one line of the
// context: the non-blank line after the window of [CopyWindowLines] context
// lines that best matches (Jaccard of token sets) the last [CopyQueryLines]
// prefix lines, stripped; "" when no window shares a token with the query. It
// is complete.CopyPredict, which defines it exactly (it lives below assemble,
// whose built-in drafter uses it too).
func CopyPredict(prefix, context string) string { return complete.CopyPredict(prefix, context) }

// CopyChrF returns the metric copy_chrf for one datapoint: [ChrF] of
// [CopyPredict](prefix, context) against the first non-blank line of middle
// (stripped; "" when the middle is blank). prefix is what the model is given.
func CopyChrF(prefix, middle, context string) float64 {
	return ChrF(CopyPredict(prefix, context), firstLine(middle))
}

// firstLine returns the first non-blank line of s, stripped, or "".
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

// jaccard returns |a ∩ b| / |a ∪ b|, or 0 when both are empty.
func jaccard(a, b map[string]struct{}) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 0
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	inter := 0
	for w := range a {
		if _, ok := b[w]; ok {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

// splitLines cuts s after every "\n"; the last line has no "\n" when s does
// not end in one. An empty s has no lines. Concatenating the lines gives s.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// NovelRecall returns the metric novelrec for one datapoint: the share of the
// middle's novel identifiers ([NewIdentifiers] of middle against the
// datapoint's original prefix and suffix, origPrefix and origSuffix, as the
// datapoint file holds them) that occur among the [Identifiers] of kept, the
// context a prompt keeps (whole, case-sensitive matches); and n, the number of
// novel identifiers. Unlike [IDRecall], whose new identifiers are counted
// against the prefix and suffix a configuration gives the model, the
// denominator depends on the datapoint only, so configurations that trim the
// prefix differently are scored on the same identifiers. A novel identifier
// cannot be in a given prefix or suffix that is a part of the original one, so
// only kept is searched. When n is 0 the recall is undefined and returned as
// 0; callers leave such datapoints out of the mean.
func NovelRecall(middle, origPrefix, origSuffix, kept string, isKeyword func(string) bool) (recall float64, n int) {
	return IDRecall(middle, origPrefix, origSuffix, kept, isKeyword)
}

// AllRecall returns the metric allrec for one datapoint: the share of all the
// middle's identifiers ([NewIdentifiers] of middle alone: distinct, at least 2
// bytes, not keywords) that occur anywhere in the prompt, among the
// [Identifiers] of kept (the context the prompt keeps), prefix or suffix (the
// prefix and suffix the prompt holds: in a window setting those of
// [TrimPromptToWindow]); and n, the number of the middle's identifiers. When n
// is 0 the recall is undefined and returned as 0; callers leave such
// datapoints out of the mean.
func AllRecall(middle, prefix, suffix, kept string, isKeyword func(string) bool) (recall float64, n int) {
	ids := NewIdentifiers(middle, "", "", isKeyword)
	if len(ids) == 0 {
		return 0, 0
	}
	return shareIn(ids, kept, prefix, suffix), len(ids)
}

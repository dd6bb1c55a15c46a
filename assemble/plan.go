package assemble

import (
	"fmt"
	"strings"

	"github.com/repoctx/repoctx"
)

// Default planner rule; see Plan.
const (
	// DefaultPlanShare is the default Plan.Share of a language planShares does
	// not name: prefix and suffix together may take up to this fraction of the
	// usable window before they are trimmed.
	DefaultPlanShare = 0.5
	// DefaultPlanSuffixShare is the default Plan.SuffixShare.
	DefaultPlanSuffixShare = 0.25
	// minTailLines is the fewest lines of a part's tail worth keeping when the
	// token budget cuts into it.
	minTailLines = 3
)

// planShares are the Plan.Share defaults of the languages whose tuning cells chose
// another share than DefaultPlanShare (the evaluation corpus's tuning half,
// docs/results.md): Python completions scored higher with more of the window
// left to the context (0.3: idrec +0.02 on small, +0.09 on block middles at 8000
// tokens), Kotlin's with the prefix kept longer (0.5).
var planShares = map[string]float64{"python": 0.3}

// DefaultPlanShareFor returns the Plan.Share used for a completion file of the
// grammar lang (grammars.Spec.Name) when Plan.Share is 0: 0.3 for Python,
// DefaultPlanShare (0.5) for every other language.
func DefaultPlanShareFor(lang string) float64 {
	if s, ok := planShares[lang]; ok {
		return s
	}
	return DefaultPlanShare
}

// Plan configures the budget planner: how much of the prefix and suffix the
// model is given and how much context then fits one model window. The zero
// value (Window 0) turns the planner off.
//
// The competition's scorer keeps context lines from the end while
// MaxNewTokens + tokens(prefix) + tokens(suffix) + tokens(kept lines) <= window
// and never cuts prefix or suffix. With the planner on, when prefix and suffix
// together take more than Share of the usable window (Window - MaxNewTokens
// tokens), they are trimmed to that share: the suffix keeps its first lines
// (at most SuffixShare of the allowance, more if the prefix needs less), the
// prefix its last lines (the lines nearest the cursor), whole lines only; the
// cursor's own line is always kept. The context is then budgeted in tokens to
// the room left, counted line by line as the scorer does, best parts last;
// BudgetChars does not apply.
type Plan struct {
	// Window is the model window in tokens the context is planned for
	// (e.g. 8000); 0 turns the planner off.
	Window int
	// Tokens counts tokens; nil means repoctx.CharEstimate (characters / 4).
	Tokens repoctx.TokenCounter
	// Share is the fraction of the usable window (Window - MaxNewTokens
	// tokens) that prefix and suffix together may take before they are
	// trimmed to it; 0 means DefaultPlanShareFor the completion file's
	// language. A value >= 1 never trims: only the context is budgeted in
	// tokens.
	Share float64
	// SuffixShare is the fraction of the prefix+suffix allowance (in tokens)
	// the suffix may take when they are trimmed; 0 means
	// DefaultPlanSuffixShare.
	SuffixShare float64
	// ContextWindow, when larger than Window, is the largest model window in
	// tokens the context is budgeted for: prefix and suffix are still planned for
	// Window, but the context may fill ContextWindow - MaxNewTokens - their
	// tokens. A scorer that trims the context from the left, whole lines at a
	// time, for a smaller window (the competition scored one context with an 8K
	// and two 16K models, see ../shared/docs/field-notes.md) then keeps its most
	// relevant end, since parts are ordered least relevant first. 0 (or a value
	// <= Window) budgets the context for Window.
	ContextWindow int
}

// On reports whether the planner is on (Window > 0).
func (p Plan) On() bool { return p.Window > 0 }

// withDefaults fills in the defaults of p's zero fields for a completion file of
// the grammar lang ("" when it has none).
func (p Plan) withDefaults(lang string) Plan {
	if p.Tokens == nil {
		p.Tokens = repoctx.CharEstimate{}
	}
	if p.Share <= 0 {
		p.Share = DefaultPlanShareFor(lang)
	}
	if p.SuffixShare <= 0 {
		p.SuffixShare = DefaultPlanSuffixShare
	}
	return p
}

// Split is the planner's decision for one hole's prefix and suffix.
type Split struct {
	// Prefix and Suffix are what the model is given: the hole's own, or their
	// trimmed versions (a suffix of the prefix, a prefix of the suffix, both cut
	// at line ends).
	Prefix, Suffix string
	// PrefixCut is the byte offset in the hole's prefix where the given prefix
	// starts (0: untrimmed); SuffixCut is the byte length of the suffix given
	// (the whole suffix's length: untrimmed).
	PrefixCut, SuffixCut int
	// PrefixTrimmed and SuffixTrimmed report whether the planner cut them.
	PrefixTrimmed, SuffixTrimmed bool
	// Room is the number of tokens left for the context:
	// max(Window, ContextWindow) - repoctx.MaxNewTokens - tokens(Prefix) -
	// tokens(Suffix), at least 0.
	Room float64
}

// roomFor returns the context's tokens for prefix and suffix of tp and ts tokens
// (see Split.Room).
func (p Plan) roomFor(tp, ts float64) float64 {
	return max(0, float64(max(p.Window, p.ContextWindow)-repoctx.MaxNewTokens)-tp-ts)
}

// SplitHole decides how much of prefix and suffix the model is given under p
// (see Plan); p must be on. A Share of 0 is DefaultPlanShare here: Compose, which
// knows the completion file, passes the language's share (DefaultPlanShareFor).
// Token counts of prefix and suffix are of the whole text, as the scorer counts
// them.
func (p Plan) SplitHole(prefix, suffix string) Split {
	p = p.withDefaults("")
	tc := p.Tokens
	usable := float64(p.Window - repoctx.MaxNewTokens)
	tp, ts := tc.Count(prefix), tc.Count(suffix)
	s := Split{Prefix: prefix, Suffix: suffix, SuffixCut: len(suffix)}
	allow := p.Share * usable
	if p.Share < 1 && tp+ts > allow {
		sufAllow := min(ts, p.SuffixShare*allow)
		preAllow := allow - sufAllow
		if tp < preAllow { // the prefix needs less: the suffix may have the rest
			sufAllow = allow - tp
		}
		s.SuffixCut = headLines(suffix, sufAllow, tc)
		s.Suffix = suffix[:s.SuffixCut]
		s.SuffixTrimmed = s.SuffixCut < len(suffix)
		if tp > preAllow {
			preAllow = allow - tc.Count(s.Suffix)
			s.PrefixCut = tailLines(prefix, preAllow, tc)
			s.Prefix = prefix[s.PrefixCut:]
			s.PrefixTrimmed = s.PrefixCut > 0
		}
		tp, ts = tc.Count(s.Prefix), tc.Count(s.Suffix)
	}
	s.Room = p.roomFor(tp, ts)
	return s
}

// tailLines returns the byte offset where the longest run of whole lines at the
// end of prefix starts whose tokens (the run counted as one text) are at most
// budget. The unfinished last line (after the last "\n") is always kept.
func tailLines(prefix string, budget float64, tc repoctx.TokenCounter) int {
	cut := strings.LastIndexByte(prefix, '\n') + 1 // start of the unfinished line
	if cut == 0 {
		return 0
	}
	// Walk back line by line on per-line counts, then correct on the whole text
	// (a tokenizer's count of a text need not be the sum of its lines').
	used := tc.Count(prefix[cut:])
	for cut > 0 {
		prev := strings.LastIndexByte(prefix[:cut-1], '\n') + 1
		n := tc.Count(prefix[prev:cut])
		if used+n > budget {
			break
		}
		used += n
		cut = prev
	}
	last := strings.LastIndexByte(prefix, '\n') + 1
	for cut < last && tc.Count(prefix[cut:]) > budget {
		cut += strings.IndexByte(prefix[cut:], '\n') + 1
	}
	return cut
}

// headLines returns the byte length of the longest run of whole lines at the
// start of suffix whose tokens are at most budget. The rest of the cursor's
// line (up to and including the first "\n") is always kept.
func headLines(suffix string, budget float64, tc repoctx.TokenCounter) int {
	end := strings.IndexByte(suffix, '\n') + 1
	if end == 0 {
		return len(suffix)
	}
	used := tc.Count(suffix[:end])
	for end < len(suffix) {
		next := strings.IndexByte(suffix[end:], '\n')
		stop := len(suffix)
		if next >= 0 {
			stop = end + next + 1
		}
		n := tc.Count(suffix[end:stop])
		if used+n > budget {
			break
		}
		used += n
		end = stop
	}
	first := strings.IndexByte(suffix, '\n') + 1
	for end > first && tc.Count(suffix[:end]) > budget {
		end = strings.LastIndexByte(suffix[:end-1], '\n') + 1
		end = max(end, first)
	}
	return end
}

// lineCounter counts the tokens of rendered contexts line by line, as the
// scorer does, caching each line's count (not a [repoctx.CharEstimate]'s: counting
// a line's characters again is cheaper than looking it up).
type lineCounter struct {
	tc    repoctx.TokenCounter
	cache map[string]float64
}

// newLineCounter returns a lineCounter of tc.
func newLineCounter(tc repoctx.TokenCounter) *lineCounter {
	if _, ok := tc.(repoctx.CharEstimate); ok {
		return &lineCounter{tc: tc}
	}
	return &lineCounter{tc: tc, cache: map[string]float64{}}
}

func (lc *lineCounter) line(l string) float64 {
	if lc.cache == nil {
		return lc.tc.Count(l)
	}
	n, ok := lc.cache[l]
	if !ok {
		n = lc.tc.Count(l)
		lc.cache[l] = n
	}
	return n
}

// text returns the sum of the tokens of s's lines, each cut after its "\n".
func (lc *lineCounter) text(s string) float64 {
	total := 0.0
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			total += lc.line(s)
			break
		}
		total += lc.line(s[:i+1])
		s = s[i+1:]
	}
	return total
}

// fitTokens keeps the parts whose rendered context, counted line by line by tc as
// the scorer counts it, is at most room tokens, choosing from the most relevant
// (the last) to the least: a part that does not fit in what is left is skipped and
// the less relevant parts before it are still kept while they fit, so one large
// part does not empty the context. The kept parts stay in their order. Then, when
// at least minTailLines lines of the most relevant skipped part fit in what is
// left, that part's last lines are kept too, in its place and under their own
// header (the scorer would keep the same lines without the header). The most
// relevant part alone over the room is such a skipped part: its last lines then
// fill the room alone, as the less relevant parts would leave less of it.
func fitTokens(parts []repoctx.Part, room float64, tc repoctx.TokenCounter) []repoctx.Part {
	lc := newLineCounter(tc)
	// Make every part end at a line end so that parts' lines never merge with the
	// next header and costs add up.
	parts = append([]repoctx.Part(nil), parts...)
	for i := range parts {
		if t := parts[i].Text; t != "" && !strings.HasSuffix(t, "\n") {
			parts[i].Text = t + "\n"
		}
	}
	cost := make([]float64, len(parts))
	total := 0.0
	for i, p := range parts {
		cost[i] = lc.text(header(p)) + lc.text(p.Text)
		total += cost[i]
	}
	if total <= room {
		return parts
	}
	if n := len(parts); n > 0 && cost[n-1] > room {
		if p, ok := lc.tail(parts[n-1], room); ok {
			return []repoctx.Part{p}
		}
	}
	keep, left, skipped := mostRelevantFirst(cost, room)
	out := make([]repoctx.Part, 0, len(parts))
	for i, p := range parts {
		if keep[i] {
			out = append(out, p)
		} else if i == skipped {
			if t, ok := lc.tail(p, left); ok {
				out = append(out, t)
			}
		}
	}
	return out
}

// tail returns the last lines of p (whose text ends with a line end) that fit in
// room tokens with p's header, as a part marked "tail", and whether they are at
// least minTailLines lines and fewer than all of p's lines.
func (lc *lineCounter) tail(p repoctx.Part, room float64) (repoctx.Part, bool) {
	left := room - lc.text(header(p))
	lines := strings.SplitAfter(strings.TrimSuffix(p.Text, "\n"), "\n")
	if n := len(lines); n > 0 {
		lines[n-1] += "\n"
	}
	k := len(lines)
	for k > 0 && lc.line(lines[k-1]) <= left {
		left -= lc.line(lines[k-1])
		k--
	}
	kept := len(lines) - k
	if kept < minTailLines || kept == len(lines) {
		return repoctx.Part{}, false
	}
	p.StartLine += k
	p.Text = strings.Join(lines[k:], "")
	p.Why = append(append([]string(nil), p.Why...), "tail")
	return p, true
}

// header returns a part's rendered first line, "<|file_sep|>{path}\n".
func header(p repoctx.Part) string { return repoctx.FileSep + p.Path + "\n" }

// String describes the plan for reports, e.g. "off",
// "window 8000 tokens, share 0.5, suffix share 0.25" or, with Share 0,
// "window 8000 tokens, share by language (python 0.3, others 0.5), suffix share 0.25";
// a ContextWindow over Window adds ", context window 16000 tokens".
func (p Plan) String() string {
	if !p.On() {
		return "off"
	}
	d := p.withDefaults("")
	share := fmt.Sprintf("share %g", d.Share)
	if p.Share <= 0 {
		share = fmt.Sprintf("share by language (python %g, others %g)", DefaultPlanShareFor("python"), DefaultPlanShare)
	}
	out := fmt.Sprintf("window %d tokens, %s, suffix share %g", d.Window, share, d.SuffixShare)
	if p.ContextWindow > p.Window {
		out += fmt.Sprintf(", context window %d tokens", p.ContextWindow)
	}
	return out
}

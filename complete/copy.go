package complete

import (
	"strings"

	"github.com/repoctx/repoctx"
)

// Copy completer parameters: CopyQueryLines prefix lines are matched against
// windows of CopyWindowLines context lines.
const (
	CopyQueryLines  = 3
	CopyWindowLines = 3
)

// CopyPredict is a simple non-oracle completer that copies one line of the
// context: the first line of [CopyLines](prefix, context, 1), stripped of white
// space at both ends, or "" when no window shares a token with the query. It is
// eval's copy_chrf completer and the first line of assemble's built-in draft.
func CopyPredict(prefix, context string) string {
	if ls := CopyLines(prefix, context, 1); len(ls) > 0 {
		return strings.TrimSpace(ls[0])
	}
	return ""
}

// CopyLines returns up to n non-blank lines (as in context, without their "\n")
// that follow, in the same part, the window of context lines that best matches
// the end of prefix; nil when no window shares a token with the query or n < 1.
//
// The query is the last [CopyQueryLines] non-blank lines of prefix that end in
// "\n", plus the unfinished current line when prefix does not end in "\n". The
// context is cut into parts at [repoctx.FileSep]; in each part the path line (the
// part's first line) is left out, and text before the first separator is a part
// without a path line. Within one part, every run of [CopyWindowLines]
// consecutive non-blank lines (blank lines are skipped) that is followed by
// another non-blank line is a candidate; its score is the Jaccard similarity of
// its token set and the query's token set (tokens are the matches of
// [A-Za-z0-9_]+, case-sensitive). Ties go to the later window in the context.
// RepoCoder's sparse retriever scores its windows by the same Jaccard similarity
// (Zhang et al. 2023, §3.2).
func CopyLines(prefix, context string, n int) []string {
	if n < 1 {
		return nil
	}
	query := TokenSet(copyQuery(prefix)...)
	if len(query) == 0 {
		return nil
	}
	// Tokens are numbered for this call (the query's first), so that a line is a
	// list of distinct token numbers and the window's counts are a slice.
	ids := make(map[string]int32, 4*len(query))
	var inQuery []bool // by token number
	for w := range query {
		ids[w] = int32(len(inQuery))
		inQuery = append(inQuery, true)
	}
	var stamp []int32 // by token number: the last line (1-based, of the call) listing it
	var count []int32 // by token number: its lines in the window
	var best []string
	bestScore := 0.0
	lineNo := int32(0)
	for _, part := range contextParts(context) {
		var lines []string
		var toks [][]int32 // distinct tokens of each line
		for _, l := range part {
			if strings.TrimSpace(l) == "" {
				continue
			}
			lines = append(lines, l)
			lineNo++
			var ts []int32
			EachToken(l, func(w string) {
				id, ok := ids[w]
				if !ok {
					id = int32(len(inQuery))
					ids[w] = id
					inQuery = append(inQuery, false)
				}
				for int(id) >= len(stamp) {
					stamp = append(stamp, 0)
				}
				if stamp[id] != lineNo {
					stamp[id] = lineNo
					ts = append(ts, id)
				}
			})
			toks = append(toks, ts)
		}
		// Slide the window, keeping per-token counts, the union size and the
		// intersection with the query.
		if n := len(inQuery); len(count) < n {
			count = append(count, make([]int32, n-len(count))...)
		}
		clear(count)
		union, inter := 0, 0
		add := func(ts []int32, d int32) {
			for _, w := range ts {
				before := count[w]
				count[w] = before + d
				if (d > 0 && before == 0) || (d < 0 && before == 1) {
					union += int(d)
					if inQuery[w] {
						inter += int(d)
					}
				}
			}
		}
		for i := 0; i < len(lines); i++ {
			add(toks[i], 1)
			if i >= CopyWindowLines {
				add(toks[i-CopyWindowLines], -1)
			}
			// The window is lines [i-CopyWindowLines+1, i]; it needs a next line.
			if i+1 < CopyWindowLines || i+1 >= len(lines) {
				continue
			}
			s := 0.0
			if union+len(query) > 0 {
				s = float64(inter) / float64(len(query)+union-inter)
			}
			if s > 0 && s >= bestScore {
				best, bestScore = lines[i+1:min(len(lines), i+1+n)], s
			}
		}
	}
	return best
}

// copyQuery returns the query lines of CopyLines.
func copyQuery(prefix string) []string {
	lines := strings.Split(prefix, "\n")
	cur := lines[len(lines)-1] // unfinished line; "" when prefix ends in "\n"
	lines = lines[:len(lines)-1]
	var q []string
	for i := len(lines) - 1; i >= 0 && len(q) < CopyQueryLines; i-- {
		if strings.TrimSpace(lines[i]) != "" {
			q = append(q, lines[i])
		}
	}
	if cur != "" {
		q = append(q, cur)
	}
	return q
}

// contextParts cuts a context into parts at repoctx.FileSep and returns each part's
// lines without their "\n", leaving out the path line of every part that
// follows a separator.
func contextParts(context string) [][]string {
	chunks := strings.Split(context, repoctx.FileSep)
	var parts [][]string
	for i, c := range chunks {
		if i > 0 {
			j := strings.IndexByte(c, '\n')
			if j < 0 {
				continue // a path line only
			}
			c = c[j+1:]
		}
		if c == "" {
			continue
		}
		parts = append(parts, strings.Split(c, "\n"))
	}
	return parts
}

// TokenSet returns the set of [A-Za-z0-9_]+ matches in the texts (see EachToken):
// the token sets the copy completer and RepoCoder's windows (eval) compare by
// Jaccard similarity.
func TokenSet(texts ...string) map[string]struct{} {
	m := map[string]struct{}{}
	for _, t := range texts {
		EachToken(t, func(w string) { m[w] = struct{}{} })
	}
	return m
}

// EachToken calls yield with each match of the regular expression [A-Za-z0-9_]+
// in t (ASCII only, case kept), in order, as substrings of t, without allocating.
func EachToken(t string, yield func(string)) {
	start := -1
	for i := 0; i <= len(t); i++ {
		word := false
		if i < len(t) {
			c := t[i]
			word = c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		}
		switch {
		case word && start < 0:
			start = i
		case !word && start >= 0:
			yield(t[start:i])
			start = -1
		}
	}
}

package complete

import (
	"iter"
	"strings"
	"sync"

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
	// run of distinct token numbers and the window's counts are a slice.
	sc := getCopyScratch()
	defer sc.put()
	ids := &sc.ids
	inQuery := sc.inQuery[:0] // by token number
	for w := range query {
		ids.id(w, fnv1a(w))
		inQuery = append(inQuery, true)
	}
	stamp := append(sc.stamp[:0], make([]int32, len(inQuery))...) // by token number: the last line (1-based, of the call) listing it
	count := sc.count[:0]                                         // by token number: its lines in the window
	var best []string                                             // a copy: lines is reused from part to part
	bestScore := 0.0
	lineNo := int32(0)
	lines := sc.lines[:0] // the part's non-blank lines
	toks := sc.toks[:0]   // the distinct tokens of each of lines, one after another
	ends := sc.ends[:0]   // where each line's tokens end in toks
	defer func() {
		sc.inQuery, sc.stamp, sc.count, sc.lines, sc.toks, sc.ends = inQuery, stamp, count, lines, toks, ends
	}()
	for part := range eachContextPart(context) {
		lines, toks, ends = lines[:0], toks[:0], ends[:0]
		for len(part) > 0 {
			l := part
			if j := strings.IndexByte(part, '\n'); j >= 0 {
				l, part = part[:j], part[j+1:]
			} else {
				part = ""
			}
			if strings.TrimSpace(l) == "" {
				continue
			}
			lines = append(lines, l)
			lineNo++
			for start := 0; start < len(l); {
				if !wordByte[l[start]] {
					start++
					continue
				}
				h := (fnvOffset ^ uint32(l[start])) * fnvPrime
				end := start + 1
				for end < len(l) && wordByte[l[end]] {
					h = (h ^ uint32(l[end])) * fnvPrime
					end++
				}
				w := l[start:end]
				start = end
				id := ids.id(w, h)
				if int(id) == len(inQuery) {
					inQuery = append(inQuery, false)
					stamp = append(stamp, 0)
				}
				if stamp[id] != lineNo {
					stamp[id] = lineNo
					toks = append(toks, id)
				}
			}
			ends = append(ends, len(toks))
		}
		// Slide the window, keeping per-token counts, the union size and the
		// intersection with the query.
		if n := len(inQuery); len(count) < n {
			count = append(count, make([]int32, n-len(count))...)
		}
		clear(count)
		union, inter := 0, 0
		add := func(line int, d int32) {
			from := 0
			if line > 0 {
				from = ends[line-1]
			}
			for _, w := range toks[from:ends[line]] {
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
			add(i, 1)
			if i >= CopyWindowLines {
				add(i-CopyWindowLines, -1)
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
				best, bestScore = append(best[:0], lines[i+1:min(len(lines), i+1+n)]...), s
			}
		}
	}
	return best
}

// copyScratch is the memory of one CopyLines call, kept for the next (copyScratches):
// a draft runs CopyLines over a context of tens of kilobytes for every datapoint.
type copyScratch struct {
	ids                tokenTable
	inQuery            []bool
	stamp, count, toks []int32
	lines              []string
	ends               []int
}

var copyScratches sync.Pool // of *copyScratch

// getCopyScratch returns a copyScratch whose token table is empty.
func getCopyScratch() *copyScratch {
	if sc, ok := copyScratches.Get().(*copyScratch); ok {
		return sc
	}
	return &copyScratch{}
}

// put empties sc (dropping its strings, which point into a caller's context) and
// keeps it for the next call.
func (sc *copyScratch) put() {
	clear(sc.ids.slots)
	clear(sc.ids.keys)
	sc.ids.keys, sc.ids.sums = sc.ids.keys[:0], sc.ids.sums[:0]
	clear(sc.lines[:cap(sc.lines)])
	copyScratches.Put(sc)
}

// tokenTable numbers the distinct tokens of one CopyLines call, 0, 1, ... in the
// order first seen: an open-addressing hash table (linear probing) on their FNV-1a
// hashes, which the scanner computes as it reads them, kept under half full.
type tokenTable struct {
	slots []int32  // token number + 1; 0: empty
	keys  []string // by token number
	sums  []uint32 // by token number: its hash
}

// id returns w's number, numbering it next when it is new; h is fnv1a(w).
func (t *tokenTable) id(w string, h uint32) int32 {
	if 2*(len(t.keys)+1) > len(t.slots) {
		t.grow()
	}
	mask := uint32(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			t.slots[i] = int32(len(t.keys)) + 1
			t.keys, t.sums = append(t.keys, w), append(t.sums, h)
			return int32(len(t.keys)) - 1
		}
		if t.sums[s-1] == h && t.keys[s-1] == w {
			return s - 1
		}
	}
}

// grow doubles the table (256 slots at first) and places every token again.
func (t *tokenTable) grow() {
	t.slots = make([]int32, max(256, 2*len(t.slots)))
	mask := uint32(len(t.slots) - 1)
	for k, h := range t.sums {
		i := h & mask
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = int32(k) + 1
	}
}

// FNV-1a, 32 bits (Fowler, Noll and Vo): the tokens' hash in tokenTable.
const (
	fnvOffset uint32 = 2166136261
	fnvPrime  uint32 = 16777619
)

// fnv1a returns the 32-bit FNV-1a hash of w.
func fnv1a(w string) uint32 {
	h := fnvOffset
	for i := 0; i < len(w); i++ {
		h = (h ^ uint32(w[i])) * fnvPrime
	}
	return h
}

// wordByte reports which bytes make up tokens: [A-Za-z0-9_] (see EachToken).
var wordByte = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
	}
	return t
}()

// copyQuery returns the query lines of CopyLines.
func copyQuery(prefix string) []string {
	// The lines of prefix, from the last: the unfinished one ("" when prefix ends in
	// "\n") and then those before it.
	cur := prefix[strings.LastIndexByte(prefix, '\n')+1:]
	rest := prefix[:len(prefix)-len(cur)]
	var q []string
	for len(rest) > 0 && len(q) < CopyQueryLines {
		rest = rest[:len(rest)-1] // its "\n"
		l := rest[strings.LastIndexByte(rest, '\n')+1:]
		rest = rest[:len(rest)-len(l)]
		if strings.TrimSpace(l) != "" {
			q = append(q, l)
		}
	}
	if cur != "" {
		q = append(q, cur)
	}
	return q
}

// eachContextPart yields the parts of a context, cut at repoctx.FileSep, without the
// path line of every part that follows a separator; empty parts are left out.
func eachContextPart(context string) iter.Seq[string] {
	return func(yield func(string) bool) {
		rest := context // (each range over the sequence starts again)
		for i := 0; rest != "" || i == 0; i++ {
			c := rest
			if j := strings.Index(rest, repoctx.FileSep); j >= 0 {
				c, rest = rest[:j], rest[j+len(repoctx.FileSep):]
			} else {
				rest = ""
			}
			if i > 0 {
				j := strings.IndexByte(c, '\n')
				if j < 0 {
					continue // a path line only
				}
				c = c[j+1:]
			}
			if c != "" && !yield(c) {
				return
			}
		}
	}
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
		word := i < len(t) && wordByte[t[i]]
		switch {
		case word && start < 0:
			start = i
		case !word && start >= 0:
			yield(t[start:i])
			start = -1
		}
	}
}

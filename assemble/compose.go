// Package assemble composes the context for one completion point from a retrieval
// index: it queries with the lines around the hole, applies relative positioning
// (the chunk after a prefix match, the chunk before a suffix match), merges
// overlapping spans, fits a budget and orders the parts so that the most relevant
// one ends the context (the competition scorer trims contexts from the left).
//
// Relative positioning is the seed method's key idea ("Relative positioning" chunk
// retrieval, see docs/ and the seed paper §II-B): code similar to the prefix is
// followed, somewhere in the repository, by code like the middle; code similar to
// the suffix is preceded by it. RepoCoder (Zhang et al. 2023, §3.2) shows the lines
// that follow a match for the same reason.
package assemble

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/retrieve"
)

// FileSep separates parts of a context: "<|file_sep|>{path}\n{content}".
const FileSep = "<|file_sep|>"

// Options configures Compose. The zero value of a field means its default.
type Options struct {
	// QueryLines is how many lines before the cursor form the prefix query and how many
	// after it form the suffix query. Default 12.
	QueryLines int
	// TopK is how many chunks each query retrieves. Default 8.
	TopK int
	// BudgetChars caps the context length in bytes of UTF-8 text, separators included.
	// Parts are dropped, least relevant first, until the context fits. Default 24000.
	BudgetChars int
	// SuffixWeight scales the suffix query's fused scores against the prefix query's
	// (weight 1). Default 0.6.
	SuffixWeight float64
	// ModifiedBoost multiplies the scores of chunks in files the datapoint lists as
	// modified. Default 1.5.
	ModifiedBoost float64
	// NoRelative turns relative positioning off: only the matched chunks are used.
	NoRelative bool
	// OldFileWeight weighs the chunks of the completion file's old copy that the
	// prefix and suffix do not already show, against a top-1 retrieval hit (weight 1).
	// 0 means the default 1.2; a negative value leaves them out.
	OldFileWeight float64
}

func (o Options) withDefaults() Options {
	if o.QueryLines <= 0 {
		o.QueryLines = 12
	}
	if o.TopK <= 0 {
		o.TopK = 8
	}
	if o.BudgetChars <= 0 {
		o.BudgetChars = 24000
	}
	if o.SuffixWeight <= 0 {
		o.SuffixWeight = 0.6
	}
	if o.ModifiedBoost <= 0 {
		o.ModifiedBoost = 1.5
	}
	return o
}

// Hole is one completion point: the completion file's path and the text around the
// cursor.
type Hole struct {
	// Path is the completion file, slash-separated, relative to the repository root.
	Path string
	// Prefix and Suffix are the file's text before and after the cursor.
	Prefix, Suffix string
	// Modified lists files changed together with the completion file (may include it).
	Modified []string
}

// Part is one span of one file in a context.
type Part struct {
	Path string `json:"path"`
	// StartLine and EndLine are 1-based, inclusive lines of the file.
	StartLine int `json:"start_line"`
	EndLine   int `json:"end_line"`
	// Score is the fused relevance; higher is more relevant. Parts are emitted in
	// ascending score order.
	Score float64 `json:"score"`
	// Why lists how the part was found, e.g. "prefix#1", "next-of:prefix#1", "suffix#3".
	Why  []string `json:"why"`
	Text string   `json:"-"`
}

// rrfK is the rank constant of reciprocal rank fusion (Cormack, Clarke & Büttcher,
// SIGIR 2009), the value used by the seed and most peers.
const rrfK = 60

// QueryText returns the prefix query (the unfinished current line plus the n
// complete lines before it) and the suffix query (the first n lines after the cursor).
func QueryText(prefix, suffix string, n int) (string, string) {
	cut := strings.LastIndexByte(prefix, '\n') + 1 // start of the unfinished line
	for k := 0; k < n && cut > 0; k++ {
		cut = strings.LastIndexByte(prefix[:cut-1], '\n') + 1
	}
	end := 0
	for k := 0; k < n && end < len(suffix); k++ {
		j := strings.IndexByte(suffix[end:], '\n')
		if j < 0 {
			end = len(suffix)
			break
		}
		end += j + 1
	}
	return prefix[cut:], suffix[:end]
}

// Compose builds the context for hole from the index ix. It returns the context
// text and its parts in output order (least relevant first). Errors come only from
// the index.
func Compose(ix *retrieve.Index, h Hole, opts Options) (string, []Part, error) {
	opts = opts.withDefaults()
	pq, sq := QueryText(h.Prefix, h.Suffix, opts.QueryLines)
	visible := lineSet(h.Prefix, h.Suffix)
	modified := map[string]bool{}
	for _, m := range h.Modified {
		modified[m] = true
	}
	// Chunks of the completion file's old copy whose every line is already visible in
	// the prefix or suffix add nothing; changed regions (the old text of a replaced
	// line) are kept.
	redundant := func(c *chunker.Chunk) bool {
		return c.Path == h.Path && allLinesIn(c.Text, visible)
	}
	keep := func(c *chunker.Chunk) bool { return !redundant(c) }

	scores := map[string]float64{}
	why := map[string][]string{}
	add := func(id string, s float64, reason string) {
		c, ok := ix.Chunk(id)
		if !ok || redundant(c) {
			return
		}
		if modified[c.Path] && c.Path != h.Path {
			s *= opts.ModifiedBoost
		}
		scores[id] += s
		why[id] = append(why[id], reason)
	}
	type query struct {
		name   string
		text   string
		weight float64
		rel    func(*chunker.Chunk) string
	}
	qs := []query{
		{"prefix", pq, 1, func(c *chunker.Chunk) string { return c.Next }},
		{"suffix", sq, opts.SuffixWeight, func(c *chunker.Chunk) string { return c.Prev }},
	}
	for _, q := range qs {
		if strings.TrimSpace(q.text) == "" {
			continue
		}
		hits, err := ix.Search(q.text, opts.TopK, keep)
		if err != nil {
			return "", nil, fmt.Errorf("assemble: %s query: %w", q.name, err)
		}
		for _, hit := range hits {
			s := q.weight / float64(rrfK+hit.Rank)
			tag := fmt.Sprintf("%s#%d", q.name, hit.Rank)
			add(hit.ID, s, tag)
			if opts.NoRelative {
				continue
			}
			if c, ok := ix.Chunk(hit.ID); ok {
				if rid := q.rel(c); rid != "" {
					// The neighbour is what the hole most likely resembles: rank it just
					// above its match so that it ends up nearer the end.
					add(rid, s*1.05, map[string]string{"prefix": "next-of:", "suffix": "prev-of:"}[q.name]+tag)
				}
			}
		}
	}
	if opts.OldFileWeight >= 0 {
		// The old copy of the completion file: its chunks that are not visible in the
		// prefix/suffix hold what the edit replaced (or the whole file, when prefix and
		// suffix are empty), weighted by closeness to the hole.
		hole := strings.Count(h.Prefix, "\n") + 1
		w := opts.OldFileWeight
		if w == 0 {
			w = 1.2
		}
		for _, c := range ix.Chunks() {
			if c.Path != h.Path || redundant(&c) {
				continue
			}
			dist := 0
			if hole < c.StartLine {
				dist = c.StartLine - hole
			} else if hole > c.EndLine {
				dist = hole - c.EndLine
			}
			add(c.ID, w/float64(rrfK+1)/(1+float64(dist)/40), "old-file")
		}
	}
	parts := mergeSpans(ix, scores, why)
	parts = fitBudget(parts, opts.BudgetChars)
	return render(parts), parts, nil
}

// mergeSpans groups the scored chunks by file, merges chunks that overlap or touch
// into one span (score = the best of its chunks), and returns the parts.
func mergeSpans(ix *retrieve.Index, scores map[string]float64, why map[string][]string) []Part {
	byFile := map[string][]*chunker.Chunk{}
	for id := range scores {
		c, _ := ix.Chunk(id)
		byFile[c.Path] = append(byFile[c.Path], c)
	}
	var parts []Part
	for path, cs := range byFile {
		sort.Slice(cs, func(i, j int) bool { return cs[i].StartByte < cs[j].StartByte })
		var cur *Part
		var curEnd int
		var text strings.Builder
		flush := func() {
			if cur != nil {
				cur.Text = text.String()
				parts = append(parts, *cur)
			}
			cur = nil
			text.Reset()
		}
		for _, c := range cs {
			if cur != nil && c.StartByte <= curEnd {
				if c.EndByte > curEnd {
					text.WriteString(c.Text[curEnd-c.StartByte:])
					curEnd = c.EndByte
					cur.EndLine = c.EndLine
				}
				cur.Score = max(cur.Score, scores[c.ID])
				cur.Why = append(cur.Why, why[c.ID]...)
				continue
			}
			flush()
			cur = &Part{Path: path, StartLine: c.StartLine, EndLine: c.EndLine, Score: scores[c.ID],
				Why: append([]string(nil), why[c.ID]...)}
			text.WriteString(c.Text)
			curEnd = c.EndByte
		}
		flush()
	}
	// Ascending relevance; ties broken by path and line so output is deterministic.
	sort.Slice(parts, func(i, j int) bool {
		if parts[i].Score != parts[j].Score {
			return parts[i].Score < parts[j].Score
		}
		if parts[i].Path != parts[j].Path {
			return parts[i].Path > parts[j].Path
		}
		return parts[i].StartLine > parts[j].StartLine
	})
	return parts
}

// partLen returns the rendered length of p in bytes.
func partLen(p Part) int { return len(FileSep) + len(p.Path) + 1 + len(p.Text) }

// fitBudget drops the least relevant parts (the first ones) until the rendered
// context fits budget bytes. A single part over the budget keeps its last lines.
func fitBudget(parts []Part, budget int) []Part {
	total := 0
	for _, p := range parts {
		total += partLen(p)
	}
	for len(parts) > 1 && total > budget {
		total -= partLen(parts[0])
		parts = parts[1:]
	}
	if len(parts) == 1 && total > budget {
		p := parts[0]
		room := budget - (len(FileSep) + len(p.Path) + 1)
		if room <= 0 {
			return nil
		}
		from := len(p.Text) - room
		for from < len(p.Text) && !utf8.RuneStart(p.Text[from]) {
			from++
		}
		t := p.Text[from:]
		if i := strings.IndexByte(t, '\n'); i >= 0 && i+1 < len(t) {
			p.StartLine += strings.Count(p.Text[:from+i+1], "\n")
			t = t[i+1:]
		}
		p.Text = t
		parts[0] = p
	}
	return parts
}

func render(parts []Part) string {
	var sb strings.Builder
	for _, p := range parts {
		sb.WriteString(FileSep)
		sb.WriteString(p.Path)
		sb.WriteByte('\n')
		sb.WriteString(p.Text)
	}
	return sb.String()
}

// lineSet returns the set of trimmed non-blank lines of the texts.
func lineSet(texts ...string) map[string]bool {
	m := map[string]bool{}
	for _, t := range texts {
		for _, l := range strings.Split(t, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				m[l] = true
			}
		}
	}
	return m
}

// allLinesIn reports whether every trimmed non-blank line of text is in set.
func allLinesIn(text string, set map[string]bool) bool {
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" && !set[l] {
			return false
		}
	}
	return true
}

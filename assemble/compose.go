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
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/retrieve"
	"github.com/repoctx/repoctx/symbols"
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
	// RelativeWeight scales a match's score for its neighbour (the next chunk of a
	// prefix match, the previous chunk of a suffix match); 0 means the default 1.05,
	// ranking the neighbour just above its match.
	RelativeWeight float64
	// NoEditQuery turns off adding the identifiers of the user's edit (lines where
	// prefix+suffix differ from the old completion file) to the queries.
	NoEditQuery bool
	// NoDefinitions turns off the definitions source.
	NoDefinitions bool
	// MinScoreRatio drops retrieval hits scoring below this fraction of the query's
	// best hit (0 keeps all top-k).
	MinScoreRatio float64
	// DefinitionWeight weighs a definition of the identifier nearest the cursor against
	// a top-1 retrieval hit (weight 1). 0 means the default 0.9.
	DefinitionWeight float64
	// NoDense searches BM25 only even when the index has dense vectors.
	NoDense bool
	// Fusion weighs BM25 against dense retrieval in reciprocal rank fusion; the zero
	// value is the seed's 0.2 / 0.8 with k = 60 (retrieve.DefaultWeights).
	Fusion retrieve.Weights
	// OldFileWeight weighs the chunks of the completion file's old copy that the
	// prefix and suffix do not already show, against a top-1 retrieval hit (weight 1).
	// 0 means the default 1.2; a negative value leaves them out.
	OldFileWeight float64
	// Plan is the budget planner (off by default): it may trim the prefix and
	// suffix the model is given and budgets the context in tokens for one model
	// window instead of BudgetChars; see Plan and ComposePlanned.
	Plan Plan
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
	// OldText is the completion file's text in the snapshot (before the edit), if
	// known; "" means: take it from the index.
	OldText string
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

// Resources are optional per-snapshot and per-goroutine helpers for ComposeWith.
type Resources struct {
	// Symbols resolves identifiers near the cursor to definitions (the definitions
	// source); nil turns that source off.
	Symbols *symbols.Table
	// Extractor parses the completion file's current text (prefix + suffix) to learn
	// what it defines and imports. Not safe for concurrent use: one per goroutine.
	Extractor *symbols.Extractor
}

// Compose builds the context for hole from the index ix with retrieval only (no
// symbol resolution); see ComposeWith.
func Compose(ix *retrieve.Index, h Hole, opts Options) (string, []Part, error) {
	return ComposeWith(ix, h, Resources{}, opts)
}

// Composed is the result of ComposePlanned: a context and, when the planner
// trimmed them, the prefix and suffix to give the model instead of the hole's.
type Composed struct {
	// Context is the rendered context, "<|file_sep|>{path}\n{content}" parts.
	Context string
	// Parts are the context's parts in output order (least relevant first).
	Parts []Part
	// Prefix and Suffix are the overrides for the prediction line: nil when the
	// model is to be given the hole's own.
	Prefix, Suffix *string
	// Split is the planner's decision (zero when the planner is off).
	Split Split
}

// ComposeWith builds the context for hole from the index ix and the optional
// resources; see ComposePlanned, whose prefix/suffix overrides it drops.
func ComposeWith(ix *retrieve.Index, h Hole, res Resources, opts Options) (string, []Part, error) {
	c, err := ComposePlanned(ix, h, res, opts)
	return c.Context, c.Parts, err
}

// ComposePlanned builds the context for hole from the index ix and the optional
// resources. It returns the context text, its parts in output order (least
// relevant first) and, when opts.Plan is on and trims them, the prefix and suffix
// overrides. Errors come only from the index.
//
// Sources, each switchable in Options: hole-centred BM25 queries with relative
// positioning (next chunk of a prefix match, previous chunk of a suffix match); the
// identifiers of the user's edit (the lines where prefix+suffix differ from the old
// completion file) added to the queries; definitions of the identifiers nearest the
// cursor that the visible text does not define; the old completion file's chunks that
// the prefix and suffix do not show.
//
// With the planner on (opts.Plan.Window > 0) the prefix and suffix the model is
// given may be trimmed (Plan.SplitHole); queries, the edit and the definitions still
// use the whole hole, but what counts as visible is only the text given, so the
// old completion file's chunks in the trimmed far parts can be retrieved (and its
// definitions there resolved) like any other file's. The context
// is budgeted to the tokens left (fitTokens). When the trimmed hole gets no context
// at all, trimming buys nothing and the hole is given whole.
func ComposePlanned(ix *retrieve.Index, h Hole, res Resources, opts Options) (Composed, error) {
	opts = opts.withDefaults()
	if !opts.Plan.On() {
		parts, err := composeParts(ix, h, res, opts, Split{Prefix: h.Prefix, Suffix: h.Suffix, SuffixCut: len(h.Suffix)})
		if err != nil {
			return Composed{}, err
		}
		parts = fitBudget(parts, opts.BudgetChars)
		return Composed{Context: render(parts), Parts: parts}, nil
	}
	plan := opts.Plan.withDefaults()
	split := plan.SplitHole(h.Prefix, h.Suffix)
	parts, err := composeParts(ix, h, res, opts, split)
	if err != nil {
		return Composed{}, err
	}
	parts = fitTokens(parts, split.Room, plan.Tokens)
	if len(parts) == 0 && (split.PrefixTrimmed || split.SuffixTrimmed) {
		// Nothing to show in the room made: give the model its whole text back.
		split = Split{Prefix: h.Prefix, Suffix: h.Suffix, SuffixCut: len(h.Suffix),
			Room: max(0, float64(plan.Window-MaxNewTokens)-plan.Tokens.Count(h.Prefix)-plan.Tokens.Count(h.Suffix))}
		if parts, err = composeParts(ix, h, res, opts, split); err != nil {
			return Composed{}, err
		}
		parts = fitTokens(parts, split.Room, plan.Tokens)
	}
	c := Composed{Context: render(parts), Parts: parts, Split: split}
	if split.PrefixTrimmed {
		c.Prefix = &split.Prefix
	}
	if split.SuffixTrimmed {
		c.Suffix = &split.Suffix
	}
	return c, nil
}

// composeParts collects the candidate parts for hole in ascending relevance,
// unbudgeted. seen is what the model is given of the hole's prefix and suffix.
func composeParts(ix *retrieve.Index, h Hole, res Resources, opts Options, seen Split) ([]Part, error) {
	pq, sq := QueryText(h.Prefix, h.Suffix, opts.QueryLines)
	visible := LineSet(seen.Prefix, seen.Suffix)
	modified := map[string]bool{}
	for _, m := range h.Modified {
		modified[m] = true
	}
	spec := grammars.ForPath(h.Path)
	files := newFileTexts(ix)
	if h.OldText == "" {
		h.OldText = files.text(h.Path)
	}
	// Chunks of the completion file's old copy whose every line is already visible in
	// the prefix or suffix add nothing; changed regions (the old text of a replaced
	// line) are kept.
	redundant := func(c *chunker.Chunk) bool {
		return c.Path == h.Path && AllLinesIn(c.Text, visible)
	}
	keep := func(c *chunker.Chunk) bool { return !redundant(c) }

	cands := newCandidates()
	add := func(c *chunker.Chunk, s float64, reason string) {
		if c == nil || redundant(c) {
			return
		}
		if modified[c.Path] && c.Path != h.Path {
			s *= opts.ModifiedBoost
		}
		cands.add(c.Path, c.StartByte, c.EndByte, s, reason)
	}
	if !opts.NoEditQuery && h.OldText != "" {
		// The user's edit: identifiers of the changed lines join the queries, nearest
		// the cursor first.
		if ids := editIdentifiers(h.OldText, h.Prefix, h.Suffix, spec, 24); ids != "" {
			pq += "\n" + ids
			sq += "\n" + ids
		}
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
	rw := opts.RelativeWeight
	if rw == 0 {
		rw = 1.05
	}
	// The queries run at once (the index is safe for concurrent use): a query's
	// latency is about that of its slowest search, not their sum.
	results := make([][]retrieve.FusedHit, len(qs))
	errs := make([]error, len(qs))
	var wg sync.WaitGroup
	for i, q := range qs {
		if strings.TrimSpace(q.text) == "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					errs[i] = fmt.Errorf("internal error: %v", r)
				}
			}()
			results[i], errs[i] = search(ix, q.text, opts, keep, q.name == "prefix")
		}()
	}
	wg.Wait()
	for i, q := range qs {
		if errs[i] != nil {
			return nil, fmt.Errorf("assemble: %s query: %w", q.name, errs[i])
		}
		hits := results[i]
		for _, hit := range hits {
			if opts.MinScoreRatio > 0 && hit.Score < opts.MinScoreRatio*hits[0].Score {
				break // weak matches pad the context more than they help
			}
			s := q.weight / float64(rrfK+hit.Rank)
			tag := fmt.Sprintf("%s#%d", q.name, hit.Rank)
			if hit.BM25Rank > 0 || hit.DenseRank > 0 {
				tag += fmt.Sprintf("(bm25 %d, dense %d)", hit.BM25Rank, hit.DenseRank)
			}
			c, _ := ix.Chunk(hit.ID)
			add(c, s, tag)
			if opts.NoRelative {
				continue
			}
			if rid := q.rel(c); rid != "" {
				// The neighbour is what the hole most likely resembles: rank it just
				// above its match so that it ends up nearer the end.
				rc, _ := ix.Chunk(rid)
				add(rc, s*rw, map[string]string{"prefix": "next-of:", "suffix": "prev-of:"}[q.name]+tag)
			}
		}
	}
	if opts.OldFileWeight >= 0 {
		// The old copy of the completion file: its chunks that are not visible in the
		// prefix/suffix hold what the edit replaced (or the whole file, when prefix and
		// suffix are empty), weighted by closeness to the hole.
		hole := strings.Count(h.Prefix, "\n") + 1
		// With a trimmed prefix (suffix) the model sees lines [first, last] only. The
		// chunks wholly outside are left to the retrieval queries and the definitions
		// (they are not visible, so those may pick them): weighted by distance alone,
		// they would merge into one part as long as the trimmed text and crowd out
		// everything else.
		first := 1 + strings.Count(h.Prefix[:seen.PrefixCut], "\n")
		last := hole + strings.Count(seen.Suffix, "\n")
		w := opts.OldFileWeight
		if w == 0 {
			w = 1.2
		}
		for _, c := range files.chunks(h.Path) {
			if seen.PrefixTrimmed && c.EndLine < first || seen.SuffixTrimmed && c.StartLine > last {
				continue
			}
			dist := 0
			if hole < c.StartLine {
				dist = c.StartLine - hole
			} else if hole > c.EndLine {
				dist = hole - c.EndLine
			}
			add(c, w/float64(rrfK+1)/(1+float64(dist)/40), "old-file")
		}
	}
	if opts.OldFileWeight >= 0 && h.OldText != "" {
		// What the edit replaced, with the lines around it: the single most useful part
		// when the user rewrites a line (a copy completer matches the prefix's last lines
		// there and reads the line after them). It ends the context.
		if from, to, ok := replacedRegion(h.OldText, h.Prefix, h.Suffix, 3); ok {
			a, b := lineSpan(h.OldText, from, to)
			if b > a {
				cands.add(h.Path, a, b, 3/float64(rrfK+1), "replaced-region")
			}
		}
	}
	if !opts.NoDefinitions && res.Symbols != nil && spec != nil {
		addDefinitions(cands, res, h, spec, opts, seen, visible, files)
	}
	return cands.parts(files), nil
}

// search runs one query: hybrid (BM25 + dense, RRF) when the index has vectors and
// dense is not switched off, else BM25. A prefix query keeps its end (nearest the
// hole) when the dense model must truncate it, a suffix query its start.
func search(ix *retrieve.Index, query string, opts Options, keep func(*chunker.Chunk) bool, prefix bool) ([]retrieve.FusedHit, error) {
	if ix.HasDense() && !opts.NoDense {
		end := retrieve.KeepHead
		if prefix {
			end = retrieve.KeepTail
		}
		return ix.SearchHybrid(query, opts.TopK, keep, opts.Fusion, end)
	}
	hits, err := ix.Search(query, opts.TopK, keep)
	out := make([]retrieve.FusedHit, len(hits))
	for i, h := range hits {
		out[i] = retrieve.FusedHit{ID: h.ID, Score: h.Score, Rank: h.Rank}
	}
	return out, err
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

// LineSet returns the set of the texts' non-blank lines, with leading and trailing
// white space removed: what a model already sees, for redundancy checks.
func LineSet(texts ...string) map[string]bool {
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

// AllLinesIn reports whether every non-blank line of text, trimmed, is in set (see
// LineSet): a chunk for which it holds shows the model nothing new.
func AllLinesIn(text string, set map[string]bool) bool {
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" && !set[l] {
			return false
		}
	}
	return true
}

// Package assemble composes the context for one completion point from a snapshot's
// view of its repository's index ([index.View]): it queries with the lines around the
// hole, applies relative positioning (the chunk after a prefix match, the chunk
// before a suffix match), adds the user's edit, the definitions of the names near the
// cursor and what the edit replaced, merges overlapping spans, fits a budget and
// orders the parts so that the most relevant one ends the context (the competition
// scorer trims contexts from the left).
//
// Relative positioning is the seed method's key idea ("Relative positioning" chunk
// retrieval, see docs/ and the seed paper §II-B): code similar to the prefix is
// followed, somewhere in the repository, by code like the middle; code similar to
// the suffix is preceded by it. RepoCoder (Zhang et al. 2023, §3.2) shows the lines
// that follow a match for the same reason.
package assemble

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/index"
	"github.com/repoctx/repoctx/retrieve"
	"github.com/repoctx/repoctx/symbols"
)

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

// Compose builds the context for hole h from view (a snapshot's view of its
// repository's index). It returns the context text, its parts in output order (least
// relevant first) and, when opts.Plan is on and trims them, the prefix and suffix
// overrides.
//
// Sources, each switchable in Options: hole-centred retrieval queries (hybrid BM25 +
// dense, or BM25 alone) with relative positioning (the Options.RelativeLines lines
// after a prefix match and before a suffix match, or the neighbouring chunks); the
// identifiers of the user's edit (the lines where prefix+suffix differ from the old
// completion file) added to the queries;
// definitions of the identifiers nearest the cursor that the visible text does not
// define (with the repository's symbol table, see index.Options.Symbols); the old
// completion file's chunks that the prefix and suffix do not show, and the region the
// edit replaced.
//
// With the planner on (opts.Plan.Window > 0) the prefix and suffix the model is given
// may be trimmed (Plan.SplitHole); queries, the edit and the definitions still use
// the whole hole, but what counts as visible is only the text given, so the old
// completion file's chunks in the trimmed far parts can be retrieved (and its
// definitions there resolved) like any other file's. The context is budgeted to the
// tokens left. When the trimmed hole gets no context at all, trimming buys nothing
// and the hole is given whole.
//
// With Options.Iterations > 1 (RepoCoder's iterative retrieval, Zhang et al. 2023
// §3), each further round drafts the middle from the last context (Options.Drafter,
// or the built-in [CopyDrafter]), queries with the last prefix lines plus the
// draft, fuses the hits into the first round's candidates by reciprocal rank and
// fits them again; a drafter's failure falls back on the built-in drafter.
//
// It returns a *repoctx.OptionError for invalid options, ctx's error when ctx is
// done, and the index's errors; a panic while composing (a bug, or an index damaged
// in a way its checks missed) is returned as an error naming the file.
func Compose(ctx context.Context, view *index.View, h repoctx.Hole, opts Options) (c repoctx.Context, err error) {
	if err := opts.Validate(); err != nil {
		return repoctx.Context{}, err
	}
	defer func() {
		if r := recover(); r != nil {
			c, err = repoctx.Context{}, fmt.Errorf("assemble: internal error composing the context of %s: %v", h.Path, r)
		}
	}()
	whole := Split{Prefix: h.Prefix, Suffix: h.Suffix, SuffixCut: len(h.Suffix)}
	if !opts.Plan.On() {
		fit := func(parts []repoctx.Part) []repoctx.Part { return fitBudget(parts, opts.BudgetChars) }
		cp, err := newComposer(ctx, view, h, opts, whole)
		if err != nil {
			return repoctx.Context{}, err
		}
		return cp.iterate(cp.context(fit(cp.cands.parts(cp.files))), fit)
	}
	lang := ""
	if spec := grammars.ForPath(h.Path); spec != nil {
		lang = spec.Name
	}
	plan := opts.Plan.withDefaults(lang)
	split := plan.SplitHole(h.Prefix, h.Suffix)
	cp, err := newComposer(ctx, view, h, opts, split)
	if err != nil {
		return repoctx.Context{}, err
	}
	parts := fitTokens(cp.cands.parts(cp.files), split.Room, plan.Tokens)
	if len(parts) == 0 && (split.PrefixTrimmed || split.SuffixTrimmed) {
		// Nothing to show in the room made: give the model its whole text back.
		split = whole
		split.Room = plan.roomFor(plan.Tokens.Count(h.Prefix), plan.Tokens.Count(h.Suffix))
		if cp, err = newComposer(ctx, view, h, opts, split); err != nil {
			return repoctx.Context{}, err
		}
		parts = fitTokens(cp.cands.parts(cp.files), split.Room, plan.Tokens)
	}
	fit := func(parts []repoctx.Part) []repoctx.Part { return fitTokens(parts, split.Room, plan.Tokens) }
	if split.PrefixTrimmed && opts.PrefixOutline > 0 {
		if o, ok := prefixOutline(h, split, opts.PrefixOutline, plan.Tokens); ok {
			// The outline is the last, most relevant part: a scorer that trims the
			// context from the left for a smaller window keeps it.
			fit = func(parts []repoctx.Part) []repoctx.Part {
				return fitTokens(append(parts[:len(parts):len(parts)], o), split.Room, plan.Tokens)
			}
			parts = fit(cp.cands.parts(cp.files))
		}
	}
	return cp.iterate(cp.context(parts), fit)
}

// context renders parts (fitted) as the composition's context, with the prefix and
// suffix overrides of a trimmed split.
func (c *composer) context(parts []repoctx.Part) repoctx.Context {
	out := repoctx.Context{Text: render(parts), Parts: parts}
	if c.seen.PrefixTrimmed {
		out.Prefix = &c.seen.Prefix
	}
	if c.seen.SuffixTrimmed {
		out.Suffix = &c.seen.Suffix
	}
	return out
}

// composer holds what the sources of one composition share.
type composer struct {
	ctx      context.Context
	view     *index.View
	ix       *retrieve.Index
	syms     *symbols.Table
	h        repoctx.Hole
	opts     Options
	seen     Split           // what the model is given of the hole's prefix and suffix
	visible  map[string]bool // LineSet of seen's prefix and suffix
	modified map[string]bool
	spec     *grammars.Spec
	langs    map[string]bool // languages whose chunks and definitions may be used; nil: all
	files    *fileTexts
	cands    *candidates
}

// languages returns the set of languages a composition may use (Options.Languages),
// nil meaning all.
func languages(opts Options, spec *grammars.Spec) map[string]bool {
	names := opts.Languages
	if len(names) == 0 {
		if spec == nil {
			return nil
		}
		names = grammars.Family(spec.Name)
	}
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// allowed reports whether chunks and definitions of the file at path may be used:
// it is the completion file, or of one of c.langs.
func (c *composer) allowed(path, lang string) bool {
	return c.langs == nil || c.langs[lang] || path == c.h.Path
}

// prefilter is the searches' retrieve.Query.Prefilter: chunks of other languages
// are dropped (allowed), those of other files than the completion file kept without
// their chunk (redundant asks only about the completion file's).
func (c *composer) prefilter(path, lang string) retrieve.Verdict {
	switch {
	case !c.allowed(path, lang):
		return retrieve.Reject
	case path != c.h.Path:
		return retrieve.Accept
	}
	return retrieve.AskFilter
}

// newComposer collects the candidate parts for hole h (c.cands: every source of one
// retrieval round, unbudgeted). seen is what the model is given of the hole's
// prefix and suffix.
func newComposer(ctx context.Context, view *index.View, h repoctx.Hole, opts Options, seen Split) (*composer, error) {
	ix := view.Retriever()
	c := &composer{ctx: ctx, view: view, ix: ix, syms: view.Symbols(), h: h, opts: opts, seen: seen,
		visible: LineSet(seen.Prefix, seen.Suffix), modified: map[string]bool{},
		spec: grammars.ForPath(h.Path), files: newFileTexts(ix), cands: newCandidates()}
	c.cands.noMerge = opts.NoSpanMerge
	c.langs = languages(opts, c.spec)
	for _, m := range h.Modified {
		c.modified[m] = true
	}
	if c.h.OldText == "" {
		c.h.OldText = c.files.text(h.Path)
	}
	defs := c.startDefinitions()
	if err := c.retrieval(); err != nil {
		return nil, err
	}
	if !opts.NoOldFile {
		c.oldFile()
		c.replaced()
	}
	if defs != nil {
		r := <-defs
		if r.panic != nil {
			panic(r.panic) // Compose's recover reports it
		}
		for _, d := range r.parts {
			c.cands.add(d.path, d.start, d.end, d.score, d.reason)
		}
	} else if c.wantDefinitions() {
		c.definitions() // with other repositories' definitions: see startDefinitions
	}
	return c, nil
}

// wantDefinitions reports whether the composition adds definitions.
func (c *composer) wantDefinitions() bool {
	return !c.opts.NoDefinitions && c.syms != nil && c.spec != nil
}

// foundDefinitions is what the findDefinitions run beside retrieval returns: its parts,
// or the value of its panic.
type foundDefinitions struct {
	parts []foundDef
	panic any
}

// startDefinitions starts findDefinitions beside retrieval, with a fileTexts of its
// own, and returns the channel its result arrives on; nil when the composition adds no
// definitions or other repositories' definitions are asked for (definitions then
// runs after retrieval, registering their paths in c.files). The parts are added
// after retrieval's, in the same order as when both run one after the other, so the
// context does not depend on which finishes first. Parsing the completion file for
// its definitions then overlaps the two hybrid searches (a live request's latency).
func (c *composer) startDefinitions() <-chan foundDefinitions {
	if !c.wantDefinitions() || c.opts.CrossRepo != nil && len(c.opts.CrossRepo.Definitions) > 0 {
		return nil
	}
	out := make(chan foundDefinitions, 1)
	go func() {
		var r foundDefinitions
		defer func() {
			r.panic = recover()
			out <- r
		}()
		r.parts = c.findDefinitions(newFileTexts(c.ix))
	}()
	return out
}

// redundant reports whether ch is a chunk of the completion file's old copy whose
// every line is already visible in the prefix or suffix: it adds nothing (changed
// regions, the old text of a replaced line, are kept).
func (c *composer) redundant(ch *chunker.Chunk) bool {
	return ch.Path == c.h.Path && AllLinesIn(ch.Text, c.visible)
}

// add adds chunk ch with score s (boosted in modified files) unless it is redundant.
func (c *composer) add(ch *chunker.Chunk, s float64, reason string) {
	if ch == nil || c.redundant(ch) {
		return
	}
	if c.modified[ch.Path] && ch.Path != c.h.Path {
		s *= c.opts.ModifiedBoost
	}
	c.cands.add(ch.Path, ch.StartByte, ch.EndByte, s, reason)
}

// addHit adds retrieval hit ch with score s like add, shown with its margin
// (Options.HitMargin, Options.HitGap; hitSpan). chunk looks up a chunk of ch's
// index by ID (the gap variant walks back through ch.Prev).
func (c *composer) addHit(ch *chunker.Chunk, s float64, reason string, chunk func(id string) (*chunker.Chunk, bool)) {
	if c.opts.HitMargin <= 0 || ch == nil {
		c.add(ch, s, reason)
		return
	}
	if c.redundant(ch) {
		return
	}
	if c.modified[ch.Path] && ch.Path != c.h.Path {
		s *= c.opts.ModifiedBoost
	}
	lo, hi := c.hitSpan(ch, chunk)
	c.cands.addShown(ch.Path, ch.StartByte, ch.EndByte, lo, hi, s, reason)
}

// hitSpan returns the byte span [lo, hi) of ch's file to show for hit ch: ch's
// span with up to Options.HitMargin whole lines before the line ch starts on and
// after the line it ends on, clipped at the file's ends. With Options.HitGap, only
// the lines before, and only back to the end of the nearest preceding chunk that
// is a function or class (chunk looks chunks up by ID). A side whose lines the
// completion file's prefix and suffix already show (a hit in the old copy of the
// completion file) is left out.
func (c *composer) hitSpan(ch *chunker.Chunk, chunk func(id string) (*chunker.Chunk, bool)) (lo, hi int) {
	text := c.files.text(ch.Path)
	start, end := min(max(ch.StartByte, 0), len(text)), min(max(ch.EndByte, 0), len(text))
	lo, hi = start, end
	n := c.opts.HitMargin
	a, b := lineSpanAround(text, start, end, n, false)
	if c.opts.HitGap {
		floor := 0 // the end of the previous function or class chunk
		for p, seen := ch, 0; p.Prev != "" && seen < n; seen++ {
			q, ok := chunk(p.Prev) // Prev is a chunk of the same file
			if !ok {
				break
			}
			if q.Kind == chunker.KindFunction || q.Kind == chunker.KindClass {
				floor = min(max(q.EndByte, 0), len(text))
				break
			}
			p = q
		}
		if floor > 0 && text[floor-1] != '\n' { // the previous definition's last line stays out
			if i := strings.IndexByte(text[floor:], '\n'); i >= 0 {
				floor += i + 1
			} else {
				floor = len(text)
			}
		}
		a = min(max(a, floor), b)
	}
	if b > a && !(ch.Path == c.h.Path && AllLinesIn(text[a:b], c.visible)) {
		lo = a
	}
	if c.opts.HitGap {
		return lo, hi
	}
	if a, b := lineSpanAround(text, start, end, n, true); b > a && !(ch.Path == c.h.Path && AllLinesIn(text[a:b], c.visible)) {
		hi = b
	}
	return lo, hi
}

// query is one retrieval query of a composition.
type query struct {
	name   string
	text   string
	weight float64
	rel    func(*chunker.Chunk) string // the neighbour relative positioning brings
	keep   retrieve.KeepEnd
}

// retrieval runs the prefix and suffix queries (with the edit's identifiers) and adds
// their hits and, with relative positioning, the hits' neighbours.
func (c *composer) retrieval() error {
	pq, sq := QueryText(c.h.Prefix, c.h.Suffix, c.opts.QueryLines)
	if !c.opts.NoEditQuery && c.h.OldText != "" {
		// The user's edit: identifiers of the changed lines join the queries, nearest
		// the cursor first.
		if ids := editIdentifiers(c.h.OldText, c.h.Prefix, c.h.Suffix, c.spec, c.opts.EditIdentifiers); ids != "" {
			pq += "\n" + ids
			sq += "\n" + ids
		}
	}
	qs := []query{
		{"prefix", pq, 1, func(ch *chunker.Chunk) string { return ch.Next }, retrieve.KeepTail},
		{"suffix", sq, c.opts.SuffixWeight, func(ch *chunker.Chunk) string { return ch.Prev }, retrieve.KeepHead},
	}
	results, err := c.search(qs)
	if err != nil {
		return err
	}
	for i, q := range qs {
		hits := results[i]
		for _, hit := range hits {
			if c.opts.MinScoreRatio > 0 && hit.Score < c.opts.MinScoreRatio*hits[0].Score {
				break // weak matches pad the context more than they help
			}
			s := q.weight / float64(retrieve.RRFK+hit.Rank)
			tag := fmt.Sprintf("%s#%d", q.name, hit.Rank)
			if hit.BM25Rank > 0 || hit.DenseRank > 0 {
				tag += fmt.Sprintf("(bm25 %d, dense %d)", hit.BM25Rank, hit.DenseRank)
			}
			ch, _ := c.ix.Chunk(hit.ID)
			c.addHit(ch, s, tag, c.ix.Chunk)
			if c.opts.NoRelative || ch == nil {
				continue
			}
			if c.opts.RelativeLines > 0 {
				c.addLines(ch, q.name == "prefix", s*c.opts.RelativeWeight, map[string]string{"prefix": "after:", "suffix": "before:"}[q.name]+tag)
				continue
			}
			if rid := q.rel(ch); rid != "" {
				// The neighbour is what the hole most likely resembles: rank it just
				// above its match so that it ends up nearer the end.
				rc, _ := c.ix.Chunk(rid)
				c.add(rc, s*c.opts.RelativeWeight, map[string]string{"prefix": "next-of:", "suffix": "prev-of:"}[q.name]+tag)
			}
		}
	}
	if c.opts.CrossRepo != nil && c.opts.CrossRepo.Alias != nil {
		for _, q := range qs {
			if strings.TrimSpace(q.text) == "" {
				continue
			}
			if err := c.crossRetrieval(q); err != nil {
				return err
			}
		}
	}
	return nil
}

// addLines adds, with score s, the Options.RelativeLines lines of ch's file after ch
// (after is true: the statements that follow a prefix match) or before it (a suffix
// match), unless they are all visible in the completion file's prefix or suffix.
func (c *composer) addLines(ch *chunker.Chunk, after bool, s float64, why string) {
	text := c.files.text(ch.Path)
	a, b := lineSpanAround(text, ch.StartByte, ch.EndByte, c.opts.RelativeLines, after)
	if b <= a || ch.Path == c.h.Path && AllLinesIn(text[a:b], c.visible) {
		return
	}
	if c.modified[ch.Path] && ch.Path != c.h.Path {
		s *= c.opts.ModifiedBoost
	}
	c.cands.add(ch.Path, a, b, s, why)
}

// lineSpanAround returns the byte span [a, b) of text holding the n whole lines after
// the span [start, end) (after is true; they begin at the first line start at or
// after end) or the n lines before it (ending at the line start at or before
// start). The span is empty at the file's ends.
func lineSpanAround(text string, start, end, n int, after bool) (a, b int) {
	start, end = min(max(start, 0), len(text)), min(max(end, 0), len(text))
	if after {
		a = end
		if a > 0 && text[a-1] != '\n' {
			if i := strings.IndexByte(text[a:], '\n'); i >= 0 {
				a += i + 1
			} else {
				a = len(text)
			}
		}
		b = a
		for k := 0; k < n && b < len(text); k++ {
			if i := strings.IndexByte(text[b:], '\n'); i >= 0 {
				b += i + 1
			} else {
				b = len(text)
			}
		}
		return a, b
	}
	b = strings.LastIndexByte(text[:start], '\n') + 1
	a = b
	for k := 0; k < n && a > 0; k++ {
		a = strings.LastIndexByte(text[:a-1], '\n') + 1
	}
	return a, b
}

// search runs the queries at once (the index is safe for concurrent use): a
// composition's latency is about that of its slowest search, not their sum. A query
// without text gets no hits. Hybrid retrieval is used when the index has vectors and
// dense is not switched off, else BM25 alone.
func (c *composer) search(qs []query) ([][]retrieve.FusedHit, error) {
	mode := retrieve.BM25
	if c.ix.HasDense() && !c.opts.NoDense {
		mode = retrieve.Hybrid
	}
	results := make([][]retrieve.FusedHit, len(qs))
	var batch []retrieve.Query
	var at []int // batch[j] is qs[at[j]]
	for i, q := range qs {
		if strings.TrimSpace(q.text) == "" {
			continue
		}
		batch = append(batch, retrieve.Query{Text: q.text, K: c.opts.TopK, Mode: mode,
			Prefilter: c.prefilter, Filter: func(ch *chunker.Chunk) bool { return !c.redundant(ch) },
			Weights: c.opts.Fusion, Keep: q.keep, NoHeader: c.opts.NoHeaderField})
		at = append(at, i)
	}
	// One batch: the searches run at once and share their scan of the dense vectors.
	hits, errs := c.ix.SearchBatch(c.ctx, batch)
	for j, i := range at {
		if errs[j] != nil {
			return nil, fmt.Errorf("assemble: %s query: %w", qs[i].name, errs[j])
		}
		results[i] = hits[j]
	}
	return results, nil
}

// oldFile adds the old copy of the completion file: its chunks that are not visible
// in the prefix/suffix hold what the edit replaced (or the whole file, when prefix
// and suffix are empty), weighted by closeness to the hole.
func (c *composer) oldFile() {
	h, seen := c.h, c.seen
	hole := strings.Count(h.Prefix, "\n") + 1
	// With a trimmed prefix (suffix) the model sees lines [first, last] only. The
	// chunks wholly outside are left to the retrieval queries and the definitions
	// (they are not visible, so those may pick them): weighted by distance alone,
	// they would merge into one part as long as the trimmed text and crowd out
	// everything else.
	first := 1 + strings.Count(h.Prefix[:seen.PrefixCut], "\n")
	last := hole + strings.Count(seen.Suffix, "\n")
	for _, ch := range c.files.chunks(h.Path) {
		if seen.PrefixTrimmed && ch.EndLine < first || seen.SuffixTrimmed && ch.StartLine > last {
			continue
		}
		dist := 0
		if hole < ch.StartLine {
			dist = ch.StartLine - hole
		} else if hole > ch.EndLine {
			dist = hole - ch.EndLine
		}
		c.add(ch, c.opts.OldFileWeight/float64(retrieve.RRFK+1)/(1+float64(dist)/c.opts.OldFileDecay), "old-file")
	}
}

// replaced adds what the edit replaced, with the lines around it: the single most
// useful part when the user rewrites a line (a copy completer matches the prefix's
// last lines there and reads the line after them). Its score is that of three first
// places in reciprocal rank fusion (3/(RRFK+1)), so it usually ends the context; a
// part several sources ranked high can score above it.
func (c *composer) replaced() {
	h := c.h
	if h.OldText == "" {
		return
	}
	if from, to, ok := replacedRegion(h.OldText, h.Prefix, h.Suffix, 3); ok {
		a, b := lineSpan(h.OldText, from, to)
		if b > a {
			c.cands.add(h.Path, a, b, 3/float64(retrieve.RRFK+1), "replaced-region")
		}
	}
}

// partLen returns the rendered length of p in bytes.
func partLen(p repoctx.Part) int { return len(repoctx.FileSep) + len(p.Path) + 1 + len(p.Text) }

// fitBudget keeps the parts whose rendered context fits budget bytes, choosing
// from the most relevant (the last) to the least: a part that does not fit in what
// is left is skipped and the less relevant parts before it are still kept while
// they fit, so one large part does not empty the context. The kept parts stay in
// their order. When the most relevant part alone is over the budget it keeps its
// last lines (cut at a line start) and fills the budget alone. parts is not
// modified.
func fitBudget(parts []repoctx.Part, budget int) []repoctx.Part {
	if len(parts) == 0 {
		return nil
	}
	last := parts[len(parts)-1]
	if partLen(last) > budget {
		room := budget - (len(repoctx.FileSep) + len(last.Path) + 1)
		if room <= 0 {
			return nil
		}
		from := len(last.Text) - room
		for from < len(last.Text) && !utf8.RuneStart(last.Text[from]) {
			from++
		}
		t := last.Text[from:]
		if i := strings.IndexByte(t, '\n'); i >= 0 && i+1 < len(t) {
			last.StartLine += strings.Count(last.Text[:from+i+1], "\n")
			t = t[i+1:]
		}
		last.Text = t
		return []repoctx.Part{last}
	}
	return FitParts(parts, float64(budget), func(p repoctx.Part) float64 { return float64(partLen(p)) })
}

// FitParts returns the parts, in their order, that fit in budget when the most
// relevant (the last) are taken first: a part whose cost does not fit in what is left
// is skipped, and the less relevant parts before it are still tried. cost is a part's
// cost in the budget's unit (characters or tokens, its "<|file_sep|>path" header
// included); parts is not modified.
func FitParts(parts []repoctx.Part, budget float64, cost func(repoctx.Part) float64) []repoctx.Part {
	costs := make([]float64, len(parts))
	for i, p := range parts {
		costs[i] = cost(p)
	}
	keep, _, _ := mostRelevantFirst(costs, budget)
	out := make([]repoctx.Part, 0, len(parts))
	for i, p := range parts {
		if keep[i] {
			out = append(out, p)
		}
	}
	return out
}

// mostRelevantFirst takes the parts of costs (least relevant first) from the last
// while each fits in what room leaves, skipping one that does not: which it keeps,
// the room left, and the most relevant skipped part (-1: none).
func mostRelevantFirst(costs []float64, room float64) (keep []bool, left float64, skipped int) {
	keep, left, skipped = make([]bool, len(costs)), room, -1
	for i := len(costs) - 1; i >= 0; i-- {
		if costs[i] <= left {
			keep[i], left = true, left-costs[i]
		} else if skipped < 0 {
			skipped = i
		}
	}
	return keep, left, skipped
}

// render joins parts as "<|file_sep|>{path}\n{content}".
func render(parts []repoctx.Part) string {
	size := 0
	for _, p := range parts {
		size += len(repoctx.FileSep) + len(p.Path) + 1 + len(p.Text)
	}
	var sb strings.Builder
	sb.Grow(size) // one allocation rather than a doubling builder's dozen
	for _, p := range parts {
		sb.WriteString(repoctx.FileSep)
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
		for l := range strings.Lines(t) {
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
	for l := range strings.Lines(text) {
		if l = strings.TrimSpace(l); l != "" && !set[l] {
			return false
		}
	}
	return true
}

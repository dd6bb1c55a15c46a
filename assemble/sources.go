package assemble

import (
	"sync"
	"unicode"
	"unicode/utf8"

	"slices"
	"sort"
	"strings"

	"github.com/repoctx/repoctx"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/retrieve"
	"github.com/repoctx/repoctx/symbols"
)

// fileTexts rebuilds file texts from an index's chunks (chunks tile their file).
type fileTexts struct {
	ix    *retrieve.Index
	cache map[string]string
	// foreign holds the prefixed paths of other repositories' parts (Options.CrossRepo).
	foreign foreignFiles
}

func newFileTexts(ix *retrieve.Index) *fileTexts {
	return &fileTexts{ix: ix, cache: map[string]string{}, foreign: foreignFiles{}}
}

// addForeign makes the prefixed path p of another repository's part name the file
// path of that repository whose texts text returns. It reports false when p already
// names a file whose text differs (the other repository's search index and symbol
// table are of two versions of it, for a moment while it updates): the part is then
// left out.
func (ft *fileTexts) addForeign(p string, text func(string) string, path string) bool {
	if _, ok := ft.foreign[p]; ok {
		return ft.text(p) == text(path)
	}
	ft.foreign[p] = foreignFile{text, path}
	return true
}

// chunks returns the chunks of path in file order.
func (ft *fileTexts) chunks(path string) []*chunker.Chunk {
	var out []*chunker.Chunk
	for i := 0; ; i++ {
		c, ok := ft.ix.Chunk(chunker.ChunkID(path, i))
		if !ok {
			return out
		}
		out = append(out, c)
	}
}

// text returns the normalised text of path as indexed, or "" (retrieve.Index.FileText,
// kept for the request).
func (ft *fileTexts) text(path string) string {
	if t, ok := ft.cache[path]; ok {
		return t
	}
	if t, ok := ft.foreign.text(path); ok {
		ft.cache[path] = t
		return t
	}
	t := ft.ix.FileText(path)
	ft.cache[path] = t
	return t
}

// spanKey identifies a candidate span.
type spanKey struct {
	path       string
	start, end int
}

type candidate struct {
	spanKey
	// lo and hi are the byte span shown, [start, end) or wider: a hit's margin
	// (Options.HitMargin) widens what is shown without changing the key the span is
	// scored by.
	lo, hi int
	score  float64
	why    []string
}

// candidates collects scored byte spans of files from all sources.
type candidates struct {
	byKey   map[spanKey]*candidate
	order   []spanKey // first-seen order, for determinism
	noMerge bool      // parts keeps overlapping spans apart (Options.NoSpanMerge)
}

func newCandidates() *candidates { return &candidates{byKey: map[spanKey]*candidate{}} }

// add adds s to the span's score (a span found twice, by two sources or queries,
// ranks higher).
func (cs *candidates) add(path string, start, end int, s float64, why string) {
	cs.addShown(path, start, end, start, end, s, why)
}

// addShown is add for a span [start, end) shown as [lo, hi) (lo <= start, hi >=
// end: the span with its margin). The score is the span's; a span added with two
// margins shows the union of both.
func (cs *candidates) addShown(path string, start, end, lo, hi int, s float64, why string) {
	k := spanKey{path, start, end}
	c := cs.byKey[k]
	if c == nil {
		c = &candidate{spanKey: k, lo: start, hi: end}
		cs.byKey[k] = c
		cs.order = append(cs.order, k)
	}
	c.lo, c.hi = min(c.lo, lo, start), max(c.hi, hi, end)
	c.score += s
	c.why = append(c.why, why)
}

// parts merges overlapping or touching spans of each file (as shown: with their
// margins) into one part (score =
// the best of its spans; with noMerge only touching ones, so that overlapping spans
// stay apart, their shared lines repeated) and returns the parts in ascending
// relevance.
func (cs *candidates) parts(ft *fileTexts) []repoctx.Part {
	byFile := map[string][]*candidate{}
	var paths []string
	for _, k := range cs.order {
		if _, ok := byFile[k.path]; !ok {
			paths = append(paths, k.path)
		}
		byFile[k.path] = append(byFile[k.path], cs.byKey[k])
	}
	var parts []repoctx.Part
	for _, path := range paths {
		list := byFile[path]
		sort.SliceStable(list, func(i, j int) bool { return list[i].lo < list[j].lo })
		text := ft.text(path)
		var cur *repoctx.Part
		var curStart, curEnd int
		flush := func() {
			if cur == nil {
				return
			}
			if curEnd > len(text) {
				curEnd = len(text)
			}
			if curStart < 0 || curStart >= curEnd {
				cur = nil // a span outside the file's text (inconsistent index): skip it
				return
			}
			if curEnd > 0 && text[curEnd-1] != '\n' { // end on a line end
				if i := strings.IndexByte(text[curEnd:], '\n'); i >= 0 {
					curEnd += i + 1
				} else {
					curEnd = len(text)
				}
			}
			cur.Text = text[curStart:curEnd]
			cur.StartLine = strings.Count(text[:curStart], "\n") + 1
			cur.EndLine = cur.StartLine + strings.Count(strings.TrimSuffix(cur.Text, "\n"), "\n")
			parts = append(parts, *cur)
			cur = nil
		}
		for _, c := range list {
			if cur != nil && c.lo <= curEnd && (!cs.noMerge || c.lo == curEnd) {
				curEnd = max(curEnd, c.hi)
				cur.Score = max(cur.Score, c.score)
				for _, w := range c.why {
					if !slices.Contains(cur.Why, w) {
						cur.Why = append(cur.Why, w)
					}
				}
				continue
			}
			flush()
			cur = &repoctx.Part{Path: path, Score: c.score, Why: append([]string(nil), c.why...)}
			curStart, curEnd = c.lo, c.hi
		}
		flush()
	}
	// Ascending relevance; ties broken by path and line so output is deterministic.
	sort.SliceStable(parts, func(i, j int) bool {
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

// eachIdent calls f with each identifier of s in order, the matches of
// `[\p{L}_][\p{L}\p{N}_]*` (a letter or '_', then letters, digits and '_'), without
// allocating: f gets substrings of s. Invalid UTF-8 bytes are not letters, as for
// that regular expression (TestEachIdent compares the two).
func eachIdent(s string, f func(id string)) {
	start := -1
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 {
			r = -1
		}
		switch {
		case r == '_' || r >= 0 && unicode.IsLetter(r):
			if start < 0 {
				start = i
			}
		case r >= 0 && unicode.IsNumber(r):
		default:
			if start >= 0 {
				f(s[start:i])
				start = -1
			}
		}
		i += n
	}
	if start >= 0 {
		f(s[start:])
	}
}

// editSpan returns the lines of the new text (prefix + suffix, the cursor line
// joined), the edited ones [a, end) (those left when the lines new and old share at
// the start and at the end are trimmed) and the cursor's line.
func editSpan(old, prefix, suffix string) (newLines []string, a, end, cursor int) {
	oldLines := strings.Split(old, "\n")
	pl := strings.Split(prefix, "\n")
	sl := strings.Split(suffix, "\n")
	// The cursor line is split between prefix and suffix: join it.
	newLines = append(append(append(make([]string, 0, len(pl)+len(sl)-1), pl[:len(pl)-1]...), pl[len(pl)-1]+sl[0]), sl[1:]...)
	cursor = len(pl) - 1
	for a < len(oldLines) && a < len(newLines) && oldLines[a] == newLines[a] {
		a++
	}
	b := 0
	for b < len(oldLines)-a && b < len(newLines)-a && oldLines[len(oldLines)-1-b] == newLines[len(newLines)-1-b] {
		b++
	}
	return newLines, a, len(newLines) - b, cursor
}

// editIdentifiers returns up to maxIDs identifiers (not keywords, at least 2 characters)
// of the user's edit (editSpan), nearest the cursor first (ties by name), joined by
// spaces. It reads the edited lines outward from the cursor and stops once maxIDs
// identifiers are closer than any line left, so a huge edit costs no more than its
// lines near the cursor.
func editIdentifiers(old, prefix, suffix string, spec *grammars.Spec, maxIDs int) string {
	newLines, a, end, cursor := editSpan(old, prefix, suffix)
	type ident struct {
		name string
		d    int
	}
	best := map[string]int{}
	see := func(i, d int) {
		if i < a || i >= end || i == cursor {
			return
		}
		eachIdent(newLines[i], func(id string) {
			if len(id) < 2 || spec != nil && spec.IsKeyword(id) {
				return
			}
			if _, ok := best[id]; !ok {
				best[id] = d // lines are read by increasing distance
			}
		})
	}
	for d := 1; d <= max(cursor-a, end-1-cursor) && len(best) < maxIDs; d++ {
		see(cursor-d, d)
		see(cursor+d, d)
	}
	ids := make([]ident, 0, len(best))
	for n, d := range best {
		ids = append(ids, ident{n, d})
	}
	sort.Slice(ids, func(i, j int) bool {
		if ids[i].d != ids[j].d {
			return ids[i].d < ids[j].d
		}
		return ids[i].name < ids[j].name
	})
	var out []string
	for i := 0; i < len(ids) && i < maxIDs; i++ {
		out = append(out, ids[i].name)
	}
	return strings.Join(out, " ")
}

// maxDefBytes is the largest definition shown whole (longer ones show their head);
// maxDefs caps the definitions added per completion point.
const (
	maxDefBytes = 900
	maxDefs     = 8
)

// definitions adds, for the identifiers nearest the cursor that the current text of
// the completion file does not define, the definitions they resolve to
// (symbols.Table.ResolveUse: by import or by the receiver's type before the bare
// name, within the language family). When the planner trimmed the hole, a name
// defined only in the trimmed part counts as undefined, and its definition in the old
// completion file (outside the text given) may be added. A definition is shown from
// the start of its first line, so that its indentation is kept.
func (c *composer) definitions() {
	for _, d := range c.findDefinitions(c.files) {
		c.cands.add(d.path, d.start, d.end, d.score, d.reason)
	}
}

// foundDef is a definition that findDefinitions chose: a span of path's text, its score
// and its reason tag, to be added to the candidates (candidates.add).
type foundDef struct {
	path       string
	start, end int
	score      float64
	reason     string
}

// findDefinitions returns the parts definitions adds, in the order it adds them,
// reading file texts through files. It neither reads nor changes the candidates, so
// it may run beside retrieval with a fileTexts of its own, unless other repositories'
// definitions are asked for (their paths are registered in files).
func (c *composer) findDefinitions(files *fileTexts) []foundDef {
	h, spec := c.h, c.spec
	pq, sq := QueryText(h.Prefix, h.Suffix, c.opts.QueryLines)
	uses := symbols.Uses(pq, sq, spec)
	trimmed := c.seen.PrefixTrimmed || c.seen.SuffixTrimmed
	cur, defined := c.fileSymbols(files, trimmed)
	site := symbols.Site{From: h.Path, Current: cur, Keep: c.defAllowed}
	if cur != nil {
		site.Imports = cur.Imports // nil (none): those of the indexed copy
	}
	if len(h.Prefix)+len(h.Suffix) <= chunker.DefaultMaxFileBytes {
		site.Scope = symbols.NewScope(spec.Name, h.Prefix+h.Suffix, len(h.Prefix))
	}
	var old string
	if trimmed {
		old = files.text(h.Path)
	}
	var fsite symbols.Site // the site in other repositories' tables
	if c.opts.CrossRepo != nil && len(c.opts.CrossRepo.Definitions) > 0 {
		fsite = symbols.Site{From: h.Path, Imports: site.Imports, Scope: site.Scope, Keep: c.foreignDefAllowed}
		if cur == nil {
			if f := c.syms.File(h.Path); f != nil {
				fsite.Imports = f.Imports
			}
		}
	}
	var out []foundDef
	for i, u := range uses {
		if len(out) >= maxDefs {
			break
		}
		if defined[u.Name] {
			continue
		}
		cands := c.syms.ResolveUse(u, site, 2)
		var src *DefSource // the other repository of cands, nil for the view's own
		if len(cands) == 0 && len(fsite.Imports) > 0 {
			src, cands = c.foreignDefinitions(u, fsite)
		}
		for rank, cand := range cands {
			d := cand.Def
			p, via := d.Path, cand.Via
			if src != nil {
				p, via = src.Repository+"/"+d.Path, "cross-repo "+cand.Via
				if !files.addForeign(p, src.Text, d.Path) {
					continue
				}
			}
			text := files.text(p)
			start, end := d.StartByte, d.EndByte
			if end-start > maxDefBytes {
				end = start + headBytes(d)
			}
			if start > len(text) || end > len(text) {
				continue // the index and the symbol table disagree about the file
			}
			if ls := strings.LastIndexByte(text[:start], '\n') + 1; strings.TrimLeft(text[ls:start], " \t") == "" {
				start = ls // the first line's indentation
			}
			if src == nil && d.Path == h.Path && (!trimmed || end > len(old) || AllLinesIn(old[start:end], c.visible)) {
				continue // the old completion file is its own source, unless trimmed off
			}
			s := c.opts.DefinitionWeight / float64(retrieve.RRFK+1+i+rank) / (1 + float64(u.Dist)/10)
			if cand.Via == symbols.ViaGlobal {
				s *= 0.5 // a name found by chance elsewhere is weaker evidence
			}
			out = append(out, foundDef{p, start, end, s, "def:" + u.Name + "(" + via + ")"})
		}
	}
	return out
}

// foreignDefinitions resolves u in the other repositories' tables
// (CrossRepo.Definitions, in order) through the completion file's imports (site:
// symbols.Table.ResolveForeign); it returns the first repository that resolves it
// with its definitions, or nil.
func (c *composer) foreignDefinitions(u symbols.Use, site symbols.Site) (*DefSource, []symbols.Candidate) {
	for i := range c.opts.CrossRepo.Definitions {
		src := &c.opts.CrossRepo.Definitions[i]
		if src.Symbols == nil || src.Text == nil || src.Repository == c.opts.CrossRepo.Own {
			continue
		}
		if cands := src.Symbols.ResolveForeign(u, site, src.Names, 2); len(cands) > 0 {
			return src, cands
		}
	}
	return nil, nil
}

// foreignDefAllowed reports whether definition d of another repository may be used:
// its file is of one of c.langs.
func (c *composer) foreignDefAllowed(d *symbols.Def) bool {
	if c.langs == nil {
		return true
	}
	s := grammars.ForPath(d.Path)
	return s != nil && c.langs[s.Name]
}

// defAllowed reports whether definition d may be used (composer.allowed).
func (c *composer) defAllowed(d *symbols.Def) bool {
	if c.langs == nil || d.Path == c.h.Path {
		return true
	}
	s := grammars.ForPath(d.Path)
	return s != nil && c.langs[s.Name]
}

// extractors lends symbol extractors (each holds tree-sitter parsers, usable by one
// goroutine at a time; a dropped one is freed by the parsers' finalizers).
var extractors = sync.Pool{New: func() any { return symbols.NewExtractor(0) }}

// fileSymbols returns the symbols of the completion file's current text (nil when it
// is not parsed) and the names it defines; with trimmed, the names of the definitions
// whose name is in the text the model is given (see visibleDefs: found by their
// offsets in the whole text's symbols, so the trimmed text is parsed only when the
// whole one could not be; the imports stay those of the whole file: the trimmed top
// may hold them). The file is parsed only when it is not larger than the snapshot
// files repoctx parses at all (a pathological prefix would otherwise cost seconds and
// gigabytes of tree). A current text equal to the indexed one (read through files: a
// request on a saved, unedited file) is not parsed again: its symbols are the symbol
// table's for that file, which the index extracted from the same text.
func (c *composer) fileSymbols(files *fileTexts, trimmed bool) (*symbols.File, map[string]bool) {
	h := c.h
	defined := map[string]bool{}
	if len(h.Prefix)+len(h.Suffix) > chunker.DefaultMaxFileBytes {
		return nil, defined
	}
	var ex *symbols.Extractor // lent when a text is parsed
	defer func() {
		if ex != nil {
			extractors.Put(ex)
		}
	}()
	extract := func(text string) (*symbols.File, error) {
		parse := func() (*symbols.File, error) {
			if ex == nil {
				ex = extractors.Get().(*symbols.Extractor)
			}
			return ex.Extract(&chunker.File{Path: h.Path, Lang: c.spec.Name, Text: []byte(text)})
		}
		if c.opts.TextSymbols != nil {
			return c.opts.TextSymbols(c.view, h.Path, c.spec.Name, text, parse)
		}
		return parse()
	}
	sf := c.indexedSymbols(files)
	if sf == nil {
		var err error
		if sf, err = extract(h.Prefix + h.Suffix); err != nil {
			sf = nil
		}
	}
	if sf != nil {
		for _, d := range sf.Defs {
			defined[d.Name] = true
		}
	}
	if trimmed {
		defined = map[string]bool{}
		if sf != nil {
			// The given text is bytes [PrefixCut, len(Prefix)+SuffixCut) of prefix+suffix,
			// the text sf's offsets refer to.
			visibleDefs(defined, sf.Defs, h.Prefix+h.Suffix, c.seen.PrefixCut, len(h.Prefix)+c.seen.SuffixCut)
		} else if tf, err := extract(c.seen.Prefix + c.seen.Suffix); err == nil {
			for _, d := range tf.Defs {
				defined[d.Name] = true
			}
		}
	}
	return sf, defined
}

// visibleDefs adds to defined the names of defs (whose offsets are those of text) that
// are visible in text[from:to]: a definition is when its name is (see nameAt).
func visibleDefs(defined map[string]bool, defs []symbols.Def, text string, from, to int) {
	for _, d := range defs {
		if d.EndByte <= from || d.StartByte >= to || d.StartByte < 0 || d.StartByte > d.EndByte || d.EndByte > len(text) {
			continue
		}
		if at := nameAt(text, d); at >= from && at < to {
			defined[d.Name] = true
		}
	}
}

// nameAt returns the offset in text of d's name: its first whole-word occurrence in
// d's span after the decorators and annotations that open the span (see
// skipAnnotations), or d's start for a name the span does not spell (Kotlin's
// Companion). d's span must lie in text.
func nameAt(text string, d symbols.Def) int {
	span := text[d.StartByte:d.EndByte]
	from := skipAnnotations(span)
	if i := symbols.WordIndex(span[from:], d.Name); i >= 0 && d.Name != "" {
		return d.StartByte + from + i
	}
	return d.StartByte
}

// skipAnnotations returns the offset in s past the decorators and annotations that
// open it: each an @ and a dotted name (Kotlin's use-site targets, @get:Rule, and
// @[A B] included) with its parenthesised arguments, string literals in them skipped.
func skipAnnotations(s string) int {
	p := 0
	for {
		q := p
		for q < len(s) && (s[q] == ' ' || s[q] == '\t' || s[q] == '\n' || s[q] == '\r') {
			q++
		}
		if q >= len(s) || s[q] != '@' {
			return p
		}
		q++
		for q < len(s) && (symbols.IsIdentByte(s[q]) || s[q] == '.' || s[q] == ':') {
			q++
		}
		for q < len(s) && (s[q] == '(' || s[q] == '[') {
			q = skipBracketed(s, q)
		}
		p = q
	}
}

// skipBracketed returns the offset in s past the bracketed group opening at i (a
// '(' or '['), nested brackets and string literals ('...', "...", with backslash
// escapes) inside it skipped; len(s) when it does not close.
func skipBracketed(s string, i int) int {
	depth := 0
	for ; i < len(s); i++ {
		switch c := s[i]; c {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
			if depth == 0 {
				return i + 1
			}
		case '"', '\'':
			for i++; i < len(s) && s[i] != c; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		}
	}
	return len(s)
}

// indexedSymbols returns the symbol table's symbols of the completion file when its
// current text (prefix + suffix) is the indexed text (files.text: the file's chunks
// cover every byte of it) and the table has the file in the completion file's
// language; else nil. A text nested too deep (chunker.TooDeep) is parsed again: the
// structural chunker, whose parse the table's symbols may come from (with any
// chunking settings: the symbol record is keyed by the file's content), parsed it
// with the inside of its too deep region blanked.
func (c *composer) indexedSymbols(files *fileTexts) *symbols.File {
	f := c.syms.File(c.h.Path)
	if f == nil || f.Lang != c.spec.Name {
		return nil
	}
	t := files.text(c.h.Path)
	if len(t) != len(c.h.Prefix)+len(c.h.Suffix) || t[:len(c.h.Prefix)] != c.h.Prefix || t[len(c.h.Prefix):] != c.h.Suffix {
		return nil
	}
	if chunker.TooDeep(t) {
		return nil
	}
	return f
}

// headBytes estimates the bytes of a definition's head (annotations, doc comment,
// signature, docstring) from its signature and doc; the part is then cut at the end of
// that line.
func headBytes(d *symbols.Def) int {
	n := len(d.Doc) + len(d.Signature) + 200
	return min(n, d.EndByte-d.StartByte)
}

// replacedRegion finds, in the old completion file, what stood between the prefix's
// last lines and the suffix's first lines: the text the user is replacing. It returns
// the 0-based line range [from, to) of the old file to show (the replaced lines with
// ctx non-blank lines of context before them and one line after), or ok=false when the prefix's tail cannot be
// found or nothing was replaced (a pure insertion). Matching ignores leading and
// trailing white space; at most maxReplaced replaced lines are accepted.
func replacedRegion(old, prefix, suffix string, ctx int) (from, to int, ok bool) {
	const tailLines, maxReplaced = 3, 30
	oldLines := strings.Split(old, "\n")
	trim := func(ls []string) []string {
		out := make([]string, len(ls))
		for i, l := range ls {
			out[i] = strings.TrimSpace(l)
		}
		return out
	}
	ol := trim(oldLines)
	// The prefix's complete lines (the unfinished current line belongs to the middle).
	pl := strings.Split(prefix, "\n")
	pl = trim(pl[:len(pl)-1])
	var tail []string
	for i := len(pl) - 1; i >= 0 && len(tail) < tailLines; i-- {
		if pl[i] != "" {
			tail = append([]string{pl[i]}, tail...)
		}
	}
	if len(tail) == 0 {
		return 0, 0, false
	}
	// Find the tail (non-blank lines in order) ending nearest the prefix's line count.
	expect := len(pl)
	best, bestDist := -1, 1<<30
	for end := 0; end < len(ol); end++ {
		if ol[end] != tail[len(tail)-1] {
			continue
		}
		k, i := len(tail)-2, end-1
		for ; k >= 0 && i >= 0; i-- {
			if ol[i] == "" {
				continue
			}
			if ol[i] != tail[k] {
				break
			}
			k--
		}
		if k < 0 {
			d := end + 1 - expect
			if d < 0 {
				d = -d
			}
			if d < bestDist {
				best, bestDist = end+1, d
			}
		}
	}
	if best < 0 {
		return 0, 0, false
	}
	// The first non-blank suffix line (after the rest of the cursor line) marks the end.
	sl := trim(strings.Split(suffix, "\n"))
	if !strings.HasSuffix(prefix, "\n") && prefix != "" {
		sl = sl[1:] // the rest of the cursor line belongs to the edited line
	}
	head := ""
	for _, l := range sl {
		if l != "" {
			head = l
			break
		}
	}
	end := -1
	for j := best; j < len(ol) && j <= best+maxReplaced; j++ {
		if head != "" && ol[j] == head {
			end = j
			break
		}
	}
	if end < 0 {
		end = min(best+3, len(ol)) // suffix head not found: show a few lines after the tail
	}
	replaced := false
	for j := best; j < end; j++ {
		if ol[j] != "" {
			replaced = true
		}
	}
	if !replaced {
		return 0, 0, false
	}
	from = best
	for n := 0; from > 0 && n < ctx; from-- { // ctx non-blank lines of context before
		if ol[from-1] != "" {
			n++
		}
	}
	return from, min(len(ol), end+1), true
}

// lineSpan returns the byte range of lines [from, to) of text.
func lineSpan(text string, from, to int) (int, int) {
	start, line := 0, 0
	for line < from {
		i := strings.IndexByte(text[start:], '\n')
		if i < 0 {
			return len(text), len(text)
		}
		start += i + 1
		line++
	}
	end := start
	for line < to {
		i := strings.IndexByte(text[end:], '\n')
		if i < 0 {
			return start, len(text)
		}
		end += i + 1
		line++
	}
	return start, end
}

// clone returns a copy of cs that adds and scores independently of it.
func (cs *candidates) clone() *candidates {
	out := &candidates{byKey: make(map[spanKey]*candidate, len(cs.byKey)), order: append([]spanKey(nil), cs.order...), noMerge: cs.noMerge}
	for k, c := range cs.byKey {
		cc := *c
		cc.why = append([]string(nil), c.why...)
		out.byKey[k] = &cc
	}
	return out
}

package assemble

import (
	"strings"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/index"
	"github.com/repoctx/repoctx/retrieve"
	"github.com/repoctx/repoctx/symbols"
)

// Options configures [Compose]. Start from [DefaultOptions] (or a [Preset]'s
// Options): every scalar field is declared once, with its default, bounds and help,
// in [OptionTable] (the command line, the HTTP API, eval and the tuning script are
// made from it), and Compose refuses values that make no sense (see
// [Options.Validate]).
type Options struct {
	// QueryLines is how many lines before the cursor form the prefix query and how many
	// after it form the suffix query (lines).
	QueryLines int
	// TopK is how many chunks each query retrieves (chunks), at most [MaxTopK].
	TopK int
	// BudgetChars caps the context length in bytes of UTF-8 text, separators included.
	// Parts are kept most relevant first while they fit; a part that does not fit in
	// what is left is skipped and the less relevant ones are still tried. The budget
	// planner (Plan) budgets in tokens instead.
	BudgetChars int
	// SuffixWeight scales the suffix query's fused scores against the prefix query's
	// (weight 1).
	SuffixWeight float64
	// ModifiedBoost multiplies the scores of chunks in files the hole lists as
	// modified (other than the completion file).
	ModifiedBoost float64
	// NoRelative turns relative positioning off: only the matched chunks are used.
	NoRelative bool
	// RelativeWeight scales a match's score for its neighbour (the lines after a
	// prefix match and before a suffix match, see RelativeLines); above 1 ranks the
	// neighbour just above its match.
	RelativeWeight float64
	// RelativeLines, when above 0, makes relative positioning bring the RelativeLines
	// lines after a prefix match (before a suffix match) instead of the next
	// (previous) chunk: the statements that follow the matched text, whatever the
	// chunk sizes. 0 brings the neighbouring chunk. Default
	// [DefaultRelativeLines].
	RelativeLines int
	// HitMargin, when above 0, extends each retrieved chunk (a hit of the prefix,
	// suffix or draft query) by up to HitMargin lines before and after it from the
	// same file (lines), clipped at the file's ends; the extended span is merged with
	// the other parts of the file like any span, so no line appears twice. Only the
	// geometry changes: the hit is scored as without the margin. Lines of the
	// completion file's old copy that the prefix and suffix already show are not
	// added. 0 (the default) shows the chunk alone; [PresetBatch] sets
	// [BatchHitMargin]. See HitGap.
	HitMargin int
	// HitGap, with HitMargin above 0, extends a hit only backwards, across the
	// chunks between it and the previous function or class chunk of its file
	// (comments, annotations, imports, properties and their initialisers), at most
	// HitMargin lines, and not after it.
	HitGap bool
	// NoEditQuery turns off adding the identifiers of the user's edit (lines where
	// prefix+suffix differ from the old completion file) to the queries.
	NoEditQuery bool
	// EditIdentifiers is the most identifiers of the edit added to the queries,
	// nearest the cursor first.
	EditIdentifiers int
	// NoDefinitions turns off the definitions source.
	NoDefinitions bool
	// MinScoreRatio drops retrieval hits scoring below this fraction of the query's
	// best hit; 0 keeps all top-k. In [0, 1].
	MinScoreRatio float64
	// DefinitionWeight weighs a definition of the identifier nearest the cursor against
	// a top-1 retrieval hit (weight 1).
	DefinitionWeight float64
	// NoDense searches BM25 only even when the index has dense vectors.
	NoDense bool
	// NoHeaderField leaves the chunks' headers (the signatures of their enclosing
	// definitions, a BM25 field of their own) out of the retrieval score
	// ([retrieve.Query.NoHeader]): an ablation switch, off by default.
	NoHeaderField bool
	// NoSpanMerge keeps overlapping or touching spans of one file as separate parts
	// (their shared lines repeated) instead of merging them into one: an ablation
	// switch measuring the deduplication of overlapping windows, off by default.
	NoSpanMerge bool
	// Fusion weighs BM25 against dense retrieval in reciprocal rank fusion.
	Fusion retrieve.Weights
	// NoOldFile leaves out the old completion file's chunks that the prefix and suffix
	// do not show, and the region the edit replaced.
	NoOldFile bool
	// OldFileWeight weighs those chunks against a top-1 retrieval hit (weight 1).
	OldFileWeight float64
	// OldFileDecay is the distance from the hole (lines) at which an old-file chunk's
	// weight halves: OldFileWeight / (1 + distance/OldFileDecay).
	OldFileDecay float64
	// Languages are the grammar names whose files' chunks and definitions the context
	// may hold (the completion file's own old copy always may). Empty means the
	// family of the completion file's language (grammars.Family: Kotlin with Java,
	// TypeScript with TSX and JavaScript, C with C++), or every language when the
	// completion file has none.
	Languages []string
	// Plan is the budget planner (off in DefaultOptions, an editor's single context;
	// PresetBatch turns it on for BatchPlanWindow): it may trim the prefix and suffix
	// the model is given and budgets the context in tokens for one model window
	// instead of BudgetChars; see [Plan].
	Plan Plan
	// PrefixOutline, when above 0 and the planner trims the prefix, adds an outline
	// of the trimmed far prefix to the context, at most PrefixOutline tokens and
	// placed last (most relevant): its import and declaration lines, then other lines
	// nearest the cut, each kept only when it brings an identifier the given prefix,
	// the suffix and the outline so far lack (see prefixOutline). 0 adds none.
	PrefixOutline int
	// Iterations is the number of retrieval rounds of RepoCoder's iterative
	// retrieval (Zhang et al. 2023, §3), at most [MaxIterations]: 0 or 1 composes
	// once; each further round drafts the middle from the last context (Drafter),
	// queries again with the last DraftQueryLines prefix lines plus the draft, fuses
	// that query's hits into the first round's candidates by reciprocal rank and
	// composes again (see the design note in iterate.go).
	Iterations int
	// Drafter drafts the middle for iterative retrieval; nil means the built-in
	// [CopyDrafter], which needs no model. A failed draft (an error, a blank draft,
	// a panic) falls back on the built-in drafter for that round.
	Drafter Drafter
	// OnDraft, if not nil, is called after every draft Drafter (when not nil) made,
	// with a nil error, or failed to make, with its error (the built-in drafter's
	// draft is then used). It is called from the composing goroutine: batch workers
	// call it at once, so it must be safe for concurrent use.
	OnDraft func(h repoctx.Hole, err error)
	// DraftQueryLines is how many complete prefix lines before the cursor's
	// unfinished line join the draft in the draft query (lines; 0: the unfinished
	// line and the draft only). See [Compose].
	DraftQueryLines int
	// CrossRepo, if not nil, makes the prefix and suffix queries search other
	// repositories too (package crossrepo, BM25 only); nil (the default) searches the
	// view's repository alone. See [CrossRepo].
	CrossRepo *CrossRepo
	// DraftWeight scales the draft query's fused scores against the prefix query's
	// (weight 1); its hits fuse with the first round's candidates by reciprocal
	// rank (weight / (k + rank), k = retrieve.RRFK).
	DraftWeight float64
	// TextSymbols, if not nil, gives the symbols of the completion file's text (for
	// its definitions: the names it defines) in place of extract, which parses the
	// text. The batch commands set it to (*index.View).TextSymbols, which keeps them
	// in the view's repository records and reads them back the next time the same text
	// is composed (a dataset's completion files come back run after run); it must
	// return what extract returns. nil calls extract.
	TextSymbols func(view *index.View, path, lang, text string, extract func() (*symbols.File, error)) (*symbols.File, error)
}

// MaxTopK is the largest TopK Validate accepts (chunks): far more than a context
// budget holds (the default budget holds about 30 chunks), small enough that one
// request cannot make a search hold an absurd number of hits.
const MaxTopK = 10_000

// DefaultRelativeLines is the default Options.RelativeLines: 20, the line count of a
// fixed window. A structural chunk is a whole definition, so its next chunk is the
// next definition, of any length; the 20 lines after the match are what follows the
// matched code whatever the chunking. On the tuning half of the held-out corpus it
// raised novelrec in all four cells (Kotlin and Python, small and block middles; +0.003
// to +0.025) with no loss in allrec, line_chrf or copy_chrf (docs/structure.md).
const DefaultRelativeLines = 20

// MaxIterations is the most retrieval rounds Validate accepts: RepoCoder measured 2
// to 4; every round drafts (possibly asking a model) and searches again.
const MaxIterations = 10

// DefaultOptions returns the defaults, [PresetLive]'s: every option at its
// [OptionTable] default. Those are 8 query lines, top 16 per query, a budget of
// 24,000 bytes, suffix weight 0.6, modified-file boost 1.5, relative weight 1.05,
// 8 edit identifiers, definition weight 0.9, old-file weight 1.2 (decay 40 lines),
// relative positioning by 20 lines, no margin around a hit,
// the seed's fusion weights (dense 0.8, BM25 0.2, k = 60), every source on, the
// planner off (its suffix share 0.25 and the language's share when turned on;
// [PresetBatch] turns it on) and one retrieval round (3 prefix lines with a draft,
// draft weight 1; PresetBatch runs three and shows 10 lines around each hit). The
// weights and thresholds were tuned on the tuning half of the tuning corpus by
// coordinate-wise grid search (scripts/tune; docs/results.md).
func DefaultOptions() Options { return PresetLive.Options() }

// Validate reports the first option that makes no sense as a *repoctx.OptionError
// naming the option (its [OptionTable] Name, the command-line flag): a value outside
// its table bounds (non-positive counts and budgets, a TopK over [MaxTopK], negative
// or non-finite weights, a score ratio outside [0, 1], a planner window that leaves
// no room for the completion, a number of iterations outside [0, MaxIterations], ...)
// or an unknown language.
func (o Options) Validate() error {
	for i := range OptionTable {
		s := &OptionTable[i]
		if err := s.check(s.Get(&o)); err != nil {
			return err
		}
	}
	for _, l := range o.Languages {
		if grammars.Lookup(l) == nil {
			return &repoctx.OptionError{Option: "langs", Value: l, Want: "a registered language (" + strings.Join(grammars.Names(), ", ") + ")"}
		}
	}
	return nil
}

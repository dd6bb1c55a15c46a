package assemble

import (
	"fmt"
	"math"
	"strings"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/retrieve"
)

// Options configures [Compose]. Start from [DefaultOptions]: every field's default
// is defined there, once (the command line builds its flags from it), and Compose
// refuses values that make no sense (see [Options.Validate]).
type Options struct {
	// QueryLines is how many lines before the cursor form the prefix query and how many
	// after it form the suffix query (lines).
	QueryLines int
	// TopK is how many chunks each query retrieves (chunks), at most [MaxTopK].
	TopK int
	// BudgetChars caps the context length in bytes of UTF-8 text, separators included.
	// Parts are dropped, least relevant first, until the context fits. The budget
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
	// RelativeWeight scales a match's score for its neighbour (the next chunk of a
	// prefix match, the previous chunk of a suffix match); above 1 ranks the neighbour
	// just above its match.
	RelativeWeight float64
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
	// batch.DefaultConfig turns it on for batch.DefaultPlanWindow): it may trim the prefix and suffix
	// the model is given and budgets the context in tokens for one model window
	// instead of BudgetChars; see [Plan].
	Plan Plan
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
	// DraftWeight scales the draft query's fused scores against the prefix query's
	// (weight 1); its hits fuse with the first round's candidates by reciprocal
	// rank (weight / (k + rank), k = retrieve.RRFK).
	DraftWeight float64
}

// MaxTopK is the largest TopK Validate accepts (chunks): far more than a context
// budget holds (the default budget holds about 30 chunks), small enough that one
// request cannot make a search hold an absurd number of hits.
const MaxTopK = 10_000

// MaxIterations is the most retrieval rounds Validate accepts: RepoCoder measured 2
// to 4; every round drafts (possibly asking a model) and searches again.
const MaxIterations = 10

// DefaultOptions returns the defaults: 8 query lines, top 16 per query, a budget of
// 24,000 bytes, suffix weight 0.6, modified-file boost 1.5, relative weight 1.05,
// 8 edit identifiers, definition weight 0.9, old-file weight 1.2 (decay 40 lines), the
// seed's fusion weights (dense 0.8, BM25 0.2, k = 60), every source on, the planner
// off (when turned on: the language's share, DefaultPlanShareFor, and suffix share
// 0.25; batch.DefaultConfig turns it on) and one retrieval round (an editor's single
// context; batch.DefaultConfig runs batch.DefaultIterations; a further round queries
// with 3 prefix lines and the draft, draft weight 1). The weights and thresholds were
// tuned on the tuning half of the evaluation corpus (scripts/build-corpus.sh) by
// coordinate-wise grid search (scripts/tune; docs/results.md): top-k, query lines and
// edit identifiers came out of it, every other value stayed (no grid value beat it by
// more than noise).
func DefaultOptions() Options {
	return Options{
		QueryLines:       8,
		TopK:             16,
		BudgetChars:      24000,
		SuffixWeight:     0.6,
		ModifiedBoost:    1.5,
		RelativeWeight:   1.05,
		EditIdentifiers:  8,
		DefinitionWeight: 0.9,
		Fusion:           retrieve.DefaultWeights(),
		OldFileWeight:    1.2,
		OldFileDecay:     40,
		Plan:             Plan{SuffixShare: DefaultPlanSuffixShare}, // Share 0: by language (DefaultPlanShareFor)
		Iterations:       1,                                         // batch.DefaultConfig runs batch.DefaultIterations
		DraftQueryLines:  3,
		DraftWeight:      1,
	}
}

// Validate reports the first option that makes no sense as a *repoctx.OptionError
// naming the command-line flag made from it: non-positive counts and budgets, a TopK
// over [MaxTopK], negative or non-finite weights, an unknown language, a score ratio
// outside [0, 1], a planner window that leaves no room for the completion, planner
// shares outside their ranges, a number of iterations outside [0, MaxIterations], a
// negative number of draft query lines.
func (o Options) Validate() error {
	bad := func(option string, v any, want string) error {
		return &repoctx.OptionError{Option: option, Value: fmt.Sprint(v), Want: want}
	}
	ints := []struct {
		name string
		v    int
		want string
	}{
		{"query-lines", o.QueryLines, "a positive number of lines"},
		{"top-k", o.TopK, "a positive number of chunks"},
		{"budget", o.BudgetChars, "a positive number of bytes"},
		{"edit-identifiers", o.EditIdentifiers, "a positive number of identifiers"},
	}
	for _, c := range ints {
		if c.v <= 0 {
			return bad(c.name, c.v, c.want)
		}
	}
	if o.TopK > MaxTopK {
		return bad("top-k", o.TopK, fmt.Sprintf("a positive number of chunks up to %d", MaxTopK))
	}
	if o.Iterations < 0 || o.Iterations > MaxIterations {
		return bad("iterations", o.Iterations, fmt.Sprintf("a positive number of retrieval rounds up to %d (0 or 1: one)", MaxIterations))
	}
	if o.DraftQueryLines < 0 {
		return bad("draft-query-lines", o.DraftQueryLines, "a number of lines >= 0")
	}
	floats := []struct {
		name string
		v    float64
	}{
		{"suffix-weight", o.SuffixWeight}, {"modified-boost", o.ModifiedBoost},
		{"relative-weight", o.RelativeWeight}, {"definition-weight", o.DefinitionWeight},
		{"old-file-weight", o.OldFileWeight}, {"old-file-decay", o.OldFileDecay}, {"bm25-weight", o.Fusion.BM25},
		{"dense-weight", o.Fusion.Dense}, {"rrf-k", o.Fusion.K}, {"draft-weight", o.DraftWeight},
	}
	for _, c := range floats {
		if !(c.v >= 0) || math.IsInf(c.v, 0) { // also NaN
			return bad(c.name, c.v, "a finite number >= 0")
		}
	}
	if !(o.OldFileDecay > 0) {
		return bad("old-file-decay", o.OldFileDecay, "a positive number of lines")
	}
	for _, l := range o.Languages {
		if grammars.Lookup(l) == nil {
			return bad("langs", l, "a registered language ("+strings.Join(grammars.Names(), ", ")+")")
		}
	}
	if !(o.MinScoreRatio >= 0 && o.MinScoreRatio <= 1) {
		return bad("min-score-ratio", o.MinScoreRatio, "in [0, 1]")
	}
	return o.Plan.validate()
}

// validate checks the planner's settings (see Options.Validate).
func (p Plan) validate() error {
	bad := func(option string, v any, want string) error {
		return &repoctx.OptionError{Option: option, Value: fmt.Sprint(v), Want: want}
	}
	if p.Window < 0 || p.Window > 0 && p.Window <= repoctx.MaxNewTokens {
		return bad("plan-window", p.Window, fmt.Sprintf("0 (off) or more than %d tokens (the completion's room)", repoctx.MaxNewTokens))
	}
	if !(p.Share >= 0) || math.IsInf(p.Share, 0) {
		return bad("plan-share", p.Share, "a positive fraction, or 0 for the language's default")
	}
	if !(p.SuffixShare >= 0 && p.SuffixShare <= 1) {
		return bad("plan-suffix-share", p.SuffixShare, "in (0, 1], or 0 for the default")
	}
	if p.ContextWindow < 0 {
		return bad("plan-context-window", p.ContextWindow, "0 (the plan window) or a positive number of tokens")
	}
	return nil
}

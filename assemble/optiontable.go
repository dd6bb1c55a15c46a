package assemble

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/retrieve"
)

// OptionKind is the type of an option's value.
type OptionKind int

const (
	// KindInt is a whole number (a Go int; a JSON integer).
	KindInt OptionKind = iota
	// KindFloat is a finite float64 (a JSON number).
	KindFloat
	// KindBool is a switch (a JSON boolean); its default is always off.
	KindBool
)

// OptionSpec declares one scalar field of [Options]: its names, type, default,
// bounds and help. [OptionTable] holds every one of them, once; the command line's
// flags, the HTTP API's "options" fields, eval's description of a configuration,
// the tuning script's parameters and the prediction journal's option record are all
// made from it, so an option is never spelled twice.
//
// Values pass through a float64 (v): an int option's value is a whole number, a
// bool option's is 0 (off) or 1 (on).
type OptionSpec struct {
	// Name is the option's name on the command line (the flag without dashes, e.g.
	// "top-k"), in errors (repoctx.OptionError.Option), in tuning grids and in eval's
	// configuration text.
	Name string
	// JSON is the option's field name in the HTTP API's "options" object and in the
	// prediction journal's option record: Name with "_" for "-".
	JSON string
	// Kind is the value's type.
	Kind OptionKind
	// Default is the value of [DefaultOptions] ([PresetLive]); [PresetBatch] overrides
	// a few.
	Default float64
	// Min and Max bound the value, inclusive (Min exclusive when MinExclusive);
	// Max is +Inf when there is no upper bound. Floats must also be finite.
	Min, Max     float64
	MinExclusive bool
	// Want says what values are accepted, for errors: "a positive number of chunks".
	Want string
	// Help is the one-line help of the flag and the API field. Other options are
	// written {name} in it (see [OptionSpec.FlagHelp], [OptionSpec.JSONHelp]); a
	// `word` in backquotes names the flag's value on the command line.
	Help string
	// Requires names an int option that must be above 0 for this one to matter
	// (the budget planner's settings need plan-window): a value other than 0 given
	// while it is 0 is an error ([CheckGiven]).
	Requires string
	// RequiresOff says what the Requires option at 0 means, for that error: "the
	// planner is off".
	RequiresOff string

	// field returns a pointer to the option's field of o: *int, *float64 or *bool.
	field func(o *Options) any
	// also, if not nil, is a further rule on the value beyond the bounds
	// (plan-window: 0 or above repoctx.MaxNewTokens).
	also func(v float64) bool
}

// OptionTable declares every scalar option of [Options], in the order the command
// line's help lists them. Options that are not numbers or switches are set in other
// ways: Languages (--langs, shared with indexing), Plan.Tokens (--tokenizer), Drafter
// and OnDraft (--draft-endpoint and the Go API), TextSymbols (the batch commands).
var OptionTable = []OptionSpec{
	intOpt("query-lines", 8, 1, inf, "a positive number of lines",
		"lines before/after the cursor used as the prefix/suffix query",
		func(o *Options) any { return &o.QueryLines }),
	intOpt("top-k", 16, 1, MaxTopK, fmt.Sprintf("a positive number of chunks up to %d", MaxTopK),
		"chunks retrieved per query",
		func(o *Options) any { return &o.TopK }),
	intOpt("budget", 24000, 1, inf, "a positive number of bytes",
		"context budget in characters (bytes); parts are kept most relevant first, skipping those that do not fit",
		func(o *Options) any { return &o.BudgetChars }),
	boolOpt("no-relative", "turn relative positioning (the lines after/before a match, see {relative-lines}) off",
		func(o *Options) any { return &o.NoRelative }),
	boolOpt("no-edit-query", "do not add the identifiers of the user's edit (diff against the old file) to the queries",
		func(o *Options) any { return &o.NoEditQuery }),
	boolOpt("no-definitions", "do not add definitions of the identifiers near the cursor",
		func(o *Options) any { return &o.NoDefinitions }),
	boolOpt("no-old-file", "do not add the old completion file's changed regions",
		func(o *Options) any { return &o.NoOldFile }),
	floatOpt("min-score-ratio", 0, 0, 1, "in [0, 1]",
		"drop retrieval hits scoring below this fraction of the best hit (0 keeps all)",
		func(o *Options) any { return &o.MinScoreRatio }),
	floatOpt("relative-weight", 1.05, 0, inf, finite,
		"score of a match's neighbour relative to the match",
		func(o *Options) any { return &o.RelativeWeight }),
	intOpt("relative-lines", DefaultRelativeLines, 0, inf, "a number of lines >= 0",
		"relative positioning brings the `N` lines after a prefix match (before a suffix match) instead of the next (previous) chunk; 0 = the neighbouring chunk",
		func(o *Options) any { return &o.RelativeLines }),
	intOpt("hit-margin", 0, 0, inf, "a number of lines >= 0",
		"extend each retrieved chunk by up to `N` lines before and after it from the same file (clipped at the file's ends, merged with overlapping parts); 0 = the chunk alone",
		func(o *Options) any { return &o.HitMargin }),
	boolOpt("hit-gap", "with {hit-margin} above 0: extend a retrieved chunk only backwards, across the comments, annotations, imports and properties between it and the previous function or class, at most {hit-margin} lines",
		func(o *Options) any { return &o.HitGap }),
	boolOpt("no-dense", "search with BM25 only even if the index has dense vectors",
		func(o *Options) any { return &o.NoDense }),
	boolOpt("no-header-field", "ablation: leave the chunks' headers (enclosing signatures) out of the BM25 score",
		func(o *Options) any { return &o.NoHeaderField }),
	boolOpt("no-span-merge", "ablation: keep overlapping spans of a file as separate parts instead of merging them",
		func(o *Options) any { return &o.NoSpanMerge }),
	{
		Name: "plan-window", Kind: KindInt, Default: 0, Min: 0, Max: inf,
		Want:  fmt.Sprintf("0 (off) or more than %d tokens (the completion's room)", repoctx.MaxNewTokens),
		Help:  "budget planner: plan for a model window of `N` tokens (e.g. 8000): trim the far prefix/suffix when they take more than {plan-share} of it (written as \"prefix\"/\"suffix\" overrides) and budget the context in tokens to the room left instead of {budget}; 0 = off",
		field: func(o *Options) any { return &o.Plan.Window },
		also:  func(v float64) bool { return v == 0 || v > repoctx.MaxNewTokens },
	},
	planOpt(floatOpt("plan-share", 0, 0, inf, "a positive fraction, or 0 for the language's default",
		fmt.Sprintf("budget planner: largest `fraction` of the window (minus %d tokens for the completion) prefix+suffix may take before they are trimmed to it; >= 1 never trims; 0 = the completion file's language's share (python %g, others %g)", repoctx.MaxNewTokens, DefaultPlanShareFor("python"), DefaultPlanShare),
		func(o *Options) any { return &o.Plan.Share })),
	planOpt(floatOpt("plan-suffix-share", DefaultPlanSuffixShare, 0, 1, "in (0, 1], or 0 for the default",
		"budget planner: largest `fraction` of the prefix+suffix allowance the suffix keeps when they are trimmed",
		func(o *Options) any { return &o.Plan.SuffixShare })),
	planOpt(intOpt("plan-context-window", 0, 0, inf, "0 (the plan window) or a positive number of tokens",
		"budget planner: budget the context for a model window of up to `N` tokens while prefix and suffix stay planned for {plan-window} (a scorer that trims the context from the left for a smaller window keeps its most relevant end); 0, or less than {plan-window}, = {plan-window}",
		func(o *Options) any { return &o.Plan.ContextWindow })),
	planOpt(intOpt("prefix-outline", 0, 0, inf, "a number of tokens >= 0",
		"budget planner: when the prefix is trimmed, add an outline of the trimmed lines (imports, declarations, then lines nearest the cut that bring identifiers the given text lacks) of at most `N` tokens as the context's last part; 0 = none",
		func(o *Options) any { return &o.PrefixOutline })),
	intOpt("iterations", 1, 0, MaxIterations, fmt.Sprintf("a positive number of retrieval rounds up to %d (0 or 1: one)", MaxIterations),
		"iterative retrieval (RepoCoder): retrieval `rounds`; each round after the first drafts the middle from the last context, queries with the last {draft-query-lines} prefix lines plus the draft, fuses the hits into the candidates by reciprocal rank and composes again; 1 = one pass",
		func(o *Options) any { return &o.Iterations }),
	floatOpt("suffix-weight", 0.6, 0, inf, finite,
		"score weight of the suffix query's hits against the prefix query's (weight 1)",
		func(o *Options) any { return &o.SuffixWeight }),
	floatOpt("modified-boost", 1.5, 0, inf, finite,
		"score factor of chunks in files the completion point lists as modified",
		func(o *Options) any { return &o.ModifiedBoost }),
	intOpt("edit-identifiers", 8, 1, inf, "a positive number of identifiers",
		"most identifiers of the user's edit added to the queries, nearest the cursor first",
		func(o *Options) any { return &o.EditIdentifiers }),
	floatOpt("definition-weight", 0.9, 0, inf, finite,
		"weight of a definition of the identifier nearest the cursor against a top-1 retrieval hit",
		func(o *Options) any { return &o.DefinitionWeight }),
	floatOpt("bm25-weight", retrieve.DefaultWeights().BM25, 0, inf, finite,
		"BM25's weight in reciprocal rank fusion",
		func(o *Options) any { return &o.Fusion.BM25 }),
	floatOpt("dense-weight", retrieve.DefaultWeights().Dense, 0, inf, finite,
		"the dense retriever's weight in reciprocal rank fusion",
		func(o *Options) any { return &o.Fusion.Dense }),
	floatOpt("rrf-k", retrieve.DefaultWeights().K, 0, inf, finite,
		fmt.Sprintf("reciprocal rank fusion's rank constant k (0 = %d)", retrieve.RRFK),
		func(o *Options) any { return &o.Fusion.K }),
	intOpt("fusion-depth", 0, 0, inf, "a number of hits >= 0",
		fmt.Sprintf("hits each retriever contributes before fusion (0 = the larger of {top-k} and %d)", retrieve.DefaultFusionDepth),
		func(o *Options) any { return &o.Fusion.Depth }),
	intOpt("dense-candidates", 0, 0, inf, "a number of chunks >= 0",
		"dense retrieval ranks only the best max(`N`, {fusion-depth}) chunks of the same query's BM25 search instead of every vector (when the index holds more chunks than that), so a search's cost follows N, not the index's size: for repositories of tens of thousands of files (200 lowered serve's p50 by about a fifth at 50,000 files, with no measured quality change; docs/performance.md); 0 = every vector (exact)",
		func(o *Options) any { return &o.Fusion.DenseCandidates }),
	floatOpt("old-file-weight", 1.2, 0, inf, finite,
		"weight of the old completion file's chunks against a top-1 retrieval hit",
		func(o *Options) any { return &o.OldFileWeight }),
	{
		Name: "old-file-decay", Kind: KindFloat, Default: 40, Min: 0, MinExclusive: true, Max: inf,
		Want:  "a positive number of lines",
		Help:  "distance from the cursor in lines at which an old-file chunk's weight halves",
		field: func(o *Options) any { return &o.OldFileDecay },
	},
	intOpt("draft-query-lines", 3, 0, inf, "a number of lines >= 0",
		"iterative retrieval: complete prefix lines before the cursor's line that join the draft in the draft query",
		func(o *Options) any { return &o.DraftQueryLines }),
	floatOpt("draft-weight", 1, 0, inf, finite,
		"iterative retrieval: score weight of the draft query's hits against the prefix query's (weight 1)",
		func(o *Options) any { return &o.DraftWeight }),
}

var inf = math.Inf(1)

// finite is the Want of a weight.
const finite = "a finite number >= 0"

func intOpt(name string, def, lo, hi float64, want, help string, f func(*Options) any) OptionSpec {
	return OptionSpec{Name: name, Kind: KindInt, Default: def, Min: lo, Max: hi, Want: want, Help: help, field: f}
}

func floatOpt(name string, def, lo, hi float64, want, help string, f func(*Options) any) OptionSpec {
	return OptionSpec{Name: name, Kind: KindFloat, Default: def, Min: lo, Max: hi, Want: want, Help: help, field: f}
}

func boolOpt(name, help string, f func(*Options) any) OptionSpec {
	return OptionSpec{Name: name, Kind: KindBool, Min: 0, Max: 1, Help: help, field: f}
}

// planOpt marks a budget planner setting: it needs plan-window.
func planOpt(s OptionSpec) OptionSpec {
	s.Requires, s.RequiresOff = "plan-window", "the planner is off"
	return s
}

func init() {
	for i := range OptionTable {
		s := &OptionTable[i]
		if s.JSON == "" {
			s.JSON = strings.ReplaceAll(s.Name, "-", "_")
		}
	}
}

// Option returns the spec of the option name (its Name), or nil.
func Option(name string) *OptionSpec {
	for i := range OptionTable {
		if OptionTable[i].Name == name {
			return &OptionTable[i]
		}
	}
	return nil
}

// OptionByJSON returns the spec of the option whose JSON name is name, or nil.
func OptionByJSON(name string) *OptionSpec {
	for i := range OptionTable {
		if OptionTable[i].JSON == name {
			return &OptionTable[i]
		}
	}
	return nil
}

// Get returns the option's value in o (a bool as 0 or 1).
func (s *OptionSpec) Get(o *Options) float64 {
	switch p := s.field(o).(type) {
	case *int:
		return float64(*p)
	case *float64:
		return *p
	case *bool:
		if *p {
			return 1
		}
	}
	return 0
}

// Set sets the option's field of o to v: an int option truncates v toward zero, a
// bool option is on for any v other than 0.
func (s *OptionSpec) Set(o *Options, v float64) {
	switch p := s.field(o).(type) {
	case *int:
		*p = int(v)
	case *float64:
		*p = v
	case *bool:
		*p = v != 0
	}
}

// Format writes v as the option's value: an integer, a float in the shortest form
// that reads back the same (strconv 'g', -1), or true/false.
func (s *OptionSpec) Format(v float64) string {
	switch s.Kind {
	case KindInt:
		return strconv.FormatInt(int64(v), 10)
	case KindBool:
		return strconv.FormatBool(v != 0)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// Parse reads text as the option's value: an integer, a number, or a boolean
// (true/false; 1/0). The error says what the option wants.
func (s *OptionSpec) Parse(text string) (float64, error) {
	switch s.Kind {
	case KindInt:
		n, err := strconv.Atoi(text)
		if err != nil {
			return 0, &repoctx.OptionError{Option: s.Name, Value: strconv.Quote(text), Want: "a whole number"}
		}
		return float64(n), nil
	case KindBool:
		b, err := strconv.ParseBool(text)
		if err != nil {
			return 0, &repoctx.OptionError{Option: s.Name, Value: strconv.Quote(text), Want: "true or false"}
		}
		if b {
			return 1, nil
		}
		return 0, nil
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return 0, &repoctx.OptionError{Option: s.Name, Value: strconv.Quote(text), Want: "a number"}
	}
	return f, nil
}

// check reports v as a *repoctx.OptionError when it is outside the option's bounds.
func (s *OptionSpec) check(v float64) error {
	ok := v >= s.Min && v <= s.Max && !(s.MinExclusive && v == s.Min)
	if s.Kind == KindFloat && math.IsInf(v, 0) {
		ok = false
	}
	if ok && s.also != nil {
		ok = s.also(v)
	}
	if ok {
		return nil
	}
	return &repoctx.OptionError{Option: s.Name, Value: s.Format(v), Want: s.Want}
}

// FlagHelp is Help for the command line: other options written --name.
func (s *OptionSpec) FlagHelp() string {
	return s.help(func(o *OptionSpec) string { return "--" + o.Name })
}

// JSONHelp is Help for the HTTP API: other options by JSON name, no backquotes.
func (s *OptionSpec) JSONHelp() string {
	return strings.ReplaceAll(s.help(func(o *OptionSpec) string { return o.JSON }), "`", "")
}

func (s *OptionSpec) help(name func(*OptionSpec) string) string {
	h := s.Help
	for {
		i := strings.IndexByte(h, '{')
		if i < 0 {
			return h
		}
		j := strings.IndexByte(h[i+1:], '}')
		if j < 0 {
			return h
		}
		ref := Option(h[i+1 : i+1+j])
		if ref == nil { // a literal brace: no option has that name
			return h
		}
		h = h[:i] + name(ref) + h[i+2+j:]
	}
}

// Preset is a named set of defaults: the table's, with a documented subset
// overridden. [PresetLive] is an editor's single context, [PresetBatch] a dataset's
// batch of contexts.
type Preset struct {
	name string
	set  map[string]float64 // by option Name
}

// The batch preset's overrides (see [PresetBatch]).
const (
	// BatchPlanWindow is the model window in tokens a batch plans for
	// (plan-window): 8000, the smallest window the competition scored with. A
	// dataset's contexts are for a model whose window is known; an editor's single
	// context ([PresetLive]) has the planner off.
	BatchPlanWindow = 8000
	// BatchContextWindow is the largest model window in tokens a batch budgets the
	// context for (plan-context-window): 16000, the window of the two larger models
	// the competition scored each context with (the scorer trims it from the left
	// for the 8000-token model, keeping its most relevant end; prefix and suffix stay
	// planned for BatchPlanWindow). Measured on the tuning half of
	// the tuning corpus (docs/results.md): idrec at 16000 tokens +0.005 to +0.022 per cell, the 8000-token scores
	// unchanged.
	BatchContextWindow = 16000
	// BatchIterations is the number of retrieval rounds a batch runs (iterations):
	// 3, measured on the tuning half of the tuning corpus (docs/results.md, "Iterative
	// retrieval"). An editor's single context runs one round: each round costs a
	// search, and on the validation half 1 and 3 rounds scored the same within
	// noise.
	BatchIterations = 3
	// BatchHitMargin is the margin in lines a batch shows around each retrieved
	// chunk (hit-margin): 10. A structural chunk stops at its definition, and the
	// identifiers a middle needs often sit just across that boundary (an annotation,
	// a comment, a helper beside the matched function). Chosen on the tuning half of
	// the held-out corpus by the mean of novelrec and allrec at 8000 and 16000 tokens
	// (margins 0, 5, 10 and 20; 20 pushes other parts out of an 8000-token window),
	// then scored once on the validation half: novelrec up by 0.002 to 0.017 at 8000
	// tokens in the four cells (Kotlin and Python, small and block middles), no loss
	// with an interval excluding 0 (docs/structure.md, "A margin of 10 lines in
	// batches"). An editor's single context ([PresetLive]) shows the chunk alone: under
	// its byte budget the margins take the room of other parts, and it scored no
	// higher with them.
	BatchHitMargin = 10
)

var (
	// PresetLive is the table's defaults unchanged ([DefaultOptions]): the budget
	// planner off and one retrieval round. query and serve start from it.
	PresetLive = Preset{name: "live"}
	// PresetBatch overrides plan-window ([BatchPlanWindow]), plan-context-window
	// ([BatchContextWindow]), iterations ([BatchIterations]) and hit-margin
	// ([BatchHitMargin]) of the table's defaults. predict, eval, compare and batch.DefaultConfig start from it.
	PresetBatch = Preset{name: "batch", set: map[string]float64{
		"plan-window": BatchPlanWindow, "plan-context-window": BatchContextWindow, "iterations": BatchIterations,
		"hit-margin": BatchHitMargin}}
)

// Name returns the preset's name: "live" or "batch".
func (p Preset) Name() string { return p.name }

// Default returns the preset's default of the option s.
func (p Preset) Default(s *OptionSpec) float64 {
	if v, ok := p.set[s.Name]; ok {
		return v
	}
	return s.Default
}

// Options returns the preset's options: every table option at the preset's
// default, Plan.Tokens, Drafter, OnDraft, TextSymbols and Languages unset.
func (p Preset) Options() Options {
	var o Options
	for i := range OptionTable {
		s := &OptionTable[i]
		s.Set(&o, p.Default(s))
	}
	return o
}

// CheckGiven is Validate for options read from a user (flags, an HTTP request):
// given reports which options (by Name) the user gave. Besides Validate's checks, an
// option given a value other than 0 while the option it Requires is 0 is an error
// (*NeedsError): a budget planner setting without the planner.
func (o Options) CheckGiven(given func(name string) bool) error {
	for i := range OptionTable {
		s := &OptionTable[i]
		if s.Requires == "" || !given(s.Name) || s.Get(&o) == 0 {
			continue
		}
		req := Option(s.Requires)
		if req.Get(&o) != 0 {
			continue
		}
		e := &NeedsError{Needs: req.Name, Off: s.RequiresOff}
		for j := range OptionTable {
			if OptionTable[j].Requires == req.Name {
				e.Options = append(e.Options, OptionTable[j].Name)
			}
		}
		return e
	}
	return o.Validate()
}

// NeedsError reports options given while the option they need is 0 (off).
type NeedsError struct {
	// Options are every option that needs Needs (by Name), the given one among them.
	Options []string
	// Needs is the option that must be above 0.
	Needs string
	// Off says what Needs at 0 means: "the planner is off".
	Off string
}

func (e *NeedsError) Error() string { return e.Format(func(n string) string { return "--" + n }) }

// Format is the error's text with option names written by name: "--plan-share, ...
// need --plan-window above 0 (the planner is off)".
func (e *NeedsError) Format(name func(string) string) string {
	var opts []string
	for _, o := range e.Options {
		opts = append(opts, name(o))
	}
	list := strings.Join(opts, ", ")
	if i := strings.LastIndex(list, ", "); i >= 0 {
		list = list[:i] + " and " + list[i+2:]
	}
	return fmt.Sprintf("%s need %s above 0 (%s)", list, name(e.Needs), e.Off)
}

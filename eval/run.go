package eval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/repoctx/repoctx"

	"github.com/repoctx/repoctx/batch"
	"github.com/repoctx/repoctx/complete"
	"github.com/repoctx/repoctx/dataset"
	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/snapshot"
	"github.com/repoctx/repoctx/store"
)

// Options configures [Run].
type Options struct {
	// DataDir holds {Lang}-{Stage}.jsonl, {Lang}-{Stage}.truth.jsonl and,
	// for the built-in configurations, the snapshots (folder or zip).
	DataDir, Lang, Stage string
	// Configs lists built-in configurations to run, by name (ConfigCurrent,
	// ConfigEmpty, ConfigRecent, ConfigBM25File, ConfigWindows,
	// ConfigWindowsOld, ConfigSeed or its report name such as "seed-bm25",
	// ConfigOracle), in report order after the prediction files. Repeats are
	// ignored.
	Configs []string
	// Predictions lists prediction files to score, each "FILE" or
	// "NAME=FILE" (see [PredictionArg]): a configuration named NAME, or after
	// the file's name without ".jsonl". Each must have one line per datapoint
	// of the whole datapoint file (before Limit).
	Predictions []string
	// CompareTo names the reference row of the paired comparisons
	// ([Report.Paired]); "" means ConfigCurrent when it runs, else the first
	// row. A name that is not a row of the run is refused.
	CompareTo string
	// Windows are the model windows in tokens of the trimmed settings;
	// nil means DefaultWindows(). Non-positive values are refused.
	Windows []int
	// BudgetChars adds a setting per value that keeps at most that many bytes
	// of whole lines at the end of the context. Non-positive values are refused.
	BudgetChars []int
	// Tokens counts tokens for the window settings; nil means
	// repoctx.CharEstimate.
	Tokens repoctx.TokenCounter
	// Batch configures ConfigCurrent as for `repoctx predict` (indexing,
	// composition, workers) and the workers of the baselines;
	// Batch.CacheDir also holds the seed baseline's index. When its
	// budget planner is on (Batch.Compose.Plan.Window > 0) without a token
	// counter, it counts with Tokens, as the scorer does; the prefix and suffix
	// overrides it writes are scored as what the model is given. Its Method and
	// Skip are ignored.
	Batch batch.Config
	// Seed configures ConfigSeed.
	Seed SeedOptions
	// Limit, if positive, scores only the first Limit datapoints.
	Limit int
	// Limits bound snapshot reading; zero fields mean snapshot.DefaultLimits.
	Limits snapshot.Limits
	// Log, if not nil, receives one line per datapoint whose context could not
	// be built (it is then scored as empty) and per skipped file.
	Log io.Writer
	// Progress, if not nil, is called as the built-in configurations answer
	// datapoints, with the answers done and the total (datapoints × configurations
	// that need answers), from one goroutine at a time.
	Progress func(done, total int)
	// Visible makes line_chrf and copy_chrf also search the prefix and suffix
	// the model is given (VisibleText), not only the context: the fair view
	// when configurations differ in how much of the prefix they show (the
	// budget planner moves far prefix text from the prefix to the context).
	Visible bool
	// Model, if not nil, asks a code model for every configuration's completion
	// under every window setting and scores it with ChrF against the middle: the
	// competition's own metric (model_chrf), next to the proxies. Prompts are
	// Model.Template's, trimmed to the setting's window with Tokens (see
	// complete.Template.Build); Model.Window and Model.Tokens are ignored. A
	// request that fails after its retries scores 0 and is counted in
	// ConfigResult.ModelFailed; Run fails when every request does. Requests go
	// out Model.Client.Concurrency() at a time.
	Model *complete.Model
}

// Setting is one way of showing the context to a model: untrimmed ("full"),
// trimmed to a model window ("w8000"), or to a byte budget ("c4000").
type Setting struct {
	Name   string `json:"name"`             // "full", "w{Window}" or "c{Chars}"
	Window int    `json:"window,omitempty"` // model window in tokens, see TrimToWindow
	Chars  int    `json:"chars,omitempty"`  // budget in bytes, see TrimToChars
}

// Settings returns the settings of a run: "full", then "w{W}" for every
// window, then "c{N}" for every byte budget.
func Settings(windows, budgetChars []int) []Setting {
	out := []Setting{{Name: "full"}}
	for _, w := range windows {
		out = append(out, Setting{Name: fmt.Sprintf("w%d", w), Window: w})
	}
	for _, c := range budgetChars {
		out = append(out, Setting{Name: fmt.Sprintf("c%d", c), Chars: c})
	}
	return out
}

// Report is the result of [Run]. Every metric is in [0, 1] except the context
// sizes, in bytes.
type Report struct {
	Data       string          `json:"data"`            // Options.DataDir
	Lang       string          `json:"lang"`            // Options.Lang
	Stage      string          `json:"stage"`           // Options.Stage
	Datapoints int             `json:"datapoints"`      // datapoints scored
	Tokens     string          `json:"tokens"`          // the repoctx.TokenCounter's name
	Settings   []Setting       `json:"settings"`        // the settings, in column order
	Configs    []*ConfigResult `json:"configs"`         // the configurations, in row order
	Notes      []string        `json:"notes,omitempty"` // caveats to print with the tables
	// Paired compares every row with a reference row, datapoint by datapoint;
	// nil with fewer than two rows. See [PairedComparison].
	Paired  *Paired `json:"paired,omitempty"`
	WallSec float64 `json:"wall_seconds"` // wall time of Run, in seconds
}

// ConfigResult holds one configuration's scores.
type ConfigResult struct {
	// Name is the row's name: a built-in configuration's name or a
	// predictions file's name without ".jsonl".
	Name string `json:"name"`
	// About says what the configuration is.
	About string `json:"about"`
	// Oracle is true for the ConfigOracle row, which has no context: its
	// copy_chrf and ctx_chars are 0 and mean nothing (the tables print "-").
	Oracle bool `json:"oracle,omitempty"`
	// Failed counts datapoints whose context could not be built; they are
	// scored with an empty context.
	Failed int `json:"failed"`
	// ModelFailed counts model requests (datapoint × window setting) that
	// failed after their retries (see Options.Model); they score 0.
	ModelFailed int `json:"model_failed,omitempty"`
	// Drafts and DraftFailed count the drafts ConfigCurrent asked of
	// Batch.Compose.Drafter (iterative retrieval with a model) and those that
	// failed, each replaced by the built-in drafter's (batch.Summary.Drafts,
	// DraftFailures).
	Drafts      int `json:"drafts,omitempty"`
	DraftFailed int `json:"draft_failed,omitempty"`
	// IDRecN counts datapoints whose middle has new identifiers: the
	// datapoints idrec is averaged over.
	IDRecN int `json:"idrec_n"`
	// NovelRecN counts datapoints whose middle has novel identifiers (absent
	// from the original prefix and suffix): the datapoints novelrec is averaged
	// over, the same for every configuration. AllRecN counts those whose middle
	// has identifiers at all: allrec's.
	NovelRecN int `json:"novelrec_n"`
	AllRecN   int `json:"allrec_n"`
	// Scores has one entry per setting, in Report.Settings order.
	Scores []SettingScores `json:"scores"`
	// PerDatapoint has one entry per datapoint, in input order.
	PerDatapoint []DatapointScores `json:"per_datapoint"`
}

// SettingScores are the metrics of one configuration under one setting, as
// means over datapoints.
type SettingScores struct {
	// Setting is the setting's name.
	Setting string `json:"setting"`
	// IDRec is the mean IDRecall over the IDRecN datapoints with new
	// identifiers; nil when there are none.
	IDRec *float64 `json:"idrec"`
	// NovelRec is the mean NovelRecall over the NovelRecN datapoints with novel
	// identifiers, AllRec the mean AllRecall over the AllRecN datapoints with
	// identifiers; nil when there are none.
	NovelRec *float64 `json:"novelrec"`
	AllRec   *float64 `json:"allrec"`
	// LineChrF is the mean of LineChrF over all datapoints.
	LineChrF float64 `json:"line_chrf"`
	// CopyChrF is the mean of CopyChrF over all datapoints.
	CopyChrF float64 `json:"copy_chrf"`
	// ModelChrF is the mean ChrF of the model's completions against the middles
	// (Options.Model); nil for settings without a window or without a model.
	ModelChrF *float64 `json:"model_chrf,omitempty"`
	// CtxCharsMean is the mean length of the trimmed context in bytes.
	CtxCharsMean float64 `json:"ctx_chars_mean"`
	// CtxCharsP95 is its 95th percentile (nearest rank), in bytes.
	CtxCharsP95 float64 `json:"ctx_chars_p95"`
	// IDRecHeadroom and LineChrFHeadroom are the headroom captured (see
	// [Headroom]): (this − bm25file) / (oracle − bm25file) under this setting;
	// nil when the run lacks the bm25file or the oracle row, when a value is
	// missing, or when oracle − bm25file < MinHeadroom.
	IDRecHeadroom    *float64 `json:"idrec_headroom,omitempty"`
	LineChrFHeadroom *float64 `json:"line_chrf_headroom,omitempty"`
}

// DatapointScores are one datapoint's metrics under every setting.
type DatapointScores struct {
	// ID is the datapoint's id.
	ID string `json:"id"`
	// NewIDs is the number of new identifiers of the middle.
	NewIDs int `json:"new_ids"`
	// NovelIDs is the number of novel identifiers of the middle (absent from
	// the original prefix and suffix), AllIDs the number of its identifiers.
	NovelIDs int `json:"novel_ids"`
	AllIDs   int `json:"all_ids"`
	// Settings follow Report.Settings; IDRec is nil when NewIDs is 0, NovelRec
	// when NovelIDs is 0 and AllRec when AllIDs is 0.
	Settings []PointScores `json:"settings"`
	// Error says why the context could not be built, if it could not.
	Error string `json:"error,omitempty"`
}

// PointScores are one datapoint's metrics under one setting.
type PointScores struct {
	IDRec    *float64 `json:"idrec"`     // IDRecall; nil without new identifiers
	NovelRec *float64 `json:"novelrec"`  // NovelRecall; nil without novel identifiers
	AllRec   *float64 `json:"allrec"`    // AllRecall; nil without identifiers
	LineChrF float64  `json:"line_chrf"` // LineChrF
	CopyChrF float64  `json:"copy_chrf"` // CopyChrF
	CtxChars int      `json:"ctx_chars"` // length of the trimmed context in bytes
	// ModelChrF, Completion and ModelError are the model's (Options.Model):
	// the ChrF of Completion against the middle (0 when the request failed, with
	// ModelError saying why); nil and "" for settings without a window.
	ModelChrF  *float64 `json:"model_chrf,omitempty"`
	Completion string   `json:"completion,omitempty"`
	ModelError string   `json:"model_error,omitempty"`
}

// Run scores configurations on DataDir/{Lang}-{Stage}.jsonl against
// DataDir/{Lang}-{Stage}.truth.jsonl: the prediction files given, then the
// built-in configurations named, under every setting of Settings(Windows,
// BudgetChars). The built-in configurations run through the batch engine
// (package batch), ConfigCurrent exactly as `repoctx predict` does.
//
// It returns an error starting with "eval: " when the options are invalid,
// when the datapoint or truth file cannot be read or has bad lines (naming
// the file and line), when a datapoint has no truth (naming its id and line),
// when a prediction file is malformed or does not have one line per
// datapoint, when the snapshots cannot be opened, or ctx's error when it is
// cancelled. A datapoint whose context a built-in configuration cannot build
// (a missing snapshot, an index error) does not stop the run: it is logged,
// counted in Failed and scored with an empty context.
func Run(ctx context.Context, opts Options) (*Report, error) {
	start := time.Now()
	spec, configs, err := checkOptions(&opts)
	if err != nil {
		return nil, err
	}
	in, err := readInputs(opts)
	if err != nil {
		return nil, err
	}
	dps := in.dps
	rep := &Report{Data: opts.DataDir, Lang: opts.Lang, Stage: opts.Stage, Datapoints: len(dps),
		Tokens: opts.Tokens.Name(), Settings: Settings(opts.Windows, opts.BudgetChars)}
	var runs []scoredConfig
	for _, arg := range opts.Predictions {
		name, p := PredictionArg(arg)
		preds, err := ReadPredictions(p, in.all)
		if err != nil {
			return nil, err
		}
		runs = append(runs, scoredConfig{res: &ConfigResult{Name: name, About: "predictions file " + p}, preds: preds[:len(dps)]})
	}
	if len(configs) > 0 {
		built, err := buildConfigs(ctx, opts, spec, dps, in.middles, configs)
		if err != nil {
			return nil, err
		}
		runs = append(runs, built...)
	}
	if opts.Visible {
		rep.Notes = append(rep.Notes, "line_chrf and copy_chrf also search the prefix and suffix the model is given (visible)")
	}
	if hasSeedWithoutDense(configs, opts.Seed) {
		rep.Notes = append(rep.Notes, opts.Seed.Name()+" is the seed's configuration with BM25 only: dense retrieval (its RRF weight 0.8) is not available yet")
	}
	if slices.Contains(configs, ConfigOracle) {
		rep.Notes = append(rep.Notes, oracleNote(opts.Lang))
	}
	scoreRuns(runs, dps, in.middles, rep.Settings, opts, spec)
	if opts.Model != nil {
		if err := modelRuns(ctx, runs, dps, in.middles, rep.Settings, opts); err != nil {
			return nil, err
		}
		rep.Notes = append(rep.Notes, modelNote(opts))
	}
	for _, r := range runs {
		aggregate(r.res, rep.Settings)
		rep.Configs = append(rep.Configs, r.res)
		if r.res.Drafts > 0 {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: %d drafts asked of the draft model, %d failed (the built-in drafter's were used for those)",
				r.res.Name, r.res.Drafts, r.res.DraftFailed))
		}
	}
	if Headroom(rep) {
		rep.Notes = append(rep.Notes, fmt.Sprintf("headroom captured = (config - %s) / (%s - %s), blank where %s - %s < %.2f", ConfigBM25File, ConfigOracle, ConfigBM25File, ConfigOracle, ConfigBM25File, MinHeadroom))
	}
	rep.Paired = PairedComparison(rep, compareTo(rep, opts.CompareTo))
	rep.WallSec = time.Since(start).Seconds()
	return rep, nil
}

// scoredConfig is one configuration's predictions and errors, to be scored.
// The oracle's is scored already (res.PerDatapoint is filled; preds are empty).
type scoredConfig struct {
	res    *ConfigResult
	preds  []Prediction
	errs   []error
	scored bool
}

// checkOptions validates opts, fills its defaults and returns the language's spec
// and the built-in configurations to run, deduplicated, in order.
func checkOptions(opts *Options) (*grammars.Spec, []string, error) {
	spec := grammars.Lookup(opts.Lang)
	if spec == nil {
		return nil, nil, fmt.Errorf("eval: unknown language %q (known: %s)", opts.Lang, strings.Join(grammars.Names(), ", "))
	}
	if len(opts.Batch.Index.Languages) == 0 {
		// As dataset.Predict does (batch.DatasetLanguages).
		opts.Batch.Index.Languages = batch.DatasetLanguages(opts.Lang)
	}
	if opts.Windows == nil {
		opts.Windows = DefaultWindows()
	}
	for _, w := range opts.Windows {
		if w <= repoctx.MaxNewTokens {
			return nil, nil, fmt.Errorf("eval: window %d: must be more than %d tokens (the completion's room)", w, repoctx.MaxNewTokens)
		}
	}
	for _, c := range opts.BudgetChars {
		if c <= 0 {
			return nil, nil, fmt.Errorf("eval: budget %d: must be a positive number of characters", c)
		}
	}
	if opts.Tokens == nil {
		opts.Tokens = repoctx.CharEstimate{}
	}
	if opts.Batch.Compose.Plan.On() && opts.Batch.Compose.Plan.Tokens == nil {
		opts.Batch.Compose.Plan.Tokens = opts.Tokens
	}
	if opts.Batch.Workers <= 0 {
		opts.Batch.Workers = runtime.NumCPU()
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.Batch.CacheDir == "" {
		opts.Batch.CacheDir = store.DefaultCacheDir()
	}
	var configs []string
	seen := map[string]bool{}
	for _, c := range opts.Configs {
		if c == opts.Seed.Name() {
			c = ConfigSeed
		}
		if seen[c] {
			continue
		}
		seen[c] = true
		switch c {
		case ConfigCurrent, ConfigEmpty, ConfigRecent, ConfigBM25File, ConfigWindows, ConfigWindowsOld, ConfigSeed, ConfigOracle:
			configs = append(configs, c)
		default:
			return nil, nil, fmt.Errorf("eval: unknown configuration %q (known: %s, %s)", c, ConfigCurrent, strings.Join(Baselines(), ", "))
		}
	}
	if len(configs) == 0 && len(opts.Predictions) == 0 {
		return nil, nil, errors.New("eval: nothing to score: give prediction files or configurations")
	}
	// Row names: prediction files first, then the built-in configurations.
	var names []string
	for _, p := range opts.Predictions {
		n, _ := PredictionArg(p)
		names = append(names, n)
	}
	for _, c := range configs {
		if c == ConfigSeed {
			c = opts.Seed.Name()
		}
		names = append(names, c)
	}
	for i, n := range names {
		if slices.Contains(names[:i], n) {
			return nil, nil, fmt.Errorf("eval: two rows named %q: name a predictions file with NAME=FILE", n)
		}
	}
	if opts.CompareTo != "" && !slices.Contains(names, opts.CompareTo) {
		return nil, nil, fmt.Errorf("eval: compare to %q: not a row of this run (rows: %s)", opts.CompareTo, strings.Join(names, ", "))
	}
	return spec, configs, nil
}

// inputs are a run's datapoints (cut to the limit) and their expected middles.
type inputs struct {
	dps     []dataset.Datapoint
	middles []string
	all     int // datapoints in the file, before the limit
}

// readInputs reads the datapoint and truth files.
func readInputs(opts Options) (inputs, error) {
	set := opts.Lang + "-" + opts.Stage
	if err := dataset.CheckDataset(opts.DataDir, opts.Lang, opts.Stage); err != nil {
		return inputs{}, fmt.Errorf("eval: %w", err)
	}
	dpFile := filepath.Join(opts.DataDir, set+".jsonl")
	truthFile := filepath.Join(opts.DataDir, set+".truth.jsonl")
	dps, dpErrs, err := dataset.ReadDatapointsFile(dpFile)
	if err != nil {
		return inputs{}, fmt.Errorf("eval: %w", err)
	}
	var bad []error
	for _, e := range dpErrs {
		if e != nil {
			bad = append(bad, fmt.Errorf("eval: %w", e))
		}
	}
	if len(bad) > 0 {
		return inputs{}, errList(bad)
	}
	if len(dps) == 0 {
		return inputs{}, fmt.Errorf("eval: %s: no datapoints", dpFile)
	}
	truth, err := dataset.ReadTruth(truthFile)
	if err != nil {
		return inputs{}, fmt.Errorf("eval: truth for %s (scoring needs the expected middles): %w", set, err)
	}
	in := inputs{dps: dps, all: len(dps)}
	if opts.Limit > 0 && opts.Limit < len(dps) {
		in.dps = dps[:opts.Limit]
	}
	in.middles = make([]string, len(in.dps))
	for i, d := range in.dps {
		t, ok := truth[d.ID]
		if !ok {
			bad = append(bad, fmt.Errorf("eval: datapoint %q (%s:%d) has no truth in %s", d.ID, dpFile, d.Line, truthFile))
			continue
		}
		in.middles[i] = t.Middle
	}
	if len(bad) > 0 {
		return inputs{}, errList(bad)
	}
	return in, nil
}

// scoreRuns scores every configuration's predictions on every datapoint, datapoints
// in parallel; caches are per datapoint, shared by configurations.
func scoreRuns(runs []scoredConfig, dps []dataset.Datapoint, middles []string, settings []Setting, opts Options, spec *grammars.Spec) {
	var todo []scoredConfig
	for _, r := range runs {
		if !r.scored {
			r.res.PerDatapoint = make([]DatapointScores, len(dps))
			todo = append(todo, r)
		}
	}
	runs = todo
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < opts.Batch.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				d := &dps[i]
				c := newCaches()
				for _, r := range runs {
					p := r.preds[i]
					prefix, suffix := d.Prefix, d.Suffix
					if p.Prefix != nil {
						prefix = *p.Prefix
					}
					if p.Suffix != nil {
						suffix = *p.Suffix
					}
					ds := scoreDatapoint(middles[i], prefix, suffix, d.Prefix, d.Suffix, p.Context, settings, opts.Tokens, spec.IsKeyword, c, opts.Visible)
					ds.ID = d.ID
					if r.errs != nil && r.errs[i] != nil {
						ds.Error = r.errs[i].Error()
					}
					r.res.PerDatapoint[i] = ds
				}
			}
		}()
	}
	for i := range dps {
		next <- i
	}
	close(next)
	wg.Wait()
}

func hasSeedWithoutDense(configs []string, o SeedOptions) bool {
	for _, c := range configs {
		if c == ConfigSeed {
			return o.Name() == "seed-bm25"
		}
	}
	return false
}

// about describes a built-in configuration.
func about(c string, opts Options) string {
	ext := grammars.Lookup(opts.Lang).Extensions[0]
	switch c {
	case ConfigCurrent:
		return "what repoctx predict writes with " + ConfigFlags(opts.Batch)
	case ConfigEmpty:
		return "no context"
	case ConfigRecent:
		return fmt.Sprintf("starter kit: a random modified %s file with >= %d lines, else a random %s file (seeded by datapoint id)", ext, MinFileLines, ext)
	case ConfigBM25File:
		return fmt.Sprintf("starter kit: the %s file with >= %d lines of highest Okapi BM25 (k1 1.5, b 0.75) to prefix + suffix, whole", ext, MinFileLines)
	case ConfigWindows:
		return fmt.Sprintf("RepoCoder: %d-line windows, stride %d, Jaccard to the last %d prefix lines, top %d, best last",
			WindowsLines, WindowsStride, WindowsLines, WindowsTopK)
	case ConfigWindowsOld:
		return fmt.Sprintf("RepoCoder over every %s file including the old completion file, less the old file's windows the prefix/suffix show: %d-line windows, stride %d, Jaccard to the last %d prefix lines, top %d, best last (the rule windows has always used)",
			grammars.Lookup(opts.Lang).Name, WindowsLines, WindowsStride, WindowsLines, WindowsTopK)
	case ConfigOracle:
		return fmt.Sprintf("ceiling, no context: the best line of any %s file of the snapshot or of the given prefix/suffix (line_chrf), every identifier of those files (idrec, novelrec; allrec with the prefix/suffix's); the same in every setting", grammars.Lookup(opts.Lang).Name)
	case ConfigSeed:
		o := opts.Seed.withDefaults()
		var rs []string
		for _, r := range o.Rankers {
			rs = append(rs, fmt.Sprintf("%s %.1f", r.Name, r.Weight))
		}
		return fmt.Sprintf("seed as submitted: %d-line windows, %d-line overlap, RRF %s, top %d for the whole prefix (+ next windows) and the whole suffix (+ previous windows), old and modified files first, best hits first",
			o.WindowLines, o.OverlapLines, strings.Join(rs, " + "), o.TopK)
	}
	return ""
}

// buildConfigs runs the built-in configurations on the datapoints through the batch
// engine, one run per configuration (the empty one needs none), and returns their
// predictions with a parallel slice of errors (nil where the context was built). Only
// ConfigCurrent may override prefix and suffix. The oracle is scored here against
// middles (one per datapoint) and has empty predictions.
func buildConfigs(ctx context.Context, opts Options, spec *grammars.Spec, dps []dataset.Datapoint, middles []string, configs []string) ([]scoredConfig, error) {
	src, err := dataset.OpenSource(opts.DataDir, opts.Lang, opts.Stage, opts.Limits)
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	defer src.Close()
	var out []scoredConfig
	done, total := 0, 0
	for _, c := range configs {
		if c != ConfigEmpty {
			total += len(dps)
		}
	}
	for _, c := range configs {
		res := &ConfigResult{Name: c, About: about(c, opts)}
		if c == ConfigSeed {
			res.Name = opts.Seed.Name()
		}
		sc := scoredConfig{res: res, preds: make([]Prediction, len(dps)), errs: make([]error, len(dps))}
		if c == ConfigOracle {
			res.Oracle, sc.scored = true, true
			pd, err := oracleRun(ctx, src, spec, dps, middles, Settings(opts.Windows, opts.BudgetChars), opts.Batch.Workers, opts.Log, func() {
				if done++; opts.Progress != nil {
					opts.Progress(done, total)
				}
			})
			if err != nil {
				return nil, fmt.Errorf("eval: %s configuration: %w", c, err)
			}
			res.PerDatapoint = pd
			out = append(out, sc)
			continue
		}
		if c != ConfigEmpty {
			cfg := opts.Batch
			cfg.Skip, cfg.Log, cfg.Method = nil, opts.Log, nil
			cfg.Index.Log = opts.Log
			if c != ConfigCurrent {
				cfg.Method = &baseline{config: c, spec: spec, seed: opts.Seed, ws: cfg.Index, cache: cfg.CacheDir}
			}
			sum, err := batch.Run(ctx, src, batch.FromSlice(dps), cfg, func(r batch.Result) {
				if done++; opts.Progress != nil {
					opts.Progress(done, total)
				}
				if r.Err != nil {
					sc.errs[r.Index] = fmt.Errorf("%s: %w", c, r.Err)
					return
				}
				sc.preds[r.Index] = Prediction{Context: r.Context.Text, Prefix: r.Context.Prefix, Suffix: r.Context.Suffix}
			})
			if err != nil {
				return nil, fmt.Errorf("eval: %s configuration: %w", c, err)
			}
			res.Drafts, res.DraftFailed = sum.Drafts, sum.DraftFailures
		}
		out = append(out, sc)
	}
	return out, nil
}

// caches hold per-datapoint results shared by configurations.
type caches struct {
	tokens map[string]float64 // line -> tokens
	chrf   map[string]float64 // stripped line -> ChrF against the main line
}

func newCaches() *caches {
	return &caches{tokens: map[string]float64{}, chrf: map[string]float64{}}
}

// scoreDatapoint computes every metric of one context under every setting.
// prefix and suffix are what the model is given, origPrefix and origSuffix the
// datapoint's own. It gives the same numbers as the exported functions applied
// to the trimmed context (and, for allrec, to the prompt's prefix and suffix of
// TrimPromptToWindow), sharing the work: every setting keeps a suffix of the
// context's lines.
//
// With visible, line_chrf and copy_chrf also search VisibleText(prefix,
// suffix), which no window trims.
func scoreDatapoint(middle, prefix, suffix, origPrefix, origSuffix, context string, settings []Setting, tc repoctx.TokenCounter, isKeyword func(string) bool, c *caches, visible bool) DatapointScores {
	lines := splitLines(context)
	var toks []float64
	var room, tPrefix, tSuffix float64
	count := func(l string) float64 {
		n, ok := c.tokens[l]
		if !ok {
			n = tc.Count(l)
			c.tokens[l] = n
		}
		return n
	}
	countTokens := func() {
		toks = make([]float64, len(lines))
		for i, l := range lines {
			toks[i] = count(l)
		}
		tPrefix, tSuffix = tc.Count(prefix), tc.Count(suffix)
		room = -repoctx.MaxNewTokens - tPrefix - tSuffix
	}
	size := make([]float64, len(lines))
	suffixBytes := make([]int, len(lines)+1)
	for i := len(lines) - 1; i >= 0; i-- {
		size[i] = float64(len(lines[i]))
		suffixBytes[i] = suffixBytes[i+1] + len(lines[i])
	}
	// The last line holding each identifier of the middle (new, novel or
	// any: the new and the novel ones are among all of them).
	ids := NewIdentifiers(middle, prefix, suffix, isKeyword)
	novel := NewIdentifiers(middle, origPrefix, origSuffix, isKeyword)
	all := NewIdentifiers(middle, "", "", isKeyword)
	last := make(map[string]int, len(all))
	if len(all) > 0 {
		want := map[string]bool{}
		for _, id := range all {
			want[id] = true
		}
		for i, l := range lines {
			for _, id := range Identifiers(l) {
				if want[id] {
					last[id] = i
				}
			}
		}
	}
	// The middle's identifiers that the whole given prefix or suffix shows.
	inPrompt := func(p, s string) map[string]bool {
		out := map[string]bool{}
		if len(all) == 0 {
			return out
		}
		for _, t := range []string{p, s} {
			for _, id := range Identifiers(t) {
				out[id] = true
			}
		}
		return out
	}
	shown := inPrompt(prefix, suffix)
	lineScores := lineChrFs(middle, lines, c.chrf)
	bestFrom := make([]float64, len(lines)+1)
	for i := len(lines) - 1; i >= 0; i-- {
		bestFrom[i] = max(bestFrom[i+1], lineScores[i])
	}
	ds := DatapointScores{NewIDs: len(ids), NovelIDs: len(novel), AllIDs: len(all), Settings: make([]PointScores, len(settings))}
	firstLine := firstLine(middle)
	seen, seenBest := "", 0.0
	if visible {
		seen = VisibleText(prefix, suffix)
		for _, v := range lineChrFs(middle, splitLines(seen), c.chrf) {
			seenBest = max(seenBest, v)
		}
	}
	for k, s := range settings {
		from := 0
		prompt := shown // identifiers of the prompt's prefix and suffix
		switch {
		case s.Window > 0:
			if toks == nil {
				countTokens()
			}
			from = keepFrom(toks, float64(s.Window)+room)
			if float64(s.Window)+room < 0 && len(all) > 0 { // prefix and suffix overflow: the prompt loses their far lines
				prompt = inPrompt(trimPrompt(prefix, suffix, float64(s.Window)-repoctx.MaxNewTokens, tPrefix, tSuffix, count))
			}
		case s.Chars > 0:
			from = keepFrom(size, float64(s.Chars))
		}
		ps := PointScores{LineChrF: max(bestFrom[from], seenBest), CtxChars: suffixBytes[from]}
		// kept returns the share of ids in the kept context (a last occurrence at or
		// after line from) or in the prompt's prefix and suffix (prompt, which may be
		// nil), nil for no ids.
		kept := func(ids []string, prompt map[string]bool) *float64 {
			if len(ids) == 0 {
				return nil
			}
			found := 0
			for _, id := range ids {
				if i, ok := last[id]; prompt[id] || ok && i >= from {
					found++
				}
			}
			r := float64(found) / float64(len(ids))
			return &r
		}
		ps.IDRec, ps.NovelRec, ps.AllRec = kept(ids, nil), kept(novel, nil), kept(all, prompt)
		ps.CopyChrF = ChrF(CopyPredict(prefix, seen+joinFrom(lines, from)), firstLine)
		ds.Settings[k] = ps
	}
	return ds
}

// VisibleText returns, as two context parts named "(prefix)" and "(suffix)",
// the lines of the prefix and suffix a model is given that a copy could come
// from: the prefix's complete lines before the copy completer's query (its
// last CopyQueryLines non-blank complete lines, which would match themselves)
// and the suffix's lines after the rest of the cursor's line. The cursor line's
// two pieces are left out: they are the middle's own line, not a copy source.
// Empty pieces are left out; the result is "" when both are.
func VisibleText(prefix, suffix string) string {
	lines := strings.SplitAfter(prefix, "\n")
	lines = lines[:len(lines)-1] // the unfinished line ("" when prefix ends in "\n")
	n := len(lines)
	for q := 0; n > 0 && q < CopyQueryLines; n-- {
		if strings.TrimSpace(lines[n-1]) != "" {
			q++
		}
	}
	var sb strings.Builder
	if body := strings.Join(lines[:n], ""); strings.TrimSpace(body) != "" {
		sb.WriteString(repoctx.FileSep + "(prefix)\n" + body)
	}
	if i := strings.IndexByte(suffix, '\n'); i >= 0 && strings.TrimSpace(suffix[i+1:]) != "" {
		body := suffix[i+1:]
		if !strings.HasSuffix(body, "\n") {
			body += "\n"
		}
		sb.WriteString(repoctx.FileSep + "(suffix)\n" + body)
	}
	return sb.String()
}

// aggregate fills res.Scores, Failed and IDRecN from res.PerDatapoint.
func aggregate(res *ConfigResult, settings []Setting) {
	res.Scores = make([]SettingScores, len(settings))
	res.Failed, res.IDRecN, res.NovelRecN, res.AllRecN = 0, 0, 0, 0
	for _, d := range res.PerDatapoint {
		if d.Error != "" {
			res.Failed++
		}
		if d.NewIDs > 0 {
			res.IDRecN++
		}
		if d.NovelIDs > 0 {
			res.NovelRecN++
		}
		if d.AllIDs > 0 {
			res.AllRecN++
		}
	}
	n := float64(len(res.PerDatapoint))
	for k, s := range settings {
		ss := SettingScores{Setting: s.Name}
		var idSum, novelSum, allSum, modelSum float64
		modelN := 0
		chars := make([]float64, 0, len(res.PerDatapoint))
		for _, d := range res.PerDatapoint {
			p := d.Settings[k]
			if p.IDRec != nil {
				idSum += *p.IDRec
			}
			if p.NovelRec != nil {
				novelSum += *p.NovelRec
			}
			if p.AllRec != nil {
				allSum += *p.AllRec
			}
			ss.LineChrF += p.LineChrF
			if p.ModelChrF != nil {
				modelSum += *p.ModelChrF
				modelN++
			}
			ss.CopyChrF += p.CopyChrF
			chars = append(chars, float64(p.CtxChars))
			ss.CtxCharsMean += float64(p.CtxChars)
		}
		if res.IDRecN > 0 {
			m := idSum / float64(res.IDRecN)
			ss.IDRec = &m
		}
		if res.NovelRecN > 0 {
			m := novelSum / float64(res.NovelRecN)
			ss.NovelRec = &m
		}
		if res.AllRecN > 0 {
			m := allSum / float64(res.AllRecN)
			ss.AllRec = &m
		}
		if n > 0 {
			ss.LineChrF /= n
			ss.CopyChrF /= n
			ss.CtxCharsMean /= n
		}
		if modelN > 0 {
			m := modelSum / float64(modelN)
			ss.ModelChrF = &m
		}
		ss.CtxCharsP95 = Percentile(chars, 95)
		res.Scores[k] = ss
	}
}

// Percentile returns the p-th percentile (0 < p <= 100) of values by the
// nearest-rank method: the smallest value such that at least p% of the
// values are less than or equal to it. It returns 0 for no values; values is
// not modified.
func Percentile(values []float64, p float64) float64 {
	if len(values) == 0 {
		return 0
	}
	v := append([]float64(nil), values...)
	sort.Float64s(v)
	i := int(math.Ceil(p/100*float64(len(v)))) - 1
	return v[max(0, min(i, len(v)-1))]
}

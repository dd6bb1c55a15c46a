package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/repoctx/repoctx/assemble"
	"github.com/repoctx/repoctx/batch"
	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/dataset"
	"github.com/repoctx/repoctx/retrieve"
	"github.com/repoctx/repoctx/snapshot"
	"github.com/repoctx/repoctx/tokens"
)

// PredictOptions are the options of `repoctx predict` that shape its lines, as plain
// values that travel to the workers as JSON (a DoFn's fields).
type PredictOptions struct {
	// Compose holds the assemble.OptionTable options given, by their Name ("top-k");
	// the others keep assemble.PresetBatch's defaults, as in `repoctx predict`.
	Compose map[string]float64
	// Strategy, MaxChars, WindowLines and WindowOverlap are the indexes' chunking
	// (index.Options.Strategy and Chunk; "" and 0: the defaults).
	Strategy                             string
	MaxChars, WindowLines, WindowOverlap int
	// Langs are --langs: the languages indexed and retrieved from (none: the family
	// of the dataset's language).
	Langs []string
	// Dense is the dense retriever: "lsa" or "none" ("": the default).
	Dense string
	// LSAPerSnapshot and CrossSnapshot are batch.Config's switches.
	LSAPerSnapshot, CrossSnapshot bool
	// Tokenizer is a tokenizer.json file the budget planner counts tokens with ("":
	// characters / 4); it must be readable on the workers.
	Tokenizer string
	// CacheDir is the index cache's folder on the workers ("": store.DefaultCacheDir).
	CacheDir string
	// Workers is the number of datapoints of one repository answered at once in a
	// DoFn call (0: the number of CPUs).
	Workers int
}

// Config returns the batch configuration of o, as `repoctx predict` makes it from
// the same flags; errors name the option. A tokenizer is loaded.
func (o PredictOptions) Config() (batch.Config, error) {
	cfg := batch.DefaultConfig()
	if o.Strategy != "" {
		s, err := chunker.ParseStrategy(o.Strategy)
		if err != nil {
			return cfg, err
		}
		cfg.Index.Strategy = s
	}
	cfg.Index.Chunk = chunker.Options{MaxChars: cmp.Or(o.MaxChars, chunker.DefaultOptions(chunker.StrategyStructural).MaxChars),
		WindowLines: o.WindowLines, WindowOverlap: o.WindowOverlap}
	cfg.Index.Languages = slices.Clone(o.Langs)
	if o.Dense != "" {
		d, err := retrieve.ParseDense(o.Dense)
		if err != nil {
			return cfg, err
		}
		cfg.Index.Dense = d
	}
	cfg.Compose = assemble.PresetBatch.Options()
	for name, v := range o.Compose {
		s := assemble.Option(name)
		if s == nil {
			return cfg, fmt.Errorf("unknown option %q", name)
		}
		s.Set(&cfg.Compose, v)
	}
	cfg.Compose.Languages = slices.Clone(o.Langs)
	if err := cfg.Compose.CheckGiven(func(name string) bool { _, ok := o.Compose[name]; return ok }); err != nil {
		return cfg, err
	}
	if o.Tokenizer != "" {
		if !cfg.Compose.Plan.On() {
			return cfg, fmt.Errorf("tokenizer needs plan-window (tokens are counted only for the budget planner)")
		}
		tk, err := tokens.Load(o.Tokenizer)
		if err != nil {
			return cfg, fmt.Errorf("tokenizer: %w", err)
		}
		cfg.Compose.Plan.Tokens = tk
	}
	cfg.CacheDir = o.CacheDir
	cfg.LSAPerSnapshot, cfg.CrossSnapshot = o.LSAPerSnapshot, o.CrossSnapshot
	if o.Workers != 0 {
		cfg.Workers = o.Workers
	}
	if cfg.Workers < 1 || cfg.Workers > batch.MaxWorkers {
		return cfg, fmt.Errorf("workers must be a positive number up to %d, not %d", batch.MaxWorkers, cfg.Workers)
	}
	return cfg, nil
}

// PredictConfig configures Predict.
type PredictConfig struct {
	// DataDir, Lang and Stage name the dataset as for `repoctx predict`: DataDir
	// holds {Lang}-{Stage}.jsonl and the snapshots; workers must be able to read it.
	DataDir, Lang, Stage string
	// Out is the predictions file ("": DataDir/{Lang}-{Stage}.predictions.jsonl);
	// a local path is written atomically.
	Out string
	// N is the number of datapoints (dataset.CountDatapoints of the datapoint file):
	// the writer checks it got exactly one line for each.
	N int
	// Options are the prediction options.
	Options PredictOptions
}

// dpElem is one datapoint with its place in the input.
type dpElem struct {
	Index                    int
	Line                     int
	ID, Repo, Revision, Path string
	Modified                 []string
	Prefix, Suffix           string
	Bad                      bool // a line the reader refused: answered with an empty context
}

func (e dpElem) datapoint() batch.Datapoint {
	return batch.Datapoint{ID: e.ID, Repo: e.Repo, Revision: e.Revision, Path: e.Path, Modified: e.Modified,
		Prefix: e.Prefix, Suffix: e.Suffix, Line: e.Line}
}

// predLine is one output line with its datapoint's index.
type predLine struct {
	Index int
	Line  []byte
}

func init() {
	register.DoFn3x1[context.Context, []byte, func(string, dpElem), error](&readFn{})
	register.Emitter2[string, dpElem]()
	register.DoFn5x1[context.Context, string, func(*dpElem) bool, func(int, predLine), func(stat), error](&predictFn{})
	register.Iter1[dpElem]()
	register.Emitter2[int, predLine]()
	register.DoFn3x1[context.Context, int, func(*predLine) bool, error](&writeLinesFn{})
	register.Iter1[predLine]()
}

// Predict adds the batch prediction pipeline to s: the datapoints are read in
// order and keyed by repository, each repository's datapoints go to one DoFn call
// that answers them with the batch engine (one index per repository, as `repoctx
// predict` builds it), and one writer puts the lines back in input order. The output
// holds the same bytes as `repoctx predict` with the same options. A fault of the
// environment fails the DoFn call, which the runner retries.
//
// The lines cross two shuffles: the datapoints to their repository's worker, the
// contexts to the single writer, which holds them all (about N × the context size)
// before it writes.
//
// Metrics (namespace Namespace): datapoints, failed, snapshots, indexed (snapshots
// indexed rather than read from the cache), repositories. The DoFns emit their
// counts as data and one DoFn call adds the sums to the counters (see stat), so the
// counts are exact, once per input like the output, on any runner.
func Predict(s beam.Scope, cfg PredictConfig) error {
	if _, err := cfg.Options.Config(); err != nil {
		return err
	}
	if err := dataset.CheckDataset(cfg.DataDir, cfg.Lang, cfg.Stage); err != nil {
		return err
	}
	if cfg.Out == "" {
		cfg.Out = filepath.Join(cfg.DataDir, cfg.Lang+"-"+cfg.Stage+".predictions.jsonl")
	}
	s = s.Scope("repoctx.Predict")
	dps := beam.ParDo(s, &readFn{DataDir: cfg.DataDir, Lang: cfg.Lang, Stage: cfg.Stage}, beam.Impulse(s))
	lines, stats := beam.ParDo2(s, &predictFn{DataDir: cfg.DataDir, Lang: cfg.Lang, Stage: cfg.Stage, Opts: cfg.Options},
		beam.GroupByKey(s, dps))
	beam.ParDo0(s, &writeLinesFn{Out: cfg.Out, N: cfg.N}, beam.GroupByKey(s, lines))
	countStats(s, stats)
	return nil
}

// readFn reads the datapoint file and keys each datapoint by its repository.
type readFn struct {
	DataDir, Lang, Stage string
}

// ProcessElement reads the file (the impulse's element is not used).
func (f *readFn) ProcessElement(ctx context.Context, _ []byte, emit func(string, dpElem)) error {
	i := 0
	for d, err := range dataset.DatapointsFile(filepath.Join(f.DataDir, f.Lang+"-"+f.Stage+".jsonl")) {
		if err != nil && d.Line == 0 {
			return err
		}
		emit(d.Repo, dpElem{Index: i, Line: d.Line, ID: d.ID, Repo: d.Repo, Revision: d.Revision, Path: d.Path,
			Modified: d.Modified, Prefix: d.Prefix, Suffix: d.Suffix, Bad: err != nil})
		i++
	}
	return ctx.Err()
}

// predictFn answers the datapoints of one repository with batch.Run and emits its
// counts as stats.
type predictFn struct {
	DataDir, Lang, Stage string
	Opts                 PredictOptions

	cfg batch.Config
	src snapshot.Source
}

// Setup opens the dataset's snapshots and makes the configuration once per DoFn
// instance.
func (f *predictFn) Setup() error {
	cfg, err := f.Opts.Config()
	if err != nil {
		return err
	}
	if len(cfg.Index.Languages) == 0 {
		cfg.Index.Languages = batch.DatasetLanguages(f.Lang) // as dataset.Predict does
	}
	cfg.Log = io.Discard
	f.cfg = cfg
	f.src, err = dataset.OpenSource(f.DataDir, f.Lang, f.Stage, snapshot.Limits{})
	return err
}

// Teardown closes the snapshots.
func (f *predictFn) Teardown() error {
	if f.src != nil {
		return f.src.Close()
	}
	return nil
}

// ProcessElement answers repo's datapoints in input order and emits their lines.
func (f *predictFn) ProcessElement(ctx context.Context, repo string, it func(*dpElem) bool, emit func(int, predLine), emitStat func(stat)) error {
	var es []dpElem
	var e dpElem
	for it(&e) {
		es = append(es, e)
		e = dpElem{}
	}
	sort.Slice(es, func(a, b int) bool { return es[a].Index < es[b].Index })
	var good []dpElem
	empty := dataset.PredictionLine("", nil, nil)
	for _, e := range es {
		if e.Bad {
			emit(0, predLine{Index: e.Index, Line: empty})
			emitStat(stat{Name: "failed", N: 1})
			continue
		}
		good = append(good, e)
	}
	emitStat(stat{Name: "datapoints", N: int64(len(es))})
	emitStat(stat{Name: "repositories", N: 1})
	if len(good) == 0 {
		return nil
	}
	dps := make([]batch.Datapoint, len(good))
	for i, e := range good {
		dps[i] = e.datapoint()
	}
	sum, err := batch.Run(ctx, f.src, batch.FromSlice(dps), f.cfg, func(r batch.Result) {
		line := dataset.PredictionLine(r.Context.Text, r.Context.Prefix, r.Context.Suffix)
		if r.Err != nil {
			line = empty
		}
		emit(0, predLine{Index: good[r.Index].Index, Line: line})
	})
	if err != nil {
		return fmt.Errorf("repository %s: %w", repo, err)
	}
	emitStat(stat{Name: "failed", N: int64(sum.Failed)})
	emitStat(stat{Name: "snapshots", N: int64(sum.Snapshots)})
	emitStat(stat{Name: "indexed", N: int64(sum.Built)})
	return nil
}

// writeLinesFn writes all lines in index order.
type writeLinesFn struct {
	Out string
	N   int
}

// ProcessElement sorts the lines, checks that index i holds line i for every i
// below N, and writes them.
func (f *writeLinesFn) ProcessElement(ctx context.Context, _ int, it func(*predLine) bool) error {
	var ls []predLine
	var l predLine
	for it(&l) {
		ls = append(ls, l)
		l = predLine{}
	}
	slices.SortFunc(ls, func(a, b predLine) int { return cmp.Compare(a.Index, b.Index) })
	if len(ls) != f.N {
		return fmt.Errorf("predictions: %d lines for %d datapoints", len(ls), f.N)
	}
	for i, l := range ls {
		if l.Index != i {
			return fmt.Errorf("predictions: no line for datapoint %d", i)
		}
	}
	return writeFile(ctx, f.Out, func(w io.Writer) error {
		for _, l := range ls {
			if _, err := w.Write(l.Line); err != nil {
				return err
			}
			if _, err := w.Write([]byte{'\n'}); err != nil {
				return err
			}
		}
		return nil
	})
}

// Command tune searches assemble.Options on eval datasets ("cells"): it indexes each
// snapshot once per pass and composes every configuration of the pass from the same
// opened repository, then scores all of them with eval.Run as prediction files (the
// same metrics as `repoctx eval --visible`).
//
// Search: coordinate-wise grids around a base point, Jacobi style. A round composes
// the base and, for every parameter, each of its grid values with the others at the
// base (one-factor-at-a-time); every parameter then takes its best value (when it
// beats the base by more than -min-gain) and the combination is the next round's base
// (its score is the next round's first row). One pass per round instead of one per
// parameter keeps the index loads down (the corpus's snapshots are big); the next
// round checks the combination, since parameters can interact.
//
// -strategy fixed indexes with fixed line windows (predict's --strategy fixed) instead
// of structural chunks, so both strategies can be scored under the same configurations.
//
// Parameters are the options of assemble.OptionTable by their flag names, each one
// field: dense-weight sets the dense retriever's fusion weight alone (BM25 keeps
// bm25-weight; grid both to move them together).
//
// The objective is the mean over cells and over every window of -windows of the metrics
// of -objective (default idrec,copy_chrf: 4 numbers per cell with the default windows
// 8000,16000); any of idrec, novelrec, allrec, line_chrf and copy_chrf (see package
// eval) can be chosen. novelrec and allrec have denominators that do not depend on the
// configuration, so configurations that trim the prefix differently (plan-window) are
// scored on the same identifiers. Tokens are characters/4, or -tokenizer's.
//
// Usage (from the repository root; CORPUS is the output folder of scripts/corpus.sh):
//
//	go run -tags kotlin2 ./scripts/tune -cache /tmp/tune-cache -out /tmp/tune-out \
//	    -cells CORPUS/kotlin-small-tune:kotlin:tune-small,CORPUS/python-small-tune:python:tune-small \
//	    -grid 'suffix-weight=0.3,0.6,0.9;top-k=4,8,12' -rounds 2
//
// It prints one table per round (configuration, objective, per cell the objective's
// metrics at the first window) and writes them, with every metric at every window, to
// OUT/round-N.tsv.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/assemble"
	"github.com/repoctx/repoctx/batch"
	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/dataset"
	"github.com/repoctx/repoctx/eval"
	"github.com/repoctx/repoctx/index"
	"github.com/repoctx/repoctx/snapshot"
	"github.com/repoctx/repoctx/store"
	"github.com/repoctx/repoctx/tokens"
)

// metric is one metric of a setting's scores, by its name in package eval.
type metric struct {
	name string
	get  func(s eval.SettingScores) float64
}

// metrics are the metrics tune reports and may optimise, in TSV column order.
var metrics = []metric{
	{"idrec", func(s eval.SettingScores) float64 { return orZero(s.IDRec) }},
	{"novelrec", func(s eval.SettingScores) float64 { return orZero(s.NovelRec) }},
	{"allrec", func(s eval.SettingScores) float64 { return orZero(s.AllRec) }},
	{"copy_chrf", func(s eval.SettingScores) float64 { return s.CopyChrF }},
	{"line_chrf", func(s eval.SettingScores) float64 { return s.LineChrF }},
}

// orZero returns *v, or 0 for nil (a mean over no datapoints).
func orZero(v *float64) float64 {
	if v == nil {
		return 0
	}
	return *v
}

// parseObjective returns the indexes in metrics of the comma-separated metric names.
func parseObjective(s string) ([]int, error) {
	var out []int
	for _, n := range strings.Split(s, ",") {
		n = strings.TrimSpace(n)
		i := slices.IndexFunc(metrics, func(m metric) bool { return m.name == n })
		if i < 0 {
			var names []string
			for _, m := range metrics {
				names = append(names, m.name)
			}
			return nil, fmt.Errorf("unknown metric %q (known: %s)", n, strings.Join(names, ", "))
		}
		if slices.Contains(out, i) {
			return nil, fmt.Errorf("metric %q given twice", n)
		}
		out = append(out, i)
	}
	return out, nil
}

// param returns the tunable option name: any option of assemble.OptionTable, by
// its command-line name (a switch is on for any value other than 0), or nil.
func param(name string) *assemble.OptionSpec { return assemble.Option(name) }

// cell is one dataset: DIR holding LANG-STAGE.jsonl.
type cell struct{ dir, lang, stage string }

func (c cell) name() string { return c.lang + "-" + c.stage }

// setting is one parameter value: name=value.
type setting struct {
	name string
	v    float64
}

// config is a base point with some settings changed.
type config struct {
	label string
	set   []setting
}

func (c config) options(base assemble.Options) assemble.Options {
	o := base
	for _, s := range c.set {
		param(s.name).Set(&o, s.v)
	}
	return o
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "tune:", err)
		os.Exit(1)
	}
}

func run() error {
	cellsF := flag.String("cells", "", "comma-separated DIR:LANG:STAGE datasets")
	cache := flag.String("cache", "", "index cache directory (reuse one across runs)")
	out := flag.String("out", "", "output directory (prediction files, round tables)")
	grid := flag.String("grid", "", "semicolon-separated NAME=V1,V2,... grids (names: the options of assemble.OptionTable, as predict's flags)")
	baseF := flag.String("base", "", "semicolon-separated NAME=V settings of the starting point (default: assemble.PresetBatch, what predict runs)")
	configsF := flag.String("configs", "", "instead of a search: semicolon-separated configurations, each LABEL:NAME=V,NAME=V (LABEL: alone is the base)")
	rounds := flag.Int("rounds", 1, "search rounds")
	minGain := flag.Float64("min-gain", 0.001, "a grid value replaces the base only if the objective gains more than this")
	windowsF := flag.String("windows", "8000,16000", "model windows (tokens) of the objective")
	objectiveF := flag.String("objective", "idrec,copy_chrf", "comma-separated metrics whose mean over cells and windows is maximised: idrec, novelrec, allrec, copy_chrf, line_chrf")
	tokenizerF := flag.String("tokenizer", "", "count tokens with this Hugging Face tokenizer.json (default: characters/4)")
	workers := flag.Int("workers", runtime.NumCPU(), "datapoints composed in parallel")
	strategyF := flag.String("strategy", "structural", "chunking strategy of the indexes: "+chunker.StrategyNames)
	maxChars := flag.Int("max-chars", 0, "structural chunk size cap in non-white-space characters (0: the chunker's default)")
	windowLines := flag.Int("window-lines", 0, "window size in lines of fixed and aligned chunks and fallback windows (0: the strategy's default)")
	overlapLines := flag.Int("overlap-lines", -1, "window overlap in lines (-1: the strategy's default, or half of -window-lines)")
	noMerge := flag.Bool("no-merge", false, "structural chunks: do not merge small adjacent siblings (ablation)")
	noHeader := flag.Bool("no-header", false, "aligned windows without their enclosing signatures")
	flag.Parse()
	if *cellsF == "" || *cache == "" || *out == "" || (*grid == "") == (*configsF == "") {
		flag.Usage()
		return errors.New("need -cells, -cache, -out and one of -grid and -configs")
	}
	var cells []cell
	for _, c := range strings.Split(*cellsF, ",") {
		f := strings.Split(c, ":")
		if len(f) != 3 {
			return fmt.Errorf("-cells: %q is not DIR:LANG:STAGE", c)
		}
		cells = append(cells, cell{f[0], f[1], f[2]})
	}
	var windows []int
	for _, w := range strings.Split(*windowsF, ",") {
		n, err := strconv.Atoi(w)
		if err != nil || n <= 0 {
			return fmt.Errorf("-windows: bad window %q", w)
		}
		windows = append(windows, n)
	}
	objective, err := parseObjective(*objectiveF)
	if err != nil {
		return fmt.Errorf("-objective: %w", err)
	}
	var tc repoctx.TokenCounter = repoctx.CharEstimate{}
	if *tokenizerF != "" {
		if tc, err = tokens.Load(*tokenizerF); err != nil {
			return fmt.Errorf("-tokenizer: %w", err)
		}
	}
	base, err := parseSettings(*baseF)
	if err != nil {
		return fmt.Errorf("-base: %w", err)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	strategy, err := chunker.ParseStrategy(*strategyF)
	if err != nil {
		return fmt.Errorf("-strategy: %w", err)
	}
	copts := chunker.Options{MaxChars: *maxChars, WindowLines: *windowLines, NoMerge: *noMerge, NoHeader: *noHeader}
	switch {
	case *overlapLines >= 0 && (*windowLines <= 0 || *overlapLines >= *windowLines):
		return errors.New("-overlap-lines needs a -window-lines above it")
	case *overlapLines >= 0:
		copts.WindowOverlap = *overlapLines
	case *windowLines > 0:
		copts.WindowOverlap = *windowLines / 2 // as the default 20/10
	}
	t := &tuner{cells: cells, cache: *cache, out: *out, windows: windows, workers: *workers, objective: objective, tokens: tc, strategy: strategy, chunk: copts}
	if *configsF != "" {
		var cfgs []config
		for _, c := range strings.Split(*configsF, ";") {
			label, rest, _ := strings.Cut(c, ":")
			set, err := parseSettings(strings.ReplaceAll(rest, ",", ";"))
			if err != nil {
				return fmt.Errorf("-configs %q: %w", c, err)
			}
			cfgs = append(cfgs, config{label: label, set: append(slices.Clone(base), set...)})
		}
		_, err := t.pass(0, cfgs)
		return err
	}
	grids, err := parseGrids(*grid)
	if err != nil {
		return fmt.Errorf("-grid: %w", err)
	}
	for r := 1; r <= *rounds; r++ {
		cfgs := []config{{label: "base", set: slices.Clone(base)}}
		for _, g := range grids {
			for _, v := range g.values {
				if cur, ok := value(base, g.name); ok && cur == v {
					continue
				}
				cfgs = append(cfgs, config{label: fmt.Sprintf("%s=%g", g.name, v), set: with(base, g.name, v)})
			}
		}
		scores, err := t.pass(r, cfgs)
		if err != nil {
			return err
		}
		next := slices.Clone(base)
		for _, g := range grids {
			best, bestGain := "", *minGain
			for i, c := range cfgs[1:] {
				if strings.HasPrefix(c.label, g.name+"=") && scores[i+1]-scores[0] > bestGain {
					best, bestGain = c.label, scores[i+1]-scores[0]
				}
			}
			if best != "" {
				v, _ := strconv.ParseFloat(strings.TrimPrefix(best, g.name+"="), 64)
				next = with(next, g.name, v)
				fmt.Printf("round %d: %s (%+.4f)\n", r, best, bestGain)
			}
		}
		if slices.Equal(next, base) {
			fmt.Printf("round %d: no parameter gains more than %g: stop at the base\n", r, *minGain)
			break
		}
		base = next
		fmt.Printf("round %d: next base %s\n", r, describe(base))
	}
	fmt.Printf("final base %s (scored as the first row of the next round; run -configs to score it)\n", describe(base))
	return nil
}

type grid struct {
	name   string
	values []float64
}

func parseGrids(s string) ([]grid, error) {
	var out []grid
	for _, g := range strings.Split(s, ";") {
		name, vals, ok := strings.Cut(strings.TrimSpace(g), "=")
		if !ok || param(name) == nil {
			return nil, fmt.Errorf("%q: want NAME=V1,V2 with a known NAME", g)
		}
		gr := grid{name: name}
		for _, v := range strings.Split(vals, ",") {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil, fmt.Errorf("%q: %w", g, err)
			}
			gr.values = append(gr.values, f)
		}
		out = append(out, gr)
	}
	return out, nil
}

func parseSettings(s string) ([]setting, error) {
	var out []setting
	for _, kv := range strings.Split(s, ";") {
		if kv = strings.TrimSpace(kv); kv == "" {
			continue
		}
		name, v, ok := strings.Cut(kv, "=")
		if !ok || param(name) == nil {
			return nil, fmt.Errorf("%q: want NAME=V with a known NAME", kv)
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", kv, err)
		}
		out = with(out, name, f)
	}
	return out, nil
}

func value(set []setting, name string) (float64, bool) {
	for _, s := range set {
		if s.name == name {
			return s.v, true
		}
	}
	return 0, false
}

func with(set []setting, name string, v float64) []setting {
	out := slices.Clone(set)
	for i := range out {
		if out[i].name == name {
			out[i].v = v
			return out
		}
	}
	return append(out, setting{name, v})
}

func describe(set []setting) string {
	if len(set) == 0 {
		return "(defaults)"
	}
	var parts []string
	for _, s := range set {
		parts = append(parts, fmt.Sprintf("%s=%g", s.name, s.v))
	}
	return strings.Join(parts, " ")
}

type tuner struct {
	cells     []cell
	cache     string
	out       string
	windows   []int
	workers   int
	strategy  chunker.Strategy // the indexes' chunking strategy
	chunk     chunker.Options  // the indexes' chunker options (zero fields: defaults)
	objective []int            // indexes in metrics
	tokens    repoctx.TokenCounter
}

// pass composes every configuration on every cell, scores them and prints and writes
// the round's table; it returns the objective of each configuration.
func (t *tuner) pass(round int, cfgs []config) ([]float64, error) {
	start := time.Now()
	opts := make([]assemble.Options, len(cfgs))
	for i, c := range cfgs {
		opts[i] = c.options(assemble.PresetBatch.Options()) // what predict runs
		if err := opts[i].Validate(); err != nil {
			return nil, fmt.Errorf("configuration %s: %w", c.label, err)
		}
	}
	obj := make([]float64, len(cfgs))
	tsv := &strings.Builder{}
	fmt.Fprintf(tsv, "config")
	for _, c := range t.cells {
		for _, w := range t.windows {
			for _, m := range metrics {
				fmt.Fprintf(tsv, "\t%s %s w%d", c.name(), m.name, w)
			}
		}
	}
	fmt.Fprintf(tsv, "\tobjective\n")
	rows := make([][]string, len(cfgs))
	for _, c := range t.cells {
		rep, err := t.cell(c, cfgs, opts)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.name(), err)
		}
		for i := range cfgs {
			r := rep.Configs[i]
			for _, w := range t.windows {
				s := score(r, fmt.Sprintf("w%d", w))
				for _, m := range t.objective {
					obj[i] += metrics[m].get(s) / float64(len(t.objective)*len(t.windows)*len(t.cells))
				}
				for _, m := range metrics {
					rows[i] = append(rows[i], fmt.Sprintf("%.4f", m.get(s)))
				}
			}
		}
		fmt.Fprintf(os.Stderr, "round %d: %s scored (%s)\n", round, c.name(), time.Since(start).Round(time.Second))
	}
	order := make([]int, len(cfgs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return obj[order[a]] > obj[order[b]] })
	var names []string
	for _, m := range t.objective {
		names = append(names, metrics[m].name)
	}
	fmt.Printf("\nround %d (%d configurations, %s); objective = mean of %s at %v over %d cells; per cell at w%d: %s\n",
		round, len(cfgs), time.Since(start).Round(time.Second), strings.Join(names, ", "), t.windows, len(t.cells), t.windows[0], strings.Join(names, " / "))
	for _, i := range order {
		fmt.Printf("%-28s %.4f (%+.4f)", cfgs[i].label, obj[i], obj[i]-obj[0])
		for k := range t.cells {
			r := rows[i][k*len(metrics)*len(t.windows):] // the cell's first window
			var vs []string
			for _, m := range t.objective {
				vs = append(vs, r[m][1:]) // "0.1234" -> ".1234"
			}
			fmt.Printf("  %s", strings.Join(vs, "/"))
		}
		fmt.Println()
	}
	for i := range cfgs {
		fmt.Fprintf(tsv, "%s\t%s\t%.5f\n", cfgs[i].label, strings.Join(rows[i], "\t"), obj[i])
	}
	return obj, os.WriteFile(filepath.Join(t.out, fmt.Sprintf("round-%d.tsv", round)), []byte(tsv.String()), 0o644)
}

func score(r *eval.ConfigResult, setting string) eval.SettingScores {
	for _, s := range r.Scores {
		if s.Setting == setting {
			return s
		}
	}
	return eval.SettingScores{}
}

// cell composes every configuration on one dataset (each snapshot opened once) and
// scores the prediction files with eval.Run.
func (t *tuner) cell(c cell, cfgs []config, opts []assemble.Options) (*eval.Report, error) {
	ctx := context.Background()
	dps, _, err := dataset.ReadDatapointsFile(filepath.Join(c.dir, c.name()+".jsonl"))
	if err != nil {
		return nil, err
	}
	src, err := dataset.OpenSource(c.dir, c.lang, c.stage, snapshot.Limits{})
	if err != nil {
		return nil, err
	}
	defer src.Close()
	position := make(map[string]int, len(dps))
	for i, d := range dps {
		position[d.ID] = i
	}
	preds := make([][]eval.Prediction, len(cfgs))
	for i := range preds {
		preds[i] = make([]eval.Prediction, len(dps))
	}
	ws := index.DefaultOptions()
	ws.Languages, ws.Strategy, ws.Chunk = batch.DatasetLanguages(c.lang), t.strategy, t.chunk
	ws.Log = io.Discard
	inner := opts[0]
	inner.NoDefinitions = false // the symbol tables are built for every configuration
	st := store.Open(t.cache)
	defer st.Close()
	rm := batch.Repoctx(src, st, ws, inner, false)
	defer rm.(io.Closer).Close()
	m := &multi{inner: rm, opts: opts, preds: preds, index: position}
	cfg := batch.DefaultConfig()
	cfg.Index, cfg.CacheDir, cfg.Compose, cfg.Method, cfg.Workers = ws, t.cache, inner, m, t.workers
	var failed int
	if _, err := batch.Run(ctx, src, batch.FromSlice(dps), cfg, func(r batch.Result) {
		if r.Err != nil {
			failed++
		}
	}); err != nil {
		return nil, err
	}
	if failed > 0 {
		fmt.Fprintf(os.Stderr, "%s: %d datapoints failed (scored with empty contexts)\n", c.name(), failed)
	}
	dir := filepath.Join(t.out, "pred", c.name())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var files []string
	for i := range cfgs {
		p := filepath.Join(dir, fmt.Sprintf("c%03d.jsonl", i))
		if err := writePredictions(p, preds[i]); err != nil {
			return nil, err
		}
		files = append(files, fmt.Sprintf("c%03d=%s", i, p))
	}
	return eval.Run(ctx, eval.Options{DataDir: c.dir, Lang: c.lang, Stage: c.stage, Predictions: files,
		Windows: t.windows, Tokens: t.tokens, Visible: true, Batch: batch.Config{Workers: t.workers}})
}

func writePredictions(path string, preds []eval.Prediction) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	for _, p := range preds {
		if err := enc.Encode(p); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

// multi is a batch.Method that opens each snapshot with repoctx's own method and
// composes every configuration from it.
type multi struct {
	inner batch.Method
	opts  []assemble.Options
	index map[string]int

	mu    sync.Mutex
	preds [][]eval.Prediction
}

func (m *multi) Open(ctx context.Context, snap snapshot.Snapshot, repo string) (batch.Answerer, error) {
	a, err := m.inner.Open(ctx, snap, repo)
	if err != nil {
		return nil, err
	}
	r, ok := a.(interface{ View() *index.View })
	if !ok {
		a.Close()
		return nil, errors.New("batch.Repoctx's answerer has no View method")
	}
	return &multiAnswerer{Answerer: a, repo: r.View(), m: m}, nil
}

type multiAnswerer struct {
	batch.Answerer
	repo *index.View
	m    *multi
}

func (a *multiAnswerer) Answer(ctx context.Context, d *batch.Datapoint) (repoctx.Context, error) {
	i, ok := a.m.index[d.ID]
	if !ok {
		return repoctx.Context{}, fmt.Errorf("datapoint %q: not in the index", d.ID)
	}
	var first repoctx.Context
	for k, o := range a.m.opts {
		c, err := assemble.Compose(ctx, a.repo, d.Hole(), o)
		if err != nil {
			return repoctx.Context{}, err
		}
		if k == 0 {
			first = c
		}
		a.m.mu.Lock()
		a.m.preds[k][i] = eval.Prediction{Context: c.Text, Prefix: c.Prefix, Suffix: c.Suffix}
		a.m.mu.Unlock()
	}
	return first, nil
}

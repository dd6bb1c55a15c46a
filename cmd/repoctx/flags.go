package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/assemble"
	"github.com/repoctx/repoctx/batch"
	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/index"
	"github.com/repoctx/repoctx/retrieve"
	"github.com/repoctx/repoctx/retrieve/hugot"
	"github.com/repoctx/repoctx/store"
	"github.com/repoctx/repoctx/tokens"
)

// The defaults every flag below shows and starts from: defined once, in the library.
var (
	defIndex  = index.DefaultOptions()
	defBatch  = batch.DefaultConfig()
	defFixed  = chunker.DefaultOptions(chunker.StrategyFixed)
	defStruct = chunker.DefaultOptions(chunker.StrategyStructural)
)

// Flags shared by several commands, grouped by topic: chunking, indexing, assembly
// and the budget planner.
var (
	strategyFlag = &cli.StringFlag{Name: "strategy", Value: string(defIndex.Strategy), Usage: "chunking `strategy`: " + chunker.StrategyNames + " (windows aligned to statements and members)"}
	noHeaderFlag = &cli.BoolFlag{Name: "no-header", Usage: "aligned strategy: windows carry no signatures of their enclosing definitions"}
	maxCharsFlag = &cli.IntFlag{Name: "max-chars", Value: defStruct.MaxChars, Usage: "chunk size cap in non-white-space characters"}
	windowFlag   = &cli.IntFlag{Name: "window-lines", DefaultText: fmt.Sprint(defStruct.WindowLines), Usage: "window size in lines for fixed chunks and fallback windows"}
	overlapFlag  = &cli.IntFlag{Name: "overlap-lines", DefaultText: fmt.Sprintf("%d for fixed and aligned, %d for fallback", defFixed.WindowOverlap, defStruct.WindowOverlap), Usage: "window overlap in lines"}
	noMergeFlag  = &cli.BoolFlag{Name: "no-merge", Usage: "ablation: structural chunks without merging small adjacent siblings"}
	cacheFlag    = &cli.StringFlag{Name: "cache-dir", Value: store.DefaultCacheDir(), Usage: "`directory` for indexes"}

	denseFlag   = &cli.StringFlag{Name: "dense", Value: defIndex.Dense.String(), Usage: "dense retriever fused with BM25: lsa (built-in; fitted per snapshot, shared by a repository's snapshots in predict) or none"}
	lsaSnapFlag = &cli.BoolFlag{Name: "lsa-per-snapshot", Usage: "fit the LSA model on every snapshot instead of once per repository (its first snapshot in name order)"}
	modelFlag   = &cli.StringFlag{Name: "model", Usage: "Hugging Face model `directory` (see repoctx model download) for dense retrieval instead of LSA"}
	backendFlag = &cli.StringFlag{Name: "model-backend", Value: "go", Usage: "`backend` running --model: go (pure Go) or ort (ONNX Runtime; needs a binary built with -tags onnxruntime)"}

	tokFlag = &cli.StringFlag{Name: "tokenizer", Usage: "budget planner: count tokens with this Hugging Face tokenizer.json `file` (default: characters / 4)"}

	// langsFlag restricts indexing and retrieval to some languages; chunk has its own
	// flag of that name (with the older alias --lang).
	langsFlag = &cli.StringSliceFlag{Name: "langs", Usage: "index and retrieve from files of these `languages` only (comma-separated grammar names; default: predict and eval the family of --lang, e.g. kotlin,java; index and query every registered language, query then using the family of --file's language)"}

	workersFlag = &cli.IntFlag{Name: "workers", Aliases: []string{"j"}, Value: defBatch.Workers, Usage: "datapoints answered in parallel"}
	verboseFlag = &cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "log skipped files"}
)

// indexFlags are the chunking and indexing flags of every command that builds
// indexes.
func indexFlags() []cli.Flag {
	return []cli.Flag{strategyFlag, maxCharsFlag, windowFlag, overlapFlag, noMergeFlag, noHeaderFlag, cacheFlag, cacheSizeFlag, denseFlag, modelFlag, backendFlag}
}

// composeFlags are the assembly and planner flags (one per assemble.OptionTable
// option, see optionFlags) with the defaults of assemble.PresetLive (the planner
// off, one retrieval round), and --tokenizer.
func composeFlags() []cli.Flag { return append(optionFlags(assemble.PresetLive), tokFlag) }

// batchComposeFlags are composeFlags with the defaults of assemble.PresetBatch (the
// planner on for batch.DefaultPlanWindow tokens, batch.DefaultIterations rounds), for
// predict, eval and compare.
func batchComposeFlags() []cli.Flag { return append(optionFlags(assemble.PresetBatch), tokFlag) }

// optionFlags makes a flag of every assemble.OptionTable option, named and
// described by the table, with preset p's default. The table declares no switch
// that defaults to on.
func optionFlags(p assemble.Preset) []cli.Flag {
	var out []cli.Flag
	for i := range assemble.OptionTable {
		s := &assemble.OptionTable[i]
		def := p.Default(s)
		switch s.Kind {
		case assemble.KindInt:
			out = append(out, &cli.IntFlag{Name: s.Name, Value: int(def), Usage: s.FlagHelp()})
		case assemble.KindFloat:
			out = append(out, &cli.Float64Flag{Name: s.Name, Value: def, Usage: s.FlagHelp()})
		case assemble.KindBool:
			out = append(out, &cli.BoolFlag{Name: s.Name, Usage: s.FlagHelp()})
		}
	}
	return out
}

// languages reads --langs (comma-separated or repeated grammar names); an unknown
// name is a usage error. It returns nil when the flag is not given.
func languages(c *cli.Context) ([]string, error) {
	var out []string
	for _, l := range c.StringSlice("langs") {
		for _, l := range strings.Split(l, ",") {
			if l = strings.TrimSpace(l); l == "" {
				continue
			}
			if grammars.Lookup(l) == nil {
				return nil, usagef("--langs: unknown language %q (known: %s)", l, strings.Join(grammars.Names(), ", "))
			}
			out = append(out, l)
		}
	}
	return out, nil
}

// chunkerOptions reads --max-chars, --window-lines, --overlap-lines, --no-merge and
// --no-header for strategy s; a value that makes no sense is a *repoctx.OptionError
// naming the flag (a usage error), never a silent default.
func chunkerOptions(c *cli.Context, s chunker.Strategy) (chunker.Options, error) {
	o := chunker.Options{MaxChars: c.Int("max-chars"), WindowLines: c.Int("window-lines"), WindowOverlap: c.Int("overlap-lines"), NoMerge: c.Bool("no-merge"), NoHeader: c.Bool("no-header")}
	bad := func(flag string, v int, want string) error {
		return &repoctx.OptionError{Option: flag, Value: fmt.Sprint(v), Want: want}
	}
	if o.MaxChars < 1 {
		return o, bad("max-chars", o.MaxChars, "a positive number of non-space characters")
	}
	if c.IsSet("window-lines") && o.WindowLines < 1 {
		return o, bad("window-lines", o.WindowLines, "a positive number of lines")
	}
	if c.IsSet("overlap-lines") {
		win := o.WindowLines
		if win < 1 {
			win = chunker.DefaultOptions(s).WindowLines
		}
		if o.WindowOverlap < 0 || o.WindowOverlap >= win {
			return o, bad("overlap-lines", o.WindowOverlap, fmt.Sprintf("a number of lines in [0, %d), below the window", win))
		}
	}
	return o, nil
}

// closers collects what a command opened (a model) for its After hook.
type closers []func() error

// indexOptions reads the chunking, cache and dense flags (--cache-dir is read by
// whoever opens the store). A --model folder is
// opened once here (with --model-backend) and closed when the command ends.
func indexOptions(c *cli.Context) (index.Options, error) {
	o := index.DefaultOptions()
	name := c.String("strategy")
	if name == "" && !c.IsSet("strategy") {
		name = string(o.Strategy) // a command without --strategy (compare runs both itself)
	}
	s, err := chunker.ParseStrategy(name)
	if err != nil {
		return o, usagef("--strategy must be %s, not %q", chunker.StrategyNames, c.String("strategy"))
	}
	if o.Chunk, err = chunkerOptions(c, s); err != nil {
		return o, err
	}
	o.Strategy = s
	if o.Languages, err = languages(c); err != nil {
		return o, err
	}
	if defined(c, "cache-max-size") {
		if err := checkCacheSize(c); err != nil {
			return o, err
		}
		onClose(c, func() error { cacheGC(c); return nil }) // once the command is done
	}
	if m := c.String("model"); m != "" && hasFlag(c, modelFlag) { // complete's --model is the completion model
		if fi, err := os.Stat(m); err != nil || !fi.IsDir() {
			return o, usagef("--model %s: not a model directory (see repoctx model download)", m)
		}
		emb, err := hugot.New(m, hugot.Options{Backend: c.String("model-backend")})
		if err != nil {
			return o, usagef("--model %s: %s", m, stripPrefixes(err.Error()))
		}
		onClose(c, emb.Close)
		o.Dense, o.Embedder = retrieve.DenseModel, emb
		return o, nil
	}
	d, err := retrieve.ParseDense(c.String("dense"))
	if err != nil {
		return o, usagef("--dense must be lsa or none, not %q (use --model DIR for a model)", c.String("dense"))
	}
	o.Dense = d
	return o, nil
}

// onClose registers f to run when the command ends.
func onClose(c *cli.Context, f func() error) {
	if cl, ok := c.App.Metadata["closers"].(*closers); ok {
		*cl = append(*cl, f)
	}
}

// composeOptions reads the assembly and planner flags, starting from preset p for
// any the command does not define, and validates them (assemble.Options.CheckGiven):
// a value that makes no sense is a usage error.
func composeOptions(c *cli.Context, p assemble.Preset) (assemble.Options, error) {
	o := p.Options()
	for i := range assemble.OptionTable {
		s := &assemble.OptionTable[i]
		if !defined(c, s.Name) {
			continue
		}
		switch s.Kind {
		case assemble.KindInt:
			s.Set(&o, float64(c.Int(s.Name)))
		case assemble.KindFloat:
			s.Set(&o, c.Float64(s.Name))
		case assemble.KindBool:
			if c.Bool(s.Name) {
				s.Set(&o, 1)
			}
		}
	}
	var err error
	if o.Languages, err = languages(c); err != nil {
		return o, err
	}
	if err := o.CheckGiven(c.IsSet); err != nil {
		return o, usagef("%v", err)
	}
	return o, nil
}

// hasFlag reports whether the running command has the flag f itself.
func hasFlag(c *cli.Context, f cli.Flag) bool {
	for _, g := range c.Command.Flags {
		if g == f {
			return true
		}
	}
	return false
}

// defined reports whether the running command has the flag name.
func defined(c *cli.Context, name string) bool {
	for _, f := range c.Command.Flags {
		for _, n := range f.Names() {
			if n == name {
				return true
			}
		}
	}
	return false
}

// plannerTokens loads --tokenizer for the budget planner; it is a usage error
// without --plan-window or when the file cannot be loaded.
func plannerTokens(c *cli.Context, plan *assemble.Plan) error {
	p := c.String("tokenizer")
	if p == "" {
		return nil
	}
	if !plan.On() {
		return usagef("--tokenizer needs --plan-window (predict counts tokens only for the budget planner)")
	}
	tk, err := tokens.Load(p)
	if err != nil {
		return usagef("--tokenizer: %v", err)
	}
	plan.Tokens = tk
	return nil
}

// batchConfig reads the index, cache, assembly and worker flags.
func batchConfig(c *cli.Context) (batch.Config, error) {
	cfg := batch.DefaultConfig()
	var err error
	if cfg.Index, err = indexOptions(c); err != nil {
		return cfg, err
	}
	// A run on the same snapshots as the last two reads each view back instead of
	// making it; a single run writes no view.
	cfg.Index.StoreViews = index.ViewsStoredOnRepeat
	if defined(c, noStoredViewFlag.Name) && c.Bool(noStoredViewFlag.Name) {
		cfg.Index.StoreViews = index.ViewsNotStored
	}
	cfg.CacheDir = c.String("cache-dir")
	if cfg.Compose, err = composeOptions(c, assemble.PresetBatch); err != nil {
		return cfg, err
	}
	if c.Command.Names()[0] == "predict" {
		if err := plannerTokens(c, &cfg.Compose.Plan); err != nil {
			return cfg, err
		}
	}
	if defined(c, "draft-endpoint") {
		if err := draftModel(c, &cfg.Compose); err != nil {
			return cfg, err
		}
	}
	cfg.LSAPerSnapshot = c.Bool("lsa-per-snapshot")
	cfg.CrossSnapshot = defined(c, "cross-snapshot") && c.Bool("cross-snapshot")
	cfg.CrossRepo = defined(c, "cross-repo") && c.Bool("cross-repo")
	if c.IsSet("workers") || c.Int("workers") != 0 {
		cfg.Workers = c.Int("workers")
	}
	if cfg.Workers <= 0 || cfg.Workers > batch.MaxWorkers {
		return cfg, usagef("--workers must be a positive number up to %d, not %d", batch.MaxWorkers, cfg.Workers)
	}
	return cfg, nil
}

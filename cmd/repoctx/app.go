package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/repoctx/repoctx/assemble"
	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/dataset"
	"github.com/repoctx/repoctx/eval"
	"github.com/repoctx/repoctx/retrieve"
	"github.com/repoctx/repoctx/symbols"
	"github.com/urfave/cli/v2"
)

// Exit codes. Only Main chooses them; main exits.
const (
	exitOK         = 0
	exitError      = 1 // the command failed
	exitUsage      = 2 // bad flags or arguments
	exitSomeFailed = 3 // predict wrote its output but some datapoints failed
)

// usageError marks errors caused by how the command was called.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

// Main runs the CLI with args (args[0] is the program name) and returns the exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	app := newApp(stdout, stderr)
	err := app.Run(interspersed(app, args))
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, assemble.ErrSomeFailed):
		fmt.Fprintf(stderr, "repoctx: %v\n", err)
		return exitSomeFailed
	case errors.As(err, new(usageError)), strings.HasPrefix(err.Error(), "Required flag"),
		strings.Contains(err.Error(), "flag provided but not defined"), strings.HasPrefix(err.Error(), "invalid value"):
		fmt.Fprintf(stderr, "repoctx: %v\n", err)
		return exitUsage
	default:
		fmt.Fprintf(stderr, "repoctx: %v\n", err)
		return exitError
	}
}

// interspersed moves a subcommand's positional arguments after its flags, so that
// `repoctx query REPO --file F` works: urfave/cli v2 stops parsing flags at the first
// positional argument. Arguments after "--" are left alone.
func interspersed(app *cli.App, args []string) []string {
	if len(args) < 3 {
		return args
	}
	var cmd *cli.Command
	for _, c := range app.Commands {
		if c.Name == args[1] {
			cmd = c
		}
	}
	if cmd == nil || len(cmd.Subcommands) > 0 {
		return args
	}
	takesValue := map[string]bool{}
	for _, f := range cmd.Flags {
		_, isBool := f.(*cli.BoolFlag)
		for _, n := range f.Names() {
			takesValue[n] = !isBool
		}
	}
	flags := []string{}
	var pos []string
	rest := args[2:]
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			pos = append(pos, rest[i:]...)
			break
		}
		if len(a) > 1 && a[0] == '-' {
			flags = append(flags, a)
			name := strings.TrimLeft(a, "-")
			if !strings.Contains(name, "=") && takesValue[name] && i+1 < len(rest) {
				i++
				flags = append(flags, rest[i])
			}
			continue
		}
		pos = append(pos, a)
	}
	out := append([]string{args[0], args[1]}, flags...)
	return append(out, pos...)
}

// Flags shared by several commands.
var (
	strategyFlag = &cli.StringFlag{Name: "strategy", Value: "structural", Usage: "chunking `strategy`: structural or fixed"}
	maxCharsFlag = &cli.IntFlag{Name: "max-chars", Value: chunker.DefaultMaxChars, Usage: "chunk size cap in non-white-space characters"}
	windowFlag   = &cli.IntFlag{Name: "window-lines", DefaultText: "20", Usage: "window size in lines for fixed chunks and fallback windows"}
	overlapFlag  = &cli.IntFlag{Name: "overlap-lines", DefaultText: "10 for fixed, 5 for fallback", Usage: "window overlap in lines"}
	cacheFlag    = &cli.StringFlag{Name: "cache-dir", Value: retrieve.DefaultCacheDir(), Usage: "`directory` for indexes"}
	queryLines   = &cli.IntFlag{Name: "query-lines", Value: 12, Usage: "lines before/after the cursor used as the prefix/suffix query"}
	topKFlag     = &cli.IntFlag{Name: "top-k", Value: 8, Usage: "chunks retrieved per query"}
	budgetFlag   = &cli.IntFlag{Name: "budget", Value: 24000, Usage: "context budget in characters (bytes); least relevant parts are dropped first"}
	noRelFlag    = &cli.BoolFlag{Name: "no-relative", Usage: "turn relative positioning (next/prev chunk of a match) off"}
	noEditFlag   = &cli.BoolFlag{Name: "no-edit-query", Usage: "do not add the identifiers of the user's edit (diff against the old file) to the queries"}
	noDefsFlag   = &cli.BoolFlag{Name: "no-definitions", Usage: "do not add definitions of the identifiers near the cursor"}
	denseFlag    = &cli.StringFlag{Name: "dense", Value: "lsa", Usage: "dense retriever fused with BM25: lsa (built-in; fitted per snapshot, shared by a repository's snapshots in predict) or none"}
	lsaSnapFlag  = &cli.BoolFlag{Name: "lsa-per-snapshot", Usage: "fit the LSA model on every snapshot instead of once per repository (its first snapshot in name order)"}
	modelFlag    = &cli.StringFlag{Name: "model", Usage: "Hugging Face model `directory` (see repoctx model download) for dense retrieval instead of LSA"}
	noDenseFlag  = &cli.BoolFlag{Name: "no-dense", Usage: "search with BM25 only even if the index has dense vectors"}
	relWFlag     = &cli.Float64Flag{Name: "relative-weight", Value: 1.05, Usage: "score of a match's neighbour relative to the match"}
	noOldFlag    = &cli.BoolFlag{Name: "no-old-file", Usage: "do not add the old completion file's changed regions"}
	minScoreFlag = &cli.Float64Flag{Name: "min-score-ratio", Usage: "drop retrieval hits scoring below this fraction of the best hit (0 keeps all)"}
	planWFlag    = &cli.IntFlag{Name: "plan-window", Usage: "budget planner: plan for a model window of `N` tokens (e.g. 8000): trim the far prefix/suffix when they take more than --plan-share of it (written as \"prefix\"/\"suffix\" overrides) and budget the context in tokens to the room left instead of --budget; 0 = off"}
	planSFlag    = &cli.Float64Flag{Name: "plan-share", Value: assemble.DefaultPlanShare, Usage: "budget planner: largest `fraction` of the window (minus 384 tokens for the completion) prefix+suffix may take before they are trimmed to it; >= 1 never trims"}
	planSufFlag  = &cli.Float64Flag{Name: "plan-suffix-share", Value: assemble.DefaultPlanSuffixShare, Usage: "budget planner: largest `fraction` of the prefix+suffix allowance the suffix keeps when they are trimmed"}
	tokFlag      = &cli.StringFlag{Name: "tokenizer", Usage: "budget planner: count tokens with this Hugging Face tokenizer.json `file` (default: characters / 3.5)"}
)

// planOptions reads --plan-window, --plan-share and --plan-suffix-share into a
// planner without a token counter (the caller sets it from --tokenizer).
func planOptions(c *cli.Context) (assemble.Plan, error) {
	p := assemble.Plan{Window: c.Int("plan-window"), Share: c.Float64("plan-share"), SuffixShare: c.Float64("plan-suffix-share")}
	if p.Window < 0 || p.Window > 0 && p.Window <= assemble.MaxNewTokens {
		return p, usagef("--plan-window must be 0 (off) or more than %d tokens (the completion's room), not %d", assemble.MaxNewTokens, p.Window)
	}
	if c.IsSet("plan-share") && !(p.Share > 0) { // also rejects NaN
		return p, usagef("--plan-share must be positive, not %g", p.Share)
	}
	if c.IsSet("plan-suffix-share") && !(p.SuffixShare > 0 && p.SuffixShare <= 1) { // also rejects NaN
		return p, usagef("--plan-suffix-share must be in (0, 1], not %g", p.SuffixShare)
	}
	if p.Window == 0 && (c.IsSet("plan-share") || c.IsSet("plan-suffix-share")) {
		return p, usagef("--plan-share and --plan-suffix-share need --plan-window")
	}
	return p, nil
}

func chunkOptions(c *cli.Context) (string, chunker.Options, error) {
	s := c.String("strategy")
	if s != "structural" && s != "fixed" {
		return "", chunker.Options{}, usagef("--strategy must be structural or fixed, not %q", s)
	}
	return s, chunkerOptions(c), nil
}

// chunkerOptions reads --max-chars, --window-lines and --overlap-lines.
func chunkerOptions(c *cli.Context) chunker.Options {
	return chunker.Options{MaxChars: c.Int("max-chars"), WindowLines: c.Int("window-lines"), WindowOverlap: c.Int("overlap-lines")}
}

// denseOption returns retrieve.BuildOptions.Dense from --dense and --model.
func denseOption(c *cli.Context) (string, error) {
	if m := c.String("model"); m != "" {
		if fi, err := os.Stat(m); err != nil || !fi.IsDir() {
			return "", usagef("--model %s: not a model directory (see repoctx model download)", m)
		}
		return m, nil
	}
	switch d := c.String("dense"); d {
	case "lsa", "":
		return "", nil
	case "none":
		return "none", nil
	default:
		return "", usagef("--dense must be lsa or none, not %q (use --model DIR for a model)", d)
	}
}

func composeOptions(c *cli.Context) assemble.Options {
	o := assemble.Options{QueryLines: c.Int("query-lines"), TopK: c.Int("top-k"), BudgetChars: c.Int("budget"),
		NoRelative: c.Bool("no-relative"), NoEditQuery: c.Bool("no-edit-query"), NoDefinitions: c.Bool("no-definitions"),
		MinScoreRatio: c.Float64("min-score-ratio"), NoDense: c.Bool("no-dense"), RelativeWeight: c.Float64("relative-weight")}
	if c.Bool("no-old-file") {
		o.OldFileWeight = -1
	}
	return o
}

func newApp(stdout, stderr io.Writer) *cli.App {
	return &cli.App{
		Name:           "repoctx",
		Usage:          "collect repository context for fill-in-the-middle code completion",
		Writer:         stdout,
		ErrWriter:      stderr,
		ExitErrHandler: func(*cli.Context, error) {}, // Main chooses exit codes
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return usagef("%v", err)
		},
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "cpuprofile", Usage: "write a Go CPU profile of the whole command to `FILE` (read it with go tool pprof)"},
			&cli.StringFlag{Name: "memprofile", Usage: "write a Go heap profile to `FILE` when the command ends"},
		},
		Before: startProfiles,
		After:  stopProfiles,
		Commands: []*cli.Command{
			chunkCmd(), indexCmd(), queryCmd(), predictCmd(), datasetCmd(), evalCmd(), modelCmd(), compareCmd(),
		},
	}
}

func chunkCmd() *cli.Command {
	return &cli.Command{
		Name:      "chunk",
		Usage:     "print the chunks of source files",
		ArgsUsage: "PATH...",
		Flags:     []cli.Flag{strategyFlag, maxCharsFlag, windowFlag, overlapFlag, &cli.BoolFlag{Name: "json", Usage: "print one JSON object per chunk"}},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return usagef("chunk: give one or more files")
			}
			strategy, opts, err := chunkOptions(c)
			if err != nil {
				return err
			}
			ch, err := chunker.New(strategy, opts)
			if err != nil {
				return err
			}
			if s, ok := ch.(*chunker.Structural); ok {
				defer s.Close()
			}
			enc := json.NewEncoder(c.App.Writer)
			enc.SetEscapeHTML(false)
			failed := 0
			for _, p := range c.Args().Slice() {
				raw, err := os.ReadFile(p)
				if err != nil {
					fmt.Fprintf(c.App.ErrWriter, "repoctx: %v\n", err)
					failed++
					continue
				}
				f, err := chunker.Decode(filepath.ToSlash(p), raw, 0)
				if err != nil {
					fmt.Fprintf(c.App.ErrWriter, "repoctx: skip %v\n", err)
					failed++
					continue
				}
				cs, err := ch.Chunk(f)
				if err != nil {
					fmt.Fprintf(c.App.ErrWriter, "repoctx: %s: %v\n", p, err)
					failed++
					continue
				}
				for _, k := range cs {
					if c.Bool("json") {
						if err := enc.Encode(k); err != nil {
							return err
						}
						continue
					}
					flags := ""
					if k.Fallback {
						flags += " fallback"
					}
					if k.ParseError {
						flags += " parse-error"
					}
					fmt.Fprintf(c.App.Writer, "%s:%d-%d %s%s%s\n", k.Path, k.StartLine, k.EndLine, k.Kind, prefixSpace(k.Name), flags)
					if len(k.Header) > 0 {
						fmt.Fprintf(c.App.Writer, "  in: %s\n", strings.Join(k.Header, " > "))
					}
				}
			}
			if failed > 0 {
				return fmt.Errorf("%d of %d files could not be chunked", failed, c.NArg())
			}
			return nil
		},
	}
}

// indexOptions returns the chunking, cache and dense options shared by every
// command that builds indexes (index, query, predict, eval, compare).
func indexOptions(c *cli.Context) (assemble.IndexOptions, error) {
	strategy, copts, err := chunkOptions(c)
	if err != nil {
		return assemble.IndexOptions{}, err
	}
	dense, err := denseOption(c)
	if err != nil {
		return assemble.IndexOptions{}, err
	}
	return assemble.IndexOptions{Strategy: strategy, Chunk: copts, CacheDir: c.String("cache-dir"), Dense: dense,
		LSAPerSnapshot: c.Bool("lsa-per-snapshot")}, nil
}

// openIndex opens the repository folder dir as a snapshot and builds or reuses its
// index.
func openIndex(c *cli.Context, dir string) (*dataset.Snapshot, *retrieve.Index, assemble.IndexStats, error) {
	iopts, err := indexOptions(c)
	if err != nil {
		return nil, nil, assemble.IndexStats{}, err
	}
	snap, err := dataset.OpenDir(dir, dataset.Limits{})
	if err != nil {
		return nil, nil, assemble.IndexStats{}, err
	}
	ch, err := chunker.New(iopts.Strategy, iopts.Chunk)
	if err != nil {
		return nil, nil, assemble.IndexStats{}, err
	}
	if s, ok := ch.(*chunker.Structural); ok {
		defer s.Close()
	}
	if c.Bool("verbose") {
		iopts.Log = c.App.ErrWriter
	}
	ix, st, err := assemble.IndexSnapshot(snap, ch, iopts)
	return snap, ix, st, err
}

var verboseFlag = &cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "log skipped files"}

func indexCmd() *cli.Command {
	return &cli.Command{
		Name:      "index",
		Usage:     "build (or reuse) the index of a repository folder",
		ArgsUsage: "REPO_DIR",
		Flags:     []cli.Flag{strategyFlag, maxCharsFlag, windowFlag, overlapFlag, cacheFlag, denseFlag, modelFlag, verboseFlag},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("index: give one repository folder")
			}
			t := time.Now()
			_, ix, st, err := openIndex(c, c.Args().First())
			if err != nil {
				return err
			}
			defer ix.Close()
			what := "reused"
			if st.Built {
				what = "built"
			}
			fmt.Fprintf(c.App.Writer, "%s index %s\n  files %d, skipped %d, lossy %d, with parse errors %d, chunks %d, %.2fs\n",
				what, ix.Dir(), st.Files, st.Skipped, st.Lossy, st.ParseErrors, st.Chunks, time.Since(t).Seconds())
			if c.Bool("verbose") {
				for _, p := range st.ParseErrorPaths {
					fmt.Fprintf(c.App.ErrWriter, "parse errors: %s\n", p)
				}
			}
			if st.Built {
				d := ix.DenseInfo()
				fmt.Fprintf(c.App.Writer, "  files chunked %d, from the store %d; dense %s: %d chunks embedded, %d from the embedding cache\n",
					st.Chunked, st.Reused, cmp.Or(d.Model, "none"), d.Embedded, d.Cached)
			}
			return nil
		},
	}
}

func queryCmd() *cli.Command {
	return &cli.Command{
		Name:      "query",
		Usage:     "print the context for one completion point in a repository folder",
		ArgsUsage: "REPO_DIR",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "file", Required: true, Usage: "completion file `path`, relative to REPO_DIR"},
			&cli.StringFlag{Name: "prefix-file", Usage: "`file` holding the text before the cursor (default: empty)"},
			&cli.StringFlag{Name: "suffix-file", Usage: "`file` holding the text after the cursor (default: empty)"},
			&cli.BoolFlag{Name: "json", Usage: "print the parts with their scores and reasons as JSON"},
			strategyFlag, maxCharsFlag, windowFlag, overlapFlag, cacheFlag, queryLines, topKFlag, budgetFlag, noRelFlag, noEditFlag, noDefsFlag, noOldFlag, minScoreFlag, relWFlag, denseFlag, modelFlag, noDenseFlag, verboseFlag,
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("query: give one repository folder")
			}
			var prefix, suffix []byte
			var err error
			if p := c.String("prefix-file"); p != "" {
				if prefix, err = os.ReadFile(p); err != nil {
					return err
				}
			}
			if p := c.String("suffix-file"); p != "" {
				if suffix, err = os.ReadFile(p); err != nil {
					return err
				}
			}
			if len(prefix) == 0 && len(suffix) == 0 {
				return usagef("query: give --prefix-file or --suffix-file (both empty)")
			}
			snap, ix, _, err := openIndex(c, c.Args().First())
			if err != nil {
				return err
			}
			defer ix.Close()
			copts := composeOptions(c)
			res := assemble.Resources{}
			if !copts.NoDefinitions {
				res.Extractor = symbols.NewExtractor(0)
				defer res.Extractor.Close()
				res.Symbols = assemble.CachedSymbols(snap, ix, res.Extractor, c.String("cache-dir"), 0)
			}
			ctx, parts, err := assemble.ComposeWith(ix, assemble.Hole{Path: filepath.ToSlash(c.String("file")), Prefix: string(prefix), Suffix: string(suffix)}, res, copts)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				enc := json.NewEncoder(c.App.Writer)
				enc.SetEscapeHTML(false)
				enc.SetIndent("", "  ")
				return enc.Encode(struct {
					Parts   []assemble.Part `json:"parts"`
					Context string          `json:"context"`
				}{parts, ctx})
			}
			_, err = io.WriteString(c.App.Writer, ctx)
			return err
		},
	}
}

func predictCmd() *cli.Command {
	return &cli.Command{
		Name:  "predict",
		Usage: "write a context for every datapoint of a competition-format dataset (the main job)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "data", Required: true, Usage: "`directory` holding {lang}-{stage}.jsonl and the snapshots (folder or zip)"},
			&cli.StringFlag{Name: "lang", Required: true, Usage: "`language`: kotlin or python"},
			&cli.StringFlag{Name: "stage", Required: true, Usage: "stage `name`, e.g. start, public, dev"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "output `file` (- for stdout; default DATA/{lang}-{stage}.predictions.jsonl)"},
			&cli.BoolFlag{Name: "resume", Usage: "continue an interrupted run from the output's .partial journal"},
			&cli.IntFlag{Name: "workers", Aliases: []string{"j"}, Value: runtime.NumCPU(), Usage: "snapshots processed in parallel"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress bar and no summary"},
			strategyFlag, maxCharsFlag, windowFlag, overlapFlag, cacheFlag, queryLines, topKFlag, budgetFlag, noRelFlag, noEditFlag, noDefsFlag, noOldFlag, minScoreFlag, relWFlag, denseFlag, lsaSnapFlag, modelFlag, noDenseFlag,
			planWFlag, planSFlag, planSufFlag, tokFlag, verboseFlag,
		},
		Action: func(c *cli.Context) error {
			lang := c.String("lang")
			if lang != "kotlin" && lang != "python" {
				return usagef("--lang must be kotlin or python, not %q", lang)
			}
			iopts, err := indexOptions(c)
			if err != nil {
				return err
			}
			plan, err := planOptions(c)
			if err != nil {
				return err
			}
			if p := c.String("tokenizer"); p != "" {
				if !plan.On() {
					return usagef("--tokenizer needs --plan-window (predict counts tokens only for the budget planner)")
				}
				tk, err := eval.LoadTokenizer(p)
				if err != nil {
					return usagef("--tokenizer: %v", strings.TrimPrefix(err.Error(), "eval: "))
				}
				plan.Tokens = tk
			}
			copts := composeOptions(c)
			copts.Plan = plan
			opts := assemble.PredictOptions{
				DataDir: c.String("data"), Lang: lang, Stage: c.String("stage"), Out: c.String("output"),
				Resume: c.Bool("resume"), Workers: c.Int("workers"),
				Index:   iopts,
				Compose: copts,
				Log:     c.App.ErrWriter,
			}
			if !c.Bool("quiet") {
				opts.Progress = c.App.ErrWriter
			}
			if !c.Bool("verbose") {
				opts.Log = errorsOnly{c.App.ErrWriter}
			}
			sum, err := assemble.Predict(opts)
			if sum.Datapoints > 0 && !c.Bool("quiet") {
				fmt.Fprintf(c.App.ErrWriter, "wrote %s: %d datapoints (%d failed, %d resumed), %d snapshots (%d indexed, %d from cache), %d chunks, files chunked %d / from store %d, %d indexes with a shared LSA model, %.2fs wall, %.1f ms/datapoint, peak RSS %d MB\n",
					sum.Out, sum.Datapoints, sum.Failed, sum.Resumed, sum.Snapshots, sum.Built, sum.Snapshots-sum.Built, sum.Chunks, sum.Chunked, sum.Reused, sum.SharedLSA,
					sum.Wall.Seconds(), float64(sum.Wall.Milliseconds())/float64(max(1, sum.Datapoints-sum.Resumed)), peakRSSMB())
			}
			return err
		},
	}
}

// prefixSpace returns " "+s, or "" when s is empty.
func prefixSpace(s string) string {
	if s == "" {
		return ""
	}
	return " " + s
}

// errorsOnly passes on lines starting with "error:" and drops the rest (skip logs).
type errorsOnly struct{ w io.Writer }

func (e errorsOnly) Write(p []byte) (int, error) {
	if strings.HasPrefix(string(p), "error:") {
		return e.w.Write(p)
	}
	return len(p), nil
}

// peakRSSMB returns the process's peak resident set size in MiB (Linux ru_maxrss is in KiB).
func peakRSSMB() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return int64(ru.Maxrss) / 1024
}

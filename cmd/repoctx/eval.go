package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/eval"
	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/tokens"
)

// evalCmd scores contexts against a dev set's truth; see package eval.
func evalCmd() *cli.Command {
	return &cli.Command{
		Name:  "eval",
		Usage: "score contexts against {lang}-{stage}.truth.jsonl: the current configuration, baselines or prediction files",
		Description: "Metrics (means over datapoints, each in [0, 1]): idrec (share of the middle's new identifiers, those not in the prefix/suffix\n" +
			"the model is given, found in the context), novelrec (share of the middle's novel identifiers, those not in the datapoint's\n" +
			"original prefix/suffix, found in the kept context: the same identifiers for every configuration), allrec (share of all the\n" +
			"middle's identifiers found anywhere in the prompt: kept context, prefix and suffix), line_chrf (best chrF of one context\n" +
			"line against the middle's main line), copy_chrf (chrF of a simple copy completer), and ctx_chars (context bytes, mean and\n" +
			"p95), for the untrimmed context and for each model window (--window) and byte budget (--budget-chars), trimmed from the\n" +
			"left by whole lines as the competition's scorer did. Identifiers: [A-Za-z_][A-Za-z0-9_]*, 2 bytes or more, not keywords.\n" +
			"In a window the prompt holds only what fits: when the prefix and suffix alone exceed the window minus 384 tokens, allrec\n" +
			"loses whole lines of the far prefix first, then of the far suffix. See docs/metrics.md.\n\n" +
			"Without --predictions or --config the current configuration runs (what `repoctx predict` does with the same flags).\n" +
			"It runs with the budget planner for an N-token window (--plan-window N, default 8000; 0: off), counting tokens with --tokenizer; its prefix/suffix\n" +
			"overrides are scored as what the model is given (idrec's new identifiers and the copy completer's query use them).\n" +
			"--baselines adds every baseline (--config picks some):\n" + baselineHelp() +
			"\nWith the bm25file and oracle rows, a headroom table shows (config - bm25file) / (oracle - bm25file) for idrec and line_chrf\n" +
			"(blank where the gap is under 0.03). With two rows or more, paired tables compare every row with --compare-to (default: current,\n" +
			"else the first row): the mean per-datapoint difference with a 95% paired bootstrap interval (2000 resamples, fixed seed) and a\n" +
			"verdict (win: the interval lies above 0; loss: below 0; else tie)." +
			"\n--complete-endpoint URL (an OpenAI-compatible API's base URL) adds model_chrf: the chrF of a real model's completions, each\n" +
			"configuration's context in --fim-template's prompt trimmed to each --window, as the competition scored.",
		Flags: withAssemblyFlags([]cli.Flag{
			&cli.StringFlag{Name: "data", Required: true, Usage: "`directory` holding {lang}-{stage}.jsonl, .truth.jsonl and the snapshots (folder or zip)"},
			&cli.StringFlag{Name: "lang", Required: true, Usage: "`language` of the datapoints: a registered grammar name (kotlin, python, java, ...)"},
			&cli.StringFlag{Name: "stage", Required: true, Usage: "stage `name`, e.g. dev"},
			&cli.StringSliceFlag{Name: "predictions", Usage: "score this predictions `file` (one line per datapoint; repeatable); NAME=FILE names its row (default: the file's name without .jsonl)"},
			&cli.StringFlag{Name: "config", Usage: "built-in configurations to run, comma-separated: current (what predict writes with these flags), " + strings.Join(eval.Baselines(), ", ") + " (see the baselines above; seed is the seed paper's submitted configuration)"},
			&cli.BoolFlag{Name: "baselines", Usage: "run all baselines (" + strings.Join(eval.Baselines(), ", ") + ") next to the current configuration (or the prediction files)"},
			&cli.StringFlag{Name: "compare-to", Usage: "reference `row` of the paired comparisons (default: current when it runs, else the first row)"},
			&cli.StringFlag{Name: "window", Value: "8000,16000", Usage: "model windows in tokens, comma-separated"},
			&cli.StringFlag{Name: "budget-chars", Usage: "also keep at most N bytes (whole lines) from the end; comma-separated"},
			&cli.StringFlag{Name: "tokenizer", Usage: "count tokens with this Hugging Face tokenizer.json `file` (default: characters / 4), for the window settings and the budget planner"},
			&cli.BoolFlag{Name: "visible", Usage: "line_chrf and copy_chrf also search the prefix and suffix the model is given (fair when configurations trim the prefix differently, e.g. --plan-window)"},
			&cli.BoolFlag{Name: "json", Usage: "print a machine-readable JSON summary instead of the tables"},
			&cli.IntFlag{Name: "limit", Usage: "score only the first N datapoints"},
			workersFlag,
			&cli.StringFlag{Name: "complete-endpoint", Usage: "score real completions too: base `URL` of an OpenAI-compatible API serving a code model, e.g. http://127.0.0.1:8080/v1"},
			&cli.StringFlag{Name: "complete-model", Usage: "the served model's `name` for --complete-endpoint (llama.cpp ignores it)"},
			fimTemplateFlag(false), endpointTimeoutFlag, endpointRetriesFlag, endpointConcFlag, maxNewTokensFlag,
		}),
		Action: func(c *cli.Context) error {
			start := time.Now()
			if lang := c.String("lang"); grammars.Lookup(lang) == nil {
				return usagef("--lang must be one of %s, not %q", strings.Join(grammars.Names(), ", "), lang)
			}
			if c.Int("limit") < 0 {
				return usagef("--limit must be a positive number of datapoints (or 0: all), not %d", c.Int("limit"))
			}
			cfg, err := batchConfig(c)
			if err != nil {
				return err
			}
			windows, err := intList(c, "window")
			if err != nil {
				return err
			}
			for _, w := range windows { // as --plan-window: the scorer keeps 384 tokens for the completion
				if w <= repoctx.MaxNewTokens {
					return usagef("--window: %d leaves no room for context: a window must be more than %d tokens (the completion's room)", w, repoctx.MaxNewTokens)
				}
			}
			budgets, err := intList(c, "budget-chars")
			if err != nil {
				return err
			}
			known := map[string]bool{eval.ConfigCurrent: true, eval.SeedOptions{}.Name(): true}
			for _, b := range eval.Baselines() {
				known[b] = true
			}
			var configs []string
			for _, s := range strings.Split(c.String("config"), ",") {
				if s = strings.TrimSpace(s); s == "" {
					continue
				}
				if !known[s] {
					return usagef("--config: unknown configuration %q (known: current, %s)", s, strings.Join(eval.Baselines(), ", "))
				}
				configs = append(configs, s)
			}
			preds := c.StringSlice("predictions")
			if len(configs) == 0 && len(preds) == 0 {
				configs = []string{eval.ConfigCurrent}
			}
			if c.Bool("baselines") {
				configs = append(configs, eval.Baselines()...)
			}
			if ref := c.String("compare-to"); ref != "" {
				var rows []string
				for _, p := range preds {
					n, _ := eval.PredictionArg(p)
					rows = append(rows, n)
				}
				for _, r := range configs {
					if r == eval.ConfigSeed {
						r = eval.SeedOptions{}.Name()
					}
					rows = append(rows, r)
				}
				if !slices.Contains(rows, ref) {
					return usagef("--compare-to: %q is not a row of this run (rows: %s)", ref, strings.Join(rows, ", "))
				}
			}
			// The planner's tokens: --tokenizer's, set by eval.Run.
			opts := eval.Options{
				DataDir: c.String("data"), Lang: c.String("lang"), Stage: c.String("stage"),
				Configs: configs, Predictions: preds, Windows: windows, BudgetChars: budgets,
				Batch: cfg, Limit: c.Int("limit"),
				Log: errorsOnly{c.App.ErrWriter}, Visible: c.Bool("visible"), CompareTo: c.String("compare-to"),
			}
			if c.Bool("verbose") {
				opts.Log = c.App.ErrWriter
			}
			if opts.Model, err = endpointModel(c, "complete-endpoint", "complete-model", nil); err != nil {
				return err
			}
			var prog *progress
			opts.Progress = func(done, total int) {
				if prog == nil {
					prog = newProgress(c.App.ErrWriter, "eval "+c.String("lang")+"-"+c.String("stage"), "answers", total)
				}
				prog.set(done)
			}
			if p := c.String("tokenizer"); p != "" {
				tk, err := tokens.Load(p)
				if err != nil {
					return usagef("--tokenizer: %v", err)
				}
				opts.Tokens = tk
			}
			rep, err := eval.Run(c.Context, opts)
			if prog != nil {
				prog.finish()
			}
			if err != nil {
				return err
			}
			if c.Bool("json") {
				err = rep.WriteJSON(c.App.Writer)
			} else {
				err = rep.WriteTable(c.App.Writer)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(c.App.ErrWriter, "scored %d datapoints, %d configurations, %.2fs wall\n", rep.Datapoints, len(rep.Configs), time.Since(start).Seconds())
			return nil
		},
	}
}

// baselines explains each baseline of eval.Baselines in one line.
var baselines = map[string]string{
	eval.ConfigEmpty:    "no context at all: the floor every configuration must beat",
	eval.ConfigRecent:   "the competition starter kit's: one random recently modified file of the language (else a random file), whole",
	eval.ConfigBM25File: "the starter kit's: the one file of the language most similar (Okapi BM25) to prefix + suffix, whole",
	eval.ConfigWindows:  fmt.Sprintf("RepoCoder's retrieval: %d-line windows every %d lines, the %d most similar (Jaccard) to the last %d prefix lines", eval.WindowsLines, eval.WindowsStride, eval.WindowsTopK, eval.WindowsLines),
	eval.ConfigWindowsOld: "RepoCoder's windows over every file of the language including the old completion file, less the old file's windows the\n" +
		"              prefix/suffix already show (the strong copy baseline; windows has always used this rule, so the rows agree)",
	eval.ConfigSeed: "the seed paper's submitted configuration, where this project started (8-line windows, RRF of BM25 and a sentence encoder, next/previous windows); seed-bm25 while only BM25 runs",
	eval.ConfigOracle: "the ceiling, no context: line_chrf of the best line of any file of the language or of the given prefix/suffix, idrec and\n" +
		"              novelrec of every identifier of those files, allrec with the prefix/suffix's too; the same in every setting; no copy_chrf",
}

// baselineHelp lists the baselines, one indented line each, in eval.Baselines order.
func baselineHelp() string {
	var b strings.Builder
	for _, n := range eval.Baselines() {
		fmt.Fprintf(&b, "  %-11s %s\n", n, baselines[n])
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// withAssemblyFlags returns own followed by predict's chunking, indexing and
// assembly flags (all its flags but those naming the input, the output and
// the run, and those own defines), so that eval accepts whatever predict
// does; chunkOptions and composeOptions read them.
func withAssemblyFlags(own []cli.Flag) []cli.Flag {
	skip := map[string]bool{"data": true, "lang": true, "stage": true, "output": true, "resume": true, "workers": true, "quiet": true}
	for _, f := range own {
		for _, n := range f.Names() {
			skip[n] = true
		}
	}
	out := own
	for _, f := range predictCmd().Flags {
		if !skip[f.Names()[0]] {
			out = append(out, f)
		}
	}
	return out
}

// intList parses a comma-separated list of positive integers from flag name;
// an empty flag gives nil.
func intList(c *cli.Context, name string) ([]int, error) {
	var out []int
	for _, s := range strings.Split(c.String(name), ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			return nil, usagef("--%s: %q is not a positive integer", name, s)
		}
		if slices.Contains(out, n) { // it would print the same column twice
			return nil, usagef("--%s: %d is given twice", name, n)
		}
		out = append(out, n)
	}
	return out, nil
}

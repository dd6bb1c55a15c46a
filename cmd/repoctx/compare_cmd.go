package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/eval"
	"github.com/repoctx/repoctx/grammars"
)

// compareCmd compares fixed and structural chunking; see eval.CompareChunking.
func compareCmd() *cli.Command {
	own := []cli.Flag{
		&cli.StringFlag{Name: "data", Usage: "also score both strategies on this dataset `directory` (as repoctx eval does; needs --lang and --stage)"},
		&cli.StringFlag{Name: "lang", Usage: "`language` of the dataset, and of the repository files to chunk (default: all known languages)"},
		&cli.StringFlag{Name: "stage", Usage: "stage `name` of the dataset, e.g. dev"},
		&cli.StringFlag{Name: "out", Usage: "write the table to `PATH`.md and the chart to PATH.svg (or .png)"},
		&cli.StringFlag{Name: "chart", Value: "svg", Usage: "chart `format` with --out: svg or png"},
		&cli.BoolFlag{Name: "json", Usage: "print the comparison as JSON instead of the Markdown table"},
		&cli.IntFlag{Name: "limit", Usage: "score only the first N datapoints"},
		workersFlag,
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress lines"},
	}
	// predict's chunking, indexing and assembly flags but --strategy (both strategies
	// run) and --shard (the table is of the whole dataset).
	skip := []cli.Flag{&cli.StringFlag{Name: "strategy"}, &cli.StringFlag{Name: "shard"}}
	flags := append(slices.Clip(own), withAssemblyFlags(append(slices.Clip(own), skip...))[len(own)+len(skip):]...)
	return &cli.Command{
		Name:      "compare",
		Usage:     "compare fixed and structural chunking of repositories side by side (and their eval scores on a dataset)",
		ArgsUsage: "REPO_DIR...",
		Description: "Chunks the source files of the folders (every registered language, or --lang's) with both strategies and prints a Markdown table:\n" +
			"chunk count, size distribution (non-space characters and lines: p50 / p90 / max), share of chunks cutting a\n" +
			"definition in two, share of fallback chunks, files with parse errors and chunking throughput (one run).\n" +
			"With --data, --lang and --stage it also runs the current configuration with --strategy structural and with\n" +
			"--strategy fixed (the same other flags) on the dataset and adds idrec, novelrec, allrec,\n" +
			"line_chrf and copy_chrf (full and w8000; see `repoctx eval --help`).\n" +
			"--out PATH writes PATH.md and a chart (size histograms and metric bars) to PATH.svg or PATH.png.",
		Flags: flags,
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return usagef("compare: give one or more repository folders")
			}
			lang, data, stage := c.String("lang"), c.String("data"), c.String("stage")
			if lang != "" && grammars.Lookup(lang) == nil {
				return usagef("--lang must be one of %s, not %q", strings.Join(grammars.Names(), ", "), lang)
			}
			if _, err := languages(c); err != nil {
				return err // --langs is read only with --data, but an unknown name is an error without it too
			}
			if data != "" && (lang == "" || stage == "") {
				return usagef("compare: --data needs --lang and --stage")
			}
			if data == "" && stage != "" {
				return usagef("compare: --stage without --data")
			}
			format := c.String("chart")
			if format != "svg" && format != "png" {
				return usagef("--chart must be svg or png, not %q", format)
			}
			if c.Int("limit") < 0 {
				return usagef("--limit must be a positive number of datapoints (or 0: all), not %d", c.Int("limit"))
			}
			copts, err := chunkerOptions(c, chunker.StrategyStructural)
			if err != nil {
				return err
			}
			opts := eval.CompareOptions{Chunk: copts, Lang: lang}
			if c.Bool("verbose") {
				opts.Log = c.App.ErrWriter
			}
			if !c.Bool("quiet") {
				opts.Progress = c.App.ErrWriter
			}
			if data != "" {
				cfg, err := batchConfig(c)
				if err != nil {
					return err
				}
				opts.Eval = eval.Options{
					DataDir: data, Lang: lang, Stage: stage, Batch: cfg, Limit: c.Int("limit"),
					Log: errorsOnly{c.App.ErrWriter},
				}
				if c.Bool("verbose") {
					opts.Eval.Log = c.App.ErrWriter
				}
			}
			cmp, err := eval.CompareChunking(c.Context, c.Args().Slice(), opts)
			if err != nil {
				return err
			}
			if out := c.String("out"); out != "" {
				if err := writeCompareFiles(c, cmp, out, format); err != nil {
					return err
				}
			}
			if c.Bool("json") {
				enc := json.NewEncoder(c.App.Writer)
				enc.SetEscapeHTML(false)
				enc.SetIndent("", "  ")
				return enc.Encode(cmp)
			}
			return cmp.WriteMarkdown(c.App.Writer)
		},
	}
}

// writeCompareFiles writes out.md (a title, the command, the table and a
// link to the chart) and out.{format} (the chart).
func writeCompareFiles(c *cli.Context, cmp *eval.Comparison, out, format string) error {
	if dir := filepath.Dir(out); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("compare: --out: %w", err)
		}
	}
	chart := out + "." + format
	var err error
	if format == "png" {
		err = cmp.WritePNG(chart)
	} else {
		err = cmp.WriteSVG(chart)
	}
	if err != nil {
		return err
	}
	var md bytes.Buffer
	var names []string
	for _, r := range cmp.Repos {
		names = append(names, r.Name)
	}
	fmt.Fprintf(&md, "# Fixed vs structural chunking: %s\n\n", strings.Join(names, ", "))
	fmt.Fprintf(&md, "Made by `%s`.\n\n", commandLine(c))
	if err := cmp.WriteMarkdown(&md); err != nil {
		return err
	}
	fmt.Fprintf(&md, "![chunk size histograms and metric bars](%s)\n", filepath.Base(chart))
	if err := os.WriteFile(out+".md", md.Bytes(), 0o644); err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	if !c.Bool("quiet") {
		fmt.Fprintf(c.App.ErrWriter, "compare: wrote %s.md and %s\n", out, chart)
	}
	return nil
}

// commandLine rebuilds the command from the flags that were set and the
// positional arguments, for the record.
func commandLine(c *cli.Context) string {
	parts := []string{"repoctx", "compare"}
	parts = append(parts, c.Args().Slice()...)
	for _, f := range c.Command.Flags {
		name := f.Names()[0]
		if !c.IsSet(name) {
			continue
		}
		if _, ok := f.(*cli.BoolFlag); ok {
			parts = append(parts, "--"+name)
			continue
		}
		parts = append(parts, "--"+name, fmt.Sprint(c.Value(name)))
	}
	return strings.Join(parts, " ")
}

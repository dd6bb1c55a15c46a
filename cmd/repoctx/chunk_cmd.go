package main

// Design note: `repoctx chunk` parses its flags into preprocess.Options, opens the
// output (stdout, or a file written atomically) and calls preprocess.Run with the
// writer of the format asked for; the package comment of preprocess describes the
// walk, the workers and the bounded memory.

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/batch"
	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/internal/atomicfile"
	"github.com/repoctx/repoctx/preprocess"
	"github.com/repoctx/repoctx/snapshot"
	"github.com/repoctx/repoctx/store"
)

// Walker flags, shared by chunk, index and query.
var (
	excludeFlag  = &cli.StringSliceFlag{Name: "exclude", Usage: "leave out paths matching this gitignore-style `GLOB` (repeatable; \"*.pb.py\" at any depth, \"/build\" at the root, \"gen/\" folders only)"}
	noIgnoreFlag = &cli.BoolFlag{Name: "no-ignore", Usage: "do not read .gitignore, .ignore and .git/info/exclude"}
	keepVendFlag = &cli.BoolFlag{Name: "keep-vendored", Usage: "do not skip vendored folders (vendor/, node_modules/, virtualenvs, ...)"}
	keepGenFlag  = &cli.BoolFlag{Name: "keep-generated", Usage: "do not skip generated and minified files"}
)

// walkFlags are the flags walkOptions reads.
func walkFlags() []cli.Flag { return []cli.Flag{excludeFlag, noIgnoreFlag, keepVendFlag, keepGenFlag} }

// walkOptions reads the walker flags (and --langs, --all-files, --max-file-bytes
// where the command has them).
func walkOptions(c *cli.Context) snapshot.WalkOptions {
	o := snapshot.WalkOptions{
		NoIgnoreFiles: c.Bool("no-ignore"), KeepVendored: c.Bool("keep-vendored"), KeepGenerated: c.Bool("keep-generated"),
		Exclude: c.StringSlice("exclude"), OtherFiles: c.Bool("all-files"), MaxFileBytes: c.Int64("max-file-bytes"),
	}
	for _, l := range c.StringSlice("langs") {
		for _, l := range strings.Split(l, ",") {
			if l = strings.TrimSpace(l); l != "" {
				o.Languages = append(o.Languages, l)
			}
		}
	}
	return o
}

// walkSnapshot opens the repository folder dir as a snapshot of the files the
// walker lets through (registered languages only, the walker flags applied), with
// what earlier walks learnt of the folder's files kept in recs (nil: nothing; see
// snapshot.OpenFolderCached).
func walkSnapshot(c *cli.Context, dir string, recs *store.Records) (snapshot.Snapshot, snapshot.WalkStats, error) {
	opts := walkOptions(c)
	if c.Bool("verbose") {
		opts.OnSkip = func(p string, r snapshot.SkipReason) { fmt.Fprintf(c.App.ErrWriter, "skip %s: %s\n", p, r) }
	}
	snap, st, err := snapshot.OpenFolderCached(c.Context, dir, opts, recs)
	if err != nil {
		return nil, st, walkError(err)
	}
	return snap, st, nil
}

// walkError makes an invalid walker option (*repoctx.OptionError) a usage error.
func walkError(err error) error {
	if oe := new(repoctx.OptionError); errors.As(err, &oe) {
		return usagef("%v", oe)
	}
	return err
}

func chunkCmd() *cli.Command {
	return &cli.Command{
		Name:  "chunk",
		Usage: "chunk source files or whole repository folders (text, or a JSON Lines / Parquet chunk dataset)",
		Description: "Each PATH is a file (chunked as named) or a folder, walked with the ignore rules:\n" +
			".gitignore (every folder), .ignore, .git/info/exclude and --exclude; vendored folders,\n" +
			"generated, minified, binary and oversized files are skipped and counted by reason.\n" +
			"Chunks come out in sorted path order. Paths are relative to the folder when one folder\n" +
			"is given, else prefixed with the PATH as given.",
		ArgsUsage: "PATH...",
		Flags: append([]cli.Flag{
			strategyFlag, maxCharsFlag, windowFlag, overlapFlag, noMergeFlag, noHeaderFlag,
			&cli.StringFlag{Name: "format", Usage: "output `format`: text (default), jsonl (one chunk record per line, see docs/chunks.md) or parquet (needs -o FILE)"},
			&cli.BoolFlag{Name: "json", Usage: "same as --format jsonl"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write to `FILE` (atomically: a temporary file renamed at the end); - or none: stdout"},
			&cli.BoolFlag{Name: "stats", Usage: "print per-language counts (files, chunks, files with parse errors, fallback share and the share of it cut inside string literals or comments, definition chunks without a name, MB/s) to stderr"},
			&cli.StringSliceFlag{Name: "langs", Aliases: []string{"lang"}, Usage: "only files of these `languages` (comma-separated grammar names; default: all registered)"},
			&cli.BoolFlag{Name: "all-files", Usage: "also chunk files of no registered language (as text windows)"},
			&cli.Int64Flag{Name: "max-file-bytes", Value: chunker.DefaultMaxFileBytes, Usage: "skip files over this many `bytes`"},
			&cli.IntFlag{Name: "workers", Aliases: []string{"j"}, Value: runtime.NumCPU(), Usage: "files chunked in parallel"},
			verboseFlag,
		}, walkFlags()...),
		Action: runChunk,
	}
}

func runChunk(c *cli.Context) error {
	if c.NArg() == 0 {
		return usagef("chunk: give one or more files or folders")
	}
	if _, err := languages(c); err != nil {
		return err // an unknown name, also when only files are given
	}
	strategy, err := chunker.ParseStrategy(c.String("strategy"))
	if err != nil {
		return usagef("--strategy must be %s, not %q", chunker.StrategyNames, c.String("strategy"))
	}
	copts, err := chunkerOptions(c, strategy)
	if err != nil {
		return err
	}
	format := c.String("format")
	switch {
	case c.Bool("json") && format != "" && format != "jsonl":
		return usagef("chunk: --json is --format jsonl; it cannot go with --format %s", format)
	case c.Bool("json"):
		format = "jsonl"
	case format == "":
		format = "text"
	case format != "text" && format != "jsonl" && format != "parquet":
		return usagef("chunk: --format must be text, jsonl or parquet, not %q", format)
	}
	out := c.String("output")
	if format == "parquet" && (out == "" || out == "-") {
		return usagef("chunk: --format parquet needs -o FILE (Parquet is not written to a stream)")
	}
	workers := c.Int("workers")
	if workers < 1 || workers > batch.MaxWorkers {
		return usagef("chunk: --workers must be between 1 and %d, not %d", batch.MaxWorkers, workers)
	}
	maxFile := c.Int64("max-file-bytes")
	if maxFile < 1 {
		return usagef("chunk: --max-file-bytes must be at least 1, not %d", maxFile)
	}
	wopts := walkOptions(c)
	verbose := c.Bool("verbose")
	stderr := c.App.ErrWriter
	opts := preprocess.Options{Strategy: strategy, Chunker: copts, Walk: wopts, MaxFileBytes: maxFile,
		Workers: workers, Diagnose: c.Bool("stats"),
		OnFailure: func(p string, skip snapshot.SkipReason, err error) {
			if err != nil {
				fmt.Fprintf(stderr, "repoctx: %s: %v\n", p, err)
			} else {
				fmt.Fprintf(stderr, "repoctx: skip %s: %s\n", p, skip)
			}
		}}
	if verbose {
		opts.OnSkip = func(p string, r snapshot.SkipReason) { fmt.Fprintf(stderr, "skip %s: %s\n", p, r) }
	}
	args := c.Args().Slice()
	// Progress over folders (files named alone are quick): a spinner on a terminal,
	// else a line per 30 s.
	var prog *progress
	if !verbose && slices.ContainsFunc(args, func(a string) bool { fi, err := os.Stat(a); return err == nil && fi.IsDir() }) {
		prog = newProgress(stderr, "chunking", "files", -1)
		opts.OnFile = func() { prog.add(1) }
	}

	// Output: stdout, or a temporary file renamed over FILE once all went well.
	var w io.Writer = c.App.Writer
	var af *atomicfile.File
	if out != "" && out != "-" {
		if af, err = atomicfile.Create(out, atomicfile.Options{Sync: true}); err != nil {
			return fmt.Errorf("chunk: create %s: %w", out, err)
		}
		defer af.Abort() // a no-op after Commit
		w = af
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	var sink preprocess.Writer
	switch format {
	case "text":
		sink = preprocess.NewTextWriter(bw)
	case "jsonl":
		sink = preprocess.NewJSONLWriter(bw)
	case "parquet":
		sink = preprocess.NewParquetWriter(bw)
	}

	st, err := preprocess.Run(c.Context, args, opts, sink)
	if prog != nil {
		prog.finish()
	}
	if oe := new(preprocess.OptionsError); errors.As(err, &oe) {
		return usagef("chunk: %v", oe.Err)
	}
	var writeErr error
	if we := new(preprocess.WriteError); errors.As(err, &we) {
		writeErr = we.Err
	} else {
		writeErr = bw.Flush()
	}
	if writeErr != nil {
		return fmt.Errorf("chunk: write %s: %w", cmp.Or(out, "stdout"), writeErr)
	}
	if err != nil {
		return walkError(err)
	}
	if err := c.Context.Err(); err != nil {
		return err
	}
	if af != nil {
		if err := af.Commit(); err != nil {
			err = fmt.Errorf("chunk: write %s: %w", out, err)
			return err
		}
	}
	total := st.Total()
	if st.Folders > 0 || st.Walked.TotalSkipped() > 0 {
		fmt.Fprintf(stderr, "chunked %d files (%.1f MB) into %d chunks in %.2fs; skipped %d: %s\n",
			total.Files, float64(total.Bytes)/1e6, total.Chunks, st.Wall.Seconds(), st.Walked.TotalSkipped(), st.Walked.SkipSummary())
	}
	if c.Bool("stats") {
		st.PrintTable(stderr, verbose)
	}
	if st.Failed > 0 {
		return fmt.Errorf("chunk: %d of %d named files could not be chunked", st.Failed, st.Named)
	}
	return nil
}

// isTerminal reports whether w is a terminal (progress is shown only there).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

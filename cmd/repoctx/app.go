package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/assemble"
	"github.com/repoctx/repoctx/dataset"
	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/workspace"
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
	var cl closers
	app.Metadata = map[string]any{"closers": &cl}
	err := app.Run(interspersed(app, args))
	for _, f := range cl {
		f()
	}
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, repoctx.ErrSomeFailed):
		fmt.Fprintf(stderr, "repoctx: %v\n", err)
		return exitSomeFailed
	case errors.As(err, new(usageError)), errors.As(err, new(*repoctx.OptionError)), strings.HasPrefix(err.Error(), "Required flag"),
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
			chunkCmd(), indexCmd(), queryCmd(), predictCmd(), datasetCmd(), evalCmd(), modelCmd(), compareCmd(), tokensCmd(),
		},
	}
}

func indexCmd() *cli.Command {
	return &cli.Command{
		Name:      "index",
		Usage:     "build (or reuse) the index of a repository folder",
		ArgsUsage: "REPO_DIR",
		Flags:     append(append(indexFlags(), verboseFlag, langsFlag), walkFlags()...),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("index: give one repository folder")
			}
			t := time.Now()
			repo, ws, err := openRepo(c, c.Args().First(), false)
			if err != nil {
				return err
			}
			defer repo.Close()
			st, ix := repo.Stats(), repo.Index()
			what := "reused"
			if st.Built {
				what = "built"
			}
			fmt.Fprintf(c.App.Writer, "%s index %s\n  files %d, skipped %d, lossy %d, with parse errors %d, chunks %d, %.2fs\n",
				what, ix.Dir(), st.Files, st.Skipped, st.Lossy, st.ParseErrors, st.Chunks, time.Since(t).Seconds())
			fmt.Fprintf(c.App.Writer, "  walker: %d source files, left out %d: %s\n", ws.Files, ws.TotalSkipped(), ws.SkipSummary())
			if st.Built {
				d := ix.DenseInfo()
				fmt.Fprintf(c.App.Writer, "  files chunked %d, from the store %d; dense %s: %d chunks embedded, %d from the embedding cache\n",
					st.Chunked, st.Reused, cmp.Or(d.Model, "none"), d.Embedded, d.Cached)
			}
			if c.Bool("verbose") {
				for _, p := range st.ParseErrorFiles {
					fmt.Fprintf(c.App.ErrWriter, "parse errors: %s\n", p)
				}
			}
			return nil
		},
	}
}

// openRepo opens the repository folder dir, as a snapshot of the files the walker
// lets through (its ignore rules and flags), with the command's index flags (and the
// symbol table when withSymbols).
func openRepo(c *cli.Context, dir string, withSymbols bool) (*workspace.Repo, workspace.WalkStats, error) {
	opts, err := workspaceOptions(c)
	if err != nil {
		return nil, workspace.WalkStats{}, err
	}
	opts.Symbols = withSymbols
	if c.Bool("verbose") {
		opts.Log = c.App.ErrWriter
	}
	snap, ws, err := walkSnapshot(c, dir)
	if err != nil {
		return nil, ws, err
	}
	r, err := workspace.Open(c.Context, snap, opts)
	return r, ws, err
}

func queryCmd() *cli.Command {
	return &cli.Command{
		Name:      "query",
		Usage:     "print the context for one completion point in a repository folder",
		ArgsUsage: "REPO_DIR",
		Flags: append(append([]cli.Flag{
			&cli.StringFlag{Name: "file", Required: true, Usage: "completion file `path`, relative to REPO_DIR"},
			&cli.StringFlag{Name: "prefix-file", Usage: "`file` holding the text before the cursor (default: empty)"},
			&cli.StringFlag{Name: "suffix-file", Usage: "`file` holding the text after the cursor (default: empty)"},
			&cli.BoolFlag{Name: "json", Usage: "print the parts with their scores and reasons as JSON"},
		}, indexFlags()...), append(append(composeFlags()[:10], verboseFlag, langsFlag), walkFlags()...)...),
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
			copts, err := composeOptions(c)
			if err != nil {
				return err
			}
			repo, _, err := openRepo(c, c.Args().First(), !copts.NoDefinitions)
			if err != nil {
				return err
			}
			defer repo.Close()
			hole := repoctx.Hole{Path: filepath.ToSlash(c.String("file")), Prefix: string(prefix), Suffix: string(suffix)}
			ctx, err := assemble.Compose(c.Context, repo, hole, copts)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				enc := json.NewEncoder(c.App.Writer)
				enc.SetEscapeHTML(false)
				enc.SetIndent("", "  ")
				return enc.Encode(struct {
					Parts   []repoctx.Part `json:"parts"`
					Context string         `json:"context"`
				}{ctx.Parts, ctx.Text})
			}
			_, err = io.WriteString(c.App.Writer, ctx.Text)
			return err
		},
	}
}

func predictCmd() *cli.Command {
	return &cli.Command{
		Name:  "predict",
		Usage: "write a context for every datapoint of a competition-format dataset (the main job)",
		Flags: append(append(append([]cli.Flag{
			&cli.StringFlag{Name: "data", Required: true, Usage: "`directory` holding {lang}-{stage}.jsonl and the snapshots (folder or zip)"},
			&cli.StringFlag{Name: "lang", Required: true, Usage: "`language` of the datapoints: a registered grammar name (kotlin, python, java, ...)"},
			&cli.StringFlag{Name: "stage", Required: true, Usage: "stage `name`, e.g. start, public, dev"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "output `file` (- for stdout; default DATA/{lang}-{stage}.predictions.jsonl)"},
			&cli.BoolFlag{Name: "resume", Usage: "continue an interrupted run from the output's .partial journal"},
			workersFlag,
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress bar and no summary"},
		}, indexFlags()...), lsaSnapFlag, langsFlag), append(composeFlags(), verboseFlag)...),
		Action: func(c *cli.Context) error {
			lang := c.String("lang")
			if grammars.Lookup(lang) == nil {
				return usagef("--lang must be one of %s, not %q", strings.Join(grammars.Names(), ", "), lang)
			}
			cfg, err := batchConfig(c)
			if err != nil {
				return err
			}
			cfg.Log = errorsOnly{c.App.ErrWriter}
			if c.Bool("verbose") {
				cfg.Log = c.App.ErrWriter
				cfg.Workspace.Log = c.App.ErrWriter
			}
			opts := dataset.PredictOptions{DataDir: c.String("data"), Lang: lang, Stage: c.String("stage"),
				Out: c.String("output"), Resume: c.Bool("resume"), Batch: cfg}
			var bar *progressbar.ProgressBar
			if !c.Bool("quiet") {
				opts.Progress = func(done, total int) {
					if bar == nil {
						bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(c.App.ErrWriter),
							progressbar.OptionSetDescription(lang+"-"+c.String("stage")), progressbar.OptionShowCount(),
							progressbar.OptionSetPredictTime(true), progressbar.OptionClearOnFinish())
					}
					_ = bar.Set(done)
				}
			}
			sum, err := dataset.Predict(c.Context, opts)
			if bar != nil {
				_ = bar.Finish()
			}
			if sum.Datapoints+sum.Resumed > 0 && !c.Bool("quiet") {
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

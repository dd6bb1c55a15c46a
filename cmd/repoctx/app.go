package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/assemble"
	"github.com/repoctx/repoctx/dataset"
	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/index"
	"github.com/repoctx/repoctx/retrieve"
	"github.com/repoctx/repoctx/snapshot"
	"github.com/repoctx/repoctx/store"
)

// Exit codes. Only Main chooses them; main exits.
const (
	exitOK         = 0
	exitError      = 1 // the command failed
	exitUsage      = 2 // bad flags or arguments
	exitSomeFailed = 3 // predict wrote its output but some datapoints failed
)

// usageError marks errors caused by how the command was called. A whole message
// already names the command ("repoctx predict: ...") and is printed as it is.
type usageError struct {
	msg   string
	whole bool
}

func (e usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return usageError{msg: fmt.Sprintf(format, a...)} }

// Main runs the CLI with args (args[0] is the program name) and returns the exit code
// (see exitCode; describe, in cli.go, turns errors into messages).
func Main(args []string, stdout, stderr io.Writer) int {
	return MainContext(context.Background(), args, stdout, stderr)
}

// MainContext is Main under ctx: when ctx ends (main's: on SIGINT or SIGTERM) a
// running command stops as soon as it can, keeping what it finished (predict its
// journal, for --resume), and exits 1 with a message.
func MainContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	app := newApp(stdout, stderr)
	var cl closers
	app.Metadata = map[string]any{"closers": &cl}
	var notFound error
	app.CommandNotFound = func(c *cli.Context, name string) {
		where := "repoctx"
		if c.Command != nil {
			if n := strings.TrimPrefix(c.Command.FullName(), "repoctx"); strings.TrimSpace(n) != "" && n != "help" {
				where += " " + strings.TrimSpace(n)
			}
		}
		notFound = usageError{msg: fmt.Sprintf("%s: unknown command %q; see %s --help", where, name, where), whole: true}
	}
	err := app.RunContext(ctx, interspersed(app, args))
	for _, f := range cl {
		f()
	}
	if err == nil {
		err = notFound
	}
	if err != nil {
		fmt.Fprintln(stderr, describe(err))
	}
	return exitCode(err)
}

func newApp(stdout, stderr io.Writer) *cli.App {
	return prepare(&cli.App{
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
			&cli.StringFlag{Name: "trace", Usage: "write a Go execution trace of the whole command to `FILE` (a timeline: go tool trace)"},
		},
		Before: func(c *cli.Context) error {
			if gcPacedCommands[c.Args().First()] {
				paceGC()
			}
			return startProfiles(c)
		},
		After: stopProfiles,
		Commands: []*cli.Command{
			chunkCmd(), indexCmd(), queryCmd(), serveCmd(), predictCmd(), datasetCmd(), evalCmd(), modelCmd(), compareCmd(), tokensCmd(), cacheCmd(), mergeCmd(), completeCmd(),
			versionCmd(),
		},
	})
}

func indexCmd() *cli.Command {
	return &cli.Command{
		Name:      "index",
		Usage:     "build (or reuse) the index of a repository folder",
		ArgsUsage: "REPO_DIR",
		Flags:     append(append(indexFlags(), verboseFlag, repoFlag, langsFlag, noStoredViewFlag), walkFlags()...),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("index: give one repository folder")
			}
			t := time.Now()
			// Stored whole, so that the next command on these files reads it back.
			f, err := openFolder(c, c.Args().First(), true, true, index.ViewsStored)
			if err != nil {
				return err
			}
			snap, ws := f.snap, f.walk
			st, err := f.ix.Update(c.Context, snap)
			if err != nil {
				return err
			}
			w := c.App.Writer
			fmt.Fprintf(w, "indexed %s (repository %s) in %.3fs\n  files %d: chunked %d, unchanged %d; skipped %d",
				snap.Name(), f.repo, time.Since(t).Seconds(), st.Files, st.Chunked, st.Reused, st.Skipped)
			if st.Full {
				fmt.Fprintf(w, ", lossy %d, with parse errors %d; chunks %d\n", st.Lossy, st.ParseErrors, st.Chunks)
			} else {
				fmt.Fprintf(w, "; new chunks %d\n", st.NewChunks)
			}
			fmt.Fprintf(w, "  dense %s: %d chunk texts embedded\n", cmp.Or(st.Model, "none"), st.Embedded)
			if st.Split > 0 || st.Truncated > 0 {
				fmt.Fprintf(w, "  chunks over the model's token limit: %d embedded in pieces, %d still truncated (over %d pieces)\n",
					st.Split, st.Truncated, retrieve.MaxPieces)
			}
			fmt.Fprintf(w, "  walker: %d source files, left out %d: %s\n", ws.Files, ws.TotalSkipped(), ws.SkipSummary())
			if st.CacheWriteFailures > 0 {
				fmt.Fprintf(w, "  cache writes failed: %d (is the cache disk full or read-only?)\n", st.CacheWriteFailures)
			}
			if st.Limited > 0 {
				fmt.Fprintf(w, "  parses over their CPU time limit: %d files windowed, not cached (chunked again next run)\n", st.Limited)
			}
			if c.Bool("verbose") {
				for _, p := range st.ParseErrorFiles {
					fmt.Fprintf(c.App.ErrWriter, "parse errors: %s\n", p)
				}
				for _, id := range st.TruncatedIDs {
					fmt.Fprintf(c.App.ErrWriter, "truncated for the model: %s\n", id)
				}
			}
			return nil
		},
	}
}

// folder is a repository folder opened for one command: its repository's index over
// the store of --cache-dir, and the folder as a snapshot.
type folder struct {
	repo string
	st   *store.Store
	ix   *index.Index
	snap snapshot.Snapshot
	walk snapshot.WalkStats
}

// openFolder opens the index of the repository folder dir with the command's index
// flags (with the symbol table when withSymbols, and a progress report of the files
// chunked when showProgress), and the folder as a snapshot of the files the walker
// lets through (its ignore rules and flags). The store and the index are closed when
// the command ends.
func openFolder(c *cli.Context, dir string, withSymbols, showProgress bool, storing index.ViewStoring) (*folder, error) {
	return openFolderAs(c, dir, c.String("repo"), withSymbols, showProgress, storing)
}

// openFolderAs is openFolder with the repository name repo ("" for the folder's
// default, index.FolderRepo) instead of --repo's.
func openFolderAs(c *cli.Context, dir, repo string, withSymbols, showProgress bool, storing index.ViewStoring) (*folder, error) {
	opts, err := indexOptions(c)
	if err != nil {
		return nil, err
	}
	opts.Symbols = withSymbols
	opts.RepoLSA = true // a folder's later versions (edits) embed with its first fit
	// A later command on the same files reads the view back instead of making it.
	opts.StoreViews = storing
	if c.Bool(noStoredViewFlag.Name) {
		opts.StoreViews = index.ViewsNotStored
	}
	if showProgress {
		var prog *progress
		opts.Progress = func(done, total int) {
			if prog == nil {
				prog = newProgress(c.App.ErrWriter, "index "+filepath.Base(filepath.Clean(dir)), "files", total)
			}
			prog.set(done)
			if done == total {
				prog.finish()
			}
		}
	}
	if c.Bool("verbose") {
		opts.Log = c.App.ErrWriter
	}
	f := &folder{repo: repo}
	if f.repo == "" {
		f.repo = index.FolderRepo(dir)
	}
	st := store.Open(c.String("cache-dir"))
	f.st = st
	if f.ix, err = index.Open(st, f.repo, opts); err != nil {
		st.Close()
		return nil, err
	}
	// After --cache-max-size's gc (registered before): this run's repository stays.
	onClose(c, func() error { f.ix.Close(); return st.Close() })
	if storing == index.ViewsStoredOnRepeat {
		// The view stored by an earlier command is read while the folder is walked
		// (not for `index`, which updates the index without making a view when it
		// can: Index.Update).
		f.ix.PrepareView(snapshot.FolderName(dir))
	}
	// The store remembers the folder's files, so a later run reads only changed ones.
	if f.snap, f.walk, err = walkSnapshot(c, dir, st.Records(f.repo)); err != nil {
		return nil, err
	}
	return f, nil
}

// openRepo opens the repository folder dir (see openFolder) and makes its view.
func openRepo(c *cli.Context, dir string, withSymbols, showProgress bool) (*index.View, snapshot.WalkStats, error) {
	f, err := openFolder(c, dir, withSymbols, showProgress, index.ViewsStoredOnRepeat)
	if err != nil {
		return nil, snapshot.WalkStats{}, err
	}
	v, err := f.ix.View(c.Context, f.snap)
	return v, f.walk, err
}

// noStoredViewFlag turns off stored views (index.Options.StoreViews) for the folder
// commands.
var noStoredViewFlag = &cli.BoolFlag{Name: "no-stored-view", Usage: "neither write nor read back views kept whole in the cache (view files already there stay; by default index keeps the folder's, query once the same files are queried twice in a row, predict and eval each snapshot's once it is viewed twice in a row with the same files and index flags, so that a later run reads the view back instead of rebuilding it; a folder's takes about as much disk again as its other cache records, a dataset's a view per snapshot)"}

// repoFlag names the repository a folder is a version of, for the cache.
var repoFlag = &cli.StringFlag{Name: "repo", Usage: "repository `name` the folder is a version of: its versions share one index in the cache (default: owner/repo for a folder named owner__repo-REVISION, else the folder's absolute path)"}

func queryCmd() *cli.Command {
	return &cli.Command{
		Name:      "query",
		Usage:     "print the context for one completion point in a repository folder",
		ArgsUsage: "REPO_DIR",
		Flags: append(append([]cli.Flag{
			&cli.StringFlag{Name: "file", Required: true, Usage: "completion file `path`, relative to REPO_DIR or absolute inside it"},
			&cli.StringFlag{Name: "prefix-file", Usage: "`file` holding the text before the cursor (default: empty)"},
			&cli.StringFlag{Name: "suffix-file", Usage: "`file` holding the text after the cursor (default: empty)"},
			&cli.BoolFlag{Name: "json", Usage: "print the parts with their scores and reasons as JSON"},
			&cli.StringSliceFlag{Name: "with", Usage: "also search the repository folder `DIR` (repeatable): its parts' paths start with its folder's name (BM25 over every repository's bleve index, see docs/cross-repo.md)"},
		}, indexFlags()...), append(append(append(composeFlags(), cursorFlags()...), verboseFlag, repoFlag, langsFlag, noStoredViewFlag), walkFlags()...)...),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("query: give one repository folder")
			}
			copts, err := composeOptions(c, assemble.PresetLive) // flag errors first: nothing is read
			if err != nil {
				return err
			}
			hole, err := queryHole(c, c.Args().First())
			if err != nil {
				return err
			}
			if err := plannerTokens(c, &copts.Plan); err != nil {
				return err
			}
			f, err := openFolder(c, c.Args().First(), !copts.NoDefinitions, false, index.ViewsStoredOnRepeat)
			if err != nil {
				return err
			}
			repo, err := f.ix.View(c.Context, f.snap)
			if err != nil {
				return err
			}
			defer repo.Close()
			if with := c.StringSlice("with"); len(with) > 0 {
				if copts.CrossRepo, err = queryCrossRepo(c, f, repo, with, !copts.NoDefinitions); err != nil {
					return err
				}
			}
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
					Prefix  *string        `json:"prefix,omitempty"` // set when the planner trimmed it
					Suffix  *string        `json:"suffix,omitempty"`
				}{ctx.Parts, ctx.Text, ctx.Prefix, ctx.Suffix})
			}
			if ctx.Prefix != nil || ctx.Suffix != nil {
				fmt.Fprintln(c.App.ErrWriter, "repoctx query: the budget planner trimmed the prefix or suffix; --json prints them")
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
			&cli.StringFlag{Name: "shard", Usage: "answer only shard `I/N` of the datapoints (split by repository; merge the shards' outputs with repoctx merge)"},
			&cli.BoolFlag{Name: "cross-snapshot", Usage: "competition option: also search the other snapshots of the datapoint's repository in the stage (a later revision may hold the finished code; an editor has no such revisions)"},
			&cli.BoolFlag{Name: "cross-repo", Usage: "competition option: also search the stage's other repositories (each at its first snapshot; BM25 over their bleve indexes, kept in the cache; parts named owner/repo/path; see docs/cross-repo.md)"},
			workersFlag,
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress bar and no summary"},
		}, indexFlags()...), lsaSnapFlag, langsFlag, noStoredViewFlag), append(append(batchComposeFlags(), draftFlags()...), verboseFlag)...),
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
				cfg.Index.Log = c.App.ErrWriter
			}
			opts := dataset.PredictOptions{DataDir: c.String("data"), Lang: lang, Stage: c.String("stage"),
				Out: c.String("output"), Resume: c.Bool("resume"), Batch: cfg}
			if s := c.String("shard"); s != "" {
				if opts.Shard, err = dataset.ParseShard(s); err != nil {
					return usagef("--shard: %v", strings.TrimPrefix(err.Error(), "dataset: "))
				}
			}
			var prog *progress
			if !c.Bool("quiet") {
				opts.Progress = func(done, total int) {
					if prog == nil {
						prog = newProgress(c.App.ErrWriter, "predict "+lang+"-"+c.String("stage"), "datapoints", total)
					}
					prog.set(done)
				}
			}
			sum, err := dataset.Predict(c.Context, opts)
			if prog != nil {
				prog.finish()
			}
			if err == nil && sum.Datapoints+sum.Resumed == 0 && !c.Bool("quiet") {
				why := "the dataset is empty"
				if s := c.String("shard"); s != "" {
					why = "shard " + s + " holds none of the dataset's repositories"
				}
				fmt.Fprintf(c.App.ErrWriter, "wrote %s: no datapoints (%s)\n", sum.Out, why)
			}
			if (err == nil || errors.Is(err, repoctx.ErrSomeFailed)) && sum.Datapoints+sum.Resumed > 0 && !c.Bool("quiet") {
				fmt.Fprintf(c.App.ErrWriter, "wrote %s: %d datapoints (%d failed, %d resumed), %d snapshots (%d indexed, %d from cache, %d of them views read back whole; %d views stored whole), %d chunks, files chunked %d / from store %d, %d indexes with a shared LSA model, %.2fs wall, %.1f ms/datapoint, peak RSS %d MB\n",
					sum.Out, sum.Datapoints, sum.Failed, sum.Resumed, sum.Snapshots, sum.Built, sum.Snapshots-sum.Built, sum.StoredViews, sum.ViewsWritten, sum.Chunks, sum.Chunked, sum.Reused, sum.SharedLSA,
					sum.Wall.Seconds(), float64(sum.Wall.Milliseconds())/float64(max(1, sum.Datapoints-sum.Resumed)), peakRSSMB())
				if sum.CacheWriteFailures > 0 {
					fmt.Fprintf(c.App.ErrWriter, "cache writes failed: %d (they only cost later runs time; is the cache disk full or read-only?)\n", sum.CacheWriteFailures)
				}
			}
			if sum.Drafts > 0 && (sum.DraftFailures > 0 || !c.Bool("quiet")) {
				fmt.Fprintln(c.App.ErrWriter, draftSummary(sum.Drafts, sum.DraftFailures))
			}
			return err
		},
	}
}

// draftSummary is the line predict and eval print about --draft-endpoint's drafts.
func draftSummary(drafts, failed int) string {
	return fmt.Sprintf("drafts: %d asked of --draft-endpoint, %d failed (the built-in drafter's were used for those)", drafts, failed)
}

// mergeCmd is `repoctx merge`: the shards of a prediction back in input order.
func mergeCmd() *cli.Command {
	return &cli.Command{
		Name:      "merge",
		Usage:     "merge the outputs of predict --shard I/N into one predictions file in input order",
		ArgsUsage: "SHARD_OUTPUT...",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "data", Required: true, Usage: "`directory` holding {lang}-{stage}.jsonl"},
			&cli.StringFlag{Name: "lang", Required: true, Usage: "`language` of the dataset"},
			&cli.StringFlag{Name: "stage", Required: true, Usage: "stage `name`"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "merged `file` (- for stdout; default DATA/{lang}-{stage}.predictions.jsonl)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return usagef("merge: give the shards' output files")
			}
			out := c.String("output")
			if out == "" {
				out = filepath.Join(c.String("data"), c.String("lang")+"-"+c.String("stage")+".predictions.jsonl")
			}
			n, err := dataset.Merge(c.String("data"), c.String("lang"), c.String("stage"), out, c.Args().Slice())
			if err != nil {
				return err
			}
			if out != "-" {
				fmt.Fprintf(c.App.ErrWriter, "wrote %s: %d datapoints from %d shard files\n", out, n, c.NArg())
			}
			return nil
		},
	}
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

// Command repoctx-beam runs repoctx's Apache Beam pipelines (package pipeline):
//
//	repoctx-beam preprocess [flags] --out DIR REPO...   chunk repositories into Parquet shards
//	repoctx-beam predict [flags] --data DIR --lang L --stage S
//
// By default they run on Prism, Beam's local runner, inside the process. --runner
// and --endpoint (Beam's own flags) send them to another runner: --runner=universal
// --endpoint=HOST:PORT for a portable job service (Flink's or Spark's job server, a
// standalone Prism), --runner=dataflow with Dataflow's flags. The same binary is the
// workers' program there: started with Beam's --worker flag it runs the SDK harness.
// Inputs (archives and bundles) and the output may be on gs:// or s3://, through
// Beam's file systems, compiled in. docs/beam.md describes the pipelines and the
// commands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"
	// The file systems of inputs and outputs: local paths, gs:// and s3://.
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/s3"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx" // registers the runners

	"github.com/repoctx/repoctx/assemble"
	"github.com/repoctx/repoctx/beam/pipeline"
	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/dataset"
	"github.com/repoctx/repoctx/grammars"
)

const usage = `usage:
  repoctx-beam preprocess [flags] --out DIR REPO...
  repoctx-beam predict [flags] --data DIR --lang LANG --stage STAGE
A REPO is a folder, a zip, tar, tar.gz or tgz archive, or a git bundle (.bundle, read
at HEAD or its single ref; named by its file name without the extension), or a glob of
them. A REPO with a scheme is read through Beam's file system of that scheme, compiled
in: gs:// (Google Cloud Storage: application default credentials, else anonymous) and
s3:// (AWS SDK default configuration: AWS_REGION, AWS_PROFILE or keys, the machine's
role). It must be an archive or bundle, or a glob of them (gs://B/repos/*.tar.gz),
listed by that file system (* stays within one /-separated level); the workers read it.
Only memfs:// stands in for them in the tests: gs and s3 are untested against real
stores (docs/beam.md). --out takes a local folder or a gs:// or s3:// URL. Flags go before the repositories.
Beam's flags (--runner, default prism; --endpoint, --environment_type, ...) are accepted
by both; "repoctx-beam CMD -h" lists all.`

func main() {
	if len(os.Args) > 1 && strings.HasPrefix(os.Args[1], "-") && os.Args[1] != "-h" && os.Args[1] != "--help" {
		// Started by a runner as the workers' program (--worker ...): beam.Init runs
		// the SDK harness and exits.
		flag.Parse()
		beam.Init()
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var err error
	switch os.Args[1] {
	case "preprocess":
		err = preprocessCmd(ctx, os.Args[2:])
	case "predict":
		err = predictCmd(ctx, os.Args[2:])
	case "-h", "--help", "help":
		fmt.Println(usage)
		return
	default:
		err = fmt.Errorf("unknown command %q\n%s", os.Args[1], usage)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "repoctx-beam: %v\n", err)
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

var errUsage = errors.New("usage")

func usagef(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errUsage, fmt.Sprintf(format, args...))
}

// listFlag is a repeatable string flag; commas also separate values when split.
type listFlag struct {
	vals  []string
	split bool
}

func (l *listFlag) String() string { return strings.Join(l.vals, ",") }
func (l *listFlag) Set(v string) error {
	if !l.split {
		l.vals = append(l.vals, v)
		return nil
	}
	for _, x := range strings.Split(v, ",") {
		if x = strings.TrimSpace(x); x != "" {
			l.vals = append(l.vals, x)
		}
	}
	return nil
}

// parse parses args with the process's flag set (Beam's flags are on it), then
// initialises Beam.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	if err := fs.Parse(args); err != nil {
		return nil, usagef("%v", err)
	}
	beam.Init()
	return fs.Args(), nil
}

func checkLangs(langs []string) error {
	for _, l := range langs {
		if grammars.Lookup(l) == nil {
			return usagef("--langs: unknown language %q (known: %s)", l, strings.Join(grammars.Names(), ", "))
		}
	}
	return nil
}

func preprocessCmd(ctx context.Context, args []string) error {
	fs := flag.CommandLine
	def := pipeline.DefaultChunkOptions()
	out := fs.String("out", "", "output `folder` of the Parquet shards (chunks-NNNNN-of-MMMMM.parquet): a local path or a gs:// or s3:// URL")
	shardRows := fs.Int64("shard-rows", pipeline.DefaultShardRows, "most `rows` (chunks) per shard")
	drop := fs.Bool("drop-duplicates", false, "leave out the rows of files whose duplicate_of is set")
	quiet := fs.Bool("quiet", false, "no summary table")
	strategy := fs.String("strategy", def.Strategy, "chunking `strategy`: structural or fixed")
	maxChars := fs.Int("max-chars", def.MaxChars, "chunk size cap in non-white-space characters")
	window := fs.Int("window-lines", 0, "window size in lines for fixed chunks and fallback windows (0: the strategy's default)")
	overlap := fs.Int("overlap-lines", 0, "window overlap in lines (0: the strategy's default)")
	var langs, exclude listFlag
	langs.split = true
	fs.Var(&langs, "langs", "only files of these `languages` (comma-separated grammar names; default: all registered)")
	fs.Var(&exclude, "exclude", "leave out paths matching this gitignore-style `GLOB` (repeatable)")
	allFiles := fs.Bool("all-files", false, "also chunk files of no registered language (as text windows)")
	noIgnore := fs.Bool("no-ignore", false, "do not read .gitignore, .ignore and .git/info/exclude")
	keepVend := fs.Bool("keep-vendored", false, "do not skip vendored folders")
	keepGen := fs.Bool("keep-generated", false, "do not skip generated and minified files")
	maxFile := fs.Int64("max-file-bytes", def.MaxFileBytes, "skip files over this many `bytes`")
	workers := fs.Int("workers", runtime.NumCPU(), "files of one repository chunked in parallel")
	rest, err := parse(fs, args)
	if err != nil {
		return err
	}
	if *out == "" {
		return usagef("preprocess: --out DIR is required")
	}
	if len(rest) == 0 {
		return usagef("preprocess: give one or more repositories: folders, zip/tar/tar.gz archives or git bundles (or globs of them; archives and bundles also as gs:// or s3:// URLs)")
	}
	if err := checkLangs(langs.vals); err != nil {
		return err
	}
	repos, err := pipeline.ExpandRepos(ctx, rest)
	if errors.Is(err, pipeline.ErrBadInput) {
		return usagef("%v", err)
	}
	if err != nil {
		return err
	}
	if _, err := chunker.ParseStrategy(*strategy); err != nil {
		return usagef("--strategy must be structural or fixed, not %q", *strategy)
	}
	cfg := pipeline.PreprocessConfig{Repos: repos, OutDir: *out, ShardRows: *shardRows, DropDuplicates: *drop,
		Chunk: pipeline.ChunkOptions{Strategy: *strategy, MaxChars: *maxChars, WindowLines: *window, WindowOverlap: *overlap,
			Langs: langs.vals, AllFiles: *allFiles, NoIgnore: *noIgnore, KeepVendored: *keepVend, KeepGenerated: *keepGen,
			Exclude: exclude.vals, MaxFileBytes: *maxFile, Workers: *workers}}
	start := time.Now()
	c, err := pipeline.Run(ctx, *runners.Runner, func(s beam.Scope) error { return pipeline.Preprocess(s, cfg) })
	if err != nil {
		return err
	}
	if !*quiet {
		pipeline.PrintPreprocessSummary(os.Stderr, c)
		fmt.Fprintf(os.Stderr, "%.2fs wall\n", time.Since(start).Seconds())
	}
	return nil
}

func predictCmd(ctx context.Context, args []string) error {
	fs := flag.CommandLine
	data := fs.String("data", "", "`directory` holding {lang}-{stage}.jsonl and the snapshots (folder or zip); the workers must reach it")
	lang := fs.String("lang", "", "`language` of the datapoints")
	stage := fs.String("stage", "", "stage `name`")
	var output string
	fs.StringVar(&output, "output", "", "output `file` (default DATA/{lang}-{stage}.predictions.jsonl)")
	fs.StringVar(&output, "o", "", "short for --output")
	workers := fs.Int("workers", runtime.NumCPU(), "datapoints of one repository answered in parallel")
	strategy := fs.String("strategy", string(chunker.StrategyStructural), "chunking `strategy`: structural or fixed")
	maxChars := fs.Int("max-chars", chunker.DefaultOptions(chunker.StrategyStructural).MaxChars, "chunk size cap in non-white-space characters")
	window := fs.Int("window-lines", 0, "window size in lines (0: the strategy's default)")
	overlap := fs.Int("overlap-lines", 0, "window overlap in lines (0: the strategy's default)")
	cacheDir := fs.String("cache-dir", "", "`directory` for indexes on the workers (default: repoctx's cache folder)")
	dense := fs.String("dense", "", "dense retriever fused with BM25: lsa or none (default lsa)")
	lsaSnap := fs.Bool("lsa-per-snapshot", false, "fit the LSA model on every snapshot instead of once per repository")
	cross := fs.Bool("cross-snapshot", false, "also search the other snapshots of the datapoint's repository in the stage")
	tok := fs.String("tokenizer", "", "budget planner: count tokens with this tokenizer.json `file`")
	var langs listFlag
	langs.split = true
	fs.Var(&langs, "langs", "index and retrieve from files of these `languages` only (default: the family of --lang)")
	// One flag per assemble.OptionTable option, with assemble.PresetBatch's default,
	// as `repoctx predict` has them.
	for i := range assemble.OptionTable {
		s := &assemble.OptionTable[i]
		d := assemble.PresetBatch.Default(s)
		switch s.Kind {
		case assemble.KindInt:
			fs.Int(s.Name, int(d), s.FlagHelp())
		case assemble.KindFloat:
			fs.Float64(s.Name, d, s.FlagHelp())
		case assemble.KindBool:
			fs.Bool(s.Name, false, s.FlagHelp())
		}
	}
	if _, err := parse(fs, args); err != nil {
		return err
	}
	if *data == "" || *lang == "" || *stage == "" {
		return usagef("predict: --data, --lang and --stage are required")
	}
	if grammars.Lookup(*lang) == nil {
		return usagef("--lang must be one of %s, not %q", strings.Join(grammars.Names(), ", "), *lang)
	}
	if err := checkLangs(langs.vals); err != nil {
		return err
	}
	opts := pipeline.PredictOptions{Compose: map[string]float64{}, Strategy: *strategy, MaxChars: *maxChars,
		WindowLines: *window, WindowOverlap: *overlap, Langs: langs.vals, Dense: *dense, LSAPerSnapshot: *lsaSnap,
		CrossSnapshot: *cross, Tokenizer: *tok, CacheDir: *cacheDir, Workers: *workers}
	fs.Visit(func(f *flag.Flag) {
		if s := assemble.Option(f.Name); s != nil {
			v, err := s.Parse(f.Value.String())
			if err == nil {
				opts.Compose[s.Name] = v
			}
		}
	})
	if _, err := opts.Config(); err != nil {
		return usagef("%v", err)
	}
	n, err := dataset.CountDatapoints(filepath.Join(*data, *lang+"-"+*stage+".jsonl"))
	if err != nil {
		return err
	}
	out := output
	if out == "" {
		out = filepath.Join(*data, *lang+"-"+*stage+".predictions.jsonl")
	}
	if n == 0 { // nothing would reach the pipeline's writer: an empty file, as repoctx predict writes
		if err := os.WriteFile(out, nil, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "wrote %s: no datapoints (the dataset is empty)\n", out)
		return nil
	}
	cfg := pipeline.PredictConfig{DataDir: *data, Lang: *lang, Stage: *stage, Out: output, N: n, Options: opts}
	start := time.Now()
	c, err := pipeline.Run(ctx, *runners.Runner, func(s beam.Scope) error { return pipeline.Predict(s, cfg) })
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "wrote %s: %d datapoints (%d failed), %d repositories, %d snapshots (%d indexed), %.2fs wall\n",
		out, c["datapoints"], c["failed"], c["repositories"], c["snapshots"], c["indexed"], time.Since(start).Seconds())
	return nil
}

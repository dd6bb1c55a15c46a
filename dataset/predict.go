package dataset

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/batch"
	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/workspace"
)

// PredictOptions configures [Predict].
type PredictOptions struct {
	// DataDir holds {Lang}-{Stage}.jsonl and the snapshots (folder or zip). Lang is
	// a registered grammar name (grammars.Names).
	DataDir, Lang, Stage string
	// Out is the output JSONL path, "-" for standard output; "" means
	// DataDir/{Lang}-{Stage}.predictions.jsonl.
	Out string
	// Resume continues an interrupted run from Out's journal.
	Resume bool
	// Batch configures indexing, composition and the workers (batch.DefaultConfig).
	// An empty Batch.Workspace.Languages means the family of Lang
	// (grammars.Family): Kotlin snapshots index their Java files too.
	Batch batch.Config
	// Limits bound snapshot reading; zero fields mean workspace.DefaultLimits.
	Limits workspace.Limits
	// Progress, if not nil, is called after every datapoint written (resumed ones
	// included) with the number done and the total, from one goroutine at a time.
	Progress func(done, total int)
}

// PredictSummary reports a [Predict] run.
type PredictSummary struct {
	batch.Summary
	Out     string        // the output file written
	Resumed int           // datapoints taken from the journal of an earlier run
	Wall    time.Duration // wall time of the whole run
}

// Predict runs the main job: for every datapoint of DataDir/{Lang}-{Stage}.jsonl it
// composes a context from the datapoint's snapshot with the batch engine and writes
// one {"context": ...} line (with "prefix"/"suffix" overrides when the budget planner
// trims them), in input order, atomically, through a journal that Resume continues
// from (see [Output]).
//
// A bad datapoint (malformed line, missing snapshot, unreadable snapshot) gets an
// empty context and an entry in the summary's Errors; the batch goes on. The returned
// error is nil when every datapoint succeeded, wraps repoctx.ErrSomeFailed when some
// failed but the output was written, and is any other error when the run could not
// start or finish (missing input file, unwritable output or cache, invalid options
// such as an unregistered Lang, ctx cancelled: the journal is then kept for Resume).
func Predict(ctx context.Context, opts PredictOptions) (PredictSummary, error) {
	start := time.Now()
	var sum PredictSummary
	set := opts.Lang + "-" + opts.Stage
	if opts.Out == "" {
		opts.Out = filepath.Join(opts.DataDir, set+".predictions.jsonl")
	}
	sum.Out = opts.Out
	cfg := opts.Batch
	if cfg.Workspace.CacheDir == "" {
		cfg.Workspace.CacheDir = workspace.DefaultCacheDir()
	}
	if grammars.Lookup(opts.Lang) == nil {
		return sum, &repoctx.OptionError{Option: "lang", Value: strconv.Quote(opts.Lang),
			Want: "a registered language (" + strings.Join(grammars.Names(), ", ") + ")"}
	}
	if err := cfg.Compose.Validate(); err != nil {
		return sum, err
	}
	if err := checkWritable(cfg.Workspace.CacheDir); err != nil {
		return sum, err
	}
	dpFile := filepath.Join(opts.DataDir, set+".jsonl")
	n, err := CountDatapoints(dpFile)
	if err != nil {
		return sum, err
	}
	src, err := OpenSource(opts.DataDir, opts.Lang, opts.Stage, opts.Limits)
	if err != nil {
		return sum, err
	}
	defer src.Close()
	out, err := CreateOutputConfig(opts.Out, n, opts.Resume, Fingerprint(cfg))
	if err != nil {
		return sum, err
	}
	if len(cfg.Workspace.Languages) == 0 {
		// Snapshots index the files of the dataset language's family only: registering
		// another language does not change what they hold. (After the fingerprint: the
		// default follows from Lang, which names the output already.)
		cfg.Workspace.Languages = grammars.Family(opts.Lang)
	}
	done := 0
	tick := func() {
		done++
		if opts.Progress != nil {
			opts.Progress(done, n)
		}
	}
	cfg.Skip = out.Done
	for i := 0; i < n; i++ {
		if out.Done(i) {
			sum.Resumed++
			tick()
		}
	}
	var putErr error
	sum.Summary, err = batch.Run(ctx, src, DatapointsFile(dpFile), cfg, func(r batch.Result) {
		line := PredictionLine(r.Context.Text, r.Context.Prefix, r.Context.Suffix)
		if r.Err != nil {
			line = PredictionLine("", nil, nil)
		}
		if err := out.Put(r.Index, line); err != nil && putErr == nil {
			putErr = err
		}
		tick()
	})
	if err == nil {
		err = putErr
	}
	if err != nil {
		_ = out.Abort()
		return sum, err
	}
	if err := out.Finish(); err != nil {
		return sum, err
	}
	sum.Wall = time.Since(start)
	if sum.Failed > 0 {
		return sum, fmt.Errorf("%d of %d datapoints failed: %w", sum.Failed, sum.Datapoints, repoctx.ErrSomeFailed)
	}
	return sum, nil
}

// Fingerprint describes the options of cfg that shape prediction lines (not the cache
// folder, logging or the number of workers, which do not change them), for the output
// journal: a resumed run must use the same ones.
func Fingerprint(cfg batch.Config) string {
	c := cfg.Compose
	tok := ""
	if c.Plan.Tokens != nil {
		tok = c.Plan.Tokens.Name()
	}
	c.Plan.Tokens = nil
	ws := cfg.Workspace
	emb := ""
	if ws.Build.Embedder != nil {
		emb = ws.Build.Embedder.ID()
	}
	ws.Log, ws.Build.Embedder, ws.CacheDir = nil, nil, ""
	return fmt.Sprintf("workspace %+v model=%s lsa-per-snapshot=%v; compose %+v tokens=%s", ws, emb, cfg.LSAPerSnapshot, c, tok)
}

// CountDatapoints returns the number of non-blank lines of the datapoint file path
// (the datapoints [Datapoints] yields, bad ones included), reading it once without
// parsing.
func CountDatapoints(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("dataset: open datapoints: %w", err)
	}
	defer f.Close()
	lr := newLineReader(f)
	n := 0
	for {
		line, tooLong, err := lr.next()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("dataset: read %s near line %d: %w", path, lr.line, err)
		}
		if tooLong || len(bytes.TrimSpace(line)) > 0 {
			n++
		}
	}
}

// checkWritable makes sure dir exists and a file can be created in it, so that an
// unusable cache directory is one clear error instead of a failure per snapshot.
func checkWritable(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cache directory: %w", err)
	}
	f, err := os.CreateTemp(dir, ".write-test-*")
	if err != nil {
		return fmt.Errorf("cache directory %s is not writable: %w", dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

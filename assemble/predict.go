package assemble

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"time"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/dataset"
	"github.com/repoctx/repoctx/symbols"
	"github.com/schollz/progressbar/v3"
)

// PredictOptions configures Predict.
type PredictOptions struct {
	// DataDir holds {Lang}-{Stage}.jsonl and the snapshots (folder or zip).
	DataDir, Lang, Stage string
	// Out is the output JSONL path, "-" for standard output. Default
	// DataDir/{Lang}-{Stage}.predictions.jsonl.
	Out string
	// Resume continues an interrupted run from Out's journal.
	Resume bool
	// Workers is the number of snapshots processed at once; default 2.
	Workers int
	// Index and Compose configure indexing and context assembly.
	Index   IndexOptions
	Compose Options
	// Limits bound snapshot reading; zero fields mean dataset.DefaultLimits.
	Limits dataset.Limits
	// Progress, if not nil, shows a progress bar there (e.g. os.Stderr).
	Progress io.Writer
	// Log receives one line per failed datapoint and skipped file; nil discards.
	Log io.Writer
}

// Summary reports a Predict run.
type Summary struct {
	Out        string        // the output file written
	Datapoints int           // lines written (one per datapoint)
	Failed     int           // datapoints answered with an empty context because of an error
	Resumed    int           // datapoints taken from the journal of an earlier run
	Snapshots  int           // distinct snapshots used
	Built      int           // indexes built in this run (the rest came from the cache)
	Chunks     int           // chunks over all snapshots
	SkipFiles  int           // source files skipped (binary, too large, unreadable)
	Wall       time.Duration // wall time of the whole run
	Errors     []error       // one per failed datapoint, naming it
}

// ErrSomeFailed is wrapped by Predict's error when the output was written but some
// datapoints failed; Summary.Errors says which.
var ErrSomeFailed = errors.New("some datapoints failed")

// Predict runs the main job: for every datapoint of DataDir/{Lang}-{Stage}.jsonl it
// composes a context from the datapoint's snapshot and writes one {"context": ...}
// line (with "prefix"/"suffix" overrides when the budget planner, Compose.Plan,
// trims them), in input order, atomically (see dataset.Output). Datapoints are grouped by
// snapshot so each snapshot is opened and indexed once; snapshots run in parallel on
// Workers goroutines, each with its own chunker.
//
// A bad datapoint (malformed line, missing snapshot, unreadable snapshot) gets an
// empty context and an entry in Summary.Errors; the batch goes on. The returned error
// is nil when every datapoint succeeded, wraps ErrSomeFailed when some failed but the
// output was written, and is any other error when the run could not start or finish
// (missing input file, unwritable output).
func Predict(opts PredictOptions) (Summary, error) {
	start := time.Now()
	var sum Summary
	if opts.Workers <= 0 {
		opts.Workers = 2
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	set := opts.Lang + "-" + opts.Stage
	if opts.Out == "" {
		opts.Out = filepath.Join(opts.DataDir, set+".predictions.jsonl")
	}
	sum.Out = opts.Out
	dps, dpErrs, err := dataset.ReadDatapointsFile(filepath.Join(opts.DataDir, set+".jsonl"))
	if err != nil {
		return sum, err
	}
	src, err := dataset.OpenSource(opts.DataDir, opts.Lang, opts.Stage, opts.Limits)
	if err != nil {
		return sum, err
	}
	defer src.Close()
	out, err := dataset.CreateOutput(opts.Out, len(dps), opts.Resume)
	if err != nil {
		return sum, err
	}
	sum.Datapoints = len(dps)

	var mu sync.Mutex
	fail := func(i int, err error) {
		mu.Lock()
		sum.Failed++
		sum.Errors = append(sum.Errors, err)
		fmt.Fprintf(opts.Log, "error: %s\n", oneLine(err.Error()))
		mu.Unlock()
	}
	var bar *progressbar.ProgressBar
	if opts.Progress != nil {
		bar = progressbar.NewOptions(len(dps), progressbar.OptionSetWriter(opts.Progress),
			progressbar.OptionSetDescription(set), progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true), progressbar.OptionClearOnFinish())
	}
	tick := func() {
		if bar != nil {
			_ = bar.Add(1)
		}
	}
	var putErr error
	put := func(i int, line []byte) {
		if err := out.Put(i, line); err != nil {
			mu.Lock()
			if putErr == nil {
				putErr = err
			}
			mu.Unlock()
		}
		tick()
	}
	empty := dataset.PredictionLine("", nil, nil)

	// Group datapoints by snapshot, in order of first appearance.
	groups := map[string][]int{}
	var order []string
	for i := range dps {
		if out.Done(i) {
			sum.Resumed++
			tick()
			continue
		}
		if dpErrs[i] != nil {
			fail(i, dpErrs[i])
			put(i, empty)
			continue
		}
		name := dps[i].SnapshotName()
		if _, ok := groups[name]; !ok {
			order = append(order, name)
		}
		groups[name] = append(groups[name], i)
	}
	sum.Snapshots = len(order)

	jobs := make(chan string)
	var wg sync.WaitGroup
	for w := 0; w < opts.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ch, err := chunker.New(opts.Index.Strategy, opts.Index.Chunk)
			if err != nil {
				for name := range jobs {
					for _, i := range groups[name] {
						fail(i, fmt.Errorf("datapoint %s (line %d): %w", dps[i].ID, dps[i].Line, err))
						put(i, empty)
					}
				}
				return
			}
			if s, ok := ch.(*chunker.Structural); ok {
				defer s.Close()
			}
			iopts := opts.Index
			iopts.Log = opts.Log
			ex := symbols.NewExtractor(0)
			defer ex.Close()
			for name := range jobs {
				idx := groups[name]
				failAll := func(err error) {
					for _, i := range idx {
						fail(i, fmt.Errorf("datapoint %s (line %d): snapshot %s: %w", dps[i].ID, dps[i].Line, name, err))
						put(i, empty)
					}
				}
				snap, err := src.Open(name)
				if err != nil {
					failAll(err)
					continue
				}
				ix, st, err := IndexSnapshot(snap, ch, iopts)
				if err != nil {
					failAll(err)
					continue
				}
				mu.Lock()
				sum.Chunks += st.Chunks
				sum.SkipFiles += st.Skipped
				if st.Built {
					sum.Built++
				}
				mu.Unlock()
				res := Resources{Extractor: ex}
				if !opts.Compose.NoDefinitions {
					res.Symbols = CachedSymbols(snap, ix, ex, opts.Index.CacheDir, opts.Index.MaxFileBytes)
				}
				for _, i := range idx {
					d := &dps[i]
					c, err := ComposePlanned(ix, Hole{Path: d.Path, Prefix: d.Prefix, Suffix: d.Suffix, Modified: d.Modified}, res, opts.Compose)
					if err != nil {
						fail(i, fmt.Errorf("datapoint %s (line %d): %w", d.ID, d.Line, err))
						put(i, empty)
						continue
					}
					// With the planner on, a trimmed prefix/suffix is written as an override.
					put(i, dataset.PredictionLine(c.Context, c.Prefix, c.Suffix))
				}
				ix.Close()
			}
		}()
	}
	for _, name := range order {
		jobs <- name
	}
	close(jobs)
	wg.Wait()
	if bar != nil {
		_ = bar.Finish()
	}
	if putErr != nil {
		_ = out.Abort()
		return sum, putErr
	}
	if err := out.Finish(); err != nil {
		return sum, err
	}
	sum.Wall = time.Since(start)
	if sum.Failed > 0 {
		return sum, fmt.Errorf("%d of %d datapoints failed: %w", sum.Failed, sum.Datapoints, ErrSomeFailed)
	}
	return sum, nil
}

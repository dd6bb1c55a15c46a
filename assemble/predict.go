package assemble

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/dataset"
	"github.com/repoctx/repoctx/retrieve"
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
	Chunked    int           // files chunked in this run
	Reused     int           // files whose chunks came from the content-addressed store
	SharedLSA  int           // indexes built with their repository's shared LSA model
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
// Snapshots of one repository share work: files unchanged since another snapshot
// come from the content-addressed Store instead of being chunked and parsed again,
// and (with the built-in LSA dense model, unless Index.LSAPerSnapshot) the LSA model is
// fitted once per repository, on the repository's first snapshot in name order among
// all the datapoints (resumed ones included, so the output does not depend on the
// cache or on resuming), and the repository's other snapshots are embedded with it.
// Those model snapshots are indexed first.
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
	if opts.Index.CacheDir == "" {
		opts.Index.CacheDir = retrieve.DefaultCacheDir()
	}
	if err := checkWritable(opts.Index.CacheDir); err != nil {
		return sum, err
	}
	dps, dpErrs, err := dataset.ReadDatapointsFile(filepath.Join(opts.DataDir, set+".jsonl"))
	if err != nil {
		return sum, err
	}
	src, err := dataset.OpenSource(opts.DataDir, opts.Lang, opts.Stage, opts.Limits)
	if err != nil {
		return sum, err
	}
	defer src.Close()
	out, err := dataset.CreateOutputConfig(opts.Out, len(dps), opts.Resume, configFingerprint(opts))
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

	// One shared LSA model per repository (see above).
	models := map[string]*repoModel{}  // by repository
	modelOf := map[string]*repoModel{} // by snapshot name
	shareLSA := !opts.Index.LSAPerSnapshot && opts.Index.Embedder == nil &&
		(opts.Index.Dense == "" || opts.Index.Dense == retrieve.DenseLSA)
	if shareLSA {
		for i := range dps {
			if dpErrs[i] != nil {
				continue
			}
			m := models[dps[i].Repo]
			if m == nil {
				m = &repoModel{done: make(chan struct{})}
				models[dps[i].Repo] = m
			}
			name := dps[i].SnapshotName()
			if m.snapshot == "" || name < m.snapshot {
				m.snapshot = name
			}
			modelOf[name] = m
		}
		// Model snapshots first, then the others in order of first appearance.
		var first, rest []string
		for _, m := range models {
			if _, ok := groups[m.snapshot]; !ok {
				groups[m.snapshot] = nil // indexed for its model only (all its datapoints resumed)
				first = append(first, m.snapshot)
			}
		}
		for _, name := range order {
			if modelOf[name].snapshot == name {
				first = append(first, name)
			} else {
				rest = append(rest, name)
			}
		}
		slices.Sort(first)
		order = append(first, rest...)
	}

	jobs := make(chan string)
	var wg sync.WaitGroup
	for w := 0; w < opts.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ch, err := chunker.New(opts.Index.Strategy, opts.Index.Chunk)
			if err != nil {
				for name := range jobs {
					modelOf[name].publish(name, nil)
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
			iopts.Symbols = !opts.Compose.NoDefinitions // symbols from the chunker's parse
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
				model := modelOf[name]
				snap, err := src.Open(name)
				if err != nil {
					model.publish(name, nil)
					failAll(err)
					continue
				}
				sopts := iopts
				if lsa := model.wait(name); lsa != nil {
					sopts.Embedder = lsa
				}
				ix, st, err := IndexSnapshot(snap, ch, sopts)
				if err != nil {
					model.publish(name, nil)
					failAll(err)
					continue
				}
				if model != nil && model.snapshot == name {
					lsa, err := ix.LSA()
					if err != nil {
						fmt.Fprintf(opts.Log, "warning: %s: %v; its repository's snapshots fit their own LSA models\n", name, oneLine(err.Error()))
					}
					if lsa != nil {
						lsa = lsa.Labeled(ix.Key())
					}
					model.publish(name, lsa)
				}
				mu.Lock()
				sum.Chunks += st.Chunks
				sum.SkipFiles += st.Skipped
				sum.Chunked += st.Chunked
				sum.Reused += st.Reused
				if st.Built {
					sum.Built++
				}
				if sopts.Embedder != nil {
					sum.SharedLSA++
				}
				mu.Unlock()
				res := Resources{Extractor: ex}
				if !opts.Compose.NoDefinitions && len(idx) > 0 {
					res.Symbols = CachedSymbols(snap, ix, ex, opts.Index.CacheDir, opts.Index.MaxFileBytes)
				}
				for _, i := range idx {
					d := &dps[i]
					c, err := composeSafely(ix, Hole{Path: d.Path, Prefix: d.Prefix, Suffix: d.Suffix, Modified: d.Modified}, res, opts.Compose)
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

// repoModel is the LSA model a repository's snapshots share in Predict: fitted when
// snapshot (the repository's first) is indexed, then published to the others.
type repoModel struct {
	snapshot string        // the snapshot the model is fitted on
	done     chan struct{} // closed by publish
	once     sync.Once
	lsa      *retrieve.LSA // nil: none (the others fit their own)
}

// publish makes lsa the repository's shared model if name is its model snapshot;
// it does nothing for other snapshots, a nil receiver, or a second call.
func (m *repoModel) publish(name string, lsa *retrieve.LSA) {
	if m == nil || name != m.snapshot {
		return
	}
	m.once.Do(func() {
		m.lsa = lsa
		close(m.done)
	})
}

// wait returns the shared model for snapshot name: nil for the model snapshot itself
// (it fits the model) and without sharing, else the published model, waiting for it.
// Predict queues every model snapshot before any other snapshot, so the wait ends.
func (m *repoModel) wait(name string) *retrieve.LSA {
	if m == nil || name == m.snapshot {
		return nil
	}
	<-m.done
	return m.lsa
}

// configFingerprint describes the options that shape Predict's output lines (not
// the cache folder, logging or the number of workers, which do not change them),
// for the output journal: a resumed run must use the same ones.
func configFingerprint(opts PredictOptions) string {
	c := opts.Compose
	tok := ""
	if c.Plan.Tokens != nil {
		if n, ok := c.Plan.Tokens.(interface{ Name() string }); ok {
			tok = n.Name()
		} else {
			tok = fmt.Sprintf("%T", c.Plan.Tokens)
		}
	}
	c.Plan.Tokens = nil
	ix := opts.Index
	emb := ""
	if ix.Embedder != nil {
		emb = ix.Embedder.ID()
	}
	ix.Log, ix.Embedder, ix.CacheDir = nil, nil, ""
	return fmt.Sprintf("index %+v model=%s; compose %+v tokens=%s", ix, emb, c, tok)
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

// composeSafely is ComposePlanned that turns a panic (a bug, or an index damaged in
// a way its checks missed) into an error, so one datapoint cannot sink the batch.
func composeSafely(ix *retrieve.Index, h Hole, res Resources, opts Options) (c Composed, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("assemble: internal error composing the context of %s: %v", h.Path, r)
		}
	}()
	return ComposePlanned(ix, h, res, opts)
}

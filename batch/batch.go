// Package batch is the datapoint engine shared by `repoctx predict` and `repoctx
// eval`: datapoints in, one [Result] per datapoint out, in input order. It reads the
// datapoints lazily, opens each snapshot once while its datapoints are being answered
// (a [Method] says how: by default repoctx's own, a view of the snapshot over its
// repository's index.Index plus assemble.Compose), answers on a bounded pool of
// workers and holds at most about 2 × workers datapoints at once, so memory does not
// grow with the number of datapoints.
package batch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/assemble"
	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/index"
	"github.com/repoctx/repoctx/snapshot"
	"github.com/repoctx/repoctx/store"
)

// Config configures [Run]. Start from [DefaultConfig].
type Config struct {
	// Index configures the repositories' indexes (chunking, retrieval, symbols) of
	// the default method.
	Index index.Options
	// CacheDir is the cache directory of the store the default method's indexes keep
	// their records in; "" means store.DefaultCacheDir().
	CacheDir string
	// Compose configures context assembly for the default method.
	Compose assemble.Options
	// LSAPerSnapshot makes the default method fit the built-in LSA model on every
	// snapshot instead of once per repository (see [Repoctx]).
	LSAPerSnapshot bool
	// CrossSnapshot makes the default method also search, for each datapoint, the
	// other snapshots of its repository that the source holds (index.Options.Extra):
	// in a competition stage a later revision can hold the finished code. An editor has
	// no such revisions; it is off by default and never in docs/results.md's figures.
	CrossSnapshot bool
	// CrossRepo makes the default method also search the other repositories of the
	// source, each at its first snapshot in name order (package crossrepo: one bleve
	// index per repository, BM25 over their joint statistics; assemble.CrossRepo):
	// a competition option, like CrossSnapshot. Off by default.
	CrossRepo bool
	// Method answers datapoints; nil means [Repoctx](Index, Compose,
	// LSAPerSnapshot).
	Method Method
	// Workers is the number of datapoints answered at once (goroutines), at most
	// [MaxWorkers]; 0 means the number of CPUs.
	Workers int
	// Skip, if not nil, reports datapoints (by 0-based index in the sequence) to leave
	// out, such as those a resumed run already answered: no Result is emitted for them.
	Skip func(i int) bool
	// Log, if not nil, receives one line per failed datapoint and per skipped file,
	// and a "warning:" line per failed draft (see Summary.DraftFailures).
	Log io.Writer
}

// MaxWorkers is the most workers Run accepts: every worker holds a parser and a
// composition in flight, so more workers than this only costs memory.
const MaxWorkers = 1024

// DatasetLanguages returns the languages whose files a dataset run in language lang
// indexes when the caller names none (index.Options.Languages): lang's family
// (grammars.Family: Kotlin with Java, TypeScript and TSX with JavaScript, C with
// C++), so a completion retrieves from the languages its code calls into; --langs
// kotlin gives the language alone. Registering a language outside lang's family never
// changes what its snapshots index.
func DatasetLanguages(lang string) []string { return grammars.Family(lang) }

// DefaultPlanWindow, DefaultContextWindow and DefaultIterations are three of
// assemble.PresetBatch's overrides (Config.Compose.Plan.Window,
// Plan.ContextWindow and Iterations; the fourth is assemble.BatchHitMargin),
// declared and documented in assemble.
const (
	DefaultPlanWindow    = assemble.BatchPlanWindow
	DefaultContextWindow = assemble.BatchContextWindow
	DefaultIterations    = assemble.BatchIterations
)

// DefaultConfig returns the defaults: index.DefaultOptions,
// assemble.PresetBatch's options (the budget planner on for DefaultPlanWindow
// tokens, the context budgeted for DefaultContextWindow, counting with
// repoctx.CharEstimate unless Compose.Plan.Tokens is set, DefaultIterations
// retrieval rounds and assemble.BatchHitMargin lines around each retrieved chunk),
// one LSA model per repository, one worker per CPU.
func DefaultConfig() Config {
	return Config{Index: index.DefaultOptions(), Compose: assemble.PresetBatch.Options(), Workers: runtime.NumCPU()}
}

// Result is the answer for one datapoint.
type Result struct {
	// Index is the datapoint's 0-based position in the sequence given to Run.
	Index int
	// ID and Line name the datapoint (Line is 1-based in its file, 0 if unknown).
	ID   string
	Line int
	// Context is the composed context; empty when Err is set.
	Context repoctx.Context
	// Err says why the datapoint got no context: a bad input line, a missing or
	// unreadable snapshot, an index or composition error. It names the datapoint.
	Err error
}

// Summary counts what a Run did.
type Summary struct {
	Datapoints int // datapoints read (skipped ones included)
	Skipped    int // datapoints left out by Config.Skip
	Failed     int // datapoints answered with an error
	Snapshots  int // snapshot openings (a snapshot whose datapoints are far apart may count twice)
	// Index statistics of the default method, summed over snapshot openings.
	Built, Chunks, SkipFiles, Chunked, Reused, SharedLSA int
	// StoredViews counts the openings whose view was read back whole from the cache
	// (index.Options.StoreViews, index.Stats.StoredView); ViewsWritten those whose
	// view was written whole to it (index.Stats.ViewWritten).
	StoredViews, ViewsWritten int
	// CacheWriteFailures counts the writes to the cache (the store, the index cache)
	// that failed and were dropped, summed from index.Stats: each only costs a later
	// run the work again, but many mean a full or unwritable cache disk.
	CacheWriteFailures int
	// Drafts counts the drafts the default method asked of Compose.Drafter (iterative
	// retrieval with a model, assemble.Options.Drafter), failed ones included;
	// DraftFailures those that failed (an endpoint down, a timeout, a blank
	// completion), each replaced by the built-in drafter's draft: a datapoint is
	// never failed for its draft. Both stay 0 without a Drafter.
	Drafts, DraftFailures int
	// Errors has one entry per failed datapoint, naming it, in input order.
	Errors []error
}

// A Method answers datapoints, one snapshot at a time.
type Method interface {
	// Open prepares to answer datapoints of snapshot snap of repository repo
	// ("owner/name"): index it, read its files. Run calls it once for a run of
	// datapoints of one snapshot and shares the Answerer between workers.
	Open(ctx context.Context, snap snapshot.Snapshot, repo string) (Answerer, error)
}

// An Answerer answers the datapoints of one snapshot; Answer must be safe for
// concurrent use.
type Answerer interface {
	// Answer returns the context for d.
	Answer(ctx context.Context, d *Datapoint) (repoctx.Context, error)
	// Close releases the snapshot's resources.
	Close() error
}

// statser is implemented by answerers that report index statistics.
type statser interface{ stats() index.Stats }

// Run answers every datapoint of dps with snapshots from src and calls emit once per
// datapoint not skipped, in input order, from one goroutine at a time. A datapoint
// error (a bad line yielded by dps as a non-nil error with the datapoint's Line and
// ID, a missing snapshot, an index or composition failure) is that datapoint's
// Result.Err: the batch goes on. An error that ends dps without a datapoint (its Line
// is 0, such as an I/O error of the file being read) stops the run and is returned,
// after the results before it were emitted.
//
// A fault of the environment (repoctx.IsEnvironment: a full or read-only cache disk,
// too many open files), whether a method or the source returns it, stops the run too:
// every later datapoint would fail the same way. Run emits the results before the
// first datapoint it hit (in input order), not that datapoint's nor any later one, and
// returns its error (naming the datapoint, wrapping the *repoctx.EnvironmentError or
// errno). A panic in a method is that datapoint's error (an environment fault when
// the panic value wraps one).
//
// When ctx is cancelled, Run stops reading, lets the workers' index builds and
// compositions return at their next check (they remove their temporary files), and
// returns ctx's error without emitting the results not yet in order.
func Run(ctx context.Context, src snapshot.Source, dps iter.Seq2[Datapoint, error], cfg Config, emit func(Result)) (Summary, error) {
	if cfg.Workers <= 0 {
		cfg.Workers = runtime.NumCPU()
	}
	if cfg.Workers > MaxWorkers {
		return Summary{}, &repoctx.OptionError{Option: "workers", Value: fmt.Sprint(cfg.Workers), Want: fmt.Sprintf("a positive number up to %d", MaxWorkers)}
	}
	var drafts draftCount
	if cfg.Method == nil {
		if err := cfg.Compose.Validate(); err != nil {
			return Summary{}, err
		}
		if cfg.Compose.Drafter != nil && cfg.Compose.Iterations > 1 {
			cfg.Compose.OnDraft = drafts.hook(cfg.Compose.OnDraft, cfg.Log)
		}
		cacheDir := cfg.CacheDir
		if cacheDir == "" {
			cacheDir = store.DefaultCacheDir()
		}
		st := store.Open(cacheDir)
		defer st.Close()
		m := Repoctx(src, st, cfg.Index, cfg.Compose, cfg.LSAPerSnapshot)
		m.(*repoctxMethod).cross = cfg.CrossSnapshot
		m.(*repoctxMethod).crossRepo = cfg.CrossRepo
		defer m.(io.Closer).Close() // the indexes (before the store)
		cfg.Method = m
	}
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r := &runner{ctx: ctx, src: src, cfg: cfg, snaps: newSnapCache(cfg.Method, src, 1)}
	defer r.snaps.closeAll()

	jobs := make(chan job)
	done := make(chan job, cfg.Workers)
	var wg sync.WaitGroup
	for range cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				j.res = r.answer(j)
				done <- j
			}
		}()
	}
	// The reader feeds the workers and tells the collector, in input order, which
	// indexes to wait for; window bounds the datapoints held at once.
	order := make(chan job, 2*cfg.Workers)
	window := make(chan struct{}, 2*cfg.Workers)
	readDone := make(chan error, 1)
	go func() {
		defer close(order)
		defer close(jobs)
		readDone <- r.read(dps, jobs, order, window)
	}()
	err := r.collect(order, done, window, emit)
	cancel()
	readErr := <-readDone
	go func() { // drain, so that every worker ends
		for range done {
		}
	}()
	wg.Wait()
	close(done)
	if err == nil {
		err = readErr
	}
	if err == nil && parent.Err() != nil {
		err = parent.Err()
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		err = parent.Err() // not the cancel of our own context
	}
	r.sum.Drafts, r.sum.DraftFailures = int(drafts.asked.Load()), int(drafts.failed.Load())
	return r.sum, err
}

// draftCount counts the drafts of a Run's Compose.Drafter.
type draftCount struct {
	asked, failed atomic.Int64
	mu            sync.Mutex // serialises log lines
}

// hook returns an assemble.Options.OnDraft that counts drafts, logs failed ones to
// log (when not nil) and then calls next (when not nil).
func (dc *draftCount) hook(next func(repoctx.Hole, error), log io.Writer) func(repoctx.Hole, error) {
	return func(h repoctx.Hole, err error) {
		dc.asked.Add(1)
		if err != nil {
			dc.failed.Add(1)
			if log != nil {
				dc.mu.Lock()
				fmt.Fprintf(log, "warning: %s: draft failed, the built-in drafter's is used: %s\n", h.Path, strings.ReplaceAll(err.Error(), "\n", "; "))
				dc.mu.Unlock()
			}
		}
		if next != nil {
			next(h, err)
		}
	}
}

// job is one datapoint on its way through a Run.
type job struct {
	i    int
	d    Datapoint
	err  error // a bad input line: answered without a snapshot
	skip bool  // left out: nothing is emitted
	res  Result
	ok   chan struct{} // closed when res is set (for the collector)
}

// runner holds one Run's state.
type runner struct {
	ctx   context.Context
	src   snapshot.Source
	cfg   Config
	snaps *snapCache
	mu    sync.Mutex // guards sum
	sum   Summary
}

// read sends every datapoint to order (in input order) and, unless skipped or bad,
// to jobs. It returns a terminal error of dps.
func (r *runner) read(dps iter.Seq2[Datapoint, error], jobs, order chan<- job, window chan struct{}) error {
	i := 0
	for d, err := range dps {
		if err != nil && d.Line == 0 {
			return err
		}
		select {
		case window <- struct{}{}:
		case <-r.ctx.Done():
			return nil
		}
		j := job{i: i, d: d, err: err, ok: make(chan struct{})}
		i++
		j.skip = r.cfg.Skip != nil && r.cfg.Skip(j.i)
		select {
		case order <- j:
		case <-r.ctx.Done():
			return nil
		}
		if j.skip || j.err != nil {
			continue
		}
		r.snaps.expect(j.d.SnapshotName())
		select {
		case jobs <- j:
		case <-r.ctx.Done():
			r.snaps.unexpect(j.d.SnapshotName())
			return nil
		}
	}
	return nil
}

// collect emits results in input order as they complete.
func (r *runner) collect(order <-chan job, done <-chan job, window <-chan struct{}, emit func(Result)) error {
	finished := map[int]Result{}
	for want := range order {
		r.sum.Datapoints++
		var res Result
		switch {
		case want.skip:
			r.sum.Skipped++
			<-window
			continue
		case want.err != nil:
			res = Result{Index: want.i, ID: want.d.ID, Line: want.d.Line, Err: want.err}
		default:
			for {
				var ok bool
				if res, ok = finished[want.i]; ok {
					delete(finished, want.i)
					break
				}
				select {
				case j := <-done:
					finished[j.i] = j.res
				case <-r.ctx.Done():
					return r.ctx.Err()
				}
			}
		}
		if repoctx.IsEnvironment(res.Err) {
			return res.Err
		}
		if res.Err != nil {
			r.sum.Failed++
			r.sum.Errors = append(r.sum.Errors, res.Err)
			if r.cfg.Log != nil {
				fmt.Fprintf(r.cfg.Log, "error: %s\n", strings.ReplaceAll(res.Err.Error(), "\n", "; "))
			}
		}
		emit(res)
		<-window
	}
	return nil
}

// answer answers one datapoint; a panic of the method is its error.
func (r *runner) answer(j job) (res Result) {
	d := &j.d
	res = Result{Index: j.i, ID: d.ID, Line: d.Line}
	fail := func(err error) Result {
		res.Err = fmt.Errorf("%s: %w", d.Name(), err)
		return res
	}
	defer func() {
		if p := recover(); p != nil {
			res.Context = repoctx.Context{}
			fail(repoctx.Recovered("answer", p))
		}
	}()
	if err := r.ctx.Err(); err != nil {
		r.snaps.unexpect(d.SnapshotName())
		return fail(err)
	}
	o, opened, err := r.snaps.acquire(r.ctx, j.i, d)
	if opened {
		r.count(o)
	}
	if err != nil {
		return fail(fmt.Errorf("snapshot %s: %w", d.SnapshotName(), err))
	}
	defer r.snaps.release(o)
	c, err := o.ans.Answer(r.ctx, d)
	if err != nil {
		return fail(err)
	}
	res.Context = c
	return res
}

// count adds the statistics of one snapshot opening.
func (r *runner) count(o *opening) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sum.Snapshots++
	if s, ok := o.ans.(statser); ok && o.err == nil {
		st := s.stats()
		r.sum.Chunks += st.Chunks
		r.sum.SkipFiles += st.Skipped
		r.sum.Chunked += st.Chunked
		r.sum.Reused += st.Reused
		r.sum.CacheWriteFailures += st.CacheWriteFailures
		if st.Built {
			r.sum.Built++
		}
		if st.StoredView {
			r.sum.StoredViews++
		}
		if st.ViewWritten {
			r.sum.ViewsWritten++
		}
	}
	if o.sharedLSA {
		r.sum.SharedLSA++
	}
}

package dataset

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/batch"
	"github.com/repoctx/repoctx/complete"
	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/index"
	"github.com/repoctx/repoctx/internal/inputfile"
	"github.com/repoctx/repoctx/snapshot"
	"github.com/repoctx/repoctx/store"
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
	// An empty Batch.Index.Languages means batch.DatasetLanguages(Lang): the
	// language's family (Kotlin snapshots index their Java files too).
	Batch batch.Config
	// Limits bound snapshot reading; zero fields mean snapshot.DefaultLimits.
	Limits snapshot.Limits
	// Shard, when on, answers only the datapoints of the shard's repositories and
	// writes their lines with the datapoint's line number ({"datapoint":N,...}) for
	// [Merge]; Out then holds only them.
	Shard Shard
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
// empty context and an entry in the summary's Errors; the batch goes on. A fault of
// the environment (a full or read-only cache or output disk, too many open files:
// repoctx.IsEnvironment) stops the batch at the first datapoint it hits, and no output
// is written for datapoints never really tried. The returned error is nil when every
// datapoint succeeded, wraps repoctx.ErrSomeFailed when some failed but the output was
// written, and is any other error when the run could not start or finish (missing
// input file, unwritable output or cache, invalid options such as an unregistered Lang, a fault of the
// environment,
// ctx cancelled): once the journal exists it is then kept for Resume and the error is
// a *StoppedError naming it.
func Predict(ctx context.Context, opts PredictOptions) (PredictSummary, error) {
	start := time.Now()
	var sum PredictSummary
	set := opts.Lang + "-" + opts.Stage
	if opts.Out == "" {
		opts.Out = filepath.Join(opts.DataDir, set+".predictions.jsonl")
	}
	sum.Out = opts.Out
	cfg := opts.Batch
	if cfg.CacheDir == "" {
		cfg.CacheDir = store.DefaultCacheDir()
	}
	if grammars.Lookup(opts.Lang) == nil {
		return sum, &repoctx.OptionError{Option: "lang", Value: strconv.Quote(opts.Lang),
			Want: "a registered language (" + strings.Join(grammars.Names(), ", ") + ")"}
	}
	if err := cfg.Compose.Validate(); err != nil {
		return sum, err
	}
	if err := checkWritable(cfg.CacheDir); err != nil {
		return sum, repoctx.WriteFault("", err)
	}
	if err := CheckDataset(opts.DataDir, opts.Lang, opts.Stage); err != nil {
		return sum, err
	}
	dpFile := filepath.Join(opts.DataDir, set+".jsonl")
	if err := notAnInput(opts.Out, opts.DataDir, set); err != nil {
		return sum, err
	}
	n, err := opts.Shard.count(dpFile)
	if err != nil {
		return sum, err
	}
	src, err := OpenSource(opts.DataDir, opts.Lang, opts.Stage, opts.Limits)
	if err != nil {
		return sum, err
	}
	defer src.Close()
	digest, err := fileDigest(dpFile)
	if err != nil {
		return sum, err
	}
	jc := journalHeader(opts.Shard, cfg, digest)
	out, err := CreateOutputConfig(opts.Out, n, opts.Resume, jc)
	if err != nil {
		return sum, err
	}
	if len(cfg.Index.Languages) == 0 {
		// The dataset language's family (batch.DatasetLanguages). After the
		// fingerprint: the default follows from Lang, which names the output already.
		cfg.Index.Languages = batch.DatasetLanguages(opts.Lang)
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
	// A journal that cannot be written stops the batch: nothing later could be kept.
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var putErr error
	sum.Summary, err = batch.Run(runCtx, src, opts.Shard.filter(DatapointsFile(dpFile)), cfg, func(r batch.Result) {
		if putErr != nil {
			return
		}
		line := PredictionLine(r.Context.Text, r.Context.Prefix, r.Context.Suffix)
		if r.Err != nil {
			line = PredictionLine("", nil, nil)
		}
		if opts.Shard.On() {
			line = shardLine(r.Line, digest, line)
		}
		if err := out.Put(r.Index, line); err != nil {
			putErr = err
			stop()
			return
		}
		tick()
	})
	if putErr != nil {
		err = putErr
	}
	if err != nil {
		_ = out.Abort()
		return sum, stopped(err, out, opts.Out)
	}
	if err := out.Finish(); err != nil {
		_ = out.Abort()
		return sum, stopped(err, out, opts.Out)
	}
	sum.Wall = time.Since(start)
	if sum.Failed > 0 {
		return sum, fmt.Errorf("%d of %d datapoints failed: %w", sum.Failed, sum.Datapoints, repoctx.ErrSomeFailed)
	}
	return sum, nil
}

// StoppedError is the error of a [Predict] run that stopped before writing its output
// (a fault of the environment, a cancelled context, an unwritable journal): it says
// what happened and where the journal of the datapoints done is, for a rerun with
// Resume.
type StoppedError struct {
	// Err is why the run stopped.
	Err error
	// Journal is the journal's path ("" for standard output, which has none to keep).
	Journal string
	// Done and Total count the datapoints the journal holds and the datapoints of the
	// run.
	Done, Total int
}

func (e *StoppedError) Error() string {
	if e.Journal == "" {
		return e.Err.Error()
	}
	return fmt.Sprintf("%v (the journal %s keeps %d of %d datapoints: rerun with resume to continue)", e.Err, e.Journal, e.Done, e.Total)
}

func (e *StoppedError) Unwrap() error { return e.Err }

// stopped wraps err in a StoppedError naming out's journal.
func stopped(err error, out *Output, path string) error {
	if path == "-" {
		return err
	}
	return &StoppedError{Err: err, Journal: path + journalSuffix, Done: out.n - out.Missing(), Total: out.n}
}

// Fingerprint records the options of cfg that shape prediction lines (not the cache
// folder, logging or the number of workers, which do not change them), for the output
// journal, as a JSON object: "index" (index.Options' fields by Go name),
// "model" (the embedder's ID), "lsa_per_snapshot", "cross_snapshot" and "compose"
// (assemble.OptionTable's options by JSON name, "languages", "tokens" naming the
// planner's counter and "drafter"). A resumed run must record the same.
func Fingerprint(cfg batch.Config) json.RawMessage {
	b, err := fingerprintObject(cfg).MarshalJSON()
	if err != nil { // every value is a scalar, a string list or %+v text
		b, _ = json.Marshal(map[string]string{"error": err.Error()})
	}
	return b
}

// fingerprintObject is Fingerprint's object, for journalHeader to extend.
func fingerprintObject(cfg batch.Config) object {
	c := cfg.Compose
	tok := ""
	if c.Plan.Tokens != nil {
		tok = c.Plan.Tokens.Name()
	}
	drafter := "built-in"
	if m, ok := c.Drafter.(*complete.Model); ok {
		drafter = fmt.Sprintf("%s model=%q template=%s window=%d max-tokens=%d", m.Client.URL(), m.Name, m.Template.Name, m.Window, m.MaxTokens)
	} else if c.Drafter != nil {
		drafter = fmt.Sprintf("%T", c.Drafter)
	}
	ws := cfg.Index
	emb := ""
	if ws.Embedder != nil {
		emb = ws.Embedder.ID()
	}
	ws.Log, ws.Embedder, ws.Extra, ws.SharedLSA, ws.Progress = nil, nil, nil, nil, nil
	ws.StoreViews = index.ViewsNotStored // where views come from; the outputs are the same
	compose := append(optionsObject(c), member{"tokens", tok}, member{"drafter", drafter})
	out := object{{"index", structObject(reflect.ValueOf(ws))}, {"model", emb},
		{"lsa_per_snapshot", cfg.LSAPerSnapshot}, {"cross_snapshot", cfg.CrossSnapshot}, {"compose", compose}}
	if cfg.CrossRepo { // recorded only when on: journals of runs without it keep their header
		out = append(out, member{"cross_repo", true})
	}
	return out
}

// notAnInput refuses an output path that is one of the dataset's own files (the
// datapoints, the truth or a snapshot archive of dataDir), which predict would
// otherwise replace with its predictions, and one that exists but is not a regular
// file (a folder failed only after all the work; a device got a journal beside it).
func notAnInput(out, dataDir, set string) error {
	fo, err := os.Stat(out)
	if err != nil || out == "-" {
		return nil // a new file, or standard output
	}
	if !fo.Mode().IsRegular() {
		return &repoctx.OptionError{Option: "output", Value: strconv.Quote(out), Want: "a regular file (it is written through a journal beside it and renamed into place; use - for standard output)"}
	}
	inputs := []string{filepath.Join(dataDir, set+".jsonl"), filepath.Join(dataDir, set+".truth.jsonl")}
	if zips, _ := filepath.Glob(filepath.Join(dataDir, "*.zip")); len(zips) > 0 {
		inputs = append(inputs, zips...)
	}
	for _, in := range inputs {
		if fi, err := os.Stat(in); err == nil && os.SameFile(fo, fi) {
			return &repoctx.OptionError{Option: "output", Value: strconv.Quote(out), Want: "a file that is not one of the dataset's inputs (" + in + ")"}
		}
	}
	return nil
}

// journalHeader is what a prediction journal's header records: the options
// (Fingerprint), the shard and the digest of the datapoint file (fileDigest), as
// one JSON object.
func journalHeader(s Shard, cfg batch.Config, digest string) json.RawMessage {
	o := append(fingerprintObject(cfg), member{"shard", s.String()}, member{"datapoints", digest})
	b, err := o.MarshalJSON()
	if err != nil {
		b, _ = json.Marshal(map[string]string{"error": err.Error(), "datapoints": digest})
	}
	return b
}

// fileDigest returns the first 16 hex digits of the SHA-256 of the file at path: a
// journal records it, so that a resume with another datapoint file (regenerated,
// reordered, another language's) is refused instead of mixing in other contexts.
func fileDigest(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("dataset: open datapoints: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("dataset: read %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// CountDatapoints returns the number of non-blank lines of the datapoint file path
// (the datapoints [Datapoints] yields, bad ones included), reading it once without
// parsing.
func CountDatapoints(path string) (int, error) {
	f, err := inputfile.Open(path)
	if err != nil {
		return 0, fmt.Errorf("dataset: open datapoints: %w", err)
	}
	defer f.Close()
	// The datapoint reader's own line reader, so that the count is of exactly the lines
	// Datapoints yields (a line is blank when bytes.TrimSpace of all of it is empty; a
	// scan of buffer-sized pieces miscounted a multi-byte space split between two).
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

// CheckDataset reports, before anything is read, why dataDir has no datapoint file
// {lang}-{stage}.jsonl: the folder is missing or not a folder, or it holds other
// datasets (named in the error, e.g. "kotlin-dev, python-dev") or none. nil when the
// file is there.
func CheckDataset(dataDir, lang, stage string) error {
	name := lang + "-" + stage + ".jsonl"
	if _, err := os.Stat(filepath.Join(dataDir, name)); err == nil {
		return nil
	}
	fi, err := os.Stat(dataDir)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("dataset: data folder %s does not exist (looked for %s in it)", dataDir, name)
	}
	if err != nil {
		return fmt.Errorf("dataset: data folder %s (looked for %s in it): %w", dataDir, name, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("dataset: data folder %s is not a folder (looked for %s in it)", dataDir, name)
	}
	var sets []string
	if ents, err := os.ReadDir(dataDir); err == nil {
		for _, e := range ents {
			n := e.Name()
			if strings.HasSuffix(n, ".jsonl") && !strings.HasSuffix(n, ".truth.jsonl") && !strings.HasSuffix(n, ".predictions.jsonl") && strings.Contains(n, "-") {
				sets = append(sets, strings.TrimSuffix(n, ".jsonl"))
			}
		}
	}
	if len(sets) == 0 {
		return fmt.Errorf("dataset: %s has no %s (and no other {lang}-{stage}.jsonl)", dataDir, name)
	}
	return fmt.Errorf("dataset: %s has no %s (--lang %s --stage %s); it holds: %s", dataDir, name, lang, stage, strings.Join(sets, ", "))
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

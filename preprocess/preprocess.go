// Package preprocess turns source files and repository folders into chunk records:
// the library behind `repoctx chunk`.
//
// Run takes a list of inputs, each a file (chunked as named) or a folder. A folder
// is walked with snapshot.Walk and its ignore rules (.gitignore, .ignore,
// .git/info/exclude, Options.Walk.Exclude; vendored folders, generated, minified,
// binary and oversized files skipped and counted by reason). One goroutine produces
// the files in walk order; a pool of Options.Workers workers, each with its own
// chunker (tree-sitter parsers are per goroutine), decodes (chunker.Decode) and
// chunks them; Run puts the results back into input order and hands each file's
// chunks to a Writer (NewTextWriter, NewJSONLWriter, NewParquetWriter, or the
// caller's own), so the output order is the walk order whatever the number of
// workers. Memory is bounded by a token per file in flight (2 per worker): the
// producer takes one before reading a file, Run gives it back once the file's chunks
// are written, so at most that many files and their chunks are held at once, never
// the whole repository. Run returns Stats: per-language counts, which PrintTable
// prints as a table.
package preprocess

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/internal/inputfile"
	"github.com/repoctx/repoctx/snapshot"
)

// Options configure Run.
type Options struct {
	// Strategy and Chunker make each worker's chunker (chunker.New; zero values:
	// structural, default sizes).
	Strategy chunker.Strategy
	Chunker  chunker.Options
	// Walk are the walker's options for folders (languages, ignore rules, size
	// limit). Its OnSkip is not used: see OnSkip below.
	Walk snapshot.WalkOptions
	// MaxFileBytes is the decoder's size limit in bytes (0:
	// chunker.DefaultMaxFileBytes); Walk.MaxFileBytes is the walker's, and callers
	// set both alike. A named file is read up to one byte more, so that
	// chunker.Decode refuses it as too large without the whole file being read.
	MaxFileBytes int64
	// Workers is the number of files chunked in parallel (0: 1).
	Workers int
	// Diagnose makes a structural chunker also count each file's fallback windows
	// cut inside string literals or comments (LangStats.TokenWindows).
	Diagnose bool
	// OnSkip, when set, is called with each walked path the walker or the decoder
	// skips, and why; the walker's calls and the decoder's come from two goroutines
	// and may overlap. Paths are output paths; a folder's ends in "/".
	OnSkip func(path string, r snapshot.SkipReason)
	// OnFailure, when set, is called in output order with each named file that could
	// not be read or chunked (err) or that the decoder refused (skip, err nil). It
	// counts in Stats.Failed either way.
	OnFailure func(path string, skip snapshot.SkipReason, err error)
	// OnFile, when set, is called in output order once per file handled.
	OnFile func()
}

// OptionsError reports options Run cannot work with (a chunker that cannot be
// made, a worker count below 0). Nothing has been read or written.
type OptionsError struct{ Err error }

func (e *OptionsError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *OptionsError) Unwrap() error { return e.Err }

// WriteError is a failure of the Writer; Run stops at the first one.
type WriteError struct{ Err error }

func (e *WriteError) Error() string { return e.Err.Error() }

// Unwrap returns the Writer's error.
func (e *WriteError) Unwrap() error { return e.Err }

// job is one file to chunk; seq is its place in the output order.
type job struct {
	seq      int
	path     string // output path
	data     []byte
	explicit bool  // named as input (not found by the walker)
	err      error // reading failed (named files)
}

// result is one chunked (or refused) file.
type result struct {
	seq      int
	path     string
	explicit bool
	err      error               // reading or chunking failed
	skip     snapshot.SkipReason // refused by chunker.Decode (walked files are counted, not failed)
	lang     string
	raw      int // bytes
	chunks   []chunker.Chunk
	sha      string        // hex SHA-256 of the raw bytes
	dur      time.Duration // decoding and chunking
	// tokenWindows counts the fallback chunks cut inside string literals or comments
	// (chunker.Structural.TokenWindows), with Diagnose.
	tokenWindows int
}

// Run chunks inputs (file or folder paths) and writes every file's chunks to w in
// output order: inputs in order, a folder's files in the walker's sorted path order.
// Output paths are slash paths relative to the folder when inputs is one folder,
// else prefixed with the input as given; a named file's is the input as given. Run
// closes w (Writer.Close) when all went well.
//
// Files that fail are not errors of Run: a walked file the decoder refuses is
// counted in Stats.Walked, a named file that fails goes to OnFailure and
// Stats.Failed. Run returns an *OptionsError for bad options, a *WriteError when
// w fails, the walker's error (*repoctx.OptionError for a bad walker option), or
// ctx's error; Stats are filled as far as Run got.
func Run(ctx context.Context, inputs []string, opts Options, w Writer) (Stats, error) {
	workers := max(opts.Workers, 1)
	if opts.Workers < 0 {
		return Stats{}, &OptionsError{fmt.Errorf("workers must be at least 1, not %d", opts.Workers)}
	}
	maxFile := opts.MaxFileBytes
	if maxFile == 0 {
		maxFile = chunker.DefaultMaxFileBytes
	}
	// One chunker per worker, made before anything is written.
	chunkers := make([]chunker.Chunker, workers)
	for i := range chunkers {
		var err error
		if chunkers[i], err = chunker.New(opts.Strategy, opts.Chunker); err != nil {
			return Stats{}, &OptionsError{err}
		}
		defer chunkers[i].Close()
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan job)
	results := make(chan result, workers)
	slots := make(chan struct{}, 2*workers) // one per file in flight, given back once written
	st := Stats{Langs: map[string]*LangStats{}, Workers: workers}
	// Written by the producer, read after producerDone.
	var walked snapshot.WalkStats
	var produceErr error
	producerDone := make(chan struct{})
	go func() {
		defer close(producerDone)
		defer close(jobs)
		seq := 0
		send := func(j job) error {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return ctx.Err()
			}
			j.seq = seq
			seq++
			jobs <- j // the workers drain jobs until it is closed
			return nil
		}
		for _, arg := range inputs {
			fi, err := os.Stat(arg)
			if err != nil || !fi.IsDir() {
				j := job{path: filepath.ToSlash(arg), explicit: true, err: err}
				if err == nil {
					j.data, j.err = readNamed(arg, maxFile)
				}
				if send(j) != nil {
					return
				}
				continue
			}
			st.Folders++
			prefix := ""
			if len(inputs) > 1 {
				prefix = filepath.ToSlash(filepath.Clean(arg))
			}
			wopts := opts.Walk
			wopts.OnSkip = nil
			if opts.OnSkip != nil {
				wopts.OnSkip = func(p string, r snapshot.SkipReason) {
					q := path.Join(prefix, p)
					if strings.HasSuffix(p, "/") {
						q += "/" // a folder
					}
					opts.OnSkip(q, r)
				}
			}
			ws, err := snapshot.Walk(ctx, arg, wopts, func(f snapshot.File) error {
				return send(job{path: path.Join(prefix, f.Path), data: f.Data})
			})
			walked.Add(ws)
			if err != nil {
				if ctx.Err() == nil {
					produceErr = err
				}
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for _, ch := range chunkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				results <- chunkOne(ch, j, int(min(maxFile, int64(^uint(0)>>1))), opts.Diagnose)
			}
		}()
	}
	go func() { wg.Wait(); close(results) }()

	start := time.Now()
	var writeErr error
	decodeSkips := snapshot.WalkStats{Skipped: map[snapshot.SkipReason]int{}}
	pending := map[int]result{}
	next := 0
	for r := range results {
		pending[r.seq] = r
		for {
			r, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			<-slots
			if writeErr != nil {
				continue // drain after a failed write
			}
			if r.explicit {
				st.Named++
			}
			switch {
			case r.err != nil:
				st.Failed++
				if opts.OnFailure != nil {
					opts.OnFailure(r.path, snapshot.SkipNone, r.err)
				}
			case r.skip != snapshot.SkipNone && r.explicit:
				st.Failed++
				if opts.OnFailure != nil {
					opts.OnFailure(r.path, r.skip, nil)
				}
			case r.skip != snapshot.SkipNone:
				decodeSkips.Skipped[r.skip]++
				decodeSkips.Files--
				decodeSkips.Bytes -= int64(r.raw)
				if opts.OnSkip != nil {
					opts.OnSkip(r.path, r.skip)
				}
			default:
				if st.Langs[r.lang] == nil {
					st.Langs[r.lang] = &LangStats{}
				}
				st.Langs[r.lang].add(r)
				if err := w.Write(r.chunks, r.sha); err != nil {
					writeErr = err
					cancel()
				}
			}
			if opts.OnFile != nil {
				opts.OnFile()
			}
		}
	}
	<-producerDone
	st.Wall = time.Since(start)
	st.Walked = walked
	st.Walked.Add(decodeSkips)
	if writeErr == nil {
		writeErr = w.Close()
	}
	if writeErr != nil {
		return st, &WriteError{writeErr}
	}
	if produceErr != nil {
		return st, produceErr
	}
	return st, ctx.Err()
}

// readNamed reads a file named as input, at most max+1 bytes (one more than the
// limit, so that chunker.Decode refuses it as too large without the whole file
// being read). A FIFO, a device or a folder is refused before it is opened
// (inputfile.Open), standard input (/dev/stdin) is not.
func readNamed(name string, max int64) ([]byte, error) {
	f, err := inputfile.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, max+1))
}

// chunkOne decodes and chunks one file. maxBytes is the size limit in bytes. With
// diagnose, a structural chunker also counts the file's fallback windows cut inside
// string literals or comments (chunker.Structural.TokenWindows; not timed in dur).
func chunkOne(ch chunker.Chunker, j job, maxBytes int, diagnose bool) result {
	r := result{seq: j.seq, path: j.path, explicit: j.explicit, err: j.err, raw: len(j.data)}
	if j.err != nil {
		return r
	}
	t := time.Now()
	f, err := chunker.Decode(j.path, j.data, maxBytes)
	switch {
	case errors.Is(err, chunker.ErrBinary):
		r.skip = snapshot.SkipBinary
		return r
	case errors.Is(err, chunker.ErrTooLarge):
		r.skip = snapshot.SkipTooLarge
		return r
	case err != nil:
		r.err = err
		return r
	}
	r.lang = f.Lang
	if r.chunks, err = ch.Chunk(f); err != nil {
		r.err = err
		return r
	}
	sum := sha256.Sum256(j.data)
	r.sha = hex.EncodeToString(sum[:])
	r.dur = time.Since(t)
	if sc, ok := ch.(*chunker.Structural); ok && diagnose {
		r.tokenWindows, _ = sc.TokenWindows(f, r.chunks) // never fails
	}
	return r
}

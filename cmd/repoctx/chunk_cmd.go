package main

// Design note: `repoctx chunk`.
//
// Files come from snapshot.Walk (folders) or are read as named (files), one
// goroutine producing jobs in walk order. A pool of workers, each with its own
// chunker (tree-sitter parsers are per goroutine), decodes and chunks them; the
// writer puts results back into job order before writing, so the output order is
// the walk order whatever the number of workers. Memory is bounded by a token per
// job in flight (2 per worker): the producer takes one before reading a file, the
// writer gives it back once the file's chunks are written, so at most that many
// files and their chunks are held at once, never the whole repository.

import (
	"bufio"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/batch"
	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/internal/atomicfile"
	"github.com/repoctx/repoctx/internal/inputfile"
	"github.com/repoctx/repoctx/snapshot"
	"github.com/repoctx/repoctx/store"
)

// chunkSchema is the version of the chunk record (chunkRow) written by `repoctx
// chunk --format jsonl|parquet`, in its "schema" field. Bump it when a field
// changes meaning or goes away; adding a field keeps the version. Version 2: limit
// (parse_error no longer means a wall-clock time-out). Version 3: name is a merged
// chunk's first definition's name, no longer all of them joined by ", "; names lists them.
const chunkSchema = 3

// chunkRow is one chunk as `repoctx chunk` writes it: one JSON object per line
// (jsonl) or one row (parquet), with the same names. The fields are those of
// chunker.Chunk (same JSON names and meaning), every one always present, plus
// Schema and FileSHA256. docs/chunks.md ("Chunk schema") documents it.
type chunkRow struct {
	// Schema is chunkSchema.
	Schema int `json:"schema" parquet:"schema"`
	// ID is "{path}#{ordinal}".
	ID string `json:"id" parquet:"id"`
	// Path is the file's slash path: relative to the folder walked, or as given.
	Path string `json:"path" parquet:"path,dict"`
	// Lang is the grammar name, or "" for text of no registered language.
	Lang string `json:"lang" parquet:"lang,dict"`
	// Ordinal is the chunk's 0-based position in its file.
	Ordinal int `json:"ordinal" parquet:"ordinal"`
	// Kind is function, class, property, code or window.
	Kind string `json:"kind" parquet:"kind,dict"`
	// Name is the defined name of a definition chunk (a merged chunk's first
	// definition's), else "".
	Name string `json:"name" parquet:"name"`
	// Names lists the names of the definitions the chunk holds, in file order: several
	// for a merged chunk, [Name] for a definition chunk, empty for a chunk with no name.
	Names []string `json:"names" parquet:"names,list"`
	// StartLine and EndLine are 1-based, inclusive lines of the decoded text.
	StartLine int `json:"start_line" parquet:"start_line"`
	EndLine   int `json:"end_line" parquet:"end_line"`
	// StartByte and EndByte are a 0-based, half-open byte range of the decoded text
	// (UTF-8, BOM removed, CRLF as LF), not of the raw file.
	StartByte int `json:"start_byte" parquet:"start_byte"`
	EndByte   int `json:"end_byte" parquet:"end_byte"`
	// Header holds the signatures of the enclosing definitions, outermost first.
	Header []string `json:"header" parquet:"header,list"`
	// Parent, Prev and Next are chunk IDs in the same file, or "".
	Parent string `json:"parent" parquet:"parent"`
	Prev   string `json:"prev" parquet:"prev"`
	Next   string `json:"next" parquet:"next"`
	// Fallback reports a line or rune window cut where no syntax boundary served.
	Fallback bool `json:"fallback" parquet:"fallback"`
	// ParseError reports that the chunk overlaps ERROR or MISSING nodes, or is a
	// window of a file whose parse failed or ran over its CPU time limit.
	ParseError bool `json:"parse_error" parquet:"parse_error"`
	// Limit names the limit that made the whole file windows: "nesting", "parse_cpu"
	// or "parse_error" (see chunker.Limit), else "".
	Limit string `json:"limit" parquet:"limit,dict"`
	// FileSHA256 is the lower-case hex SHA-256 of the file's raw bytes (as on disk).
	FileSHA256 string `json:"file_sha256" parquet:"file_sha256,dict"`
	// Text is the chunk's text: the decoded file text [StartByte, EndByte).
	Text string `json:"text" parquet:"text"`
}

func newChunkRow(k chunker.Chunk, sha string) chunkRow {
	h := k.Header
	if h == nil {
		h = []string{}
	}
	names := k.DefNames()
	if names == nil {
		names = []string{}
	}
	return chunkRow{Schema: chunkSchema, ID: k.ID, Path: k.Path, Lang: k.Lang, Ordinal: k.Ordinal, Kind: string(k.Kind),
		Name: k.Name, Names: names, StartLine: k.StartLine, EndLine: k.EndLine, StartByte: k.StartByte, EndByte: k.EndByte,
		Header: h, Parent: k.Parent, Prev: k.Prev, Next: k.Next, Fallback: k.Fallback, ParseError: k.ParseError,
		Limit: string(k.Limit), FileSHA256: sha, Text: k.Text}
}

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
			strategyFlag, maxCharsFlag, windowFlag, overlapFlag,
			&cli.StringFlag{Name: "format", Usage: "output `format`: text (default), jsonl (one chunk record per line, see docs/chunks.md) or parquet (needs -o FILE)"},
			&cli.BoolFlag{Name: "json", Usage: "same as --format jsonl"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write to `FILE` (atomically: a temporary file renamed at the end); - or none: stdout"},
			&cli.BoolFlag{Name: "stats", Usage: "print per-language counts (files, chunks, files with parse errors, fallback share and the share of it cut inside string literals or comments, MB/s) to stderr"},
			&cli.StringSliceFlag{Name: "langs", Aliases: []string{"lang"}, Usage: "only files of these `languages` (comma-separated grammar names; default: all registered)"},
			&cli.BoolFlag{Name: "all-files", Usage: "also chunk files of no registered language (as text windows)"},
			&cli.Int64Flag{Name: "max-file-bytes", Value: chunker.DefaultMaxFileBytes, Usage: "skip files over this many `bytes`"},
			&cli.IntFlag{Name: "workers", Aliases: []string{"j"}, Value: runtime.NumCPU(), Usage: "files chunked in parallel"},
			verboseFlag,
		}, walkFlags()...),
		Action: runChunk,
	}
}

// chunkJob is one file to chunk; seq is its place in the output order.
type chunkJob struct {
	seq      int
	path     string // output path
	data     []byte
	explicit bool  // named on the command line (not found by the walker)
	err      error // reading failed (explicit files)
}

// chunkResult is one chunked (or refused) file.
type chunkResult struct {
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
	// (chunker.Structural.TokenWindows), with --stats.
	tokenWindows int
}

// chunkSink writes chunks in one output format.
type chunkSink interface {
	write(cs []chunker.Chunk, sha string) error
	close() error // flushes; the underlying file is the caller's
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
		return usagef("--strategy must be structural or fixed, not %q", c.String("strategy"))
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
	// One chunker per worker, made before anything is written.
	chunkers := make([]chunker.Chunker, workers)
	for i := range chunkers {
		if chunkers[i], err = chunker.New(strategy, copts); err != nil {
			return usagef("chunk: %v", err)
		}
		defer chunkers[i].Close()
	}
	wopts := walkOptions(c)
	verbose := c.Bool("verbose")
	stderr := c.App.ErrWriter

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
	var sink chunkSink
	switch format {
	case "text":
		sink = textSink{bw}
	case "jsonl":
		enc := json.NewEncoder(bw)
		enc.SetEscapeHTML(false)
		sink = jsonlSink{enc}
	case "parquet":
		sink = &parquetSink{w: parquet.NewGenericWriter[chunkRow](bw, parquet.Compression(&parquet.Zstd),
			parquet.MaxRowsPerRowGroup(parquetRowsPerGroup), parquet.CreatedBy("repoctx", "", ""))}
	}

	ctx, cancel := context.WithCancel(c.Context)
	defer cancel()
	jobs := make(chan chunkJob)
	results := make(chan chunkResult, workers)
	slots := make(chan struct{}, 2*workers) // one per file in flight, given back once written
	args := c.Args().Slice()
	// Written by the producer, read after producerDone.
	var walked snapshot.WalkStats
	var produceErr error
	folders := 0
	producerDone := make(chan struct{})
	go func() {
		defer close(producerDone)
		defer close(jobs)
		seq := 0
		send := func(j chunkJob) error {
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
		for _, arg := range args {
			fi, err := os.Stat(arg)
			if err != nil || !fi.IsDir() {
				j := chunkJob{path: filepath.ToSlash(arg), explicit: true, err: err}
				if err == nil {
					j.data, j.err = readNamed(arg, maxFile)
				}
				if send(j) != nil {
					return
				}
				continue
			}
			folders++
			prefix := ""
			if len(args) > 1 {
				prefix = filepath.ToSlash(filepath.Clean(arg))
			}
			opts := wopts
			if verbose {
				opts.OnSkip = func(p string, r snapshot.SkipReason) {
					q := path.Join(prefix, p)
					if strings.HasSuffix(p, "/") {
						q += "/" // a folder
					}
					fmt.Fprintf(stderr, "skip %s: %s\n", q, r)
				}
			}
			st, err := snapshot.Walk(ctx, arg, opts, func(f snapshot.File) error {
				return send(chunkJob{path: path.Join(prefix, f.Path), data: f.Data})
			})
			walked.Add(st)
			if err != nil {
				if ctx.Err() == nil {
					produceErr = walkError(err)
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
				results <- chunkOne(ch, j, int(min(maxFile, int64(^uint(0)>>1))), c.Bool("stats"))
			}
		}()
	}
	go func() { wg.Wait(); close(results) }()

	// Progress over folders (files named alone are quick): a spinner on a terminal,
	// else a line per 30 s.
	var prog *progress
	if !verbose && slices.ContainsFunc(args, func(a string) bool { fi, err := os.Stat(a); return err == nil && fi.IsDir() }) {
		prog = newProgress(stderr, "chunking", "files", -1)
	}

	start := time.Now()
	stats := map[string]*langStats{}
	var writeErr error
	failed, named := 0, 0
	decodeSkips := snapshot.WalkStats{Skipped: map[snapshot.SkipReason]int{}}
	pending := map[int]chunkResult{}
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
				named++
			}
			switch {
			case r.err != nil:
				failed++
				fmt.Fprintf(stderr, "repoctx: %s: %v\n", r.path, r.err)
			case r.skip != snapshot.SkipNone && r.explicit:
				failed++
				fmt.Fprintf(stderr, "repoctx: skip %s: %s\n", r.path, r.skip)
			case r.skip != snapshot.SkipNone:
				decodeSkips.Skipped[r.skip]++
				decodeSkips.Files--
				decodeSkips.Bytes -= int64(r.raw)
				if verbose {
					fmt.Fprintf(stderr, "skip %s: %s\n", r.path, r.skip)
				}
			default:
				if stats[r.lang] == nil {
					stats[r.lang] = &langStats{}
				}
				stats[r.lang].add(r)
				if err := sink.write(r.chunks, r.sha); err != nil {
					writeErr = err
					cancel()
				}
			}
			if prog != nil {
				prog.add(1)
			}
		}
	}
	<-producerDone
	wall := time.Since(start)
	if prog != nil {
		prog.finish()
	}
	if writeErr == nil {
		writeErr = sink.close()
	}
	if writeErr == nil {
		writeErr = bw.Flush()
	}
	if writeErr != nil {
		return fmt.Errorf("chunk: write %s: %w", cmp.Or(out, "stdout"), writeErr)
	}
	if produceErr != nil {
		return produceErr
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
	walked.Add(decodeSkips)
	total := sumStats(stats)
	if folders > 0 || walked.TotalSkipped() > 0 {
		fmt.Fprintf(stderr, "chunked %d files (%.1f MB) into %d chunks in %.2fs; skipped %d: %s\n",
			total.files, float64(total.bytes)/1e6, total.chunks, wall.Seconds(), walked.TotalSkipped(), walked.SkipSummary())
	}
	if c.Bool("stats") {
		printChunkStats(stderr, stats, total, wall, workers, verbose)
	}
	if failed > 0 {
		return fmt.Errorf("chunk: %d of %d named files could not be chunked", failed, named)
	}
	return nil
}

// readNamed reads a file named on the command line, at most max+1 bytes (one more
// than the limit, so that chunker.Decode refuses it as too large without the whole
// file being read). A FIFO, a device or a folder is refused before it is opened
// (inputfile.Open), standard input (/dev/stdin) is not.
func readNamed(name string, max int64) ([]byte, error) {
	f, err := inputfile.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, max+1))
}

// parquetRowsPerGroup bounds a Parquet row group, which the writer holds in memory
// until it is full: 20,000 chunks of the default size are some 20-40 MB of text.
const parquetRowsPerGroup = 20000

// chunkOne decodes and chunks one file. maxBytes is the size limit in bytes. With
// diagnose, a structural chunker also counts the file's fallback windows cut inside
// string literals or comments (chunker.Structural.TokenWindows; not timed in dur).
func chunkOne(ch chunker.Chunker, j chunkJob, maxBytes int, diagnose bool) chunkResult {
	r := chunkResult{seq: j.seq, path: j.path, explicit: j.explicit, err: j.err, raw: len(j.data)}
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

// langStats counts the files of one language that `chunk` wrote.
type langStats struct {
	files, chunks, fallback int
	tokenWindows            int           // fallback chunks cut inside string literals or comments
	bytes                   int64         // raw bytes
	dur                     time.Duration // decoding and chunking, summed over workers
	parseErrors             []string      // files with a chunk flagged parse_error
	limited                 []string      // "limit: path" of the files windowed at a limit
}

func (s *langStats) add(r chunkResult) {
	s.files++
	s.chunks += len(r.chunks)
	s.bytes += int64(r.raw)
	s.dur += r.dur
	s.tokenWindows += r.tokenWindows
	for _, k := range r.chunks {
		if k.Fallback {
			s.fallback++
		}
	}
	if slices.ContainsFunc(r.chunks, func(k chunker.Chunk) bool { return k.ParseError }) {
		s.parseErrors = append(s.parseErrors, r.path)
	}
	if l := chunker.FileLimit(r.chunks); l != chunker.LimitNone {
		s.limited = append(s.limited, string(l)+": "+r.path)
	}
}

func sumStats(stats map[string]*langStats) langStats {
	var t langStats
	for _, s := range stats {
		t.files += s.files
		t.chunks += s.chunks
		t.fallback += s.fallback
		t.tokenWindows += s.tokenWindows
		t.bytes += s.bytes
		t.dur += s.dur
		t.parseErrors = append(t.parseErrors, s.parseErrors...)
		t.limited = append(t.limited, s.limited...)
	}
	return t
}

// printChunkStats writes the --stats table: per language, files, chunks, files
// with parse errors, the share of chunks that are fallback windows and, in
// parentheses, the share of chunks that are fallback windows cut only inside string
// literals or comments (a diagnostic: they stay fallback; structural strategy), raw MB and
// throughput (raw MB per second of one worker's decoding and chunking time); the
// total line's MB/s is over wall time with all workers. A line after the table counts
// the files windowed at a limit (chunker.Limit) by limit.
func printChunkStats(w io.Writer, stats map[string]*langStats, total langStats, wall time.Duration, workers int, verbose bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	langs := slices.Sorted(func(yield func(string) bool) {
		for l := range stats {
			if !yield(l) {
				return
			}
		}
	})
	names := map[string]string{}
	width := len("language")
	for _, l := range langs {
		names[l] = cmp.Or(l, "(other)")
		width = max(width, len(names[l]))
	}
	totalName := fmt.Sprintf("total (wall, %d workers)", workers)
	width = max(width, len(totalName))
	fmt.Fprintf(tw, "%-*s\tfiles\tchunks\tparse-error files\tfallback (in strings/comments)\tMB\tMB/s\t\n", width, "language")
	row := func(name string, s langStats, secs float64) {
		fmt.Fprintf(tw, "%-*s\t%d\t%d\t%d\t%.1f%% (%.1f%%)\t%.2f\t%.2f\t\n", width, name, s.files, s.chunks, len(s.parseErrors),
			100*float64(s.fallback)/float64(max(1, s.chunks)), 100*float64(s.tokenWindows)/float64(max(1, s.chunks)),
			float64(s.bytes)/1e6, float64(s.bytes)/1e6/max(secs, 1e-9))
	}
	for _, l := range langs {
		row(names[l], *stats[l], stats[l].dur.Seconds())
	}
	row(totalName, total, wall.Seconds())
	tw.Flush()
	sort.Strings(total.limited)
	if len(total.limited) > 0 {
		by := map[string]int{}
		for _, l := range total.limited {
			by[l[:strings.IndexByte(l, ':')]]++
		}
		var parts []string
		for _, l := range slices.Sorted(maps.Keys(by)) {
			parts = append(parts, fmt.Sprintf("%s %d", l, by[l]))
		}
		fmt.Fprintf(w, "windowed at a limit: %d files (%s)\n", len(total.limited), strings.Join(parts, ", "))
	}
	if verbose {
		for _, l := range total.limited {
			fmt.Fprintf(w, "limit %s\n", l)
		}
		sort.Strings(total.parseErrors)
		for _, p := range total.parseErrors {
			fmt.Fprintf(w, "parse errors: %s\n", p)
		}
	}
}

// textSink writes the human-readable listing: one line per chunk, "path:start-end
// kind name [fallback] [parse-error] [limit=L]", and "  in: header > ..." when it has one.
type textSink struct{ w io.Writer }

func (t textSink) write(cs []chunker.Chunk, _ string) error {
	for _, k := range cs {
		flags := ""
		if k.Fallback {
			flags += " fallback"
		}
		if k.ParseError {
			flags += " parse-error"
		}
		if k.Limit != chunker.LimitNone {
			flags += " limit=" + string(k.Limit)
		}
		if _, err := fmt.Fprintf(t.w, "%s:%d-%d %s%s%s\n", k.Path, k.StartLine, k.EndLine, k.Kind, prefixSpace(strings.Join(k.DefNames(), ", ")), flags); err != nil {
			return err
		}
		if len(k.Header) > 0 {
			if _, err := fmt.Fprintf(t.w, "  in: %s\n", strings.Join(k.Header, " > ")); err != nil {
				return err
			}
		}
	}
	return nil
}

func (textSink) close() error { return nil }

// jsonlSink writes one chunkRow per line.
type jsonlSink struct{ enc *json.Encoder }

func (j jsonlSink) write(cs []chunker.Chunk, sha string) error {
	for _, k := range cs {
		if err := j.enc.Encode(newChunkRow(k, sha)); err != nil {
			return err
		}
	}
	return nil
}

func (jsonlSink) close() error { return nil }

// parquetSink writes chunkRows to a Parquet file.
type parquetSink struct {
	w    *parquet.GenericWriter[chunkRow]
	rows []chunkRow
}

func (p *parquetSink) write(cs []chunker.Chunk, sha string) error {
	p.rows = p.rows[:0]
	for _, k := range cs {
		p.rows = append(p.rows, newChunkRow(k, sha))
	}
	_, err := p.w.Write(p.rows)
	return err
}

func (p *parquetSink) close() error { return p.w.Close() }

// isTerminal reports whether w is a terminal (progress is shown only there).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

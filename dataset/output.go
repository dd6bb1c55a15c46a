package dataset

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"unicode/utf8"

	"github.com/repoctx/repoctx/internal/atomicfile"
)

// Output writes a prediction file: one JSON line per datapoint, in input
// order, replaced atomically at the end.
//
// While the run goes on it keeps a journal, OUT.partial next to OUT: a header
// line {"n": N} and then, for each finished datapoint, the line
// {"i": index, "line": "<the exact output line as a JSON string>"}, appended
// with one write per datapoint (no fsync per line). Finish writes all lines in
// index order to a temporary file in OUT's folder, fsyncs it, renames it to
// OUT and removes the journal. An interrupted run leaves the journal, which
// CreateOutput with resume=true reads back, so that the final file is
// byte-identical whether or not the run was interrupted.
//
// With OUT "-" lines go to standard output at Finish: no journal, no resume.
//
// All lines are also kept in memory until Finish. Its methods are safe for
// concurrent use by several goroutines. Two processes must not write the
// same OUT at once.
type Output struct {
	mu          sync.Mutex
	path        string // "-" for standard output
	journalPath string
	n           int
	lines       [][]byte
	count       int
	config      string    // the options the lines were made with (see CreateOutputConfig)
	journal     *os.File  // nil for standard output
	stdout      io.Writer // for "-"
	closed      bool      // after Finish or Abort
}

// journalSuffix is appended to OUT to name its journal.
const journalSuffix = ".partial"

type journalRecord struct {
	N      *int    `json:"n,omitempty"`
	Config string  `json:"config,omitempty"`
	I      *int    `json:"i,omitempty"`
	Line   *string `json:"line,omitempty"`
}

// CreateOutput prepares to write n lines (one per datapoint) to path, or to
// standard output when path is "-".
//
// Without resume an existing journal path+".partial" is discarded. With
// resume it is read first: every record that parses, has an index in [0,n),
// holds a valid one-line JSON value in UTF-8, and is the first for its index is
// kept (Done reports those indexes); a truncated or corrupt line, such as the
// last one after a crash, is ignored and that datapoint must be redone. The
// journal is then rewritten with the kept records only. Resume is ignored for
// standard output.
//
// It returns an error naming the journal when it cannot be read, rewritten or
// created (for example when path's folder does not exist), or when the journal
// was written for another number of datapoints than n.
func CreateOutput(path string, n int, resume bool) (*Output, error) {
	return createOutput(path, n, resume, "", os.Stdout)
}

// CreateOutputConfig is CreateOutput for lines that depend on options: config
// describes them (any string; equal strings mean equal options) and is kept in the
// journal's header, and a resumed journal written with another config is refused
// (an error saying so), so that one output never mixes lines made two ways. A
// journal without a config (older versions) is accepted.
func CreateOutputConfig(path string, n int, resume bool, config string) (*Output, error) {
	return createOutput(path, n, resume, config, os.Stdout)
}

func createOutput(path string, n int, resume bool, config string, stdout io.Writer) (*Output, error) {
	if n < 0 {
		return nil, fmt.Errorf("dataset: output %s: negative number of lines %d", path, n)
	}
	o := &Output{path: path, n: n, lines: make([][]byte, n), config: config}
	if path == "-" {
		o.stdout = stdout
		return o, nil
	}
	o.journalPath = path + journalSuffix
	if resume {
		if err := o.readJournal(); err != nil {
			return nil, err
		}
	}
	if err := o.writeJournal(); err != nil {
		return nil, err
	}
	return o, nil
}

// readJournal loads the records of an existing journal into o.lines.
func (o *Output) readJournal() error {
	f, err := os.Open(o.journalPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("dataset: resume %s: %w", o.path, err)
	}
	defer f.Close()
	lr := newLineReader(f)
	for {
		b, tooLong, err := lr.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("dataset: resume: read %s near line %d: %w", o.journalPath, lr.line, err)
		}
		if tooLong {
			continue
		}
		var rec journalRecord
		if json.Unmarshal(b, &rec) != nil {
			continue // truncated or corrupt: redo that datapoint
		}
		if rec.N != nil && rec.I == nil {
			if *rec.N != o.n {
				return fmt.Errorf("dataset: resume: journal %s was written for %d datapoints, not %d: remove it or run without resume", o.journalPath, *rec.N, o.n)
			}
			if rec.Config != "" && rec.Config != o.config {
				return fmt.Errorf("dataset: resume: journal %s was written with other options (%s), not (%s): use the same options, or run without resume", o.journalPath, rec.Config, o.config)
			}
			continue
		}
		if rec.I == nil || rec.Line == nil {
			continue
		}
		i, line := *rec.I, []byte(*rec.Line)
		if i < 0 || i >= o.n || o.lines[i] != nil || checkLine(line) != nil {
			continue
		}
		o.lines[i] = line
		o.count++
	}
}

// writeJournal writes a fresh journal holding the lines already known, via a
// temporary file and a rename, and leaves it open for appending.
func (o *Output) writeJournal() error {
	tmp, err := atomicfile.Create(o.journalPath, atomicfile.Options{})
	if err != nil {
		return fmt.Errorf("dataset: create journal %s: %w", o.journalPath, err)
	}
	fail := func(err error) error {
		tmp.Abort()
		return fmt.Errorf("dataset: write journal %s: %w", o.journalPath, err)
	}
	w := bufio.NewWriter(tmp)
	n := o.n
	if err := writeRecord(w, journalRecord{N: &n, Config: o.config}); err != nil {
		return fail(err)
	}
	for i, line := range o.lines {
		if line != nil {
			s := string(line)
			if err := writeRecord(w, journalRecord{I: &i, Line: &s}); err != nil {
				return fail(err)
			}
		}
	}
	if err := w.Flush(); err != nil {
		return fail(err)
	}
	if err := tmp.Sync(); err != nil {
		return fail(err)
	}
	// Rename into place but keep the file open for appending.
	if err := os.Rename(tmp.Name(), o.journalPath); err != nil {
		return fail(err)
	}
	o.journal = tmp.File // the same open file, now under the journal's name
	return nil
}

func writeRecord(w io.Writer, rec journalRecord) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// checkLine accepts a non-empty, single-line JSON value in valid UTF-8 (which
// a journal round-trips byte for byte).
func checkLine(line []byte) error {
	switch {
	case len(line) == 0:
		return errors.New("empty line")
	case bytes.ContainsAny(line, "\n\r"):
		return errors.New("line holds a line break")
	case !utf8.Valid(line):
		return errors.New("line is not valid UTF-8")
	case !json.Valid(line):
		return errors.New("line is not valid JSON")
	}
	return nil
}

// Done reports whether index i already has a line, from this run or from the
// journal of an interrupted one. It is false for an index outside [0,n).
func (o *Output) Done(i int) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return i >= 0 && i < o.n && o.lines[i] != nil
}

// Put records the output line of datapoint i (0-based, in input order) and
// appends it to the journal. line is one JSON value without a trailing
// newline, such as the result of [PredictionLine]; it is copied. Put returns an
// error when i is outside [0,n) or already has a line, when line is empty,
// holds a line break, is not valid UTF-8 or not valid JSON, after Finish or
// Abort, or when the journal cannot be written.
func (o *Output) Put(i int, line []byte) error {
	if err := checkLine(line); err != nil {
		return fmt.Errorf("dataset: output %s: line %d: %w", o.path, i, err)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case o.closed:
		return fmt.Errorf("dataset: output %s: put line %d after finish or abort", o.path, i)
	case i < 0 || i >= o.n:
		return fmt.Errorf("dataset: output %s: index %d out of range [0,%d)", o.path, i, o.n)
	case o.lines[i] != nil:
		return fmt.Errorf("dataset: output %s: index %d already has a line", o.path, i)
	}
	line = bytes.Clone(line)
	if o.journal != nil {
		s := string(line)
		if err := writeRecord(o.journal, journalRecord{I: &i, Line: &s}); err != nil {
			return fmt.Errorf("dataset: output %s: write journal %s: %w", o.path, o.journalPath, err)
		}
	}
	o.lines[i] = line
	o.count++
	return nil
}

// Missing returns how many indexes in [0,n) have no line yet.
func (o *Output) Missing() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.n - o.count
}

// Finish writes all n lines, each followed by "\n", in index order: to a
// temporary file in OUT's folder that is fsynced and renamed to OUT, after
// which the journal is removed; or to standard output for "-". It returns an
// error, keeping the journal and leaving the Output open, when some index in
// [0,n) has no line; it also returns an error when writing, syncing or
// renaming fails, or after Finish or Abort.
func (o *Output) Finish() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return fmt.Errorf("dataset: output %s: finish after finish or abort", o.path)
	}
	if o.count < o.n {
		first := 0
		for first < o.n && o.lines[first] != nil {
			first++
		}
		return fmt.Errorf("dataset: output %s: %d of %d datapoints have no line (first missing: index %d)", o.path, o.n-o.count, o.n, first)
	}
	if o.stdout != nil {
		w := bufio.NewWriter(o.stdout)
		for _, line := range o.lines {
			w.Write(line)
			w.WriteByte('\n')
		}
		if err := w.Flush(); err != nil {
			return fmt.Errorf("dataset: output to standard output: %w", err)
		}
		o.closed = true
		return nil
	}
	if err := o.writeFinal(); err != nil {
		return err
	}
	o.closed = true
	jerr := o.journal.Close()
	if err := os.Remove(o.journalPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("dataset: output %s: remove journal: %w", o.path, err)
	}
	if jerr != nil {
		return fmt.Errorf("dataset: output %s: close journal: %w", o.path, jerr)
	}
	return nil
}

func (o *Output) writeFinal() error {
	err := atomicfile.Write(o.path, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<20)
		for _, line := range o.lines {
			bw.Write(line)
			bw.WriteByte('\n')
		}
		return bw.Flush()
	}, atomicfile.Options{Sync: true})
	if err != nil {
		return fmt.Errorf("dataset: output %s: %w", o.path, err)
	}
	return nil
}

// Abort stops without writing OUT: it syncs and closes the journal and keeps
// it, so that a later CreateOutput with resume=true continues from it. It
// returns an error when syncing or closing the journal fails; after Finish or
// Abort it does nothing.
func (o *Output) Abort() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return nil
	}
	o.closed = true
	if o.journal == nil {
		return nil
	}
	serr := o.journal.Sync()
	if err := o.journal.Close(); err != nil {
		return fmt.Errorf("dataset: output %s: close journal: %w", o.path, err)
	}
	if serr != nil {
		return fmt.Errorf("dataset: output %s: sync journal: %w", o.path, serr)
	}
	return nil
}

// PredictionLine returns the prediction line {"context":ctx} followed by
// "prefix" and "suffix" keys only when those pointers are non-nil, in that
// key order, compact, without HTML escaping and without a trailing newline.
// Invalid UTF-8 in the strings becomes U+FFFD.
func PredictionLine(ctx string, prefix, suffix *string) []byte {
	var b bytes.Buffer
	b.Grow(len(ctx) + 32)
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	put := func(key, v string) {
		b.WriteString(key)
		enc.Encode(v) // a string always encodes; Encode adds "\n"
		b.Truncate(b.Len() - 1)
	}
	put(`{"context":`, ctx)
	if prefix != nil {
		put(`,"prefix":`, *prefix)
	}
	if suffix != nil {
		put(`,"suffix":`, *suffix)
	}
	b.WriteByte('}')
	return b.Bytes()
}

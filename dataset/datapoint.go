package dataset

import (
	"iter"

	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/repoctx/repoctx/batch"
	"github.com/repoctx/repoctx/internal/inputfile"
	"github.com/repoctx/repoctx/internal/pathsafe"
)

// Datapoint is one completion task, one line of a {lang}-{stage}.jsonl file.
//
// Line is the 1-based line of the JSONL file it came from (blank lines count).
// For a datapoint that [ReadDatapoints] accepted, Repo is "owner/name" with
// both parts made of letters, digits, '.', '_' and '-', Revision is made of
// the same characters, and Path is a clean, slash-separated path relative to
// the repository root that cannot leave it. ID may be empty: the competition's
// own starter kit has no "id" key. Modified is kept as read and is not
// validated; look files up through a [Snapshot], which only serves its own
// listed paths.
//
// It is the batch engine's datapoint type.
type Datapoint = batch.Datapoint

// DatapointError reports one bad line of a datapoint file: File and Line
// (1-based) say where, ID is the datapoint's id when it could be read, and Err
// says what is wrong. Its message is "dataset: file:line: datapoint ID: msg"
// ("dataset: file:line: msg" without an id).
type DatapointError struct {
	File string
	Line int
	ID   string
	Err  error
}

// Error returns "dataset: file:line: datapoint ID: msg".
func (e *DatapointError) Error() string {
	if e.ID == "" {
		return fmt.Sprintf("dataset: %s:%d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("dataset: %s:%d: datapoint %s: %v", e.File, e.Line, e.ID, e.Err)
}

// Unwrap returns Err.
func (e *DatapointError) Unwrap() error { return e.Err }

// maxLineBytes bounds one JSONL line in memory (bytes). Longer lines are
// reported as bad and skipped without being kept.
var maxLineBytes = 256 << 20

// ReadDatapointsFile opens path and calls [ReadDatapoints] with it; the file
// name in errors is path. Its last error reports a failure to open or read
// the file.
func ReadDatapointsFile(path string) ([]Datapoint, []error, error) {
	f, err := inputfile.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("dataset: open datapoints: %w", err)
	}
	defer f.Close()
	return ReadDatapoints(f, path)
}

// ReadDatapoints reads a JSONL datapoint file from r; file names it in errors.
// Lines may be of any length up to 256 MiB (there is no bufio.Scanner token
// limit); a longer line is reported as bad. Both "\n" and "\r\n" end a line and
// a leading UTF-8 byte order mark is ignored.
//
// It returns one Datapoint per non-blank line, in input order, and a parallel
// slice of errors that is nil where the line is fine, so that callers can
// still write one output line per input line. A bad line yields a Datapoint
// with only Line set (and ID when it could be read) and a *[DatapointError].
// A line is bad when it is not one JSON object, when repo, revision or path is
// missing or empty, when id is present but empty or neither a string nor a
// number, when repo is not "owner/name", when revision is not a plain name,
// when path is absolute, has a drive letter, a NUL byte or a ".." element
// (with "/" or "\" as separator), or when both the prefix and suffix keys are
// absent. A present-but-empty prefix and suffix is accepted: real dev data has
// one-line files whose whole text is the middle.
//
// The last result reports an I/O failure only; the datapoints read before it
// are returned with it. [Datapoints] reads the same lazily.
func ReadDatapoints(r io.Reader, file string) ([]Datapoint, []error, error) {
	var dps []Datapoint
	var errs []error
	for d, err := range Datapoints(r, file) {
		var de *DatapointError
		if err != nil && !errors.As(err, &de) {
			return dps, errs, err
		}
		dps = append(dps, d)
		errs = append(errs, err)
	}
	return dps, errs, nil
}

// Datapoints reads a JSONL datapoint file from r lazily, one line at a time (memory
// holds one line): it yields, for every non-blank line in input order, the datapoint
// and nil, or for a bad line (see [ReadDatapoints]) a Datapoint with only Line (and
// ID when it could be read) set and a *[DatapointError]. An I/O failure ends the
// sequence with a zero Datapoint and an error that is not a *DatapointError.
func Datapoints(r io.Reader, file string) iter.Seq2[Datapoint, error] {
	return func(yield func(Datapoint, error) bool) {
		lr := newLineReader(r)
		for {
			line, tooLong, err := lr.next()
			if err == io.EOF {
				return
			}
			if err != nil {
				yield(Datapoint{}, fmt.Errorf("dataset: read %s near line %d: %w", file, lr.line, err))
				return
			}
			var d Datapoint
			switch {
			case tooLong:
				d, err = Datapoint{Line: lr.line}, &DatapointError{File: file, Line: lr.line,
					Err: fmt.Errorf("line longer than %d bytes", maxLineBytes)}
			case len(bytes.TrimSpace(line)) == 0:
				continue
			default:
				d, err = parseDatapoint(line)
				d.Line = lr.line
				if err != nil {
					d, err = Datapoint{Line: lr.line, ID: d.ID}, &DatapointError{File: file, Line: lr.line, ID: d.ID, Err: err}
				}
			}
			if !yield(d, err) {
				return
			}
		}
	}
}

// DatapointsFile opens path and reads it lazily with [Datapoints]; the file is
// closed when the sequence ends. A file that cannot be opened gives one error.
func DatapointsFile(path string) iter.Seq2[Datapoint, error] {
	return func(yield func(Datapoint, error) bool) {
		f, err := inputfile.Open(path)
		if err != nil {
			yield(Datapoint{}, fmt.Errorf("dataset: open datapoints: %w", err))
			return
		}
		defer f.Close()
		for d, err := range Datapoints(f, path) {
			if !yield(d, err) {
				return
			}
		}
	}
}

type rawDatapoint struct {
	ID       json.RawMessage `json:"id"`
	Repo     *string         `json:"repo"`
	Revision *string         `json:"revision"`
	Path     *string         `json:"path"`
	Modified []string        `json:"modified"`
	Prefix   *string         `json:"prefix"`
	Suffix   *string         `json:"suffix"`
}

// parseDatapoint decodes and validates one line. On error the returned
// Datapoint still carries the ID when it could be read.
func parseDatapoint(line []byte) (Datapoint, error) {
	var raw rawDatapoint
	var d Datapoint
	if err := json.Unmarshal(line, &raw); err != nil {
		// A field of the wrong type still leaves a readable id.
		var idOnly struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(line, &idOnly) == nil {
			decodeID(idOnly.ID, &d.ID)
		}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return d, fmt.Errorf("malformed JSON at byte %d: %w", se.Offset, err)
		}
		return d, fmt.Errorf("malformed JSON: %w", err)
	}
	idPresent, err := decodeID(raw.ID, &d.ID)
	if err != nil {
		return d, err
	}
	if idPresent && d.ID == "" {
		return d, errors.New("empty id")
	}
	for _, f := range []struct {
		name string
		v    *string
	}{{"repo", raw.Repo}, {"revision", raw.Revision}, {"path", raw.Path}} {
		if f.v == nil || *f.v == "" {
			return d, fmt.Errorf("missing %s", f.name)
		}
	}
	if raw.Prefix == nil && raw.Suffix == nil {
		return d, errors.New("missing both prefix and suffix")
	}
	if !pathsafe.ValidRepo(*raw.Repo) {
		return d, fmt.Errorf("repo %q is not of the form owner/name (letters, digits, '.', '_', '-')", *raw.Repo)
	}
	if !pathsafe.SafeComponent(*raw.Revision) {
		return d, fmt.Errorf("revision %q is not a plain name (letters, digits, '.', '_', '-')", *raw.Revision)
	}
	p, reason := pathsafe.Clean(*raw.Path)
	if reason != "" {
		return d, fmt.Errorf("path %q: %s", *raw.Path, reason)
	}
	d.Repo = *raw.Repo
	d.Revision = *raw.Revision
	d.Path = p
	d.Modified = raw.Modified
	if raw.Prefix != nil {
		d.Prefix = *raw.Prefix
	}
	if raw.Suffix != nil {
		d.Suffix = *raw.Suffix
	}
	return d, nil
}

// decodeID reads an id given as a JSON string or number. It reports whether
// the key was present (and not null).
func decodeID(raw json.RawMessage, id *string) (bool, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return false, nil
	}
	switch raw[0] {
	case '"':
		if err := json.Unmarshal(raw, id); err != nil {
			return true, fmt.Errorf("malformed JSON: id: %w", err)
		}
		return true, nil
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		*id = string(raw)
		return true, nil
	}
	return true, errors.New("id is neither a string nor a number")
}

// lineReader reads lines of any length up to maxLineBytes and counts them.
type lineReader struct {
	br   *bufio.Reader
	line int // 1-based number of the line last returned
	buf  []byte
	eof  bool
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the next line without its "\n" or "\r\n". tooLong reports a
// line over maxLineBytes, whose bytes were discarded. At the end of input it
// returns io.EOF; other errors are I/O failures.
func (lr *lineReader) next() (line []byte, tooLong bool, err error) {
	if lr.eof {
		return nil, false, io.EOF
	}
	lr.buf = lr.buf[:0]
	for {
		chunk, err := lr.br.ReadSlice('\n')
		if !tooLong {
			if len(lr.buf)+len(chunk) > maxLineBytes+2 {
				tooLong = true
				lr.buf = lr.buf[:0]
			} else {
				lr.buf = append(lr.buf, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF {
			lr.eof = true
			if len(lr.buf) == 0 && !tooLong && len(chunk) == 0 {
				return nil, false, io.EOF
			}
		} else if err != nil {
			return nil, false, err
		}
		break
	}
	lr.line++
	if lr.line == 1 {
		lr.buf = bytes.TrimPrefix(lr.buf, []byte("\xef\xbb\xbf"))
	}
	b := bytes.TrimSuffix(lr.buf, []byte("\n"))
	b = bytes.TrimSuffix(b, []byte("\r"))
	if tooLong || len(b) > maxLineBytes {
		return nil, true, nil
	}
	return b, false, nil
}

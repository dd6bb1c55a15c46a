package dataset

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"math"
	"os"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/internal/atomicfile"
)

// Output writes a prediction file: one JSON line per datapoint, in input
// order, replaced atomically at the end.
//
// While the run goes on it keeps a journal, OUT.partial next to OUT: a header
// line {"n": N} (with CreateOutputConfig {"n": N, "format": 2, "options": {...}})
// and then, for each finished datapoint, the line
// {"i":index,"sum":"<CRC-32C of the line, 8 hex digits>","value":<the exact output line>},
// appended with one write per datapoint (no fsync per line). The line is a JSON value
// itself, so the record holds it as it is, not escaped as a string: Put and Finish
// copy it without encoding or decoding JSON. (Journals of earlier versions held it as
// a string, "line"; resume reads both.) Finish writes all lines in
// index order, read back from the journal, to a temporary file in OUT's folder,
// fsyncs it, renames it to OUT and removes the journal. An interrupted run leaves
// the journal, which CreateOutput with resume=true reads back, so that the final
// file is byte-identical whether or not the run was interrupted.
//
// With OUT "-" lines go to standard output at Finish, through a journal in the
// temporary folder that is removed at the end: no resume.
//
// Memory does not grow with the lines: an Output keeps only where each line's
// record is in the journal (12 bytes per datapoint). Its methods are safe for
// concurrent use by several goroutines. Two processes must not write the same OUT
// at once.
type Output struct {
	mu          sync.Mutex
	path        string // "-" for standard output
	journalPath string
	n           int
	off         []int64  // per index: the byte offset of its record in the journal
	size        []uint32 // per index: the record's length in bytes with its "\n"; 0: no line yet
	end         int64    // the journal's length in bytes
	count       int
	config      json.RawMessage // the options the lines were made with, compact (see CreateOutputConfig)
	journal     *os.File        // the open journal, read back by Finish
	stdout      io.Writer       // for "-"
	closed      bool            // after Finish or Abort
	rec         []byte          // the record appendLine writes, reused (under mu)
}

// journalSuffix is appended to OUT to name its journal.
const journalSuffix = ".partial"

type journalRecord struct {
	N *int `json:"n,omitempty"`
	// Format is the header's version (journalFormat); 0 in a journal from before it.
	Format int `json:"format,omitempty"`
	// Options are the header's option record (CreateOutputConfig's config).
	Options json.RawMessage `json:"options,omitempty"`
	// Config is where format-1 journals kept their options, as text: only read, to
	// refuse them.
	Config string  `json:"config,omitempty"`
	I      *int    `json:"i,omitempty"`
	Line   *string `json:"line,omitempty"` // the line as a string: journals of earlier versions
	Sum    string  `json:"sum,omitempty"`  // CRC-32C of the line, 8 hex digits (lineSum)
}

// lineRecord returns the journal record of line i, as appendLine writes it, without its
// "\n"; readLine takes it apart.
func lineRecord(b []byte, i int, line []byte) []byte {
	b = append(b, `{"i":`...)
	b = strconv.AppendInt(b, int64(i), 10)
	b = append(b, `,"sum":"`...)
	b = append(b, lineSum(line)...)
	b = append(b, `","value":`...)
	b = append(b, line...)
	return append(b, '}')
}

// readLine returns the line of record rec (without its "\n") if it is the record
// lineRecord makes of line i and its checksum matches; nil otherwise.
func readLine(rec []byte, i int) []byte {
	var head []byte
	head = append(head, `{"i":`...)
	head = strconv.AppendInt(head, int64(i), 10)
	head = append(head, `,"sum":"`...)
	const sumEnd = `","value":`
	rest, ok := bytes.CutPrefix(rec, head)
	if !ok || len(rest) < 8+len(sumEnd)+1 || string(rest[8:8+len(sumEnd)]) != sumEnd || rest[len(rest)-1] != '}' {
		return nil
	}
	line := rest[8+len(sumEnd) : len(rest)-1]
	if string(rest[:8]) != lineSum(line) {
		return nil
	}
	return line
}

// cutLineRecord returns the index and line of rec if it is a record as lineRecord
// writes it (its checksum matching).
func cutLineRecord(rec []byte) (i int, line []byte, ok bool) {
	rest, ok := bytes.CutPrefix(rec, []byte(`{"i":`))
	if !ok {
		return 0, nil, false
	}
	j := bytes.IndexByte(rest, ',')
	if j < 1 || j > 19 {
		return 0, nil, false
	}
	for _, c := range rest[:j] {
		if c < '0' || c > '9' {
			return 0, nil, false
		}
	}
	i, err := strconv.Atoi(string(rest[:j]))
	if err != nil {
		return 0, nil, false
	}
	if line = readLine(rec, i); line == nil { // (also refuses a non-canonical index: 01)
		return 0, nil, false
	}
	return i, line, true
}

// lineSum is a journal record's checksum of its line: a record whose line does not
// match it (a flipped byte) is redone on resume, never replayed.
func lineSum[T string | []byte](line T) string {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], crc32.Update(0, castagnoli, []byte(line)))
	return hex.EncodeToString(b[:])
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// CreateOutput prepares to write n lines (one per datapoint) to path, or to
// standard output when path is "-".
//
// Without resume an existing journal path+".partial" is discarded. With
// resume it is read first: every record that parses, has an index in [0,n),
// holds a valid one-line JSON value in UTF-8, and is the first for its index is
// kept (Done reports those indexes); a truncated or corrupt line, such as the
// last one after a crash, is ignored and that datapoint must be redone. The
// journal is then rewritten with the kept records only (streamed: the lines are
// not held in memory). Resume is ignored for standard output.
//
// It returns an error naming the journal when it cannot be read, rewritten or
// created (for example when path's folder does not exist; a full or read-only
// disk is a *repoctx.EnvironmentError), or when the journal was written for
// another number of datapoints than n.
func CreateOutput(path string, n int, resume bool) (*Output, error) {
	return createOutput(path, n, resume, nil, os.Stdout)
}

// CreateOutputConfig is CreateOutput for lines that depend on options: config
// describes them as a JSON object (equal objects mean equal options; a member
// "datapoints" names the input file's digest) and is kept in the journal's header,
// and a resumed journal written with another config is refused (an error naming the
// differing members), so that one output never mixes lines made two ways. A journal
// without a config is accepted; one whose header is of an older format (options
// recorded as text) is refused with an error saying to delete it or run without
// resume. config that is not a JSON object is an error.
func CreateOutputConfig(path string, n int, resume bool, config json.RawMessage) (*Output, error) {
	var c bytes.Buffer
	if err := json.Compact(&c, config); err != nil || !bytes.HasPrefix(c.Bytes(), []byte("{")) {
		return nil, fmt.Errorf("dataset: output %s: the option record is not a JSON object", path)
	}
	return createOutput(path, n, resume, c.Bytes(), os.Stdout)
}

func createOutput(path string, n int, resume bool, config json.RawMessage, stdout io.Writer) (*Output, error) {
	if n < 0 {
		return nil, fmt.Errorf("dataset: output %s: negative number of lines %d", path, n)
	}
	o := &Output{path: path, n: n, off: make([]int64, n), size: make([]uint32, n), config: config}
	if path == "-" {
		o.stdout = stdout
		f, err := os.CreateTemp("", "repoctx-stdout-*.partial")
		if err != nil {
			return nil, journalFault("create the journal of standard output in "+os.TempDir(), err)
		}
		os.Remove(f.Name()) // unlinked: gone when closed, whatever happens
		o.journal, o.journalPath = f, f.Name()
		n := o.n
		if err := o.append(f, journalRecord{N: &n}, -1); err != nil {
			f.Close()
			return nil, journalFault("write the journal of standard output", err)
		}
		return o, nil
	}
	o.journalPath = path + journalSuffix
	if err := o.writeJournal(resume); err != nil {
		return nil, err
	}
	return o, nil
}

// journalFault marks err, from writing a journal or an output, as a fault of the
// environment when it is one.
func journalFault(op string, err error) error {
	return repoctx.WriteFault("cannot "+op, fmt.Errorf("dataset: %s: %w", op, err))
}

// append writes rec as one journal line to w at o.end and, for index i >= 0,
// records where it is.
func (o *Output) append(w io.Writer, rec journalRecord, i int) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return o.write(w, append(b, '\n'), i)
}

// appendLine writes the record of line i (see lineRecord) to w at o.end and records
// where it is.
func (o *Output) appendLine(w io.Writer, i int, line []byte) error {
	o.rec = append(lineRecord(o.rec[:0], i, line), '\n')
	err := o.write(w, o.rec, i)
	if cap(o.rec) > maxKeptRecord {
		o.rec = nil // not kept for the rest of the run after one huge line
	}
	return err
}

// maxKeptRecord is the largest record buffer appendLine keeps for the next line.
const maxKeptRecord = 64 << 10

// write writes the journal line b (with its "\n") to w at o.end and, for index i >= 0,
// records where it is.
func (o *Output) write(w io.Writer, b []byte, i int) error {
	if len(b) > math.MaxUint32 {
		return fmt.Errorf("line %d is %d bytes long", i, len(b))
	}
	if _, err := w.Write(b); err != nil {
		return err
	}
	if i >= 0 {
		o.off[i], o.size[i] = o.end, uint32(len(b))
		o.count++
	}
	o.end += int64(len(b))
	return nil
}

// writeJournal writes a fresh journal via a temporary file and a rename: the
// header, and with resume the kept records of the existing journal, copied one at
// a time. It leaves the journal open for appending.
func (o *Output) writeJournal(resume bool) error {
	tmp, err := atomicfile.Create(o.journalPath, atomicfile.Options{})
	if err != nil {
		return journalFault("create journal "+o.journalPath, err)
	}
	fail := func(err error) error {
		tmp.Abort()
		return journalFault("write journal "+o.journalPath, err)
	}
	w := bufio.NewWriter(tmp)
	n := o.n
	head := journalRecord{N: &n}
	if o.config != nil {
		head.Format, head.Options = journalFormat, o.config
	}
	if err := o.append(w, head, -1); err != nil {
		return fail(err)
	}
	if resume {
		if err := o.copyJournal(w); err != nil {
			tmp.Abort()
			return err
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

// copyJournal copies the records of an existing journal worth keeping to w.
func (o *Output) copyJournal(w io.Writer) error {
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
		// A record as lineRecord writes it is taken apart by hand: json.Unmarshal
		// would drop the white space around the line (which json.Valid, and so Put,
		// accepts), and refuse a line nested as deep as encoding/json allows (the
		// record nests it one level more). What else decodes is a header or a record
		// of an earlier version (the line as a string).
		if i, line, ok := cutLineRecord(b); ok {
			if i < o.n && o.size[i] == 0 && checkLine(line) == nil {
				if err := o.appendLine(w, i, line); err != nil {
					return journalFault("write journal "+o.journalPath, err)
				}
			}
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
			if err := o.checkHeader(rec); err != nil {
				return err
			}
			continue
		}
		if rec.I == nil || rec.Line == nil || (rec.Sum != "" && rec.Sum != lineSum(*rec.Line)) {
			continue // a damaged line: redo it
		}
		i, line := *rec.I, []byte(*rec.Line)
		if i < 0 || i >= o.n || o.size[i] != 0 || checkLine(line) != nil {
			continue
		}
		if err := o.appendLine(w, i, line); err != nil {
			return journalFault("write journal "+o.journalPath, err)
		}
	}
}

// checkHeader refuses a journal header written by an older or newer format, or
// with other options than o's (see CreateOutputConfig).
func (o *Output) checkHeader(rec journalRecord) error {
	switch {
	case rec.Config != "" || rec.Format == 1:
		return fmt.Errorf("dataset: resume: journal %s was written by an older version of repoctx, which recorded its options as text: delete it, or run without resume (its datapoints are answered again)", o.journalPath)
	case rec.Format > journalFormat:
		return fmt.Errorf("dataset: resume: journal %s was written by a newer version of repoctx (journal format %d, this one reads %d): delete it, or run without resume", o.journalPath, rec.Format, journalFormat)
	case rec.Options == nil:
		return nil // no options recorded: the lines do not depend on any
	}
	var jc bytes.Buffer
	if json.Compact(&jc, rec.Options) == nil && bytes.Equal(jc.Bytes(), o.config) {
		return nil
	}
	if d := optionDiff(rec.Options, o.config, "datapoints"); d != "" {
		return fmt.Errorf("dataset: resume: journal %s was written with other options: %s; use the same options, or run without resume", o.journalPath, d)
	}
	jd, nd := optionLeaves(rec.Options)["datapoints"], optionLeaves(o.config)["datapoints"]
	return fmt.Errorf("dataset: resume: journal %s was written for another datapoint file (digest %s, not %s: regenerated, reordered or another one): remove it or run without resume", o.journalPath, leafText(jd, jd != ""), leafText(nd, nd != ""))
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
	return i >= 0 && i < o.n && o.size[i] != 0
}

// Put records the output line of datapoint i (0-based, in input order) by
// appending it to the journal. line is one JSON value without a trailing
// newline, such as the result of [PredictionLine]; it is not kept. Put returns an
// error when i is outside [0,n) or already has a line, when line is empty,
// holds a line break, is not valid UTF-8 or not valid JSON, after Finish or
// Abort, or when the journal cannot be written (a full or read-only disk is a
// *repoctx.EnvironmentError).
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
	case o.size[i] != 0:
		return fmt.Errorf("dataset: output %s: index %d already has a line", o.path, i)
	}
	if err := o.appendLine(o.journal, i, line); err != nil {
		return journalFault("write journal "+o.journalPath, err)
	}
	return nil
}

// Missing returns how many indexes in [0,n) have no line yet.
func (o *Output) Missing() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.n - o.count
}

// Finish writes all n lines, each followed by "\n", in index order, read back
// from the journal: to a temporary file in OUT's folder that is fsynced and renamed
// to OUT, after which the journal is removed; or to standard output for "-". It
// returns an error, keeping the journal and leaving the Output open, when some
// index in [0,n) has no line; it also returns an error when reading the journal,
// writing, syncing or renaming fails (the journal is kept; a full or read-only
// disk is a *repoctx.EnvironmentError), or after Finish or Abort.
func (o *Output) Finish() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return fmt.Errorf("dataset: output %s: finish after finish or abort", o.path)
	}
	if o.count < o.n {
		first := 0
		for first < o.n && o.size[first] != 0 {
			first++
		}
		return fmt.Errorf("dataset: output %s: %d of %d datapoints have no line (first missing: index %d)", o.path, o.n-o.count, o.n, first)
	}
	if o.stdout != nil {
		w := bufio.NewWriterSize(o.stdout, 64<<10)
		err := o.writeLines(w)
		if err == nil {
			err = w.Flush()
		}
		if err != nil {
			return fmt.Errorf("dataset: output to standard output: %w", err)
		}
		o.closed = true
		return o.journal.Close()
	}
	err := atomicfile.Write(o.path, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 64<<10)
		if err := o.writeLines(bw); err != nil {
			return err
		}
		return bw.Flush()
	}, atomicfile.Options{Sync: true})
	if err != nil {
		return journalFault("write "+o.path, err)
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

// writeLines writes every line, in index order, from its journal record.
func (o *Output) writeLines(w io.Writer) error {
	var buf []byte
	for i := range o.n {
		if n := int(o.size[i]); cap(buf) < n {
			buf = make([]byte, n)
		}
		buf = buf[:o.size[i]]
		if _, err := o.journal.ReadAt(buf, o.off[i]); err != nil {
			return fmt.Errorf("read journal %s: %w", o.journalPath, err)
		}
		// The record with the line's "\n" after it: the "}" replaced by it.
		line := readLine(buf[:len(buf)-1], i)
		if line == nil || buf[len(buf)-1] != '\n' {
			return fmt.Errorf("journal %s: the record of line %d at byte %d is damaged (was the journal changed while running?)", o.journalPath, i, o.off[i])
		}
		if _, err := w.Write(append(line, '\n')); err != nil {
			return err
		}
	}
	return nil
}

// Abort stops without writing OUT: it syncs and closes the journal and keeps
// it, so that a later CreateOutput with resume=true continues from it (the journal
// of standard output is removed). It returns an error when syncing or closing the
// journal fails; after Finish or Abort it does nothing.
func (o *Output) Abort() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return nil
	}
	o.closed = true
	if o.stdout != nil {
		return o.journal.Close()
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
	n := len(`{"context":""}`) + len(ctx)
	if prefix != nil {
		n += len(`,"prefix":""`) + len(*prefix)
	}
	if suffix != nil {
		n += len(`,"suffix":""`) + len(*suffix)
	}
	b := make([]byte, 0, n+n/64) // room for a few escapes
	b = appendJSONString(append(b, `{"context":`...), ctx)
	if prefix != nil {
		b = appendJSONString(append(b, `,"prefix":`...), *prefix)
	}
	if suffix != nil {
		b = appendJSONString(append(b, `,"suffix":`...), *suffix)
	}
	return append(b, '}')
}

// appendJSONString appends s as a JSON string, escaped byte for byte as
// encoding/json encodes a string with HTML escaping off (json.Encoder.SetEscapeHTML):
// '"' and '\\' escaped, control characters as \b, \f, \n, \r, \t or \u00XX, each byte of
// invalid UTF-8 as \ufffd, U+2028 and U+2029 as \u2028 and \u2029, all else as it is.
// (Written here to encode into one buffer of the line's size; TestAppendJSONString
// holds it to encoding/json.)
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(append(b, s[start:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(append(b, s[start:i]...), '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(append(b, s[start:]...), '"')
}

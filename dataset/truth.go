package dataset

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/repoctx/repoctx/internal/inputfile"
)

// Truth is one line of a dev set's {lang}-{stage}.truth.jsonl: the code
// really written between a datapoint's prefix and suffix.
type Truth struct {
	ID     string `json:"id"`     // datapoint id
	Middle string `json:"middle"` // expected completion
	Commit string `json:"commit"` // commit that made the change
	Kind   string `json:"kind"`   // kind of change, e.g. "insert" or "replace"
}

// ReadTruth reads a truth file into a map from datapoint id to its Truth.
// Blank lines are skipped and other keys ignored. It returns an error naming
// the file and the 1-based line when the file cannot be read, when a line is
// not a JSON object, has no id, or repeats an earlier id.
func ReadTruth(path string) (map[string]Truth, error) {
	f, err := inputfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("dataset: open truth: %w", err)
	}
	defer f.Close()
	return readTruth(f, path)
}

func readTruth(r io.Reader, file string) (map[string]Truth, error) {
	lr := newLineReader(r)
	m := map[string]Truth{}
	for {
		line, tooLong, err := lr.next()
		if err == io.EOF {
			return m, nil
		}
		if err != nil {
			return nil, fmt.Errorf("dataset: read %s near line %d: %w", file, lr.line, err)
		}
		if tooLong {
			return nil, fmt.Errorf("dataset: %s:%d: line longer than %d bytes", file, lr.line, maxLineBytes)
		}
		if isBlank(line) {
			continue
		}
		var t Truth
		if err := json.Unmarshal(line, &t); err != nil {
			return nil, fmt.Errorf("dataset: %s:%d: malformed JSON: %w", file, lr.line, err)
		}
		if t.ID == "" {
			return nil, fmt.Errorf("dataset: %s:%d: missing id", file, lr.line)
		}
		if _, dup := m[t.ID]; dup {
			return nil, fmt.Errorf("dataset: %s:%d: datapoint %s: id repeated", file, lr.line, t.ID)
		}
		m[t.ID] = t
	}
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

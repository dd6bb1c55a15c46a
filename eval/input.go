package eval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/repoctx/repoctx/internal/inputfile"
)

// Prediction is one line of a predictions file: the context and the optional
// prefix and suffix overrides that replace what the model is given.
type Prediction struct {
	Context string  `json:"context"`          // the context, "<|file_sep|>{path}\n{content}" parts
	Prefix  *string `json:"prefix,omitempty"` // replaces the datapoint's prefix when not nil
	Suffix  *string `json:"suffix,omitempty"` // replaces the datapoint's suffix when not nil
}

// ReadPredictions reads a predictions file: one JSON object per line, in
// datapoint order, with a string "context" and optional string "prefix" and
// "suffix" keys (other keys are ignored). Lines end in "\n" or "\r\n"; empty
// lines at the end of the file are ignored. want is the number of datapoints;
// -1 skips the count check.
//
// It returns an error starting with "eval: " and naming the file (and the
// 1-based line where it applies) when the file cannot be read, when a line is
// blank, is not a JSON object, lacks "context" or has a key of the wrong type,
// or when the number of lines differs from want.
func ReadPredictions(path string, want int) ([]Prediction, error) {
	if err := inputfile.Check(path); err != nil { // a FIFO would block, a device never end
		return nil, fmt.Errorf("eval: predictions: %w", err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("eval: predictions: %w", err)
	}
	raw = bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf"))
	lines := bytes.Split(raw, []byte("\n"))
	for len(lines) > 0 && len(bytes.TrimSpace(lines[len(lines)-1])) == 0 {
		lines = lines[:len(lines)-1]
	}
	out := make([]Prediction, 0, len(lines))
	for i, l := range lines {
		l = bytes.TrimSuffix(l, []byte("\r"))
		if len(bytes.TrimSpace(l)) == 0 {
			return nil, fmt.Errorf("eval: %s:%d: blank line (one line per datapoint expected)", path, i+1)
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(l, &obj); err != nil {
			return nil, fmt.Errorf("eval: %s:%d: not a JSON object: %v", path, i+1, err)
		}
		var p Prediction
		ctx, ok := obj["context"]
		if !ok {
			return nil, fmt.Errorf("eval: %s:%d: no \"context\" key", path, i+1)
		}
		if err := json.Unmarshal(ctx, &p.Context); err != nil || bytes.Equal(bytes.TrimSpace(ctx), []byte("null")) {
			return nil, fmt.Errorf("eval: %s:%d: \"context\" is not a string", path, i+1)
		}
		for _, k := range []struct {
			name string
			dst  **string
		}{{"prefix", &p.Prefix}, {"suffix", &p.Suffix}} {
			v, ok := obj[k.name]
			if !ok || bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
				continue
			}
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return nil, fmt.Errorf("eval: %s:%d: %q is not a string", path, i+1, k.name)
			}
			*k.dst = &s
		}
		out = append(out, p)
	}
	if want >= 0 && len(out) != want {
		return nil, fmt.Errorf("eval: %s: %d lines, want %d (one per datapoint, in datapoint order)", path, len(out), want)
	}
	return out, nil
}

// errList joins errors, keeping at most 10 and saying how many more there were.
func errList(errs []error) error {
	if len(errs) > 10 {
		more := fmt.Errorf("eval: ... and %d more", len(errs)-10)
		errs = append(errs[:10:10], more)
	}
	return errors.Join(errs...)
}

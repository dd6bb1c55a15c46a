package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/assemble"
)

// ContextRequest is the body of POST /v1/context: one completion point. Give Prefix
// and Suffix (the text before and after the cursor), or Text (the whole buffer) with
// a cursor: Line and Column, or Offset.
type ContextRequest struct {
	// Workspace names the workspace (its name or its root folder); needed only when
	// several are served and Path is relative.
	Workspace string `json:"workspace,omitempty"`
	// Path is the completion file: relative to the workspace root (slash-separated),
	// or absolute inside a served workspace. It need not exist (a new file).
	Path string `json:"path"`
	// Prefix and Suffix are the buffer's text before and after the cursor (UTF-8).
	Prefix *string `json:"prefix,omitempty"`
	Suffix *string `json:"suffix,omitempty"`
	// Text is the whole buffer (UTF-8), unsaved edits included.
	Text *string `json:"text,omitempty"`
	// Line and Column are the cursor in Text: 1-based, Column in Unicode code points
	// (see [Offset]).
	Line   *int `json:"line,omitempty"`
	Column *int `json:"column,omitempty"`
	// Offset is the cursor in Text in UTF-8 bytes from its start (0-based), instead of
	// Line and Column.
	Offset *int `json:"offset,omitempty"`
	// Modified lists files changed together with the completion file (relative or
	// absolute); their chunks are boosted.
	Modified []string `json:"modified,omitempty"`
	// With names the other workspaces (names or root folders) this request also
	// searches, instead of all of them; it needs a server started with
	// Config.CrossRepo. Empty: all others with CrossRepo, none without.
	With []string `json:"with,omitempty"`
	// Options override the server's assembly options for this request.
	Options RequestOptions `json:"options,omitempty"`
}

// RequestOptions are the assembly options a request overrides, by JSON name: any
// option of assemble.OptionTable (the flags of `repoctx predict`, `query` and
// `serve` of the same names with "_" for "-"; see docs/openapi.yaml and
// assemble.Options for their meaning and units). In JSON each is an integer, a
// number or a boolean, as the option's kind; here its value is a float64 (a
// boolean's 0 or 1, see assemble.OptionSpec). Absent fields keep the server's
// values.
type RequestOptions map[string]float64

// UnmarshalJSON reads a JSON object of options, refusing unknown names and values of
// the wrong JSON type with errors that name the field ("options.top_k must be a JSON
// integer, not a JSON string"). A null field is absent.
func (o *RequestOptions) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		if string(bytes.TrimSpace(b)) == "null" {
			return nil
		}
		return fmt.Errorf("options must be a JSON object, not a JSON %s", rawKind(b))
	}
	out := RequestOptions{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		name, _ := t.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		s := assemble.OptionByJSON(name)
		if s == nil {
			return fmt.Errorf("unknown field %q in options (options: %s)", name, optionNames())
		}
		if string(raw) == "null" {
			delete(out, name)
			continue
		}
		v, ok := 0.0, false
		want := map[assemble.OptionKind]string{assemble.KindInt: "integer", assemble.KindFloat: "number", assemble.KindBool: "boolean"}[s.Kind]
		switch s.Kind {
		case assemble.KindBool:
			var b bool
			if ok = json.Unmarshal(raw, &b) == nil; b {
				v = 1
			}
		case assemble.KindInt:
			var n int
			ok = json.Unmarshal(raw, &n) == nil
			v = float64(n)
		case assemble.KindFloat:
			ok = json.Unmarshal(raw, &v) == nil
		}
		if !ok {
			return fmt.Errorf("options.%s must be a JSON %s, not a JSON %s %s", name, want, rawKind(raw), raw)
		}
		out[name] = v
	}
	*o = out
	return nil
}

// MarshalJSON writes the options as a JSON object in assemble.OptionTable's order,
// each value as its kind (integer, number or boolean); unknown names are an error.
func (o RequestOptions) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	n := 0
	for i := range assemble.OptionTable {
		s := &assemble.OptionTable[i]
		v, ok := o[s.JSON]
		if !ok {
			continue
		}
		if n++; n > 1 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q:%s", s.JSON, s.Format(v))
	}
	if n != len(o) {
		for name := range o {
			if assemble.OptionByJSON(name) == nil {
				return nil, fmt.Errorf("serve: unknown option %q (options: %s)", name, optionNames())
			}
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// optionNames lists the options' JSON names for messages.
func optionNames() string {
	var names []string
	for _, s := range assemble.OptionTable {
		names = append(names, s.JSON)
	}
	return strings.Join(names, ", ")
}

// rawKind names the JSON type of a JSON value.
func rawKind(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "value"
	}
	switch raw[0] {
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	case '[':
		return "array"
	case '{':
		return "object"
	}
	return "number"
}

// ContextResponse is the body of a successful POST /v1/context.
type ContextResponse struct {
	// Workspace and Path say where the request was resolved: the workspace's name and
	// the completion file relative to its root.
	Workspace string `json:"workspace"`
	Path      string `json:"path"`
	// Context is the rendered context: "<|file_sep|>{path}\n{content}" per part.
	Context string `json:"context"`
	// Parts are the context's parts in output order (least relevant first).
	Parts []repoctx.Part `json:"parts"`
	// Prefix and Suffix are set only when the budget planner trimmed them: what the
	// model is to be given instead of the request's own.
	Prefix *string `json:"prefix,omitempty"`
	Suffix *string `json:"suffix,omitempty"`
}

// requestFields lists ContextRequest's fields for messages.
const requestFields = "workspace, path, prefix, suffix, text, line, column, offset, modified, with, options"

// decodeRequest reads one JSON object into req, with messages that name the field.
func decodeRequest(r io.Reader, req *ContextRequest) error {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	err := dec.Decode(req)
	if err == nil {
		if _, terr := dec.Token(); terr != io.EOF {
			if mb := new(http.MaxBytesError); errors.As(terr, &mb) {
				return terr
			}
			return fmt.Errorf("the body holds more than one JSON value: want one object")
		}
		return nil
	}
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF):
		return fmt.Errorf("empty body: want a JSON object (%s)", requestFields)
	case errors.As(err, &se):
		return fmt.Errorf("bad JSON at byte %d: %v", se.Offset, se)
	case errors.As(err, &te):
		if te.Field == "" {
			return fmt.Errorf("the body must be a JSON object (%s), not a JSON %s", requestFields, te.Value)
		}
		return fmt.Errorf("%s must be a JSON %s, not a JSON %s", te.Field, jsonKind(te.Type.Kind().String()), te.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return fmt.Errorf("unknown field %s (request fields: %s; options: see docs/openapi.yaml)", strings.TrimPrefix(err.Error(), "json: unknown field "), requestFields)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("bad JSON: the body ends before the object does")
	}
	return err
}

// jsonKind names a Go kind as JSON does.
func jsonKind(k string) string {
	switch {
	case strings.HasPrefix(k, "int"), strings.HasPrefix(k, "uint"):
		return "integer" // "a JSON integer, not a JSON number 16000.5"
	case strings.HasPrefix(k, "float"):
		return "number"
	case k == "bool":
		return "boolean"
	case k == "slice":
		return "array"
	case k == "struct", k == "map":
		return "object"
	}
	return k
}

// hole makes the completion point of the request; rel is its path resolved, resolve
// resolves the modified files.
func (q *ContextRequest) hole(rel string, resolve func(string) (string, error)) (repoctx.Hole, error) {
	h := repoctx.Hole{Path: rel}
	cursor := q.Line != nil || q.Column != nil || q.Offset != nil
	switch {
	case q.Text != nil && (q.Prefix != nil || q.Suffix != nil):
		return h, fmt.Errorf("give prefix and suffix, or text with a cursor (line and column, or offset), not both")
	case q.Text != nil:
		text := *q.Text
		var off int
		var err error
		switch {
		case q.Offset != nil && (q.Line != nil || q.Column != nil):
			return h, fmt.Errorf("give line and column, or offset, not both")
		case q.Offset != nil:
			off, err = *q.Offset, CheckOffset(text, *q.Offset)
		case q.Line != nil && q.Column != nil:
			off, err = Offset(text, *q.Line, *q.Column)
		case q.Line != nil:
			return h, fmt.Errorf("column is required with line (1-based, in Unicode code points)")
		case q.Column != nil:
			return h, fmt.Errorf("line is required with column (1-based)")
		default:
			return h, fmt.Errorf("text needs a cursor: line and column (1-based; column in Unicode code points), or offset (UTF-8 bytes)")
		}
		if err != nil {
			return h, err
		}
		h.Prefix, h.Suffix = text[:off], text[off:]
	case q.Prefix != nil || q.Suffix != nil:
		if cursor {
			return h, fmt.Errorf("line, column and offset go with text, not with prefix and suffix")
		}
		if q.Prefix != nil {
			h.Prefix = *q.Prefix
		}
		if q.Suffix != nil {
			h.Suffix = *q.Suffix
		}
	default:
		return h, fmt.Errorf("prefix and suffix (the text around the cursor; either may be left out), or text with line and column (or offset), are required")
	}
	for _, m := range q.Modified {
		r, err := resolve(m)
		if err != nil {
			return h, fmt.Errorf("modified: %v", err)
		}
		h.Modified = append(h.Modified, r)
	}
	return h, nil
}

// apply returns base with the request's options set, checked once
// (assemble.Options.CheckGiven); errors name the field ("options.top_k must be a
// positive number of chunks up to 10000, not 0"). No options: base as it is, which
// New validated.
func (o RequestOptions) apply(base assemble.Options) (assemble.Options, error) {
	if len(o) == 0 {
		return base, nil
	}
	given := map[string]bool{}
	for name, v := range o {
		s := assemble.OptionByJSON(name)
		if s == nil {
			return base, fmt.Errorf("unknown field %q in options (options: %s)", name, optionNames())
		}
		if s.Kind == assemble.KindInt && math.Abs(v) > 1<<53 {
			// Beyond float64's exact integers (and int's range): refused before Set
			// would wrap it into a number the user never sent.
			return base, fmt.Errorf("options.%s must be %s, not %s", s.JSON, s.Want, strconv.FormatFloat(v, 'f', -1, 64))
		}
		s.Set(&base, v)
		given[s.Name] = true
	}
	field := func(name string) string {
		if s := assemble.Option(name); s != nil {
			return "options." + s.JSON
		}
		return "options." + strings.ReplaceAll(name, "-", "_")
	}
	err := base.CheckGiven(func(name string) bool { return given[name] })
	var oe *repoctx.OptionError
	var ne *assemble.NeedsError
	switch {
	case err == nil:
		return base, nil
	case errors.As(err, &oe):
		return base, fmt.Errorf("%s must be %s, not %s", field(oe.Option), oe.Want, oe.Value)
	case errors.As(err, &ne):
		return base, errors.New(ne.Format(field))
	}
	return base, err
}

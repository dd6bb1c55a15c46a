package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
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
	// Options override the server's assembly options for this request.
	Options *RequestOptions `json:"options,omitempty"`
}

// RequestOptions are the assembly options a request may override: the flags of
// `repoctx predict` and `query` of the same names, with "_" for "-" (see
// assemble.Options for their meaning and units). Absent fields keep the server's
// values.
type RequestOptions struct {
	QueryLines       *int     `json:"query_lines,omitempty"`
	TopK             *int     `json:"top_k,omitempty"`
	Budget           *int     `json:"budget,omitempty"` // bytes
	SuffixWeight     *float64 `json:"suffix_weight,omitempty"`
	ModifiedBoost    *float64 `json:"modified_boost,omitempty"`
	NoRelative       *bool    `json:"no_relative,omitempty"`
	RelativeWeight   *float64 `json:"relative_weight,omitempty"`
	NoEditQuery      *bool    `json:"no_edit_query,omitempty"`
	EditIdentifiers  *int     `json:"edit_identifiers,omitempty"`
	NoDefinitions    *bool    `json:"no_definitions,omitempty"`
	MinScoreRatio    *float64 `json:"min_score_ratio,omitempty"`
	DefinitionWeight *float64 `json:"definition_weight,omitempty"`
	NoDense          *bool    `json:"no_dense,omitempty"`
	BM25Weight       *float64 `json:"bm25_weight,omitempty"`
	DenseWeight      *float64 `json:"dense_weight,omitempty"`
	RRFK             *float64 `json:"rrf_k,omitempty"`
	NoOldFile        *bool    `json:"no_old_file,omitempty"`
	OldFileWeight    *float64 `json:"old_file_weight,omitempty"`
	PlanWindow       *int     `json:"plan_window,omitempty"` // tokens; 0 turns the planner off
	PlanShare        *float64 `json:"plan_share,omitempty"`
	PlanSuffixShare  *float64 `json:"plan_suffix_share,omitempty"`
	// PlanContextWindow is assemble.Plan.ContextWindow (tokens; needs PlanWindow).
	PlanContextWindow *int `json:"plan_context_window,omitempty"`
	// Iterations is the number of retrieval rounds (RepoCoder's iterative retrieval
	// with the built-in copy drafter; 0 or 1: one), at most assemble.MaxIterations.
	Iterations *int `json:"iterations,omitempty"`
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
const requestFields = "workspace, path, prefix, suffix, text, line, column, offset, modified, options"

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
		return h, fmt.Errorf("prefix and suffix (the text around the cursor), or text with line and column (or offset), are required")
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

// apply returns base with the request's options set, validated; errors name the field
// ("options.top_k must be a positive number of chunks, not 0").
func (o *RequestOptions) apply(base assemble.Options) (assemble.Options, error) {
	if o == nil {
		return base, nil
	}
	setI := func(dst *int, v *int) {
		if v != nil {
			*dst = *v
		}
	}
	setF := func(dst *float64, v *float64) {
		if v != nil {
			*dst = *v
		}
	}
	setB := func(dst *bool, v *bool) {
		if v != nil {
			*dst = *v
		}
	}
	b := &base
	setI(&b.QueryLines, o.QueryLines)
	setI(&b.TopK, o.TopK)
	setI(&b.BudgetChars, o.Budget)
	setF(&b.SuffixWeight, o.SuffixWeight)
	setF(&b.ModifiedBoost, o.ModifiedBoost)
	setB(&b.NoRelative, o.NoRelative)
	setF(&b.RelativeWeight, o.RelativeWeight)
	setB(&b.NoEditQuery, o.NoEditQuery)
	setI(&b.EditIdentifiers, o.EditIdentifiers)
	setB(&b.NoDefinitions, o.NoDefinitions)
	setF(&b.MinScoreRatio, o.MinScoreRatio)
	setF(&b.DefinitionWeight, o.DefinitionWeight)
	setB(&b.NoDense, o.NoDense)
	setF(&b.Fusion.BM25, o.BM25Weight)
	setF(&b.Fusion.Dense, o.DenseWeight)
	setF(&b.Fusion.K, o.RRFK)
	setB(&b.NoOldFile, o.NoOldFile)
	setF(&b.OldFileWeight, o.OldFileWeight)
	setI(&b.Plan.Window, o.PlanWindow)
	setF(&b.Plan.Share, o.PlanShare)
	setF(&b.Plan.SuffixShare, o.PlanSuffixShare)
	setI(&b.Plan.ContextWindow, o.PlanContextWindow)
	setI(&b.Iterations, o.Iterations)
	nonzero := func(f *float64) bool { return f != nil && *f != 0 }
	if (nonzero(o.PlanShare) || nonzero(o.PlanSuffixShare) || o.PlanContextWindow != nil && *o.PlanContextWindow != 0) && b.Plan.Window == 0 {
		return base, fmt.Errorf("options.plan_share, options.plan_suffix_share and options.plan_context_window need options.plan_window (the planner is off)")
	}
	if err := base.Validate(); err != nil {
		if oe := new(repoctx.OptionError); errors.As(err, &oe) {
			return base, fmt.Errorf("options.%s must be %s, not %s", strings.ReplaceAll(oe.Option, "-", "_"), oe.Want, oe.Value)
		}
		return base, err
	}
	return base, nil
}

package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
)

// ContinueRequest is the body Continue's HTTP context provider posts (its
// "@HTTP" provider: provider http with params url, and optional options and
// headers): the text after the provider's name, the whole chat input, the params'
// options, and the workspace folder of the open file (sent by recent versions, for
// servers on a local address).
type ContinueRequest struct {
	// Query is the text typed after the provider's name ("" for a normal provider).
	Query string `json:"query"`
	// FullInput is the whole chat input, code the user selected included.
	FullInput string `json:"fullInput"`
	// Options are the provider's params.options from Continue's configuration.
	Options *ContinueOptions `json:"options,omitempty"`
	// WorkspacePath is the workspace folder of the open file, a path or a file:// URI.
	WorkspacePath string `json:"workspacePath,omitempty"`
}

// ContinueOptions are what a Continue configuration may set in the provider's
// params.options: "workspace", "path" and any assembly option of
// assemble.OptionTable by its JSON name, as in a context request's options (e.g.
// "budget": the context budget in bytes; default: the server's).
type ContinueOptions struct {
	// Workspace names the workspace (its name or root) when several are served.
	Workspace string
	// Path names the file the question is about (relative or absolute); without it
	// the file whose lines the input holds is used, if any.
	Path string
	// Compose holds the assembly options given, by JSON name (see RequestOptions).
	Compose RequestOptions
}

// UnmarshalJSON reads a JSON object: "workspace" and "path" (strings) and assembly
// options, refused as a context request's options are (unknown names, wrong types).
func (o *ContinueOptions) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	for name, dst := range map[string]*string{"workspace": &o.Workspace, "path": &o.Path} {
		if raw, ok := m[name]; ok {
			if err := json.Unmarshal(raw, dst); err != nil {
				return fmt.Errorf("options.%s must be a JSON string", name)
			}
			delete(m, name)
		}
	}
	rest, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return o.Compose.UnmarshalJSON(rest)
}

// ContinueItem is one context item of the response: Continue shows Name, and gives
// the model Content.
type ContinueItem struct {
	Name        string       `json:"name"`
	Description string       `json:"description"`
	Content     string       `json:"content"`
	URI         *ContinueURI `json:"uri,omitempty"`
}

// ContinueURI points an item at its file.
type ContinueURI struct {
	Type  string `json:"type"`  // "file"
	Value string `json:"value"` // a file:// URI
}

// handleContinue is POST /v1/continue/context, for Continue's HTTP context provider:
// the repository context of the text of the request (the query and the whole chat
// input) as if it were typed at the end of the file it was found in (see locate), or
// of options.path. The answer is a JSON array of context items, one per part, in
// prompt order (most relevant last).
func (s *Server) handleContinue(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength > s.cfg.MaxBodyBytes {
		writeError(w, http.StatusRequestEntityTooLarge, "request body of %d bytes is over the limit of %d bytes", r.ContentLength, s.cfg.MaxBodyBytes)
		return
	}
	var req ContinueRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	if err := dec.Decode(&req); err != nil {
		if mb := new(http.MaxBytesError); errors.As(err, &mb) {
			writeError(w, http.StatusRequestEntityTooLarge, "request body is over the limit of %d bytes", s.cfg.MaxBodyBytes)
			return
		}
		writeError(w, http.StatusBadRequest, "bad request: %v (want {\"query\", \"fullInput\", \"options\", \"workspacePath\"}, as Continue's HTTP context provider sends)", err)
		return
	}
	text := strings.TrimSpace(req.FullInput)
	if q := strings.TrimSpace(req.Query); q != "" && !strings.Contains(text, q) {
		text = strings.TrimSpace(text + "\n" + q)
	}
	if text == "" {
		writeError(w, http.StatusBadRequest, "query and fullInput are empty: nothing to look for")
		return
	}
	var o ContinueOptions
	if req.Options != nil {
		o = *req.Options
	}
	if o.Workspace == "" && req.WorkspacePath != "" {
		o.Workspace = localPath(req.WorkspacePath)
	}
	if o.Workspace != "" && !s.serves(o.Workspace) {
		if req.Options == nil || req.Options.Workspace == "" {
			o.Workspace = "" // Continue's workspace folder is not served: look everywhere
		} else {
			writeError(w, http.StatusBadRequest, "options.workspace %q is not served (served: %s)", o.Workspace, s.names())
			return
		}
	}
	opts, err := o.Compose.apply(s.cfg.Compose)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	c, err := s.composeFor(r.Context(), o.Path, o.Workspace, text+"\n", "", opts)
	if err != nil {
		if r.Context().Err() != nil {
			return
		}
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	items := []ContinueItem{}
	for _, p := range c.ctx.Parts {
		abs := filepath.Join(c.ws.root, filepath.FromSlash(p.Path))
		items = append(items, ContinueItem{
			Name:        fmt.Sprintf("%s:%d-%d", p.Path, p.StartLine, p.EndLine),
			Description: fmt.Sprintf("%s, lines %d-%d (score %.3g; %s)", p.Path, p.StartLine, p.EndLine, p.Score, strings.Join(p.Why, ", ")),
			Content:     "```" + p.Path + "\n" + strings.TrimSuffix(p.Text, "\n") + "\n```",
			URI:         &ContinueURI{Type: "file", Value: (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()},
		})
	}
	writeJSON(w, http.StatusOK, items)
}

// localPath returns the path of a file:// URI, or s itself.
func localPath(s string) string {
	if u, err := url.Parse(s); err == nil && u.Scheme == "file" {
		return filepath.FromSlash(u.Path)
	}
	return s
}

// serves reports whether name is a served workspace's name or root.
func (s *Server) serves(name string) bool {
	for _, w := range s.ws {
		if w.name == name || w.root == filepath.Clean(name) {
			return true
		}
	}
	return false
}

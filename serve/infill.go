package serve

import (
	"encoding/json"
	"net/http"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/assemble"
)

// extraChunk is one element of llama.cpp's input_extra: a file name and text, which
// the server puts before the hole ("<FIM_SEP>{filename}\n{text}" with models that
// have repository-level tokens).
type extraChunk struct {
	Filename string `json:"filename"`
	Text     string `json:"text"`
}

// handleInfill is the proxy's POST /infill (llama.cpp's fill-in-the-middle endpoint,
// what llama.vim and llama.vscode send): the hole is input_prefix + prompt (the
// current line's text before the cursor) and input_suffix; the repository parts are
// appended to input_extra after the client's own chunks (most relevant last), minus
// those whose lines the client's chunks or the hole already hold, within ExtraTokens
// tokens.
// Every other field is forwarded as sent.
func (s *Server) handleInfill(w http.ResponseWriter, r *http.Request) {
	p := s.proxy
	_, f, ok := s.completionFields(w, r)
	if !ok {
		return
	}
	path, wsName := target(r, f)
	inPrefix, _ := f.str("input_prefix")
	prompt, _ := f.str("prompt")
	suffix, _ := f.str("input_suffix")
	prefix := inPrefix + prompt
	if prefix == "" && suffix == "" {
		p.without(r.URL.Path, "no_text", "")
		p.forward(w, r, f.encode())
		return
	}
	var extra []json.RawMessage
	var seen []string
	if raw, ok := f["input_extra"]; ok && string(raw) != "null" {
		if json.Unmarshal(raw, &extra) != nil {
			p.without(r.URL.Path, "unreadable", "input_extra is not an array")
			p.forward(w, r, f.encode())
			return
		}
		for _, e := range extra {
			var c extraChunk
			if json.Unmarshal(e, &c) == nil {
				seen = append(seen, c.Text)
			}
		}
	}
	tc := p.cfg.Tokens
	budget := float64(p.cfg.ExtraTokens)
	c, err := s.proxyCompose(r.Context(), path, wsName, prefix, suffix, s.proxyOptions(int(2*budget*repoctx.CharsPerToken)))
	if err != nil {
		if r.Context().Err() != nil {
			return // the client went away
		}
		p.without(r.URL.Path, reason(err), err.Error())
		p.forward(w, r, f.encode())
		return
	}
	parts := dropSeen(c.ctx.Parts, append(seen, prefix, suffix)...)
	parts = assemble.FitParts(parts, budget, func(q repoctx.Part) float64 { return tc.Count(q.Path + "\n" + q.Text) })
	if len(parts) == 0 {
		p.without(r.URL.Path, "no_parts", "")
		p.forward(w, r, f.encode())
		return
	}
	for _, q := range parts {
		extra = append(extra, marshal(extraChunk{Filename: q.Path, Text: q.Text}))
	}
	f.set("input_extra", extra)
	p.with()
	p.forward(w, r, f.encode())
}

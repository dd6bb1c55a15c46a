package serve

import (
	"net/http"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/complete"
)

// handleCompletions is the proxy's POST /v1/completions (the OpenAI-compatible
// completions endpoint of vLLM, Ollama, LM Studio and llama.cpp). A request with a
// string prompt and a string suffix is a fill-in-the-middle request: its prompt is
// replaced by the FIM prompt of ProxyConfig.Template with the repository context in
// front, trimmed to ProxyConfig.Window (complete.Template.Build), and its suffix is
// removed (the prompt holds it). A request without suffix (a prompt the client has
// templated itself) is forwarded unchanged. Every other field is forwarded as sent.
func (s *Server) handleCompletions(w http.ResponseWriter, r *http.Request) {
	p := s.proxy
	body, f, ok := s.completionFields(w, r)
	if !ok {
		return
	}
	_, named := f[PathField]
	_, namedWS := f[WorkspaceField]
	path, wsName := target(r, f)
	prefix, okP := f.str("prompt")
	suffix, okS := f.str("suffix")
	if !okP || !okS {
		p.without(r.URL.Path, "templated", "")
		if named || namedWS {
			p.forward(w, r, f.encode())
		} else {
			p.forward(w, r, body) // byte for byte
		}
		return
	}
	t := p.cfg.Template
	c, err := s.proxyCompose(r.Context(), path, wsName, prefix, suffix, s.proxyOptions(int(float64(p.cfg.Window)*repoctx.CharsPerToken)))
	var ctxText string
	switch {
	case err != nil && r.Context().Err() != nil:
		return // the client went away
	case err != nil:
		p.without(r.URL.Path, reason(err), err.Error())
	default:
		ctxText = c.ctx.Text
	}
	b := t.Build(complete.Prompt{Path: c.path, Context: ctxText, Prefix: prefix, Suffix: suffix}, p.cfg.Window, p.cfg.Tokens)
	if err == nil {
		if b.Context != "" {
			p.with()
		} else {
			p.without(r.URL.Path, "no_parts", "")
		}
	}
	f.set("prompt", b.Text)
	delete(f, "suffix")
	p.forward(w, r, f.encode())
}

package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/assemble"
	"github.com/repoctx/repoctx/complete"
)

// ProxyConfig configures the fill-in-the-middle proxy of [Server] (Config.Proxy):
// editors send their completion requests to the server, which adds the repository
// context and forwards them to the model server at Upstream. See docs/editors.md.
type ProxyConfig struct {
	// Upstream is the model server's root URL (e.g. http://127.0.0.1:8012); "" turns
	// the proxy off. Request paths are appended to it.
	Upstream string
	// Window is the model window in tokens: POST /v1/completions prompts are trimmed
	// to it (complete.Template.Build), and ExtraTokens defaults to half of it.
	Window int
	// ExtraTokens is the most tokens of repository parts POST /infill adds to
	// input_extra (each part counted as "{filename}\n{text}"); 0 means Window/2.
	ExtraTokens int
	// Template is the FIM prompt format of POST /v1/completions requests with a suffix;
	// nil means qwen2.5.
	Template *complete.Template
	// Tokens counts tokens for ExtraTokens and Window; nil means
	// repoctx.CharEstimate (characters / 4).
	Tokens repoctx.TokenCounter
	// ContextDeadline bounds the time spent finding the file and composing the
	// context of one request (0 means DefaultContextDeadline): past it the request is
	// forwarded without context, and the reason is logged and counted.
	ContextDeadline time.Duration
}

// DefaultContextDeadline is ProxyConfig.ContextDeadline's default.
const DefaultContextDeadline = 100 * time.Millisecond

// DefaultProxyWindow is ProxyConfig.Window's default (tokens): the budget
// planner's window of `repoctx predict`.
const DefaultProxyWindow = 8000

// The request fields and headers that name the completion file and its workspace;
// the proxy removes them before forwarding.
const (
	PathField       = "repoctx_path"
	WorkspaceField  = "repoctx_workspace"
	PathHeader      = "X-Repoctx-Path"
	WorkspaceHeader = "X-Repoctx-Workspace"
)

// ProxyStatus is the proxy's part of GET /v1/status.
type ProxyStatus struct {
	// Upstream is the model server's URL.
	Upstream string `json:"upstream"`
	// Forwarded counts the requests forwarded (every path).
	Forwarded int64 `json:"forwarded"`
	// WithContext counts the completion requests forwarded with repository context.
	WithContext int64 `json:"with_context"`
	// WithoutContext counts the completion requests forwarded without it, by reason:
	// "deadline" (--context-deadline passed), "error" (composing failed), "no_text"
	// (no prefix or suffix: a cache warm-up), "templated" (a /v1/completions prompt
	// without suffix), "unreadable" (not a JSON object, or over --max-body-bytes),
	// "no_workspace", "no_parts" (nothing new to add).
	WithoutContext map[string]int64 `json:"without_context"`
	// LastWithout is the last reason a request went without context, with its detail.
	LastWithout string `json:"last_without,omitempty"`
	// UpstreamErrors counts requests the upstream could not be reached for (answered
	// 502 Bad Gateway).
	UpstreamErrors int64 `json:"upstream_errors"`
}

// proxy forwards requests to the upstream model server.
type proxy struct {
	cfg      ProxyConfig
	upstream *url.URL
	rp       *httputil.ReverseProxy
	logf     func(string, ...any)
	// hook, if not nil, runs in the composing goroutine before the context is
	// composed (tests delay it past the deadline).
	hook func()

	mu sync.Mutex
	st ProxyStatus
}

// newProxy checks cfg and makes the proxy; nil when cfg.Upstream is "".
func newProxy(cfg ProxyConfig, logf func(string, ...any)) (*proxy, error) {
	if cfg.Upstream == "" {
		return nil, nil
	}
	u, err := url.Parse(cfg.Upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &repoctx.OptionError{Option: "upstream", Value: fmt.Sprintf("%q", cfg.Upstream), Want: "the model server's http:// or https:// URL"}
	}
	if cfg.Window == 0 {
		cfg.Window = DefaultProxyWindow
	}
	if cfg.Window < 0 {
		return nil, &repoctx.OptionError{Option: "window", Value: fmt.Sprint(cfg.Window), Want: "a positive number of tokens"}
	}
	if cfg.ExtraTokens == 0 {
		cfg.ExtraTokens = cfg.Window / 2
	}
	if cfg.ExtraTokens < 0 {
		return nil, &repoctx.OptionError{Option: "extra-tokens", Value: fmt.Sprint(cfg.ExtraTokens), Want: "a positive number of tokens"}
	}
	if cfg.ContextDeadline == 0 {
		cfg.ContextDeadline = DefaultContextDeadline
	}
	if cfg.ContextDeadline < 0 {
		return nil, &repoctx.OptionError{Option: "context-deadline", Value: cfg.ContextDeadline.String(), Want: "a positive duration"}
	}
	if cfg.Template == nil {
		cfg.Template, _ = complete.LookupTemplate("qwen2.5")
	}
	if cfg.Tokens == nil {
		cfg.Tokens = repoctx.CharEstimate{}
	}
	p := &proxy{cfg: cfg, upstream: u, logf: logf}
	p.st = ProxyStatus{Upstream: u.Redacted(), WithoutContext: map[string]int64{}}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(u)
			if u.User != nil && r.Out.Header.Get("Authorization") == "" {
				// SetURL drops the URL's user and password: send them as basic auth.
				pw, _ := u.User.Password()
				r.Out.SetBasicAuth(u.User.Username(), pw)
			}
			r.Out.Header.Del(PathHeader)
			r.Out.Header.Del(WorkspaceHeader)
		},
		FlushInterval: -1, // every chunk of a streamed answer as it comes
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if r.Context().Err() != nil {
				return // the client went away: the upstream request was cancelled
			}
			p.mu.Lock()
			p.st.UpstreamErrors++
			p.mu.Unlock()
			p.logf("proxy: %s %s: upstream %s: %v", r.Method, r.URL.Path, u.Redacted(), err)
			writeError(w, http.StatusBadGateway, "repoctx proxy: the model server %s did not answer: %v", u.Redacted(), err)
		},
	}
	return p, nil
}

// status returns a copy of the counters.
func (p *proxy) status() *ProxyStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.st
	st.WithoutContext = make(map[string]int64, len(p.st.WithoutContext))
	for k, v := range p.st.WithoutContext {
		st.WithoutContext[k] = v
	}
	return &st
}

// pass forwards r unchanged.
func (p *proxy) pass(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.st.Forwarded++
	p.mu.Unlock()
	p.rp.ServeHTTP(w, r)
}

// forward forwards r with body as its body.
func (p *proxy) forward(w http.ResponseWriter, r *http.Request, body []byte) {
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	r.Header.Del("Content-Length")
	r.Header.Del("Transfer-Encoding")
	r.TransferEncoding = nil
	p.pass(w, r)
}

// without records that a completion request goes without context, and why.
func (p *proxy) without(path, reason, detail string) {
	p.mu.Lock()
	p.st.WithoutContext[reason]++
	p.st.LastWithout = reason
	if detail != "" {
		p.st.LastWithout += ": " + detail
	}
	p.mu.Unlock()
	if detail != "" {
		p.logf("proxy: %s forwarded without context (%s): %s", path, reason, detail)
	}
}

func (p *proxy) with() {
	p.mu.Lock()
	p.st.WithContext++
	p.mu.Unlock()
}

// readBody reads r's body whole when it is at most limit bytes. Otherwise (or on a
// read error) it sets r.Body to what was read followed by the rest, so that the
// request can still be forwarded unchanged, and returns ok false.
func readBody(r *http.Request, limit int64) (body []byte, ok bool) {
	b, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil || int64(len(b)) > limit {
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(b), r.Body), r.Body}
		return nil, false
	}
	return b, true
}

// completionFields reads a completion request's body as a JSON object. When the body
// is content-encoded (gzip: forwarded as sent), over --max-body-bytes, unreadable or
// not a JSON object, it forwards the request without context (the reason counted in
// /v1/status) and ok is false.
func (s *Server) completionFields(w http.ResponseWriter, r *http.Request) (body []byte, f fields, ok bool) {
	p := s.proxy
	if enc := r.Header.Get("Content-Encoding"); enc != "" && enc != "identity" {
		p.without(r.URL.Path, "encoded", "the body is "+enc+"-encoded: forwarded as sent")
		p.pass(w, r)
		return nil, nil, false
	}
	if body, ok = readBody(r, s.cfg.MaxBodyBytes); !ok {
		p.without(r.URL.Path, "unreadable", "the body is over --max-body-bytes or could not be read")
		p.pass(w, r)
		return nil, nil, false
	}
	if f, ok = decodeFields(body); !ok {
		p.without(r.URL.Path, "unreadable", "the body is not a JSON object")
		p.forward(w, r, body)
		return nil, nil, false
	}
	return body, f, true
}

// fields is a JSON object whose values are kept as sent.
type fields map[string]json.RawMessage

// decodeFields reads a JSON object; ok is false when body is not one.
func decodeFields(body []byte) (fields, bool) {
	var f fields
	if err := json.Unmarshal(body, &f); err != nil || f == nil {
		return nil, false
	}
	return f, true
}

// str returns the field name as a string; ok is false when it is absent, null or not
// a string.
func (f fields) str(name string) (string, bool) {
	raw, ok := f[name]
	if !ok {
		return "", false
	}
	var s *string
	if json.Unmarshal(raw, &s) != nil || s == nil {
		return "", false
	}
	return *s, true
}

// set stores v as the field name.
func (f fields) set(name string, v any) {
	f[name] = marshal(v)
}

// encode returns the object as JSON (keys sorted, values as sent).
func (f fields) encode() []byte {
	return marshal(map[string]json.RawMessage(f))
}

// marshal encodes v without escaping HTML characters (a prompt's "<|fim_prefix|>"
// stays as it is).
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // only strings, maps and raw messages: cannot fail
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// target is what a completion request names of its file: the path and workspace
// from the request's fields or headers (both removed from the fields).
func target(r *http.Request, f fields) (path, ws string) {
	path, _ = f.str(PathField)
	ws, _ = f.str(WorkspaceField)
	delete(f, PathField)
	delete(f, WorkspaceField)
	if path == "" {
		path = r.Header.Get(PathHeader)
	}
	if ws == "" {
		ws = r.Header.Get(WorkspaceHeader)
	}
	return path, ws
}

// composed is the context composed for a proxied request.
type composed struct {
	ws   *Workspace
	path string // the completion file, relative to ws's root; "" when not found
	how  string // how the file was found: "request", "match" or "none"
	ctx  repoctx.Context
}

// errDeadline is the reason of a composition that took too long.
var errDeadline = errors.New("composing took longer than --context-deadline")

// compose finds the workspace and the file of the hole (path and ws as the request
// named them, else by matching prefix and suffix against the workspaces' files) and
// composes its context with opts, within the context deadline. It returns
// errDeadline past the deadline; the composition goes on in the background until it
// ends (it holds its view until then) but its result is dropped.
func (s *Server) proxyCompose(ctx context.Context, path, wsName, prefix, suffix string, opts assemble.Options) (composed, error) {
	type result struct {
		c   composed
		err error
	}
	ctx, cancel := context.WithTimeout(ctx, s.proxy.cfg.ContextDeadline)
	done := make(chan result, 1)
	go func() {
		defer cancel()
		if s.proxy.hook != nil {
			s.proxy.hook()
		}
		c, err := s.composeFor(ctx, path, wsName, prefix, suffix, opts)
		done <- result{c, err}
	}()
	select {
	case r := <-done:
		if r.err != nil && ctx.Err() == context.DeadlineExceeded {
			return r.c, errDeadline
		}
		return r.c, r.err
	case <-ctx.Done():
		if ctx.Err() == context.DeadlineExceeded {
			return composed{}, errDeadline
		}
		return composed{}, ctx.Err()
	}
}

// composeFor does the work of proxyCompose (and of the Continue endpoint), without
// the deadline.
func (s *Server) composeFor(ctx context.Context, path, wsName, prefix, suffix string, opts assemble.Options) (composed, error) {
	var c composed
	if path != "" {
		if ws, rel, err := s.resolve(wsName, path); err == nil {
			c.ws, c.path, c.how = ws, rel, "request"
		} else {
			s.logf("proxy: the request's path %s: %v (matching the text instead)", path, err)
		}
	}
	if c.ws == nil {
		var only []*Workspace
		if wsName != "" {
			for _, w := range s.ws {
				if w.name == wsName || w.root == filepath.Clean(wsName) {
					only = append(only, w)
				}
			}
		}
		if len(only) == 0 {
			only = s.ws
		}
		if m, ok := locate(only, prefix, suffix); ok {
			c.ws, c.path, c.how = m.ws, m.path, "match"
		} else {
			c.ws, c.how = only[0], "none"
		}
	}
	if err := ctx.Err(); err != nil {
		return c, err
	}
	repo, release := c.ws.Acquire()
	defer release()
	if repo == nil {
		return c, errClosed
	}
	h := repoctx.Hole{Path: c.path, Prefix: prefix, Suffix: suffix}
	var err error
	opts, releaseOthers := s.withCross(c.ws, opts)
	defer releaseOthers()
	c.ctx, err = assemble.Compose(ctx, repo, h, opts)
	return c, err
}

// dropSeen removes the parts whose non-blank lines are all in seen (the texts the
// client sends itself).
func dropSeen(parts []repoctx.Part, seen ...string) []repoctx.Part {
	set := assemble.LineSet(seen...)
	return slices.DeleteFunc(slices.Clone(parts), func(p repoctx.Part) bool {
		return strings.TrimSpace(p.Text) == "" || assemble.AllLinesIn(p.Text, set)
	})
}

// proxyOptions are the assembly options of proxied requests: the server's, with a
// character budget of at least chars.
func (s *Server) proxyOptions(chars int) assemble.Options {
	o := s.cfg.Compose
	if o.Plan.On() {
		return o
	}
	o.BudgetChars = max(o.BudgetChars, chars)
	return o
}

// reason names a composition error for the counters.
func reason(err error) string {
	if errors.Is(err, errDeadline) {
		return "deadline"
	}
	return "error"
}

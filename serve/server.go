package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/assemble"
	"github.com/repoctx/repoctx/crossrepo"
	"github.com/repoctx/repoctx/index"
	"github.com/repoctx/repoctx/snapshot"
	"github.com/repoctx/repoctx/store"
	"github.com/repoctx/repoctx/symbols"
)

// Config configures a [Server]. Start from [DefaultConfig].
type Config struct {
	// Index holds the index options of every workspace (chunking, dense retriever);
	// RepoLSA, Symbols and DeferFlush are always on.
	Index index.Options
	// CacheDir is the cache directory of the server's store; "" means
	// store.DefaultCacheDir().
	CacheDir string
	// Walk holds the walker's rules: which files of a folder are in its workspace
	// (.gitignore, .ignore, .git/info/exclude, Exclude patterns, ...).
	Walk snapshot.WalkOptions
	// Compose holds the context assembly options a request starts from (its
	// "options" override them).
	Compose assemble.Options
	// MaxBodyBytes is the largest request body accepted (bytes); larger ones get 413.
	MaxBodyBytes int64
	// ReadTimeout bounds the time [Server.Serve] spends reading one request, headers
	// and body (0 = no bound on the body): a client that sends its body slowly, or not
	// at all, is cut off instead of holding a connection and a goroutine. Headers must
	// arrive within 10 s, or within ReadTimeout when it is shorter. Idle keep-alive
	// connections are closed after 2 minutes.
	ReadTimeout time.Duration
	// Debounce is how long a folder must be quiet after a change before the view is
	// updated: a save is often several events. A steady stream of changes is applied
	// at least every second.
	Debounce time.Duration
	// Watch says how changes are found (fsnotify, or polling).
	Watch WatchMode
	// PollInterval is how often polling stats the files (with WatchPoll, or after a
	// fallback).
	PollInterval time.Duration
	// AllowHosts are host names (without port) accepted in the Host header besides the
	// loopback names (localhost, 127.0.0.0/8, ::1); see [Server.Handler].
	AllowHosts []string
	// Log, if not nil, receives one line per view made, skipped file and watch
	// problem.
	Log io.Writer
	// OnUpdate, if not nil, is called after each new view is swapped in (from the
	// workspace's update goroutine).
	OnUpdate func(Update)
	// CrossRepo makes every workspace keep a bleve index of its chunks (package
	// crossrepo, in the cache beside its records, updated with each view) and answers
	// a request on one workspace from the others too (assemble.CrossRepo: their hits
	// by BM25 over the joint statistics, their parts' paths prefixed by the
	// workspace's name). Off, a request sees its own workspace only.
	CrossRepo bool

	// Proxy configures the fill-in-the-middle proxy to a model server (off when
	// Proxy.Upstream is "").
	Proxy ProxyConfig
}

// DefaultConfig returns the defaults: the index and assembly packages' defaults,
// every walker rule, an 8 MiB body limit, 30 s to read a request, a 50 ms debounce,
// fsnotify with a polling fallback every second.
func DefaultConfig() Config {
	return Config{
		Index:        index.DefaultOptions(),
		Compose:      assemble.DefaultOptions(),
		MaxBodyBytes: 8 << 20,
		ReadTimeout:  30 * time.Second,
		Debounce:     50 * time.Millisecond,
		Watch:        WatchAuto,
		PollInterval: time.Second,
	}
}

// Server answers context requests over HTTP for live workspaces.
type Server struct {
	cfg     Config
	st      *store.Store // the records of every workspace's index
	ws      []*Workspace
	handler http.Handler
	logMu   sync.Mutex
	proxy   *proxy // nil without Config.Proxy.Upstream
	// cross is the alias of every workspace's bleve index (Config.CrossRepo), nil
	// without it.
	cross *crossrepo.Alias
}

// New reads each folder, makes its first view (reusing the cache), starts watching it
// and returns the server. It returns an error when a folder cannot be read, an
// option is invalid (a *repoctx.OptionError) or a view cannot be made; ctx bounds the
// initial indexing only.
func New(ctx context.Context, folders []Folder, cfg Config) (*Server, error) {
	def := DefaultConfig()
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = def.MaxBodyBytes
	}
	if cfg.Debounce < 0 {
		cfg.Debounce = 0
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = def.PollInterval
	}
	if cfg.Watch == "" {
		cfg.Watch = WatchAuto
	}
	if cfg.Watch != WatchAuto && cfg.Watch != WatchPoll {
		return nil, fmt.Errorf("serve: watch mode %q: want auto or poll", cfg.Watch)
	}
	if err := cfg.Compose.Validate(); err != nil {
		return nil, err
	}
	if len(folders) == 0 {
		return nil, fmt.Errorf("serve: no workspace folder")
	}
	if cfg.CacheDir == "" {
		cfg.CacheDir = store.DefaultCacheDir()
	}
	s := &Server{cfg: cfg, st: store.Open(cfg.CacheDir)}
	var err error
	if s.proxy, err = newProxy(cfg.Proxy, s.logf); err != nil {
		return nil, err
	}
	for _, f := range folders {
		w, err := openWorkspace(ctx, f, &s.cfg, s.st, s.logf)
		if err != nil {
			s.Close()
			return nil, err
		}
		for _, o := range s.ws {
			if o.root == w.root {
				w.Close()
				s.Close()
				return nil, fmt.Errorf("serve: workspace %s given twice", f.Dir)
			}
		}
		s.ws = append(s.ws, w)
	}
	if cfg.CrossRepo {
		var all []*crossrepo.Index
		for _, w := range s.ws {
			all = append(all, w.bix)
		}
		if s.cross, err = crossrepo.NewAlias(all...); err != nil {
			s.Close()
			return nil, fmt.Errorf("serve: --cross-repo names other workspaces' parts by folder name: %w", err)
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/context", s.handleContext)
	mux.HandleFunc("GET /v1/status", s.handleStatus)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("POST /v1/continue/context", s.handleContinue)
	mux.HandleFunc("GET /v1/files", s.handleFiles)
	mux.HandleFunc("GET /v1/file", s.handleFile)
	mux.HandleFunc("GET /v1/chunks", s.handleChunks)
	mux.HandleFunc("GET /repoctx/inspector", s.handleInspector)
	if s.proxy == nil {
		mux.HandleFunc("GET /{$}", s.handleInspector) // with --upstream, GET / is the model server's
	}
	if s.proxy != nil {
		mux.HandleFunc("POST /infill", s.handleInfill)
		mux.HandleFunc("POST /v1/completions", s.handleCompletions)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if m, ok := map[string]string{"/v1/context": "POST", "/v1/status": "GET", "/healthz": "GET", "/v1/continue/context": "POST"}[r.URL.Path]; ok {
			w.Header().Set("Allow", m)
			writeError(w, http.StatusMethodNotAllowed, "%s %s: use %s", r.Method, r.URL.Path, m)
			return
		}
		if s.proxy != nil {
			s.proxy.pass(w, r) // every other path goes to the model server
			return
		}
		writeError(w, http.StatusNotFound, "no such endpoint: %s %s (see POST /v1/context, GET /v1/status, GET /healthz)", r.Method, r.URL.Path)
	})
	s.handler = s.guard(mux)
	return s, nil
}

func (s *Server) logf(format string, a ...any) {
	if s.cfg.Log == nil {
		return
	}
	s.logMu.Lock()
	defer s.logMu.Unlock()
	fmt.Fprintf(s.cfg.Log, "serve: "+format+"\n", a...)
}

// Workspaces returns the served workspaces, in the order given to New.
func (s *Server) Workspaces() []*Workspace { return slices.Clone(s.ws) }

// Handler returns the HTTP handler of the API (see the package comment). It refuses
// with 403 a request whose Host is not a loopback name (localhost, 127.0.0.0/8, ::1)
// or one of Config.AllowHosts, and one with an Origin header naming another host: a
// web page the user visits cannot reach the server, even through DNS rebinding.
func (s *Server) Handler() http.Handler { return s.handler }

// Serve answers requests on ln until ctx is done, then shuts down gracefully: it stops
// accepting, waits up to 10 s for requests in flight and returns nil. It returns the
// listener's error otherwise. It does not close the workspaces (see Close).
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: s.cfg.ReadTimeout, IdleTimeout: 2 * time.Minute}
	if s.cfg.ReadTimeout > 0 && s.cfg.ReadTimeout < hs.ReadHeaderTimeout {
		hs.ReadHeaderTimeout = s.cfg.ReadTimeout
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := hs.Shutdown(sctx)
	if e := <-errc; !errors.Is(e, http.ErrServerClosed) && err == nil {
		err = e
	}
	return err
}

// Close stops watching and closes every workspace once its requests end, and the
// store (writing the records of the last edits).
func (s *Server) Close() error {
	for _, w := range s.ws {
		w.Close()
	}
	return s.st.Close()
}

// guard refuses foreign hosts and origins (see Handler).
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.allowedHost(hostOnly(r.Host)) {
			writeError(w, http.StatusForbidden, "Host %q refused: the server answers only requests to a loopback name (localhost, 127.0.0.1, [::1]) (DNS-rebinding protection; see --allow-host)", r.Host)
			return
		}
		if o := r.Header.Get("Origin"); o != "" {
			u, err := url.Parse(o)
			if err != nil || u.Host == "" || !s.allowedHost(u.Hostname()) {
				writeError(w, http.StatusForbidden, "Origin %q refused: the server answers only local clients, not web pages of other sites", o)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// hostOnly strips the port from a Host header value.
func hostOnly(h string) string {
	if host, _, err := net.SplitHostPort(h); err == nil {
		return host
	}
	return strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
}

// allowedHost reports whether host (no port) is a loopback name or allowed by
// Config.AllowHosts.
func (s *Server) allowedHost(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "localhost" {
		return true
	}
	if ip := net.ParseIP(strings.Trim(host, "[]")); ip != nil && ip.IsLoopback() {
		return true
	}
	for _, a := range s.cfg.AllowHosts {
		if strings.EqualFold(strings.TrimSuffix(a, "."), host) {
			return true
		}
	}
	return false
}

// StatusResponse is the body of GET /v1/status.
type StatusResponse struct {
	Workspaces []Status `json:"workspaces"`
	// Proxy is the proxy's state, when it is on.
	Proxy *ProxyStatus `json:"proxy,omitempty"`
}

func (s *Server) handleStatus(w http.ResponseWriter, r *http.Request) {
	var out StatusResponse
	for _, ws := range s.ws {
		out.Workspaces = append(out.Workspaces, ws.Status())
	}
	if s.proxy != nil {
		out.Proxy = s.proxy.status()
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleContext(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength > s.cfg.MaxBodyBytes {
		writeError(w, http.StatusRequestEntityTooLarge, "request body of %d bytes is over the limit of %d bytes", r.ContentLength, s.cfg.MaxBodyBytes)
		return
	}
	var req ContextRequest
	if err := decodeRequest(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes), &req); err != nil {
		if mb := new(http.MaxBytesError); errors.As(err, &mb) {
			writeError(w, http.StatusRequestEntityTooLarge, "request body is over the limit of %d bytes", s.cfg.MaxBodyBytes)
			return
		}
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	ws, rel, err := s.resolve(req.Workspace, req.Path)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	hole, err := req.hole(rel, func(p string) (string, error) { return RelPath(ws.root, p) })
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	opts, err := req.Options.apply(s.cfg.Compose)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	cur, release := ws.Acquire()
	defer release()
	if cur == nil {
		writeError(w, http.StatusServiceUnavailable, "%v", errClosed)
		return
	}
	opts, releaseOthers, err := s.requestCross(ws, opts, req.With)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	defer releaseOthers()
	c, err := assemble.Compose(r.Context(), cur, hole, opts)
	if err != nil {
		if r.Context().Err() != nil {
			return // the client went away
		}
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	out := ContextResponse{Workspace: ws.name, Path: rel, Context: c.Text, Parts: c.Parts, Prefix: c.Prefix, Suffix: c.Suffix}
	if out.Parts == nil {
		out.Parts = []repoctx.Part{}
	}
	writeJSON(w, http.StatusOK, out)
}

// withCross returns opts with the cross-repository search of a request on workspace
// ws (Config.CrossRepo) over every other workspace, or opts unchanged without it; and
// the function that ends the request's use of the other workspaces' views.
func (s *Server) withCross(ws *Workspace, opts assemble.Options) (assemble.Options, func()) {
	if s.cross == nil || len(s.ws) < 2 {
		return opts, func() {}
	}
	var others []*Workspace
	for _, o := range s.ws {
		if o != ws {
			others = append(others, o)
		}
	}
	return crossOptions(ws, opts, s.cross, others)
}

// crossOptions returns opts with the cross-repository search of a request on
// workspace ws over the alias a, whose other workspaces are others (in a's order):
// their bleve indexes, and, unless opts leaves definitions out, their current views'
// symbol tables (assemble.CrossRepo.Definitions). The function returned ends the
// request's use of those views.
func crossOptions(ws *Workspace, opts assemble.Options, a *crossrepo.Alias, others []*Workspace) (assemble.Options, func()) {
	cr := &assemble.CrossRepo{Alias: a, Own: ws.name}
	var releases []func()
	if !opts.NoDefinitions {
		for _, o := range others {
			v, release := o.Acquire()
			if v == nil || v.Symbols() == nil {
				release()
				continue
			}
			releases = append(releases, release)
			cr.Definitions = append(cr.Definitions, assemble.DefSource{Repository: o.name, Symbols: v.Symbols(),
				Text: v.Retriever().FileText, Names: append([]string{o.name}, symbols.ImportNames(o.fsys)...)})
		}
	}
	opts.CrossRepo = cr
	return opts, func() {
		for _, r := range releases {
			r()
		}
	}
}

// requestCross returns opts with the cross-repository search of a request on
// workspace ws naming the other workspaces with (names or roots; empty: every other
// one, see withCross), and the function that ends the request's use of their views.
func (s *Server) requestCross(ws *Workspace, opts assemble.Options, with []string) (assemble.Options, func(), error) {
	if len(with) == 0 {
		opts, release := s.withCross(ws, opts)
		return opts, release, nil
	}
	if s.cross == nil {
		return opts, nil, fmt.Errorf("with needs a server started with --cross-repo")
	}
	idx := []*crossrepo.Index{ws.bix}
	var others []*Workspace
	seen := map[*Workspace]bool{ws: true}
	for _, name := range with {
		var found *Workspace
		for _, o := range s.ws {
			if o.name == name || filepath.Clean(name) == o.root {
				found = o
			}
		}
		if found == nil {
			return opts, nil, fmt.Errorf("with: no workspace %q is served", name)
		}
		if !seen[found] {
			seen[found] = true
			idx = append(idx, found.bix)
			others = append(others, found)
		}
	}
	a, err := crossrepo.NewAlias(idx...)
	if err != nil {
		return opts, nil, err
	}
	opts, release := crossOptions(ws, opts, a, others)
	return opts, release, nil
}

// resolve returns the workspace and the workspace-relative path of a request.
func (s *Server) resolve(name, p string) (*Workspace, string, error) {
	if p == "" {
		return nil, "", fmt.Errorf("path is required: the completion file, relative to the workspace or absolute")
	}
	if name != "" {
		var match []*Workspace
		for _, w := range s.ws {
			if filepath.Clean(name) == w.root {
				match = []*Workspace{w} // a root names one workspace
				break
			}
			if w.name == name {
				match = append(match, w)
			}
		}
		switch len(match) {
		case 0:
			return nil, "", fmt.Errorf("workspace %q is not served (served: %s)", name, s.names())
		case 1:
			rel, err := RelPath(match[0].root, p)
			return match[0], rel, err
		}
		var roots []string
		for _, w := range match {
			roots = append(roots, w.root)
		}
		return nil, "", fmt.Errorf("workspace %q names %d served folders (%s): give its absolute path", name, len(match), strings.Join(roots, ", "))
	}
	if filepath.IsAbs(p) {
		var best *Workspace
		var bestRel string
		for _, w := range s.ws { // the innermost workspace holding p
			if rel, err := RelPath(w.root, p); err == nil && (best == nil || len(w.root) > len(best.root)) {
				best, bestRel = w, rel
			}
		}
		if best == nil {
			return nil, "", fmt.Errorf("path %s is outside every served workspace (%s)", p, s.roots())
		}
		return best, bestRel, nil
	}
	if len(s.ws) > 1 {
		return nil, "", fmt.Errorf("workspace is required with a relative path when several workspaces are served (%s); or give an absolute path", s.names())
	}
	rel, err := RelPath(s.ws[0].root, p)
	return s.ws[0], rel, err
}

// names lists the served workspaces by name, each with its root when another has the
// same name.
func (s *Server) names() string {
	count := map[string]int{}
	for _, w := range s.ws {
		count[w.name]++
	}
	var n []string
	for _, w := range s.ws {
		if count[w.name] > 1 {
			n = append(n, w.name+" ("+w.root+")")
		} else {
			n = append(n, w.name)
		}
	}
	return strings.Join(n, ", ")
}

func (s *Server) roots() string {
	var n []string
	for _, w := range s.ws {
		n = append(n, w.root)
	}
	return strings.Join(n, ", ")
}

// ErrorResponse is the body of every error: 400 (a bad request, naming the field),
// 403 (a foreign Host or Origin), 404, 405, 413 (a body over the limit), 500, 503.
type ErrorResponse struct {
	Error string `json:"error"`
}

func writeError(w http.ResponseWriter, code int, format string, a ...any) {
	writeJSON(w, code, ErrorResponse{Error: fmt.Sprintf(format, a...)})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

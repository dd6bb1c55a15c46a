package serve

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeModel is an in-process model server: llama.cpp's /infill, /health and /props,
// and an OpenAI-compatible /v1/completions. It records what it was sent.
type fakeModel struct {
	*httptest.Server
	mu   sync.Mutex
	got  map[string][]byte      // path -> last body
	hdr  map[string]http.Header // path -> last headers
	next chan struct{}          // a streamed answer waits on it between chunks
	gone chan struct{}          // closed when /slow's client went away
}

func newFakeModel(t *testing.T) *fakeModel {
	t.Helper()
	m := &fakeModel{got: map[string][]byte{}, hdr: map[string]http.Header{}, next: make(chan struct{}), gone: make(chan struct{})}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		m.mu.Lock()
		m.got[r.URL.Path], m.hdr[r.URL.Path] = b, r.Header.Clone()
		m.mu.Unlock()
		switch {
		case r.Header.Get("X-Fail") != "":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `{"error":{"code":500,"message":"model crashed"}}`)
		case r.URL.Path == "/slow":
			<-r.Context().Done()
			close(m.gone)
		case r.URL.Path == "/health":
			io.WriteString(w, `{"status":"ok"}`)
		case bytes.Contains(b, []byte(`"stream":true`)):
			w.Header().Set("Content-Type", "text/event-stream")
			for i, tok := range []string{"fun", " x", "()"} {
				if i > 0 {
					select {
					case <-m.next:
					case <-time.After(10 * time.Second):
						return
					}
				}
				io.WriteString(w, `data: {"content":"`+tok+`","stop":false}`+"\n\n")
				w.(http.Flusher).Flush()
			}
		case r.URL.Path == "/v1/completions":
			io.WriteString(w, `{"choices":[{"text":"value","index":0,"finish_reason":"stop"}]}`)
		default:
			io.WriteString(w, `{"content":"value","stop":true}`)
		}
	}))
	t.Cleanup(m.Close)
	return m
}

func (m *fakeModel) body(t *testing.T, path string) map[string]any {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	var v map[string]any
	if err := json.Unmarshal(m.got[path], &v); err != nil {
		t.Fatalf("upstream %s got %q: %v", path, m.got[path], err)
	}
	return v
}

// proxyServer starts a server on a copy of the sample repository with the proxy on.
func proxyServer(t *testing.T, edit func(*Config)) (*testServer, *fakeModel, string) {
	t.Helper()
	m := newFakeModel(t)
	dir := sampleWorkspace(t)
	ts := startServer(t, []Folder{{Dir: dir}}, func(c *Config) {
		// A loaded machine (or -race) may take longer than the default deadline.
		c.Proxy = ProxyConfig{Upstream: m.URL, ContextDeadline: time.Minute}
		if edit != nil {
			edit(c)
		}
	})
	return ts, m, dir
}

const servicePath = "src/main/kotlin/com/acme/tracker/service/IssueService.kt"

// infillRequest is what llama.vim sends with the cursor after `at` in IssueService.kt:
// the lines before the cursor's line, the cursor's line up to the cursor as prompt, the
// rest as suffix, and one ring-buffer chunk of its own.
func infillRequest(t *testing.T, dir, at string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, servicePath))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	cut := strings.Index(text, at) + len(at)
	line := strings.LastIndexByte(text[:cut], '\n') + 1
	return map[string]any{
		"id_slot": 0, "input_prefix": text[:line], "prompt": text[line:cut], "input_suffix": text[cut:],
		"input_extra": []any{map[string]any{"filename": "notes.txt", "text": "client chunk one\nclient chunk two\n", "time": 12.5}},
		"n_predict":   128, "stop": []any{}, "n_indent": 12, "top_k": 40, "top_p": 0.9,
		"samplers": []any{"top_k", "top_p", "infill"}, "stream": false, "cache_prompt": true,
		"t_max_prompt_ms": 500, "t_max_predict_ms": 1000, "response_fields": []any{"content", "timings/prompt_n"},
	}
}

func send(t *testing.T, method, url string, body any, header ...string) *http.Response {
	t.Helper()
	var r io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		r = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, url, r)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestProxyInfill: the forwarded /infill request holds the client's fields unchanged
// and its own chunk first, then repository parts: a definition from another file among
// them, none of IssueService.kt's visible lines, none repeating the client's chunk.
func TestProxyInfill(t *testing.T) {
	ts, m, dir := proxyServer(t, nil)
	req := infillRequest(t, dir, "val load = repository.findByAssignee(assignee).")
	resp := send(t, "POST", ts.url+"/infill", req, "Authorization", "Bearer secret-key")
	if got := readAll(t, resp); resp.StatusCode != 200 || got != `{"content":"value","stop":true}` {
		t.Fatalf("client got %d %q", resp.StatusCode, got)
	}
	sent := m.body(t, "/infill")
	for k, v := range req {
		if k != "input_extra" && !reflect.DeepEqual(normalize(v), sent[k]) {
			t.Errorf("field %s: forwarded %#v, client sent %#v", k, sent[k], v)
		}
	}
	if len(sent) != len(req) {
		t.Errorf("forwarded %d fields, client sent %d", len(sent), len(req))
	}
	if h := m.hdr["/infill"].Get("Authorization"); h != "Bearer secret-key" {
		t.Errorf("Authorization forwarded as %q", h)
	}
	extra := sent["input_extra"].([]any)
	if !reflect.DeepEqual(extra[0], normalize(req["input_extra"].([]any)[0])) {
		t.Errorf("the client's chunk became %#v", extra[0])
	}
	if len(extra) < 2 {
		t.Fatalf("no repository parts added: %#v", extra)
	}
	other := false
	for _, e := range extra[1:] {
		c := e.(map[string]any)
		name, text := c["filename"].(string), c["text"].(string)
		t.Logf("part %s: %d bytes", name, len(text))
		if strings.HasSuffix(name, "IssueRepository.kt") && strings.Contains(text, "fun findByAssignee(") {
			other = true // the definition of the method before the cursor
		}

		if strings.Contains(text, "client chunk") {
			t.Errorf("part %s repeats the client's chunk", name)
		}
	}
	if !other {
		t.Errorf("no definition from another file among %#v", extra[1:])
	}
	st := ts.status(t).Proxy
	if st == nil || st.WithContext != 1 || st.Forwarded != 1 {
		t.Errorf("status %+v, want 1 forwarded with context", st)
	}
}

// normalize gives v the types encoding/json decodes it to.
func normalize(v any) any {
	raw, _ := json.Marshal(v)
	var out any
	json.Unmarshal(raw, &out)
	return out
}

// TestProxyInfillStreams: a streamed answer reaches the client chunk by chunk (the fake
// server sends the second chunk only once the client has the first).
func TestProxyInfillStreams(t *testing.T) {
	ts, m, dir := proxyServer(t, nil)
	req := infillRequest(t, dir, "val load = repository.findByAssignee(assignee).")
	req["stream"] = true
	resp := send(t, "POST", ts.url+"/infill", req)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	rd := bufio.NewReader(resp.Body)
	for i, want := range []string{"fun", " x", "()"} {
		if i > 0 {
			m.next <- struct{}{} // the fake sends the next chunk only now
		}
		got := make(chan string, 1)
		go func() {
			l, _ := rd.ReadString('\n')
			rd.ReadString('\n') // the blank line ending the event
			got <- l
		}()
		select {
		case l := <-got:
			if !strings.Contains(l, `"content":"`+want+`"`) {
				t.Fatalf("chunk %d: %q, want content %q", i, l, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("chunk %d did not arrive before the next was sent: the answer is buffered", i)
		}
	}
}

// TestProxyErrors: the upstream's status and body reach the client; an unreachable
// upstream is a 502; a client that goes away cancels the upstream request.
func TestProxyErrors(t *testing.T) {
	ts, m, dir := proxyServer(t, nil)
	resp := send(t, "POST", ts.url+"/infill", infillRequest(t, dir, "val load = "), "X-Fail", "1")
	if got := readAll(t, resp); resp.StatusCode != 500 || !strings.Contains(got, "model crashed") {
		t.Errorf("/infill: client got %d %q, want the upstream's 500", resp.StatusCode, got)
	}
	resp = send(t, "GET", ts.url+"/props", nil, "X-Fail", "1")
	if got := readAll(t, resp); resp.StatusCode != 500 || !strings.Contains(got, "model crashed") {
		t.Errorf("/props: client got %d %q, want the upstream's 500", resp.StatusCode, got)
	}
	resp = send(t, "GET", ts.url+"/health", nil)
	if got := readAll(t, resp); resp.StatusCode != 200 || got != `{"status":"ok"}` {
		t.Errorf("/health: client got %d %q", resp.StatusCode, got)
	}
	// A client that goes away.
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.url+"/slow", nil)
	go func() {
		time.Sleep(100 * time.Millisecond)
		cancel()
	}()
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
	select {
	case <-m.gone:
	case <-time.After(10 * time.Second):
		t.Error("the upstream request went on after the client went away")
	}
	// An upstream that is gone.
	m.Close()
	resp = send(t, "POST", ts.url+"/infill", infillRequest(t, dir, "val load = "))
	if got := readAll(t, resp); resp.StatusCode != http.StatusBadGateway || !strings.Contains(got, "did not answer") {
		t.Errorf("upstream down: client got %d %q, want 502", resp.StatusCode, got)
	}
}

// TestProxyDeadline: a context that takes longer than the deadline is not waited for:
// the request goes as the client sent it, and the reason is counted.
func TestProxyDeadline(t *testing.T) {
	ts, m, dir := proxyServer(t, func(c *Config) { c.Proxy.ContextDeadline = time.Millisecond })
	release := make(chan struct{})
	ts.proxy.hook = func() { <-release } // the composition ends only after the test
	t.Cleanup(func() { close(release) })
	req := infillRequest(t, dir, "val load = repository.findByAssignee(assignee).")
	start := time.Now()
	resp := send(t, "POST", ts.url+"/infill", req)
	if got := readAll(t, resp); resp.StatusCode != 200 || got != `{"content":"value","stop":true}` {
		t.Fatalf("client got %d %q", resp.StatusCode, got)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the request took %v: the proxy waited for the context", d)
	}
	if sent := m.body(t, "/infill"); !reflect.DeepEqual(sent, normalize(req)) {
		t.Errorf("forwarded %#v, want the client's request unchanged", sent)
	}
	st := ts.status(t).Proxy
	if st.WithoutContext["deadline"] != 1 || st.WithContext != 0 || !strings.HasPrefix(st.LastWithout, "deadline") {
		t.Errorf("status %+v, want one request without context past the deadline", st)
	}
	if !strings.Contains(ts.log.String(), "without context (deadline)") {
		t.Errorf("no log line for the deadline:\n%s", ts.log.String())
	}
}

// TestProxyCompletions: an OpenAI-compatible FIM request (prompt and suffix) is sent
// as one FIM prompt with the context in front; one without suffix goes unchanged.
func TestProxyCompletions(t *testing.T) {
	ts, m, dir := proxyServer(t, func(c *Config) { c.Proxy.Window = 2000 })
	b, _ := os.ReadFile(filepath.Join(dir, servicePath))
	text := string(b)
	cut := strings.Index(text, "val load = repository.findByAssignee(assignee).") + 47
	req := map[string]any{"model": "qwen2.5-coder", "prompt": text[:cut], "suffix": text[cut:], "max_tokens": 64, "temperature": 0.1, "stream": false}
	resp := send(t, "POST", ts.url+"/v1/completions", req, "Authorization", "Bearer k")
	if got := readAll(t, resp); resp.StatusCode != 200 || !strings.Contains(got, `"text":"value"`) {
		t.Fatalf("client got %d %q", resp.StatusCode, got)
	}
	sent := m.body(t, "/v1/completions")
	prompt, _ := sent["prompt"].(string)
	if _, ok := sent["suffix"]; ok {
		t.Error("the suffix was forwarded besides the FIM prompt")
	}
	for _, k := range []string{"model", "max_tokens", "temperature", "stream"} {
		if !reflect.DeepEqual(sent[k], normalize(req[k])) {
			t.Errorf("field %s: forwarded %#v, client sent %#v", k, sent[k], req[k])
		}
	}
	// The context is trimmed from the left at a line: other files' parts, then the file.
	if strings.Count(prompt, "<|file_sep|>") < 2 || !strings.Contains(prompt, "<|file_sep|>"+servicePath+"\n<|fim_prefix|>") ||
		!strings.HasSuffix(prompt, "<|fim_suffix|>"+text[cut:]+"<|fim_middle|>") {
		t.Errorf("prompt is not a repository-level qwen2.5 FIM prompt:\n%.600s\n...", prompt)
	}
	if n := len(prompt) / 4; n > 2000 {
		t.Errorf("prompt of about %d tokens, over the window of 2000", n)
	}
	// A prompt the client templated itself passes byte for byte.
	raw := `{"model":"m","prompt":"<|fim_prefix|>a<|fim_suffix|>b<|fim_middle|>",  "max_tokens":5}`
	hr, _ := http.NewRequest("POST", ts.url+"/v1/completions", strings.NewReader(raw))
	r2, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	r2.Body.Close()
	m.mu.Lock()
	got := string(m.got["/v1/completions"])
	m.mu.Unlock()
	if got != raw {
		t.Errorf("templated prompt forwarded as %q, want %q", got, raw)
	}
	if st := ts.status(t).Proxy; st.WithContext != 1 || st.WithoutContext["templated"] != 1 {
		t.Errorf("status %+v", st)
	}
}

// TestLocateSiblings: the completion file is found among near-identical siblings by
// the lines they do not share; a path in the request wins; text found nowhere still
// gets a context.
func TestLocateSiblings(t *testing.T) {
	m := newFakeModel(t)
	dir := sampleWorkspace(t)
	var body strings.Builder
	for i := range 30 {
		body.WriteString("    fun step" + string(rune('A'+i%26)) + "(x: Int): Int = x * " + string(rune('0'+i%10)) + " + offset\n")
	}
	common := body.String()
	for _, name := range []string{"Alpha", "Beta", "Gamma"} {
		write(t, dir, "src/main/kotlin/com/acme/tracker/gen/"+name+"Steps.kt",
			"package com.acme.tracker.gen\n\nclass "+name+"Steps(private val offset: Int) {\n"+common+"    fun total() = stepA(1)\n}\n")
	}
	ts := startServer(t, []Folder{{Dir: dir}}, func(c *Config) { c.Proxy = ProxyConfig{Upstream: m.URL, ContextDeadline: time.Minute} })
	beta, _ := os.ReadFile(filepath.Join(dir, "src/main/kotlin/com/acme/tracker/gen/BetaSteps.kt"))
	cut := bytes.Index(beta, []byte("stepK(x: Int)"))
	prefix, suffix := string(beta[:cut]), string(beta[cut:])
	got, ok := locate(ts.ws, prefix, suffix)
	if !ok || got.path != "src/main/kotlin/com/acme/tracker/gen/BetaSteps.kt" {
		t.Errorf("located %+v, %v; want BetaSteps.kt", got, ok)
	}
	// Only the window near the cursor, as llama.vim sends it (the class line is in it).
	if got, ok := locate(ts.ws, prefix[strings.Index(prefix, "class"):], suffix[:200]); !ok || !strings.HasSuffix(got.path, "BetaSteps.kt") {
		t.Errorf("window: located %+v, %v; want BetaSteps.kt", got, ok)
	}
	if _, ok := locate(ts.ws, "nothing like this anywhere\nat all in the repo\n", ""); ok {
		t.Error("located a file for text found nowhere")
	}
	c, err := ts.composeFor(context.Background(), "", "", "val total = repository.findByAssignee(\n", "", ts.cfg.Compose)
	if err != nil || c.how != "none" || len(c.ctx.Parts) == 0 {
		t.Errorf("no file: %s, %d parts, %v; want a context anyway", c.how, len(c.ctx.Parts), err)
	}
	c, err = ts.composeFor(context.Background(), "src/main/kotlin/com/acme/tracker/gen/GammaSteps.kt", "", prefix, suffix, ts.cfg.Compose)
	if err != nil || c.how != "request" || !strings.HasSuffix(c.path, "GammaSteps.kt") {
		t.Errorf("named path: %s %s, %v", c.how, c.path, err)
	}
}

// TestContinueProvider: Continue's HTTP context provider gets context items of the
// repository for the chat input.
func TestContinueProvider(t *testing.T) {
	dir := sampleWorkspace(t)
	ts := startServer(t, []Folder{{Dir: dir}}, nil)
	body := map[string]any{"query": "", "fullInput": "Why does createIssue reject a blank title?\nval issue = repository.findById(id)", "workspacePath": "file://" + filepath.ToSlash(dir)}
	resp := send(t, "POST", ts.url+"/v1/continue/context", body)
	var items []ContinueItem
	if err := json.NewDecoder(resp.Body).Decode(&items); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%d: %v", resp.StatusCode, err)
	}
	if len(items) == 0 {
		t.Fatal("no context items")
	}
	for _, it := range items {
		if it.Name == "" || !strings.HasPrefix(it.Content, "```") || it.URI == nil || !strings.HasPrefix(it.URI.Value, "file://") {
			t.Errorf("item %+v", it)
		}
	}
	resp = send(t, "POST", ts.url+"/v1/continue/context", map[string]any{"query": "", "fullInput": "x", "options": map[string]any{"workspace": "elsewhere"}})
	if got := readAll(t, resp); resp.StatusCode != 400 || !strings.Contains(got, "options.workspace") {
		t.Errorf("unknown workspace: %d %s", resp.StatusCode, got)
	}
	// Assembly options are a context request's: checked by the option table.
	for opts, want := range map[string]string{`{"budget": 0}`: "options.budget", `{"top_kk": 3}`: "unknown field", `{"path": 3}`: "options.path"} {
		var o map[string]any
		if err := json.Unmarshal([]byte(opts), &o); err != nil {
			t.Fatal(err)
		}
		resp = send(t, "POST", ts.url+"/v1/continue/context", map[string]any{"query": "", "fullInput": "x", "options": o})
		if got := readAll(t, resp); resp.StatusCode != 400 || !strings.Contains(got, want) {
			t.Errorf("options %s: %d %s, want 400 naming %s", opts, resp.StatusCode, got, want)
		}
	}
	resp = send(t, "POST", ts.url+"/v1/continue/context", map[string]any{"query": "", "fullInput": "findByAssignee", "options": map[string]any{"budget": 200}})
	var small []ContinueItem
	if err := json.NewDecoder(resp.Body).Decode(&small); err != nil || resp.StatusCode != 200 {
		t.Fatalf("budget 200: %d: %v", resp.StatusCode, err)
	}
	total := 0
	for _, it := range small {
		total += len(it.Content)
	}
	if total > 400 {
		t.Errorf("budget 200 gave %d bytes of items", total)
	}
}

// TestOpenAPIProxy checks that docs/openapi.yaml describes the endpoints and JSON
// fields of the proxy and of the Continue provider.
func TestOpenAPIProxy(t *testing.T) {
	doc, err := os.ReadFile("../docs/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/infill", "/v1/completions", "/v1/continue/context", "/{any}", "/v1/files", "/v1/file", "/v1/chunks", "/"} {
		if !strings.Contains(string(doc), "\n  "+p+":") {
			t.Errorf("docs/openapi.yaml does not describe %s", p)
		}
	}
	for _, v := range []any{ProxyStatus{}, ContinueRequest{}, ContinueOptions{}, ContinueItem{}, ContinueURI{}, StatusResponse{}, FilesResponse{}, WorkspaceFiles{}, FileResponse{}, ChunksResponse{}, ChunkSpan{}} {
		rt := reflect.TypeOf(v)
		for i := range rt.NumField() {
			name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			if !strings.Contains(string(doc), "\n        "+name+":") && !strings.Contains(string(doc), "\n                  "+name+":") {
				t.Errorf("docs/openapi.yaml does not describe %s.%s (%q)", rt.Name(), rt.Field(i).Name, name)
			}
		}
	}
	for _, f := range []string{"input_prefix", "input_suffix", "prompt", "input_extra", "suffix", PathField, WorkspaceField} {
		if !strings.Contains(string(doc), "\n        "+f+":") {
			t.Errorf("docs/openapi.yaml does not describe the request field %s", f)
		}
	}
}

// TestProxyEncodedBody: a content-encoded /infill body is forwarded as sent, byte
// for byte with its Content-Encoding, and counted as "encoded".
func TestProxyEncodedBody(t *testing.T) {
	ts, m, dir := proxyServer(t, nil)
	plain, err := json.Marshal(infillRequest(t, dir, "val load = "))
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(plain)
	zw.Close()
	req, _ := http.NewRequest("POST", ts.url+"/infill", bytes.NewReader(gz.Bytes()))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Content-Encoding", "gzip")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp)
	m.mu.Lock()
	got, enc := m.got["/infill"], m.hdr["/infill"].Get("Content-Encoding")
	m.mu.Unlock()
	if !bytes.Equal(got, gz.Bytes()) || enc != "gzip" {
		t.Errorf("upstream got %d bytes with Content-Encoding %q, want the client's %d gzip bytes", len(got), enc, gz.Len())
	}
	if st := readAll(t, send(t, "GET", ts.url+"/v1/status", nil)); !strings.Contains(st, `"encoded":1`) {
		t.Errorf("/v1/status does not count the encoded body: %s", st)
	}
}

// TestProxyUpstreamCredentials: a user and password in --upstream reach the model
// server as basic auth (unless the client sends its own Authorization) and never
// show in /v1/status.
func TestProxyUpstreamCredentials(t *testing.T) {
	ts, m, _ := proxyServer(t, func(c *Config) {
		u, err := url.Parse(c.Proxy.Upstream)
		if err != nil {
			t.Fatal(err)
		}
		u.User = url.UserPassword("user", "s3cret")
		c.Proxy.Upstream = u.String()
	})
	readAll(t, send(t, "GET", ts.url+"/health", nil))
	m.mu.Lock()
	user, pw, ok := (&http.Request{Header: m.hdr["/health"]}).BasicAuth()
	m.mu.Unlock()
	if !ok || user != "user" || pw != "s3cret" {
		t.Errorf("upstream got basic auth %q %q %v, want the URL's", user, pw, ok)
	}
	readAll(t, send(t, "GET", ts.url+"/health", nil, "Authorization", "Bearer k"))
	m.mu.Lock()
	got := m.hdr["/health"].Get("Authorization")
	m.mu.Unlock()
	if got != "Bearer k" {
		t.Errorf("upstream got Authorization %q, want the client's", got)
	}
	if st := readAll(t, send(t, "GET", ts.url+"/v1/status", nil)); strings.Contains(st, "s3cret") {
		t.Errorf("/v1/status shows the password: %s", st)
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

const sampleRepo = "../../testdata/sample/repositories-python-sample/acme__invoicing-3883f317f2454c5c841829b87ede02c71c20ef65"

// fakeEndpoint is an OpenAI-compatible completions server in the test process: it
// answers text (or fails with status when it is not 200) and records the prompts.
type fakeEndpoint struct {
	srv     *httptest.Server
	mu      sync.Mutex
	prompts []string
}

func newFakeEndpoint(t *testing.T, status int, text string) *fakeEndpoint {
	t.Helper()
	f := &fakeEndpoint{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Prompt string }
		json.NewDecoder(r.Body).Decode(&req)
		f.mu.Lock()
		f.prompts = append(f.prompts, req.Prompt)
		f.mu.Unlock()
		if r.URL.Path != "/v1/completions" {
			http.NotFound(w, r)
			return
		}
		if status != http.StatusOK {
			w.WriteHeader(status)
			fmt.Fprint(w, `{"error":{"message":"the model is overloaded"}}`)
			return
		}
		fmt.Fprintf(w, `{"choices":[{"text":%q,"finish_reason":"stop"}],"usage":{"prompt_tokens":99,"completion_tokens":5}}`, text)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeEndpoint) url() string { return f.srv.URL + "/v1" }

func (f *fakeEndpoint) last(t *testing.T) string {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.prompts) == 0 {
		t.Fatal("the endpoint got no request")
	}
	return f.prompts[len(f.prompts)-1]
}

const holePrefix = "from .money import parse_amount\n\n\ndef total(values):\n    return sum("

func holeFiles(t *testing.T) (string, string) {
	dir := t.TempDir()
	pf, sf := filepath.Join(dir, "p.txt"), filepath.Join(dir, "s.txt")
	must(t, os.WriteFile(pf, []byte(holePrefix), 0o644))
	must(t, os.WriteFile(sf, []byte(")\n\n\nprint(total([]))\n"), 0o644))
	return pf, sf
}

func TestCompleteCmd(t *testing.T) {
	ep := newFakeEndpoint(t, http.StatusOK, "parse_amount(v) for v in values<|file_sep|>junk")
	pf, sf := holeFiles(t)
	cache := t.TempDir()
	code, out, stderr := run(t, "complete", sampleRepo, "--file", "invoicing/total.py", "--prefix-file", pf, "--suffix-file", sf,
		"--endpoint", ep.url(), "--model", "qwen2.5-coder-7b", "--fim-template", "qwen2.5", "--cache-dir", cache, "--dense", "none")
	if code != exitOK || out != "parse_amount(v) for v in values" {
		t.Fatalf("exit %d, stdout %q, stderr %s", code, out, stderr)
	}
	p := ep.last(t)
	if !strings.HasPrefix(p, "<|file_sep|>") || !strings.HasSuffix(p, "<|file_sep|>invoicing/total.py\n<|fim_prefix|>"+holePrefix+
		"<|fim_suffix|>)\n\n\nprint(total([]))\n<|fim_middle|>") || !strings.Contains(p, "def parse_amount") {
		t.Errorf("prompt %q", p)
	}

	// --json: the token counts, the parts kept and the prompt sent; Mellum's format, a small window.
	code, out, stderr = run(t, "complete", sampleRepo, "--file", "invoicing/total.py", "--prefix-file", pf, "--suffix-file", sf,
		"--endpoint", ep.url(), "--model", "mellum", "--fim-template", "mellum", "--window", "600", "--cache-dir", cache, "--dense", "none", "--json")
	if code != exitOK {
		t.Fatalf("--json: exit %d: %s", code, stderr)
	}
	var v struct {
		Completion, Template, Prompt, Endpoint string
		Attempts                               int
		Tokens                                 struct {
			Counter            string
			Window, Completion int
			Prefix, Prompt     float64
			ContextLines       int `json:"context_lines"`
			KeptLines          int `json:"kept_lines"`
		}
		ServerUsage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"server_usage"`
		Parts []struct {
			Path      string
			StartLine int `json:"start_line"`
		}
	}
	must(t, json.Unmarshal([]byte(out), &v))
	// Mellum's stop strings do not hold Qwen's <|file_sep|>.
	if v.Completion != "parse_amount(v) for v in values<|file_sep|>junk" || v.Template != "mellum" || v.Attempts != 1 || v.Endpoint != ep.url()+"/completions" ||
		v.ServerUsage.PromptTokens != 99 || v.Prompt != ep.last(t) {
		t.Errorf("--json: %s", out)
	}
	if v.Tokens.Counter != "characters/4" || v.Tokens.Window != 600 || v.Tokens.Completion != 384 || v.Tokens.Prompt+384 > 600 || len(v.Parts) == 0 ||
		v.Tokens.KeptLines == 0 || v.Tokens.KeptLines >= v.Tokens.ContextLines {
		t.Errorf("--json tokens %+v, %d parts", v.Tokens, len(v.Parts))
	}
	if !strings.HasSuffix(v.Prompt, "<filename>invoicing/total.py\n<fim_suffix>)\n\n\nprint(total([]))\n<fim_prefix>"+holePrefix+"<fim_middle>") ||
		strings.Contains(v.Prompt, "<|file_sep|>") {
		t.Errorf("mellum prompt %q", v.Prompt)
	}
}

// The cursor by --line and --column, the file on standard input.
func TestCompleteCmdStdin(t *testing.T) {
	ep := newFakeEndpoint(t, http.StatusOK, "x")
	exe, err := os.Executable()
	must(t, err)
	cmd := exec.Command(exe, "complete", sampleRepo, "--file", "invoicing/total.py", "--line", "2", "--column", "5",
		"--endpoint", ep.url(), "--model", "m", "--fim-template", "starcoder2", "--cache-dir", t.TempDir(), "--dense", "none")
	cmd.Env = append(os.Environ(), "REPOCTX_RUN_MAIN=1")
	cmd.Stdin = strings.NewReader("import os\nret é\nprint(1)\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || stdout.String() != "x" {
		t.Fatalf("%v: stdout %q, stderr %s", err, stdout.String(), stderr.String())
	}
	if p := ep.last(t); !strings.HasSuffix(p, "<file_sep><fim_prefix>invoicing/total.py\nimport os\nret <fim_suffix>é\nprint(1)\n<fim_middle>") {
		t.Errorf("prompt %q", p)
	}
}

func TestCompleteCmdEndpointFails(t *testing.T) {
	pf, sf := holeFiles(t)
	ep := newFakeEndpoint(t, http.StatusServiceUnavailable, "")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	refused := "http://" + l.Addr().String() + "/v1"
	l.Close()
	cache := t.TempDir()
	for _, tc := range []struct{ url, msg string }{
		{ep.url(), "HTTP 503: the model is overloaded (2 attempts)"},
		{refused, "connection refused (2 attempts)"},
	} {
		code, out, stderr := run(t, "complete", sampleRepo, "--file", "invoicing/total.py", "--prefix-file", pf, "--suffix-file", sf,
			"--endpoint", tc.url, "--model", "m", "--fim-template", "codestral", "--endpoint-retries", "1", "--cache-dir", cache, "--dense", "none")
		want := "repoctx: complete: POST " + tc.url + "/completions: "
		if code != exitError || out != "" || !strings.HasPrefix(stderr, want) || !strings.HasSuffix(stderr, tc.msg+"\n") || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 1 and one line %q...%q", tc.url, code, out, stderr, want, tc.msg)
		}
	}
}

func TestCompleteCmdUsage(t *testing.T) {
	pf, sf := holeFiles(t)
	base := []string{"complete", sampleRepo, "--file", "invoicing/total.py", "--model", "m", "--cache-dir", t.TempDir()}
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--prefix-file", pf, "--endpoint", "http://127.0.0.1:1/v1", "--fim-template", "gpt4"}, `unknown FIM template "gpt4"`},
		{[]string{"--prefix-file", pf, "--fim-template", "qwen2.5"}, "endpoint"},
		{[]string{"--prefix-file", pf, "--endpoint", "localhost:8080", "--fim-template", "qwen2.5"}, "--endpoint must be the base URL of an OpenAI-compatible API"},
		{[]string{"--prefix-file", pf, "--line", "1", "--column", "1", "--endpoint", "http://127.0.0.1:1/v1", "--fim-template", "qwen2.5"}, "not both"},
		{[]string{"--line", "1", "--endpoint", "http://127.0.0.1:1/v1", "--fim-template", "qwen2.5"}, "--line and --column go together"},
		{[]string{"--endpoint", "http://127.0.0.1:1/v1", "--fim-template", "qwen2.5"}, "give --prefix-file/--suffix-file, or --line and --column"},
		{[]string{"--prefix-file", pf, "--suffix-file", sf, "--window", "0", "--endpoint", "http://127.0.0.1:1/v1", "--fim-template", "qwen2.5"}, "--window must be a positive"},
		{[]string{"--prefix-file", pf, "--endpoint-retries", "-1", "--endpoint", "http://127.0.0.1:1/v1", "--fim-template", "qwen2.5"}, "--endpoint-retries must be"},
	} {
		code, _, stderr := run(t, append(base, tc.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tc.msg) {
			t.Errorf("%v: exit %d, stderr %q; want a usage error with %q", tc.args, code, stderr, tc.msg)
		}
	}
}

func TestCursorOffset(t *testing.T) {
	text := "ab\nçd\r\n\nlast"
	for _, tc := range []struct{ line, col, want int }{
		{1, 1, 0}, {1, 3, 2}, {2, 1, 3}, {2, 2, 5}, {2, 3, 6}, {3, 1, 8}, {4, 5, 13},
	} {
		got, err := cursorOffset(text, tc.line, tc.col)
		if err != nil || got != tc.want {
			t.Errorf("line %d column %d: %d, %v; want %d", tc.line, tc.col, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ line, col int }{{0, 1}, {5, 1}, {1, 4}, {1, 0}, {2, 4}} {
		if _, err := cursorOffset(text, tc.line, tc.col); err == nil {
			t.Errorf("line %d column %d: no error", tc.line, tc.col)
		}
	}
	if at, err := cursorOffset("a\n", 2, 1); err != nil || at != 2 {
		t.Errorf("the empty line after a final newline: %d, %v", at, err)
	}
}

func TestEvalCompleteEndpoint(t *testing.T) {
	ep := newFakeEndpoint(t, http.StatusOK, "    return x\n")
	code, out, stderr := run(t, "eval", "--data", "../../testdata/sample", "--lang", "python", "--stage", "sample", "--config", "empty",
		"--window", "8000", "--complete-endpoint", ep.url(), "--complete-model", "fake", "--fim-template", "mellum", "--cache-dir", t.TempDir())
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"model_chrf: chrF of the model's completion", "model_chrf: chrF of fake's completions (via " + ep.url() + "/completions, template mellum"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if p := ep.last(t); !strings.HasPrefix(p, "<fim_suffix>") {
		t.Errorf("empty context, mellum: prompt %q", p)
	}
	code, _, stderr = run(t, "eval", "--data", "../../testdata/sample", "--lang", "python", "--stage", "sample", "--config", "empty", "--complete-model", "fake")
	if code != exitUsage || !strings.Contains(stderr, "--complete-model needs --complete-endpoint") {
		t.Errorf("--complete-model alone: exit %d, %s", code, stderr)
	}
}

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/index"
	"github.com/repoctx/repoctx/serve"
)

const kotlinSample = "../../testdata/sample/repositories-kotlin-sample/acme__tracker-2bdd77b1ea5dbfec89a992ee2c1d7061bb4da0c9"

// queryJSON is what query --json prints.
type queryJSON struct {
	Parts   []repoctx.Part `json:"parts"`
	Context string         `json:"context"`
	Prefix  *string        `json:"prefix"`
	Suffix  *string        `json:"suffix"`
}

// TestQueryServeAgree composes 20 random holes of the sample repository with `repoctx
// query` (absolute --file, the whole file with --line/--column) and with a server on
// the same folder and cache, half of them with the planner (window 8000), before and
// after an edit: the answers must be the same, and the old file must be found.
func TestQueryServeAgree(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tracker")
	copyTree(t, kotlinSample, dir)
	cache := t.TempDir()
	cfg := serve.DefaultConfig()
	cfg.CacheDir = cache
	updated := make(chan serve.Update, 10)
	cfg.OnUpdate = func(u serve.Update) { updated <- u }
	srv, err := serve.New(context.Background(), []serve.Folder{{Dir: dir, Repo: index.FolderRepo(dir)}}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	<-updated
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()

	var files []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".kt") {
			files = append(files, p)
		}
		return nil
	})
	rng := rand.New(rand.NewPCG(20, 13))
	oldFile, empty := 0, 0
	for i := range 20 {
		if i == 10 { // an edit: both must see it
			p := files[0]
			raw, _ := os.ReadFile(p)
			must(t, os.WriteFile(p, append(raw, "\nfun addedBetweenHoles(n: Int): Int = n + 1\n"...), 0o644))
			select {
			case <-updated:
			case <-time.After(20 * time.Second):
				t.Fatal("the edit was not seen")
			}
		}
		path := files[rng.IntN(len(files))]
		raw, err := os.ReadFile(path)
		must(t, err)
		text := string(raw)
		lines := strings.Split(text, "\n")
		line := 1 + rng.IntN(len(lines))
		column := 1 + rng.IntN(utf8.RuneCountInString(lines[line-1])+1)
		textFile := filepath.Join(t.TempDir(), "buffer.kt")
		must(t, os.WriteFile(textFile, raw, 0o644))
		args := []string{"query", dir, "--file", path, "--text-file", textFile, "--line", fmt.Sprint(line), "--column", fmt.Sprint(column), "--json", "--cache-dir", cache}
		req := map[string]any{"path": path, "text": text, "line": line, "column": column}
		if i%2 == 1 {
			args = append(args, "--plan-window", "8000")
			req["options"] = map[string]any{"plan_window": 8000}
		}
		code, stdout, stderr := run(t, args...)
		if code != 0 {
			t.Fatalf("query: exit %d: %s", code, stderr)
		}
		var q queryJSON
		must(t, json.Unmarshal([]byte(stdout), &q))
		body, _ := json.Marshal(req)
		resp, err := http.Post(hs.URL+"/v1/context", "application/json", bytes.NewReader(body))
		must(t, err)
		var s serve.ContextResponse
		must(t, json.NewDecoder(resp.Body).Decode(&s))
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("serve: %d", resp.StatusCode)
		}
		if q.Context != s.Context || !reflect.DeepEqual(q.Parts, s.Parts) || !reflect.DeepEqual(q.Prefix, s.Prefix) || !reflect.DeepEqual(q.Suffix, s.Suffix) {
			t.Errorf("hole %d (%s %d:%d): query and serve differ:\nquery %v\nserve %v", i, path, line, column, q.Parts, s.Parts)
		}
		if s.Context == "" {
			empty++
		}
		for _, p := range s.Parts {
			if strings.Contains(strings.Join(p.Why, " "), "old-file") {
				oldFile++
				break
			}
		}
	}
	if empty > 2 {
		t.Errorf("%d of 20 contexts are empty", empty)
	}
	if oldFile == 0 {
		t.Errorf("no answer holds the old file's chunks: the absolute --file was not resolved")
	}
}

// TestQueryCursor checks query's cursor mode: the whole file on standard input with
// --line/--column (or --offset) gives the answer of --prefix-file/--suffix-file, and
// bad positions and paths are usage errors naming the flag.
func TestQueryCursor(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tracker")
	copyTree(t, kotlinSample, dir)
	cache := t.TempDir()
	rel := "src/main/kotlin/com/acme/tracker/util/Extensions.kt"
	raw, err := os.ReadFile(filepath.Join(dir, rel))
	must(t, err)
	text := string(raw)
	off := strings.Index(text, "fun Issue.isStale")
	line := strings.Count(text[:off], "\n") + 1
	pf, sf := filepath.Join(t.TempDir(), "p"), filepath.Join(t.TempDir(), "s")
	must(t, os.WriteFile(pf, raw[:off], 0o644))
	must(t, os.WriteFile(sf, raw[off:], 0o644))
	_, want, _ := run(t, "query", dir, "--file", rel, "--prefix-file", pf, "--suffix-file", sf, "--cache-dir", cache)

	// Standard input, in a subprocess.
	cmd := exec.Command(os.Args[0], "query", dir, "--file", filepath.Join(dir, rel), "--line", fmt.Sprint(line), "--column", "1", "--cache-dir", cache)
	cmd.Env = append(os.Environ(), "REPOCTX_RUN_MAIN=1")
	cmd.Stdin = bytes.NewReader(raw)
	got, err := cmd.Output()
	if err != nil {
		t.Fatalf("query with the text on standard input: %v", err)
	}
	if string(got) != want || want == "" {
		t.Fatalf("--line/--column on standard input differs from --prefix-file/--suffix-file:\n%s\n---\n%s", got, want)
	}
	tf := filepath.Join(t.TempDir(), "text")
	must(t, os.WriteFile(tf, raw, 0o644))
	if _, got, _ := run(t, "query", dir, "--file", rel, "--text-file", tf, "--offset", fmt.Sprint(off), "--cache-dir", cache); got != want {
		t.Fatalf("--offset differs")
	}
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--file", rel, "--text-file", tf, "--line", "999", "--column", "1"}, "--line: line 999 is past the end"},
		{[]string{"--file", rel, "--text-file", tf, "--line", "1", "--column", "999"}, "--column: column 999 is past the end of line 1"},
		{[]string{"--file", rel, "--text-file", tf, "--line", "1"}, "--line and --column go together"},
		{[]string{"--file", rel, "--text-file", tf, "--offset", "-1"}, "--offset: offset -1 is outside"},
		{[]string{"--file", rel, "--text-file", tf, "--offset", "1", "--prefix-file", pf}, "not both"},
		{[]string{"--file", rel, "--text-file", tf}, "--text-file needs a cursor"},
		{[]string{"--file", "/etc/passwd", "--prefix-file", pf}, "--file: path /etc/passwd is outside the workspace"},
		{[]string{"--file", "../x.kt", "--prefix-file", pf}, "--file: path ../x.kt is not a file inside"},
	} {
		code, _, stderr := run(t, append([]string{"query", dir, "--cache-dir", cache}, c.args...)...)
		if code != exitUsage || !strings.Contains(stderr, c.msg) {
			t.Errorf("%v: exit %d, %q; want exit %d with %q", c.args, code, stderr, exitUsage, c.msg)
		}
	}
}

// TestServeCommand runs `repoctx serve` as a process: it prints its address, answers,
// follows a new file and stops gracefully on SIGTERM.
func TestServeCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tracker")
	copyTree(t, kotlinSample, dir)
	cmd := exec.Command(os.Args[0], "serve", "--addr", "127.0.0.1:0", "--cache-dir", t.TempDir(), dir)
	cmd.Env = append(os.Environ(), "REPOCTX_RUN_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(out)
	addr := ""
	for lines.Scan() {
		if a, ok := strings.CutPrefix(lines.Text(), "listening on "); ok {
			addr = a
			break
		}
	}
	if addr == "" {
		cmd.Wait()
		t.Fatalf("no address printed; stderr:\n%s", stderr.String())
	}
	post := func(body string) (int, string) {
		resp, err := http.Post(addr+"/v1/context", "application/json", strings.NewReader(body))
		must(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	os.WriteFile(filepath.Join(dir, "src", "New.kt"), []byte("package x\n\nfun brandNewFunction(): Int = 3\n"), 0o644)
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, body := post(`{"path": "src/Use.kt", "prefix": "fun use() = brandNewFunction(", "suffix": ")\n"}`)
		if code != 200 {
			t.Fatalf("%d %s", code, body)
		}
		if strings.Contains(body, "fun brandNewFunction") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the new file is not served:\n%s", body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if code, body := post(`{"path": "src/Use.kt", "prefix": "x", "options": {"top_k": -1}}`); code != 400 || !strings.Contains(body, "options.top_k") {
		t.Fatalf("bad option: %d %s", code, body)
	}
	if code, body := post(`{"path": "src/Use.kt", "prefix": "x", "options": {"top_k": 100000000}}`); code != 400 || !strings.Contains(body, "options.top_k must be a positive number of chunks up to 10000") {
		t.Fatalf("huge top_k: %d %s", code, body)
	}
	must(t, cmd.Process.Signal(syscall.SIGTERM))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve exited with %v after SIGTERM; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop within 15 s of SIGTERM")
	}
	if !strings.Contains(stderr.String(), "stopped") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	// Usage errors.
	if code, _, stderr := run(t, "serve"); code != exitUsage || !strings.Contains(stderr, "give one or more workspace folders") {
		t.Errorf("no folder: %d %s", code, stderr)
	}
	if code, _, stderr := run(t, "serve", "--watch", "sometimes", dir); code != exitUsage || !strings.Contains(stderr, "--watch must be auto or poll") {
		t.Errorf("bad --watch: %d %s", code, stderr)
	}
}

// TestServeBusyPort: a busy --addr fails before any indexing (exit 1, the address
// named), not after the workspace is indexed.
func TestServeBusyPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer ln.Close()
	dir := filepath.Join(t.TempDir(), "tracker")
	copyTree(t, kotlinSample, dir)
	cache := t.TempDir()
	code, _, stderr := run(t, "serve", "--addr", ln.Addr().String(), "--cache-dir", cache, dir)
	if code != exitError || !strings.Contains(stderr, ln.Addr().String()) {
		t.Errorf("busy port: exit %d, stderr %q; want exit 1 naming %s", code, stderr, ln.Addr())
	}
	if ents, _ := os.ReadDir(cache); len(ents) != 0 {
		t.Errorf("busy port: the workspace was indexed first (cache holds %d entries)", len(ents))
	}
}

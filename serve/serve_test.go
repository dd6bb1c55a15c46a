package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/assemble"
)

// sampleRepo is a small Kotlin repository of the test data.
const sampleRepo = "../testdata/sample/repositories-kotlin-sample/acme__tracker-2bdd77b1ea5dbfec89a992ee2c1d7061bb4da0c9"

const utilDir = "src/main/kotlin/com/acme/tracker/util"

// sampleWorkspace copies the sample repository into a new folder with a .gitignore
// that hides secret/ and *.gen.kt, and one file of each.
func sampleWorkspace(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tracker")
	err := filepath.WalkDir(sampleRepo, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(sampleRepo, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, ".gitignore", "secret/\n*.gen.kt\n")
	write(t, dir, "secret/Hidden.kt", "package secret\n\nfun hiddenSecretHelper(): Int = 7\n")
	write(t, dir, utilDir+"/Output.gen.kt", "package com.acme.tracker.util\n\nfun generatedSecretHelper(): Int = 8\n")
	return dir
}

func write(t *testing.T, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// testServer is a server on a loopback listener, with its updates.
type testServer struct {
	*Server
	url     string
	log     *syncBuffer
	mu      sync.Mutex
	updates []Update
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startServer(t *testing.T, folders []Folder, edit func(*Config)) *testServer {
	t.Helper()
	ts := &testServer{log: &syncBuffer{}}
	cfg := DefaultConfig()
	cfg.CacheDir = t.TempDir()
	cfg.Log = ts.log
	cfg.PollInterval = 20 * time.Millisecond
	cfg.OnUpdate = func(u Update) {
		ts.mu.Lock()
		ts.updates = append(ts.updates, u)
		ts.mu.Unlock()
	}
	if edit != nil {
		edit(&cfg)
	}
	srv, err := New(context.Background(), folders, cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		hs.Close()
		srv.Close()
		if t.Failed() {
			t.Logf("server log:\n%s", ts.log.String())
		}
	})
	ts.Server, ts.url = srv, hs.URL
	return ts
}

func (ts *testServer) nUpdates() int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return len(ts.updates)
}

// waitFor polls cond every 10 ms for at most 20 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// post sends body (a value to marshal, or a string sent as is) to path and returns
// the status code and the raw response.
func (ts *testServer) post(t *testing.T, body any, header ...string) (int, []byte) {
	t.Helper()
	var raw []byte
	if s, ok := body.(string); ok {
		raw = []byte(s)
	} else {
		raw, _ = json.Marshal(body)
	}
	req, _ := http.NewRequest("POST", ts.url+"/v1/context", bytes.NewReader(raw))
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
		} else {
			req.Header.Set(header[i], header[i+1])
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// context posts a hole and returns the response, failing on any error.
func (ts *testServer) context(t *testing.T, body any) ContextResponse {
	t.Helper()
	code, raw := ts.post(t, body)
	if code != 200 {
		t.Fatalf("POST /v1/context: %d %s", code, raw)
	}
	var out ContextResponse
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func (ts *testServer) status(t *testing.T) StatusResponse {
	t.Helper()
	resp, err := http.Get(ts.url + "/v1/status")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st StatusResponse
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

// settle waits until the workspaces have no change pending and made at least n views.
func (ts *testServer) settle(t *testing.T, n int) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%d updates", n), func() bool {
		if ts.nUpdates() < n {
			return false
		}
		for _, w := range ts.status(t).Workspaces {
			if w.Pending > 0 {
				return false
			}
		}
		return true
	})
}

// caller is a hole in Extensions.kt that calls name.
func caller(name string) map[string]any {
	return map[string]any{"path": utilDir + "/Extensions.kt", "prefix": "package com.acme.tracker.util\n\nfun probe(): Int {\n    return " + name + "(", "suffix": ")\n}\n"}
}

func paths(r ContextResponse) []string {
	var ps []string
	for _, p := range r.Parts {
		ps = append(ps, p.Path)
	}
	return ps
}

// TestLiveWorkspace edits, adds, deletes and renames files and folders of a served
// workspace and checks that the answers follow, and that ignored files never appear.
func TestLiveWorkspace(t *testing.T) {
	for _, mode := range []WatchMode{WatchAuto, WatchPoll} {
		t.Run(string(mode), func(t *testing.T) {
			dir := sampleWorkspace(t)
			ts := startServer(t, []Folder{{Dir: dir}}, func(c *Config) { c.Watch = mode })
			st := ts.status(t).Workspaces[0]
			wantWatch := map[WatchMode]string{WatchAuto: "fsnotify", WatchPoll: "polling"}[mode]
			if st.Files != 13 || st.Watch != wantWatch || st.Name != "tracker" || st.Updates != 1 {
				t.Fatalf("status %+v: want 13 files ( .gitignore'd and .gen.kt files left out), watch %s, 1 update", st, wantWatch)
			}
			noSecrets := func(r ContextResponse) {
				t.Helper()
				if strings.Contains(r.Context, "SecretHelper") {
					t.Fatalf("an ignored file is in the context: %v", paths(r))
				}
			}
			noSecrets(ts.context(t, caller("hiddenSecretHelper")))
			noSecrets(ts.context(t, caller("generatedSecretHelper")))

			// A new file: its function's definition reaches a hole calling it.
			fresh := utilDir + "/Fresh.kt"
			write(t, dir, fresh, "package com.acme.tracker.util\n\nfun freshlyAddedHelper(x: Int): Int = x * 42\n")
			ts.settle(t, 2)
			r := ts.context(t, caller("freshlyAddedHelper"))
			if !strings.Contains(r.Context, "fun freshlyAddedHelper(x: Int): Int = x * 42") {
				t.Fatalf("the new file's definition is not in the context: %v\n%s", paths(r), r.Context)
			}
			defFound := false
			for _, p := range r.Parts {
				for _, w := range p.Why {
					defFound = defFound || p.Path == fresh && strings.HasPrefix(w, "def:freshlyAddedHelper")
				}
			}
			if !defFound {
				t.Errorf("no definitions part for freshlyAddedHelper: %+v", r.Parts)
			}

			// An edit.
			write(t, dir, fresh, "package com.acme.tracker.util\n\nfun freshlyAddedHelper(x: Int): Int = x * 43 + zebraOffset\n")
			ts.settle(t, 3)
			r = ts.context(t, caller("freshlyAddedHelper"))
			if !strings.Contains(r.Context, "x * 43 + zebraOffset") || strings.Contains(r.Context, "x * 42") {
				t.Fatalf("the edit is not followed:\n%s", r.Context)
			}

			// A rename.
			renamed := utilDir + "/Renamed.kt"
			if err := os.Rename(filepath.Join(dir, fresh), filepath.Join(dir, renamed)); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the rename", func() bool {
				ps := strings.Join(paths(ts.context(t, caller("freshlyAddedHelper"))), " ")
				return strings.Contains(ps, renamed) && !strings.Contains(ps, fresh)
			})

			// A new folder with a file, then the folder renamed and deleted.
			write(t, dir, "src/main/kotlin/com/acme/tracker/extra/Deep.kt", "package com.acme.tracker.extra\n\nfun deeplyNestedHelper(): String = \"deep\"\n")
			waitFor(t, "the new folder's file", func() bool {
				return strings.Contains(ts.context(t, caller("deeplyNestedHelper")).Context, "fun deeplyNestedHelper")
			})
			if err := os.Rename(filepath.Join(dir, "src/main/kotlin/com/acme/tracker/extra"), filepath.Join(dir, "src/main/kotlin/com/acme/tracker/moved")); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the folder's rename", func() bool {
				ps := strings.Join(paths(ts.context(t, caller("deeplyNestedHelper"))), " ")
				return strings.Contains(ps, "tracker/moved/Deep.kt") && !strings.Contains(ps, "tracker/extra/")
			})
			// A file added to the renamed folder (its watch must follow).
			write(t, dir, "src/main/kotlin/com/acme/tracker/moved/More.kt", "package com.acme.tracker.moved\n\nfun movedFolderHelper(): Int = 99\n")
			waitFor(t, "a file in the renamed folder", func() bool {
				return strings.Contains(ts.context(t, caller("movedFolderHelper")).Context, "fun movedFolderHelper")
			})
			if err := os.RemoveAll(filepath.Join(dir, "src/main/kotlin/com/acme/tracker/moved")); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the folder's deletion", func() bool {
				return !strings.Contains(ts.context(t, caller("deeplyNestedHelper")).Context, "deeplyNestedHelper()")
			})

			// A delete.
			if err := os.Remove(filepath.Join(dir, renamed)); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the deletion", func() bool {
				return !strings.Contains(ts.context(t, caller("freshlyAddedHelper")).Context, "freshlyAddedHelper(x")
			})

			// Ignored files changing change nothing; an ignore rule changing does.
			n := ts.nUpdates()
			write(t, dir, "secret/Hidden.kt", "package secret\n\nfun hiddenSecretHelper(): Int = 8\n")
			write(t, dir, "secret/More.kt", "package secret\n\nfun moreSecretHelper(): Int = 9\n")
			write(t, dir, ".gitignore", "*.gen.kt\n"+utilDir+"/Extensions.kt\n")
			waitFor(t, "the .gitignore change", func() bool {
				r := ts.context(t, caller("hiddenSecretHelper"))
				return strings.Contains(r.Context, "fun hiddenSecretHelper(): Int = 8") && !strings.Contains(r.Context, "fun Issue.isOpen()")
			})
			if got := ts.nUpdates(); got != n+1 && mode == WatchAuto {
				t.Logf("updates %d -> %d (ignored files' events may be coalesced with the .gitignore change)", n, got)
			}
			ts.settle(t, n+1)
			if r := ts.context(t, caller("generatedSecretHelper")); strings.Contains(r.Context, "fun generatedSecretHelper") {
				t.Fatalf("a *.gen.kt file is in the context: %v", paths(r))
			}
			if st := ts.status(t).Workspaces[0]; st.Files != 13+2-1 {
				t.Errorf("files %d after un-ignoring secret/ (2 files) and ignoring Extensions.kt: want 14", st.Files)
			}
		})
	}
}

// TestPollRacyTimes: polling follows a change that keeps the modification time of the
// folder or file it changed, as a coarse file system clock makes it do when the change
// comes within a tick of the stat that polling took (the times are set back by hand here).
func TestPollRacyTimes(t *testing.T) {
	dir := sampleWorkspace(t)
	ts := startServer(t, []Folder{{Dir: dir}}, func(c *Config) { c.Watch = WatchPoll })
	w := ts.ws[0]
	var tick time.Time
	// setBack sets rel's times to tick.
	setBack := func(rel string) {
		t.Helper()
		if err := os.Chtimes(filepath.Join(dir, filepath.FromSlash(rel)), tick, tick); err != nil {
			t.Fatal(err)
		}
	}
	// readAtTick stamps rel with the time now and lets polls read it (they take 20 ms).
	readAtTick := func(rel string) {
		t.Helper()
		tick = time.Now().Truncate(time.Millisecond)
		setBack(rel)
		time.Sleep(100 * time.Millisecond)
	}

	// A new folder, listed empty; then a file in it, within the tick of the last listing.
	extra := "src/main/kotlin/com/acme/tracker/extra"
	if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(extra)), 0o755); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the new folder to be listed", func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		_, ok := w.dirs[extra]
		return ok
	})
	readAtTick(extra)
	write(t, dir, extra+"/Deep.kt", "package com.acme.tracker.extra\n\nfun deeplyNestedHelper(): String = \"deep\"\n")
	setBack(extra)
	waitFor(t, "the file added within the folder's tick", func() bool {
		return strings.Contains(ts.context(t, caller("deeplyNestedHelper")).Context, "fun deeplyNestedHelper")
	})

	// A file read; then rewritten with the same size within the tick of the last read.
	fresh := utilDir + "/Fresh.kt"
	write(t, dir, fresh, "package com.acme.tracker.util\n\nfun freshlyAddedHelper(x: Int): Int = x * 42\n")
	waitFor(t, "the new file", func() bool {
		return strings.Contains(ts.context(t, caller("freshlyAddedHelper")).Context, "x * 42")
	})
	readAtTick(fresh)
	write(t, dir, fresh, "package com.acme.tracker.util\n\nfun freshlyAddedHelper(x: Int): Int = x * 43\n")
	setBack(fresh)
	waitFor(t, "the edit within the file's tick", func() bool {
		return strings.Contains(ts.context(t, caller("freshlyAddedHelper")).Context, "x * 43")
	})
}

// TestWatchLimitFallback makes the system refuse watches (ENOSPC, inotify's answer
// when fs.inotify.max_user_watches is reached): the workspace says so once and polls
// (the first walk's folders are watched once the server listens: soon after).
func TestWatchLimitFallback(t *testing.T) {
	old := addWatch
	calls := 0
	addWatch = func(fw *fsnotify.Watcher, dir string) error {
		if calls++; calls > 3 {
			return fmt.Errorf("add %s: %w", dir, syscall.ENOSPC)
		}
		return fw.Add(dir)
	}
	t.Cleanup(func() { addWatch = old })
	dir := sampleWorkspace(t)
	ts := startServer(t, []Folder{{Dir: dir}}, nil)
	waitFor(t, "polling after ENOSPC", func() bool { return ts.status(t).Workspaces[0].Watch == "polling" })
	if n := strings.Count(ts.log.String(), "refuses more file watches"); n != 1 {
		t.Fatalf("%d fallback messages, want 1:\n%s", n, ts.log.String())
	}
	write(t, dir, utilDir+"/Polled.kt", "package com.acme.tracker.util\n\nfun polledHelper(): Int = 1\n")
	waitFor(t, "the polled change", func() bool {
		return strings.Contains(ts.context(t, caller("polledHelper")).Context, "fun polledHelper")
	})
}

// TestGuards checks the DNS-rebinding protection and the body limit.
func TestGuards(t *testing.T) {
	ts := startServer(t, []Folder{{Dir: sampleWorkspace(t)}}, func(c *Config) { c.MaxBodyBytes = 4096 })
	ok := map[string]any{"path": utilDir + "/Extensions.kt", "prefix": "fun a() {\n", "suffix": "}\n"}
	for _, c := range []struct {
		name   string
		body   any
		header []string
		code   int
		msg    string
	}{
		{"plain", ok, nil, 200, ""},
		{"localhost", ok, []string{"Host", "localhost:7411"}, 200, ""},
		{"ipv6 loopback", ok, []string{"Host", "[::1]:7411"}, 200, ""},
		{"local origin", ok, []string{"Origin", "http://localhost:3000"}, 200, ""},
		{"foreign host", ok, []string{"Host", "evil.example.com"}, 403, "Host"},
		{"rebound host", ok, []string{"Host", "attacker.test:7411"}, 403, "Host"},
		{"foreign origin", ok, []string{"Origin", "https://evil.example.com"}, 403, "Origin"},
		{"null origin", ok, []string{"Origin", "null"}, 403, "Origin"},
		{"too large", map[string]any{"path": "a.kt", "prefix": strings.Repeat("x", 5000)}, nil, 413, "over the limit"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, raw := ts.post(t, c.body, c.header...)
			if code != c.code || !strings.Contains(string(raw), c.msg) {
				t.Fatalf("got %d %s, want %d with %q", code, raw, c.code, c.msg)
			}
		})
	}
	// Without a Content-Length (chunked), the limit applies while reading.
	pr, pw := io.Pipe()
	go func() {
		pw.Write([]byte(`{"path":"a.kt","prefix":"` + strings.Repeat("x", 5000) + `"}`))
		pw.Close()
	}()
	resp, err := http.Post(ts.url+"/v1/context", "application/json", pr)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 413 {
		t.Fatalf("chunked body over the limit: %d, want 413", resp.StatusCode)
	}
	// Status and health are guarded too.
	req, _ := http.NewRequest("GET", ts.url+"/v1/status", nil)
	req.Header.Set("Origin", "https://evil.example.com")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 403 {
		t.Fatalf("GET /v1/status with a foreign Origin: %v %v", resp.StatusCode, err)
	}
	if resp, err := http.Get(ts.url + "/healthz"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /healthz: %v %v", resp, err)
	}
	if resp, err := http.Get(ts.url + "/v1/context"); err != nil || resp.StatusCode != 405 {
		t.Fatalf("GET /v1/context: %v %v, want 405", resp.StatusCode, err)
	}
}

// TestBadRequests checks that bad JSON, fields and positions get 400 naming the field.
func TestBadRequests(t *testing.T) {
	dir := sampleWorkspace(t)
	ts := startServer(t, []Folder{{Dir: dir}}, nil)
	p := utilDir + "/Extensions.kt"
	for _, c := range []struct {
		body any
		msg  string
	}{
		{`{"path": "a.kt", "prefix": `, "bad JSON"},
		{`{"path": "a.kt", "prefix": "x"} {}`, "more than one JSON value"},
		{``, "empty body"},
		{`[1]`, "must be a JSON object"},
		{`{"path": "a.kt", "prefx": "x"}`, `unknown field "prefx"`},
		{`{"path": "a.kt", "text": "abc", "line": "1", "column": 1}`, "line must be a JSON integer"},
		{`{"path": "a.kt", "prefix": "x", "options": {"top_k": "8"}}`, "options.top_k must be a JSON integer"},
		{`{"path": "a.kt", "prefix": "x", "options": {"topk": 8}}`, `unknown field "topk"`},
		{map[string]any{"prefix": "x"}, "path is required"},
		{map[string]any{"path": p}, "prefix and suffix"},
		{map[string]any{"path": p, "text": "abc"}, "text needs a cursor"},
		{map[string]any{"path": p, "text": "abc", "prefix": "a"}, "not both"},
		{map[string]any{"path": p, "text": "abc", "line": 1}, "column is required"},
		{map[string]any{"path": p, "text": "abc", "column": 1}, "line is required"},
		{map[string]any{"path": p, "text": "abc", "line": 1, "column": 1, "offset": 0}, "not both"},
		{map[string]any{"path": p, "text": "abc", "line": 0, "column": 1}, "line must be 1 or more"},
		{map[string]any{"path": p, "text": "abc\n", "line": 3, "column": 1}, "line 3 is past the end of the text (it has 2 lines)"},
		{map[string]any{"path": p, "text": "abc\n", "line": 1, "column": 5}, "column 5 is past the end of line 1"},
		{map[string]any{"path": p, "text": "é", "offset": 1}, "offset 1 falls inside a UTF-8 character"},
		{map[string]any{"path": p, "text": "abc", "offset": 4}, "offset 4 is outside the text"},
		{map[string]any{"path": p, "prefix": "x", "line": 1}, "go with text"},
		{map[string]any{"path": "/etc/passwd", "prefix": "x"}, "outside every served workspace"},
		{map[string]any{"path": "../outside.kt", "prefix": "x"}, "not a file inside the workspace"},
		{map[string]any{"path": p, "prefix": "x", "workspace": "nope"}, `workspace "nope" is not served`},
		{map[string]any{"path": p, "prefix": "x", "options": map[string]any{"top_k": 0}}, "options.top_k must be a positive number of chunks up to 10000, not 0"},
		{map[string]any{"path": p, "prefix": "x", "options": map[string]any{"plan_window": 100}}, "options.plan_window must be"},
		{map[string]any{"path": p, "prefix": "x", "options": map[string]any{"plan_window": int64(math.MaxInt64)}}, "not 9223372036854776000"}, // not wrapped to a negative int
		{map[string]any{"path": p, "prefix": "x", "options": map[string]any{"plan_share": 0.3}}, "need options.plan_window"},
		{map[string]any{"path": p, "prefix": "x", "options": map[string]any{"plan_context_window": 16000}}, "need options.plan_window"},
		{map[string]any{"path": p, "prefix": "x", "options": map[string]any{"plan_window": 8000, "plan_context_window": -1}}, "options.plan_context_window must be"},
		{map[string]any{"path": p, "prefix": "x", "modified": []string{"/etc/hosts"}}, "modified: path /etc/hosts is outside"},
	} {
		code, raw := ts.post(t, c.body)
		var e ErrorResponse
		json.Unmarshal(raw, &e)
		if code != 400 || !strings.Contains(e.Error, c.msg) {
			t.Errorf("%v: got %d %s, want 400 with %q", c.body, code, raw, c.msg)
		}
	}
	// The planner's zero values (its defaults) with the planner off are no error.
	if code, raw := ts.post(t, map[string]any{"path": p, "prefix": "x", "options": map[string]any{"plan_window": 0, "plan_share": 0, "plan_context_window": 0}}); code != 200 {
		t.Errorf("the planner's defaults with the planner off: %d %s, want 200", code, raw)
	}
	// The good forms of the same: an absolute path, a cursor by line/column and by offset.
	text := "package com.acme.tracker.util\n\nfun «x»() = é + \n"
	byLine := ts.context(t, map[string]any{"path": filepath.Join(dir, p), "text": text, "line": 3, "column": 16})
	off := strings.Index(text, "+") + 2
	byOffset := ts.context(t, map[string]any{"path": p, "text": text, "offset": off})
	byParts := ts.context(t, map[string]any{"path": p, "prefix": text[:off], "suffix": text[off:]})
	if byLine.Path != p || byLine.Context != byParts.Context || byOffset.Context != byParts.Context {
		t.Fatalf("line/column, offset and prefix/suffix answers differ (path %q)", byLine.Path)
	}
}

// TestSeveralWorkspaces checks how a request names its workspace.
func TestSeveralWorkspaces(t *testing.T) {
	a, b := sampleWorkspace(t), filepath.Join(t.TempDir(), "other")
	write(t, b, "Other.kt", "package other\n\nfun otherHelper(): Int = 5\n")
	ts := startServer(t, []Folder{{Dir: a}, {Dir: b}}, nil)
	hole := map[string]any{"path": "Other.kt", "prefix": "fun f() = otherHelper(", "suffix": ")\n"}
	if code, raw := ts.post(t, hole); code != 400 || !strings.Contains(string(raw), "workspace is required") {
		t.Fatalf("relative path, two workspaces: %d %s", code, raw)
	}
	hole["workspace"] = "other"
	if r := ts.context(t, hole); r.Workspace != "other" || !strings.Contains(r.Context, "fun otherHelper") {
		t.Fatalf("by name: %+v", r)
	}
	delete(hole, "workspace")
	hole["path"] = filepath.Join(b, "Other.kt")
	if r := ts.context(t, hole); r.Workspace != "other" || r.Path != "Other.kt" {
		t.Fatalf("by absolute path: %+v", r)
	}
	if st := ts.status(t); len(st.Workspaces) != 2 || st.Workspaces[1].Files != 1 {
		t.Fatalf("status: %+v", st)
	}
}

// TestConcurrentRequests posts from several goroutines while files change (run with
// -race): every answer is whole, views are swapped under the requests.
func TestConcurrentRequests(t *testing.T) {
	dir := sampleWorkspace(t)
	ts := startServer(t, []Folder{{Dir: dir}}, func(c *Config) { c.Debounce = time.Millisecond })
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 8)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				raw, _ := json.Marshal(caller("churnHelper"))
				resp, err := http.Post(ts.url+"/v1/context", "application/json", bytes.NewReader(raw))
				if err != nil {
					errs <- err
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					errs <- fmt.Errorf("status %d", resp.StatusCode)
					return
				}
			}
		}()
	}
	for i := range 10 {
		write(t, dir, utilDir+"/Churn.kt", fmt.Sprintf("package com.acme.tracker.util\n\nfun churnHelper(): Int = %d\n", i))
		time.Sleep(15 * time.Millisecond)
	}
	waitFor(t, "the last edit", func() bool {
		return strings.Contains(ts.context(t, caller("churnHelper")).Context, "fun churnHelper(): Int = 9")
	})
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestUnreadableFile checks that a file that cannot be read is logged and skipped, at
// the start and when it changes.
func TestUnreadableFile(t *testing.T) {
	wrapFS = func(fsys fs.FS) fs.FS { return lockedFS{fsys} }
	t.Cleanup(func() { wrapFS = nil })
	dir := sampleWorkspace(t)
	write(t, dir, utilDir+"/Locked.kt", "package com.acme.tracker.util\n\nfun lockedHelper() = 1\n")
	ts := startServer(t, []Folder{{Dir: dir}}, nil)
	if !strings.Contains(ts.log.String(), "Locked.kt: unreadable") {
		t.Fatalf("no log line for the unreadable file:\n%s", ts.log.String())
	}
	if st := ts.status(t).Workspaces[0]; st.Files != 13 {
		t.Fatalf("files %d, want the 13 readable ones", st.Files)
	}
	write(t, dir, utilDir+"/Locked.kt", "package com.acme.tracker.util\n\nfun lockedHelper() = 2\n")
	write(t, dir, utilDir+"/Open.kt", "package com.acme.tracker.util\n\nfun openHelper() = 2\n")
	ts.settle(t, 2)
	if n := strings.Count(ts.log.String(), "Locked.kt: unreadable"); n != 2 {
		t.Fatalf("%d log lines for the unreadable file, want 2:\n%s", n, ts.log.String())
	}
}

// lockedFS refuses to open files named Locked.kt.
type lockedFS struct{ fs.FS }

func (l lockedFS) Open(name string) (fs.File, error) {
	if strings.HasSuffix(name, "/Locked.kt") {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	return l.FS.Open(name)
}

func TestOffset(t *testing.T) {
	text := "ab\r\nçé🙂x\n\nlast"
	for _, c := range []struct {
		line, col, want int
		err             string
	}{
		{1, 1, 0, ""}, {1, 3, 2, ""}, {1, 4, 0, "column 4 is past the end of line 1 (it has 2 code points: columns 1 to 3)"},
		{2, 1, 4, ""}, {2, 2, 6, ""}, {2, 3, 8, ""}, {2, 4, 12, ""}, {2, 5, 13, ""}, {2, 6, 0, "past the end of line 2"},
		{3, 1, 14, ""}, {4, 5, 19, ""}, {5, 1, 0, "line 5 is past the end of the text (it has 4 lines)"},
		{0, 1, 0, "line must be 1 or more"}, {1, 0, 0, "column must be 1 or more"},
	} {
		got, err := Offset(text, c.line, c.col)
		if c.err != "" {
			var pe *PositionError
			if err == nil || !strings.Contains(err.Error(), c.err) || !errorsAs(err, &pe) {
				t.Errorf("Offset(%d, %d) = %d, %v; want error %q", c.line, c.col, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("Offset(%d, %d) = %d, %v; want %d", c.line, c.col, got, err, c.want)
		}
	}
	if _, err := Offset("", 1, 1); err != nil {
		t.Errorf("empty text: %v", err)
	}
}

func errorsAs(err error, pe **PositionError) bool {
	p, ok := err.(*PositionError)
	*pe = p
	return ok
}

func TestRelPath(t *testing.T) {
	root := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(root, "src"), 0o755)
	for _, c := range []struct{ p, want, err string }{
		{"src/a.kt", "src/a.kt", ""},
		{"./src//a.kt", "src/a.kt", ""},
		{filepath.Join(root, "src", "a.kt"), "src/a.kt", ""},
		{filepath.Join(link, "src", "a.kt"), "src/a.kt", ""},
		{"../a.kt", "", "not a file inside"},
		{".", "", "not a file inside"},
		{root, "", "outside the workspace"},
		{filepath.Join(filepath.Dir(root), "x.kt"), "", "outside the workspace"},
	} {
		got, err := RelPath(root, c.p)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("RelPath(%q) = %q, %v; want error %q", c.p, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("RelPath(%q) = %q, %v; want %q", c.p, got, err, c.want)
		}
	}
}

// TestOpenAPIFields checks that docs/openapi.yaml names every JSON field of the API's
// types (the options: TestOpenAPIOptions).
func TestOpenAPIFields(t *testing.T) {
	doc, err := os.ReadFile("../docs/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []any{ContextRequest{}, ContextResponse{}, Status{}, ErrorResponse{}, repoctx.Part{}} {
		rt := reflect.TypeOf(v)
		for i := range rt.NumField() {
			name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			if !strings.Contains(string(doc), "\n        "+name+":") {
				t.Errorf("docs/openapi.yaml does not describe %s.%s (%q)", rt.Name(), rt.Field(i).Name, name)
			}
		}
	}
}

// TestCompaction edits one file until the in-memory index holds as many chunks of old
// versions as the view: it is made again from the store, and answers stay right.
func TestCompaction(t *testing.T) {
	old := compactMin
	compactMin = 0
	t.Cleanup(func() { compactMin = old })
	dir := sampleWorkspace(t)
	ts := startServer(t, []Folder{{Dir: dir}}, func(c *Config) { c.Debounce = time.Millisecond })
	chunks := ts.status(t).Workspaces[0].Chunks
	var body strings.Builder
	body.WriteString("package com.acme.tracker.util\n\n")
	for i := range 20 {
		fmt.Fprintf(&body, "fun compactHelper%d(x: Int): Int {\n    val y = x * %d\n    return y + 1\n}\n\n", i, i)
	}
	for round := 0; !strings.Contains(ts.log.String(), "dropped"); round++ {
		if round > 2*chunks {
			t.Fatalf("no compaction after %d edits:\n%s", round, ts.log.String())
		}
		write(t, dir, utilDir+"/Compact.kt", body.String()+fmt.Sprintf("fun compactRound() = %d\n", round))
		ts.settle(t, round+2)
	}
	write(t, dir, utilDir+"/Compact.kt", body.String()+"fun compactRound() = 12345\n")
	waitFor(t, "the edit after the compaction", func() bool {
		return strings.Contains(ts.context(t, caller("compactRound")).Context, "fun compactRound() = 12345")
	})
}

// TestRequestIterations: options.iterations sets the retrieval rounds (docs/openapi.yaml
// lists iterations among the options a request may set), up to
// assemble.MaxIterations.
func TestRequestIterations(t *testing.T) {
	base := assemble.DefaultOptions()
	two, many := 2, assemble.MaxIterations+1
	got, err := RequestOptions{"iterations": float64(two)}.apply(base)
	if err != nil || got.Iterations != 2 {
		t.Errorf("iterations 2: %d, %v", got.Iterations, err)
	}
	if _, err := (RequestOptions{"iterations": float64(many)}).apply(base); err == nil || !strings.Contains(err.Error(), "options.iterations must be a positive number of retrieval rounds up to 10") {
		t.Errorf("iterations %d: %v", many, err)
	}
	var req ContextRequest
	if err := decodeRequest(strings.NewReader(`{"path": "a.kt", "prefix": "x", "options": {"iterations": 3}}`), &req); err != nil || req.Options["iterations"] != 3 {
		t.Errorf("decode options.iterations: %v", err)
	}
}

// TestReadTimeout sends a request whose body never arrives: with Config.ReadTimeout,
// Serve closes the connection instead of waiting forever.
func TestReadTimeout(t *testing.T) {
	ts := startServer(t, []Folder{{Dir: sampleWorkspace(t)}}, func(c *Config) { c.ReadTimeout = 200 * time.Millisecond })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ts.Serve(ctx, ln) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/context HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"path\":")
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	start := time.Now()
	_, err = io.ReadAll(conn)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the connection was still open after %v", time.Since(start))
	}
}

// TestSameNamedWorkspaces: two served folders with the same base name are not told
// apart by that name: a request naming it is refused with both roots, and a root
// picks one.
func TestSameNamedWorkspaces(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a", "proj"), filepath.Join(root, "b", "proj")
	write(t, a, "A.kt", "package a\n\nfun alphaHelper(): Int = 1\n")
	write(t, b, "B.kt", "package b\n\nfun betaHelper(): Int = 2\n")
	ts := startServer(t, []Folder{{Dir: a}, {Dir: b}}, nil)
	hole := map[string]any{"workspace": "proj", "path": "B.kt", "prefix": "fun f() = betaHelper(", "suffix": ")\n"}
	if code, raw := ts.post(t, hole); code != 400 || !strings.Contains(string(raw), "names 2 served folders") || !strings.Contains(string(raw), b) {
		t.Fatalf("ambiguous name: %d %s", code, raw)
	}
	hole["workspace"] = b
	if r := ts.context(t, hole); !strings.Contains(r.Context, "fun betaHelper") {
		t.Fatalf("by root: %+v", r)
	}
}

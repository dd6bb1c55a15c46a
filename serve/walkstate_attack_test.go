package serve

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// getFile asks the inspector for a file and returns the status code and its text.
func (ts *testServer) getFile(t *testing.T, rel string) (int, string) {
	t.Helper()
	resp, err := http.Get(ts.url + "/v1/file?workspace=tracker&path=" + rel)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var fr FileResponse
	json.NewDecoder(resp.Body).Decode(&fr)
	return resp.StatusCode, fr.Text
}

// viewChunks counts the chunks of the file rel in w's current view.
func viewChunks(w *Workspace, rel string) int {
	v, done := w.Acquire()
	defer done()
	if v == nil {
		return 0
	}
	n := 0
	for _, c := range v.Retriever().Chunks() {
		if c.Path == rel {
			n++
		}
	}
	return n
}

// TestStartFromWalkStateChangedBack: a file the walk state vouched for that changes
// before the first view reads it and then changes back to the content the state
// recorded (a save undone, a branch switched there and back) before the update reads
// it is served again: in the view, from the inspector. The update finds the file's
// hash the one it had, so it must not keep the failed lazy read. Watching or polling.
func TestStartFromWalkStateChangedBack(t *testing.T) {
	for _, poll := range []bool{false, true} {
		t.Run(map[bool]string{false: "watch", true: "poll"}[poll], func(t *testing.T) { changedBack(t, poll) })
	}
}

func changedBack(t *testing.T, poll bool) {
	dir, cache := vouchedWorkspace(t)

	rel := rewrittenFile
	p := filepath.Join(dir, filepath.FromSlash(rel))
	orig := rewriteAfterWalk(t, dir)
	// Other chunk settings: the first view reads the files the state vouched for. A
	// long debounce: the content is back before the update walks the file.
	ts := startServer(t, []Folder{{Dir: dir}}, func(c *Config) {
		c.CacheDir = cache
		c.Index.Chunk.MaxChars = 700
		c.Debounce = time.Second
		if poll {
			c.Watch = WatchPoll
		}
	})
	afterStateWalk = nil
	if err := os.WriteFile(p, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the file back in the view and the inspector", func() bool {
		code, text := ts.getFile(t, rel)
		return viewChunks(ts.ws[0], rel) > 0 && code == http.StatusOK && text == string(orig)
	})
}

// viewDigest lists the chunks of w's current view (path, ID, text), in view order.
func viewDigest(w *Workspace) string {
	v, done := w.Acquire()
	defer done()
	if v == nil {
		return ""
	}
	var sb strings.Builder
	for _, c := range v.Retriever().Chunks() {
		sb.WriteString(c.ID + "\x00" + c.Text + "\x01")
	}
	return sb.String()
}

// TestStartFromWalkStateSettles: files the walk state vouched for that change between
// the walk and the first view (same size and other bytes, deleted, turned into a
// folder or a symlink, grown past the size limit, a symlink pointed elsewhere) end in
// the view a server that reads every file at start makes of the folder as it is,
// whether the first view needs their bytes or not, watching or polling.
func TestStartFromWalkStateSettles(t *testing.T) {
	const repo, model = "src/main/kotlin/com/acme/tracker/repository/", "src/main/kotlin/com/acme/tracker/model/"
	for _, poll := range []bool{false, true} {
		for _, stored := range []bool{true, false} {
			t.Run(map[bool]string{false: "watch", true: "poll"}[poll]+map[bool]string{false: "-read", true: "-stored"}[stored], func(t *testing.T) {
				dir := sampleWorkspace(t)
				if err := os.Symlink("Status.kt", filepath.Join(dir, filepath.FromSlash(model+"Link.kt"))); err != nil {
					t.Fatal(err)
				}
				ageFiles(t, dir)
				cache := t.TempDir()
				edit := func(c *Config) {
					c.CacheDir = cache
					c.Walk.MaxFileBytes = 20000
					if poll {
						c.Watch = WatchPoll
					}
				}
				first := startServer(t, []Folder{{Dir: dir}}, edit)
				first.Close()
				at := func(rel string) string { return filepath.Join(dir, filepath.FromSlash(rel)) }
				afterStateWalk = func() {
					b, _ := os.ReadFile(at(model + "Priority.kt"))
					os.WriteFile(at(model+"Priority.kt"), []byte(strings.Replace(string(b), "enum", "ENUM", 1)), 0o644)
					os.Remove(at(model + "Issue.kt"))
					os.Remove(at(repo + "IssueRepository.kt"))
					os.Mkdir(at(repo+"IssueRepository.kt"), 0o755)
					write(t, dir, repo+"IssueRepository.kt/Inner.kt", "package inner\n\nfun innerFolderHelper() = 1\n")
					os.Remove(at(model + "IssueEvent.kt"))
					os.Symlink("Status.kt", at(model+"IssueEvent.kt"))
					b, _ = os.ReadFile(at(repo + "InMemoryIssueRepository.kt"))
					os.WriteFile(at(repo+"InMemoryIssueRepository.kt"), append(b, strings.Repeat("// padding\n", 3000)...), 0o644)
					os.Remove(at(model + "Link.kt"))
					os.Symlink("../util/Extensions.kt", at(model+"Link.kt"))
				}
				t.Cleanup(func() { afterStateWalk = nil })
				ts := startServer(t, []Folder{{Dir: dir}}, func(c *Config) {
					edit(c)
					if !stored {
						c.Index.Chunk.MaxChars = 700 // the first view reads the vouched files
					}
				})
				afterStateWalk = nil
				ref := startServer(t, []Folder{{Dir: dir}}, func(c *Config) {
					edit(c)
					c.CacheDir = t.TempDir()
					if !stored {
						c.Index.Chunk.MaxChars = 700
					}
				})
				want := viewDigest(ref.ws[0])
				deadline := time.Now().Add(10 * time.Second)
				for viewDigest(ts.ws[0]) != want {
					if time.Now().After(deadline) {
						got := viewDigest(ts.ws[0])
						t.Fatalf("the view did not settle to a fresh server's: %d vs %d bytes of chunks", len(got), len(want))
					}
					time.Sleep(20 * time.Millisecond)
				}
			})
		}
	}
}

// TestStartFromWalkStateFIFO: a file the walk state vouched for that is replaced by a
// named pipe before its lazy read does not block the read (locate, the inspector) for
// ever, nor Close.
func TestStartFromWalkStateFIFO(t *testing.T) {
	dir, cache := vouchedWorkspace(t)

	rel := utilDir + "/Extensions.kt"
	p := filepath.Join(dir, filepath.FromSlash(rel))
	afterStateWalk = func() {
		if err := os.Remove(p); err != nil {
			t.Error(err)
		}
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(func() { afterStateWalk = nil })
	ts := startServer(t, []Folder{{Dir: dir}}, func(c *Config) { c.CacheDir = cache })
	afterStateWalk = nil
	// A writer releases a read blocked on the pipe, so that the test ends either way.
	release := func() {
		if f, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	}
	done := make(chan struct{})
	go func() {
		if _, err := ts.ws[0].fileSet()[rel].Bytes(); err == nil {
			t.Error("a named pipe read as the file")
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		release()
		<-done
		t.Fatal("the lazy read of a file turned into a named pipe blocked")
	}
	closed := make(chan struct{})
	go func() { ts.Server.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		release()
		<-closed
		t.Fatal("Close blocked on a named pipe")
	}
}

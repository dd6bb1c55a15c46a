package serve

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
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
// hash the one it had, so it must not keep the failed lazy read.
func TestStartFromWalkStateChangedBack(t *testing.T) {
	dir := sampleWorkspace(t)
	ageFiles(t, dir)
	cache := t.TempDir()
	first := startServer(t, []Folder{{Dir: dir}}, func(c *Config) { c.CacheDir = cache })
	first.Close()

	rel := "src/main/kotlin/com/acme/tracker/repository/InMemoryIssueRepository.kt"
	p := filepath.Join(dir, filepath.FromSlash(rel))
	orig, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	afterStateWalk = func() {
		s := strings.Replace(string(orig), "val wanted", "val wantXd", 1) // same size
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(func() { afterStateWalk = nil })
	// Other chunk settings: the first view reads the files the state vouched for. A
	// long debounce: the content is back before the update walks the file.
	ts := startServer(t, []Folder{{Dir: dir}}, func(c *Config) {
		c.CacheDir = cache
		c.Index.Chunk.MaxChars = 700
		c.Debounce = time.Second
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

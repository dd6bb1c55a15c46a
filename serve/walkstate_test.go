package serve

import (
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// ageFiles sets the modification time of every file below dir an hour back, so that a
// walk's state vouches for them (a file modified within two seconds of the state's
// recording is read again).
func ageFiles(t *testing.T, dir string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			err = os.Chtimes(p, old, old)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// vouchedWorkspace returns a sample workspace whose files are an hour old, and a cache
// in which a first server recorded the folder's walk state.
func vouchedWorkspace(t *testing.T) (dir, cache string) {
	t.Helper()
	dir = sampleWorkspace(t)
	ageFiles(t, dir)
	cache = t.TempDir()
	startServer(t, []Folder{{Dir: dir}}, func(c *Config) { c.CacheDir = cache }).Close()
	return dir, cache
}

// rewrittenFile is the file rewriteAfterWalk changes.
const rewrittenFile = "src/main/kotlin/com/acme/tracker/repository/InMemoryIssueRepository.kt"

// rewriteAfterWalk makes the next walk that uses the walk state, before its view,
// rewrite rewrittenFile of dir at the same size with other bytes ("val wanted"
// becomes "val wantXd": only the bytes tell), and returns the file's first content.
func rewriteAfterWalk(t *testing.T, dir string) []byte {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rewrittenFile))
	orig, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	afterStateWalk = func() {
		s := strings.Replace(string(orig), "val wanted", "val wantXd", 1)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(func() { afterStateWalk = nil })
	return orig
}

// countingFS counts the opens of .kt files.
type countingFS struct {
	fs.FS
	n *atomic.Int64
}

func (c countingFS) Open(name string) (fs.File, error) {
	if strings.HasSuffix(name, ".kt") {
		c.n.Add(1)
	}
	return c.FS.Open(name)
}

// TestStartFromWalkState: a second server on the same folder and cache reads no file
// while it starts (the walk state of the first vouches for them all) and answers as
// the first did; a file's bytes are read when first needed (the inspector, locate).
func TestStartFromWalkState(t *testing.T) {
	dir := sampleWorkspace(t)
	ageFiles(t, dir)
	cache := t.TempDir()
	cfg := func(c *Config) { c.CacheDir = cache }
	first := startServer(t, []Folder{{Dir: dir}}, cfg)
	want := first.context(t, caller("normalizeLabel"))
	first.Close()

	var opens atomic.Int64
	wrapFS = func(fsys fs.FS) fs.FS { return countingFS{fsys, &opens} }
	t.Cleanup(func() { wrapFS = nil })
	ts := startServer(t, []Folder{{Dir: dir}}, cfg)
	if n := opens.Load(); n != 0 {
		t.Errorf("the second start opened %d .kt files, want 0", n)
	}
	if got := ts.context(t, caller("normalizeLabel")); got.Context != want.Context {
		t.Errorf("the second server's context differs from the first's:\n%s\nwant\n%s", got.Context, want.Context)
	}
	rel := utilDir + "/Extensions.kt"
	wantText, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(ts.url + "/v1/file?workspace=tracker&path=" + rel)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var fr FileResponse
	if err := json.NewDecoder(resp.Body).Decode(&fr); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/file: status %d, %v", resp.StatusCode, err)
	}
	if fr.Text != string(wantText) {
		t.Errorf("GET /v1/file gave %q, want the file's bytes", fr.Text)
	}
	lines := strings.Split(string(wantText), "\n")
	m, ok := locate(ts.ws, strings.Join(lines[:len(lines)/2], "\n")+"\n", strings.Join(lines[len(lines)/2:], "\n"))
	if !ok || m.path != rel {
		t.Errorf("locate found %q (%v), want %s", m.path, ok, rel)
	}
}

// TestStartFromWalkStateChanged: a file the walk state vouched for that changes before
// the first view reads it is left out of that view, and the poll after it brings the
// new content in.
func TestStartFromWalkStateChanged(t *testing.T) {
	dir, cache := vouchedWorkspace(t)

	rewriteAfterWalk(t, dir)
	// Other chunk settings: the stored chunks do not fit, so the first view reads the
	// files the state vouched for.
	ts := startServer(t, []Folder{{Dir: dir}}, func(c *Config) {
		c.CacheDir = cache
		c.Index.Chunk.MaxChars = 700
	})
	afterStateWalk = nil
	waitFor(t, "the changed file's new content", func() bool {
		return strings.Contains(ts.context(t, caller("normalizeLabel")).Context, "val wantXd")
	})
}

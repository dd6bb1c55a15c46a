package crossrepo

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/store"
)

// chunk returns chunk n of path with text.
func chunk(path string, n int, text string) chunker.Chunk {
	return chunker.Chunk{ID: chunker.ChunkID(path, n), Path: path, Lang: "python", Ordinal: n,
		Kind: chunker.KindCode, Text: text, StartLine: 1, EndLine: 1}
}

func open(t *testing.T, st *store.Store, repo string) *Index {
	t.Helper()
	ix, err := Open(st, repo, repo, "live")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func TestEqualChunksScoreEqually(t *testing.T) {
	st := store.Open(t.TempDir())
	defer st.Close()
	shared := "def parse_http_response(raw):\n    return Response(raw)\n"
	app := open(t, st, "app")
	lib := open(t, st, "lib")
	// The repositories differ in size, so per-index statistics would differ.
	var appChunks []chunker.Chunk
	appChunks = append(appChunks, chunk("util.py", 0, shared))
	for i := 1; i < 20; i++ {
		appChunks = append(appChunks, chunk(fmt.Sprintf("m%d.py", i), 0, fmt.Sprintf("x%d = compute(%d)\n", i, i)))
	}
	if _, err := app.Sync(appChunks); err != nil {
		t.Fatal(err)
	}
	if _, err := lib.Sync([]chunker.Chunk{chunk("util.py", 0, shared), chunk("other.py", 0, "response = fetch()\n")}); err != nil {
		t.Fatal(err)
	}
	a, err := NewAlias(app, lib)
	if err != nil {
		t.Fatal(err)
	}
	hits, err := a.Search(context.Background(), "resp = parse_http_response(data)", 5, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) < 2 || hits[0].ID != "util.py#0" || hits[1].ID != "util.py#0" || hits[0].Repository == hits[1].Repository {
		t.Fatalf("hits %+v: want util.py#0 of both repositories first", hits)
	}
	if math.Abs(hits[0].Score-hits[1].Score) > 1e-9*hits[0].Score {
		t.Errorf("equal chunks score %v in %s and %v in %s", hits[0].Score, hits[0].Repository, hits[1].Score, hits[1].Repository)
	}
	if hits[0].Chunk == nil || hits[0].Chunk.Text != shared {
		t.Errorf("hit's chunk %+v", hits[0].Chunk)
	}
}

func TestSyncIsIncremental(t *testing.T) {
	cache := t.TempDir()
	st := store.Open(cache)
	defer st.Close()
	ix := open(t, st, "lib")
	v1 := []chunker.Chunk{chunk("a.py", 0, "def alpha(): pass\n"), chunk("b.py", 0, "def beta(): pass\n")}
	s, err := ix.Sync(v1)
	if err != nil || s.Added != 2 || s.Deleted != 0 {
		t.Fatalf("first sync %+v, %v", s, err)
	}
	v2 := []chunker.Chunk{chunk("a.py", 0, "def alpha(): pass\n"), chunk("c.py", 0, "def gamma(): pass\n")}
	s, err = ix.Sync(v2)
	if err != nil || s.Added != 1 || s.Deleted != 1 || s.Kept != 1 {
		t.Fatalf("second sync %+v, %v: want 1 added (c.py), 1 deleted (b.py), 1 kept", s, err)
	}
	a, _ := NewAlias(ix)
	if hits, _ := a.Search(context.Background(), "beta", 5, nil); len(hits) != 0 {
		t.Errorf("deleted file's chunk still found: %+v", hits)
	}
	if hits, _ := a.Search(context.Background(), "gamma", 5, nil); len(hits) != 1 || hits[0].ID != "c.py#0" {
		t.Errorf("new file's chunk: %+v", hits)
	}
	if st := ix.Status(); st.Documents != 2 || st.Bytes == 0 || st.Updated.IsZero() {
		t.Errorf("status %+v", st)
	}
	// Reopened, the index knows what it holds: the same chunks write nothing.
	ix.Close()
	ix2, err := Open(st, "lib", "lib", "live")
	if err != nil {
		t.Fatal(err)
	}
	defer ix2.Close()
	if s, err := ix2.Sync(v2); err != nil || s.Added != 0 || s.Deleted != 0 || s.Kept != 2 {
		t.Errorf("sync after reopening %+v, %v: want everything kept", s, err)
	}
	// The cache counts the index with the repository's records.
	cs, err := store.Stat(cache)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs.Repos) != 1 || cs.Repos[0].IndexBytes == 0 || cs.Bytes < cs.Repos[0].IndexBytes {
		t.Errorf("cache stats %+v: want the index counted", cs)
	}
}

func TestGCEvictsIndexWithRepository(t *testing.T) {
	cache := t.TempDir()
	st := store.Open(cache)
	ix := open(t, st, "lib")
	if _, err := ix.Sync([]chunker.Chunk{chunk("a.py", 0, "def alpha(): pass\n")}); err != nil {
		t.Fatal(err)
	}
	dir := ix.dir
	ix.Close()
	st.Close()
	if _, err := store.GC(cache, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("index %s survives eviction of its repository: %v", dir, err)
	}
}

// TestKillDuringUpdate kills (SIGKILL) a process in the middle of index updates and
// checks that the index opens and answers afterwards (scorch's crash safety).
func TestKillDuringUpdate(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a subprocess")
	}
	dir := filepath.Join(t.TempDir(), "ix")
	cmd := exec.Command(os.Args[0], "-test.run=TestKillHelper")
	cmd.Env = append(os.Environ(), "CROSSREPO_KILL_HELPER="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until the helper has committed its first batch and started more.
	buf := make([]byte, 64)
	var seen strings.Builder
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(seen.String(), "synced 3") && time.Now().Before(deadline) {
		n, err := out.Read(buf)
		seen.Write(buf[:n])
		if err != nil {
			break
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if !strings.Contains(seen.String(), "synced 3") {
		t.Fatalf("helper did not get going: %q", seen.String())
	}
	ix, err := OpenDir(dir, "lib", "live")
	if err != nil {
		t.Fatalf("index after kill -9 does not open: %v", err)
	}
	defer ix.Close()
	a, _ := NewAlias(ix)
	hits, err := a.Search(context.Background(), "stable_function", 5, nil)
	if err != nil || len(hits) != 1 || hits[0].ID != "stable.py#0" {
		t.Fatalf("index after kill -9 answers %+v, %v: want stable.py#0", hits, err)
	}
}

// TestKillHelper is the subprocess of TestKillDuringUpdate: it syncs ever-changing
// chunk sets into the index until killed.
func TestKillHelper(t *testing.T) {
	dir := os.Getenv("CROSSREPO_KILL_HELPER")
	if dir == "" {
		t.Skip("subprocess of TestKillDuringUpdate")
	}
	ix, err := OpenDir(dir, "lib", "live")
	if err != nil {
		t.Fatal(err)
	}
	for round := 1; ; round++ {
		cs := []chunker.Chunk{chunk("stable.py", 0, "def stable_function(): pass\n")}
		for i := 0; i < 300; i++ {
			cs = append(cs, chunk(fmt.Sprintf("f%d.py", i), 0, fmt.Sprintf("def f_%d_%d(): return %d\n", i, round, round)))
		}
		if _, err := ix.Sync(cs); err != nil {
			t.Fatal(err)
		}
		fmt.Printf("synced %d\n", round)
	}
}

// TestCommonTermsLeftOut: over minCommonChunks chunks, a term in most of them adds no
// clause when a rarer one exists (the rare chunk still ranks first; a chunk holding
// only the common term is not a hit), and a query of common terms alone still answers.
func TestCommonTermsLeftOut(t *testing.T) {
	st := store.Open(t.TempDir())
	defer st.Close()
	ix := open(t, st, "big")
	var cs []chunker.Chunk
	for i := range minCommonChunks + 200 {
		cs = append(cs, chunk(fmt.Sprintf("m%04d.py", i), 0, fmt.Sprintf("def handler_%d(request):\n    return request\n", i)))
	}
	cs = append(cs, chunk("rare.py", 0, "def zebra_quokka(request):\n    return request\n"))
	if _, err := ix.Sync(cs); err != nil {
		t.Fatal(err)
	}
	a, _ := NewAlias(ix)
	hits, err := a.Search(context.Background(), "zebra_quokka(request)", 5, nil)
	if err != nil || len(hits) != 1 || hits[0].ID != "rare.py#0" {
		t.Errorf("rare and common terms: %+v, %v; want the rare chunk alone", hits, err)
	}
	if hits, err := a.Search(context.Background(), "request", 5, nil); err != nil || len(hits) != 5 {
		t.Errorf("common term alone: %d hits, %v; want 5", len(hits), err)
	}
}

package serve

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/repoctx/repoctx/index"
	"github.com/repoctx/repoctx/snapshot"
	"github.com/repoctx/repoctx/store"
)

// storeFolderView does what `repoctx index` does for dir with the server's settings
// (cfg): the folder walked with its walk state, its view made and stored whole.
func storeFolderView(t *testing.T, dir string, cfg Config) {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	st := store.Open(cfg.CacheDir)
	opts := cfg.Index
	opts.RepoLSA, opts.Symbols, opts.StoreViews = true, true, index.ViewsStored
	ix, err := index.Open(st, index.FolderRepo(abs), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	snap, _, err := snapshot.OpenFolderCached(context.Background(), abs, cfg.Walk, st.Records(index.FolderRepo(abs)))
	if err != nil {
		t.Fatal(err)
	}
	v, err := ix.View(context.Background(), snap)
	if err != nil {
		t.Fatal(err)
	}
	v.Close()
	if err := st.Flush(); err != nil {
		t.Fatal(err)
	}
}

// TestStartFromStoredView: a server whose folder `repoctx index` left a stored view of
// (the same files, the same settings) makes its first view from it, answers as a
// server that made its view from the files, and takes an edit after it as usual.
func TestStartFromStoredView(t *testing.T) {
	dir := sampleWorkspace(t)
	ageFiles(t, dir)
	queries := []map[string]any{caller("normalizeLabel"), caller("requireNotBlank"), caller("findById")}
	fresh := startServer(t, []Folder{{Dir: dir}}, nil)
	var want []string
	for _, q := range queries {
		want = append(want, fresh.context(t, q).Context)
	}
	fresh.Close()

	cache := t.TempDir()
	cfg := DefaultConfig()
	cfg.CacheDir = cache
	storeFolderView(t, dir, cfg)
	ts := startServer(t, []Folder{{Dir: dir}}, func(c *Config) { c.CacheDir = cache })
	if !strings.Contains(ts.log.String(), "the view stored by the last index") {
		t.Fatalf("the first view was not read back from the stored view; log:\n%s", ts.log.String())
	}
	for i, q := range queries {
		if got := ts.context(t, q).Context; got != want[i] {
			t.Errorf("query %d: the context from the stored view differs from the one made from the files:\n%s\nwant\n%s", i, got, want[i])
		}
	}
	write(t, dir, utilDir+"/Fresh.kt", "package com.acme.tracker.util\n\nfun brandNewStoredViewHelper(x: Int): Int = x * 41\n")
	waitFor(t, "the new file in the context", func() bool {
		return strings.Contains(ts.context(t, caller("brandNewStoredViewHelper")).Context, "x * 41")
	})
}

// TestStartFromStoredViewChanged: a stored view of other files (one changed since
// `repoctx index`) is not used: the first view is made from the files.
func TestStartFromStoredViewChanged(t *testing.T) {
	dir := sampleWorkspace(t)
	ageFiles(t, dir)
	cache := t.TempDir()
	cfg := DefaultConfig()
	cfg.CacheDir = cache
	storeFolderView(t, dir, cfg)
	write(t, dir, utilDir+"/Extensions.kt", "package com.acme.tracker.util\n\nfun changedSinceIndex(): Int = 5\n")
	ts := startServer(t, []Folder{{Dir: dir}}, func(c *Config) { c.CacheDir = cache })
	if strings.Contains(ts.log.String(), "the view stored by the last index") {
		t.Fatalf("a stored view of other files was used; log:\n%s", ts.log.String())
	}
	if got := ts.context(t, caller("changedSinceIndex")).Context; !strings.Contains(got, "changedSinceIndex(): Int = 5") {
		t.Errorf("the changed file is not in the context:\n%s", got)
	}
}

package index

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/repoctx/repoctx/snapshot"
	"github.com/repoctx/repoctx/store"
)

// openView makes the view of snap over a new index of repo ("": RepoID of the
// snapshot's name) in a new store of the cache directory cache (as a new process
// would), and closes the index and the store (which writes their records).
func openView(ctx context.Context, snap snapshot.Snapshot, cache, repo string, opts Options) (*View, error) {
	if repo == "" {
		repo = RepoID(snap.Name())
	}
	st := store.Open(cache)
	defer st.Close()
	ix, err := Open(st, repo, opts)
	if err != nil {
		return nil, err
	}
	defer ix.Close()
	return ix.View(ctx, snap)
}

// writeFiles writes files (slash path -> content) under root.
func writeFiles(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for p, text := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

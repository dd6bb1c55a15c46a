package crossrepo_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/crossrepo"
	"github.com/repoctx/repoctx/index"
	"github.com/repoctx/repoctx/internal/racetest"
	"github.com/repoctx/repoctx/retrieve"
	"github.com/repoctx/repoctx/snapshot"
	"github.com/repoctx/repoctx/store"
)

// agreeQueries returns up to n prefix-like queries over chunks: the 8 lines before a
// line in the middle of every k-th chunk's file, deterministic.
func agreeQueries(chunks []chunker.Chunk, n int) []string {
	var qs []string
	step := max(1, len(chunks)/n)
	for i := 0; i < len(chunks) && len(qs) < n; i += step {
		lines := strings.Split(chunks[i].Text, "\n")
		if len(lines) < 4 {
			continue
		}
		end := len(lines) / 2
		qs = append(qs, strings.Join(lines[max(0, end-8):end], "\n"))
	}
	return qs
}

// TestAgreesWithInHouseBM25 compares, on a real repository (the first snapshot of
// ../shared's python dev stage), the top hit of the in-house BM25 (one snapshot's own
// statistics) with the bleve index's over the same chunks, for 200 queries: they must
// agree on at least 95%. Both use the same analyser, fields, boosts, idf, average
// field lengths, k1 and b ([crossrepo.Alias.Search]); bleve scores tf as its square
// root and multiplies by a coordination factor, hence not 100%.
func TestAgreesWithInHouseBM25(t *testing.T) {
	data := filepath.Join("..", "..", "shared", "data", "dev")
	if _, err := os.Stat(data); err != nil {
		t.Skip("needs ../shared/data/dev")
	}
	if testing.Short() {
		t.Skip("indexes a real repository")
	}
	racetest.Skip(t, "indexes a real repository twice")
	src, err := snapshot.OpenZipSource(filepath.Join(data, "python-dev.zip"), snapshot.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	name := src.Names()[0]
	snap, err := src.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	st := store.Open(t.TempDir())
	defer st.Close()
	opts := index.DefaultOptions()
	opts.Dense = retrieve.DenseNone
	ix, err := index.Open(st, index.RepoID(name), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	v, err := ix.View(context.Background(), snap)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	chunks := v.Retriever().Chunks()
	bix, err := crossrepo.Open(st, index.RepoID(name), "r", name)
	if err != nil {
		t.Fatal(err)
	}
	defer bix.Close()
	if _, err := bix.Sync(chunks); err != nil {
		t.Fatal(err)
	}
	a, _ := crossrepo.NewAlias(bix)
	// A second index of the same chunks fed in reverse order: its hits must be the
	// same, ties and scores included (bleve's scores vary in their last bits).
	rev := slices.Clone(chunks)
	slices.Reverse(rev)
	bix2, err := crossrepo.OpenDir(t.TempDir(), "r", name)
	if err != nil {
		t.Fatal(err)
	}
	defer bix2.Close()
	if _, err := bix2.Sync(rev); err != nil {
		t.Fatal(err)
	}
	a2, _ := crossrepo.NewAlias(bix2)
	qs := agreeQueries(chunks, 200)
	if len(qs) < 200 {
		t.Skipf("%s gives %d queries, want 200", name, len(qs))
	}
	agree := 0
	for _, q := range qs {
		in, err := v.Retriever().Search(context.Background(), retrieve.Query{Text: q, K: 1, Mode: retrieve.BM25})
		if err != nil {
			t.Fatal(err)
		}
		bl, err := a.Search(context.Background(), q, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		r1, err1 := a.Search(context.Background(), q, 5, nil)
		r2, err2 := a2.Search(context.Background(), q, 5, nil)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if len(r1) != len(r2) {
			t.Fatalf("query %q: %d hits / %d hits from the same chunks", q, len(r1), len(r2))
		}
		for i := range r1 {
			if r1[i].ID != r2[i].ID || r1[i].Score != r2[i].Score {
				t.Fatalf("query %q: rank %d is %s %v / %s %v from the same chunks", q, i+1, r1[i].ID, r1[i].Score, r2[i].ID, r2[i].Score)
			}
		}
		if len(in) > 0 && len(bl) > 0 && in[0].ID == bl[0].ID || len(in) == 0 && len(bl) == 0 {
			agree++
		}
	}
	t.Logf("%s: %d chunks, top hit agrees on %d of %d queries", name, len(chunks), agree, len(qs))
	if agree*100 < 95*len(qs) {
		t.Errorf("top hits agree on %d of %d queries, want >= 95%%", agree, len(qs))
	}
}

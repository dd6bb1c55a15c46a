package crossrepo_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/crossrepo"
	"github.com/repoctx/repoctx/index"
	"github.com/repoctx/repoctx/retrieve"
	"github.com/repoctx/repoctx/snapshot"
	"github.com/repoctx/repoctx/store"
)

// TestMeasureRepositories measures the bleve indexes against the in-house index on
// the repository folders listed (comma-separated) in REPOCTX_CROSSREPO_DIRS; it is
// skipped without it. It logs, per repository and in all: the in-house index's build
// time (chunking and the views' BM25, no dense vectors) and store size, the bleve
// index's build time, update time (10 chunks changed) and size, the process's peak
// RSS after each phase, and the query p95 (200 prefix-like queries) of the in-house
// BM25 on one repository, of bleve on one repository and of bleve over all of them.
// See docs/cross-repo.md for the command and figures.
func TestMeasureRepositories(t *testing.T) {
	list := os.Getenv("REPOCTX_CROSSREPO_DIRS")
	if list == "" {
		t.Skip("set REPOCTX_CROSSREPO_DIRS=dir1,dir2,... to measure")
	}
	dirs := strings.Split(list, ",")
	cache := t.TempDir()
	st := store.Open(cache)
	defer st.Close()
	opts := index.DefaultOptions()
	opts.Dense = retrieve.DenseNone
	ctx := context.Background()
	type repo struct {
		name   string
		view   *index.View
		chunks []chunker.Chunk
		bix    *crossrepo.Index
	}
	var repos []repo
	var files, nchunks int
	t0 := time.Now()
	for _, dir := range dirs {
		snap, _, err := snapshot.OpenFolder(ctx, dir, snapshot.WalkOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ix, err := index.Open(st, dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		v, err := ix.View(ctx, snap)
		if err != nil {
			t.Fatal(err)
		}
		defer v.Close()
		files += v.Stats().Files
		cs := v.Retriever().Chunks()
		nchunks += len(cs)
		repos = append(repos, repo{name: filepath.Base(dir), view: v, chunks: cs})
	}
	st.Flush()
	inHouse := time.Since(t0)
	storeBytes := store.DirBytes(filepath.Join(cache, store.DirName))
	rssInHouse := peakRSS()
	t1 := time.Now()
	for i := range repos {
		bix, err := crossrepo.OpenDir(filepath.Join(cache, "bleve", repos[i].name), repos[i].name, "live")
		if err != nil {
			t.Fatal(err)
		}
		defer bix.Close()
		if _, err := bix.Sync(repos[i].chunks); err != nil {
			t.Fatal(err)
		}
		repos[i].bix = bix
	}
	build := time.Since(t1)
	bleveBytes := store.DirBytes(filepath.Join(cache, "bleve"))
	rssBleve := peakRSS()
	// Update: 10 chunks of the first repository changed.
	changed := slices.Clone(repos[0].chunks)
	for i := 0; i < 10 && i < len(changed); i++ {
		changed[i*len(changed)/10].Text += "\n// changed\n"
	}
	us, err := repos[0].bix.Sync(changed)
	if err != nil {
		t.Fatal(err)
	}
	qs := agreeQueries(repos[0].chunks, 200)
	p95 := func(f func(q string)) time.Duration {
		var ds []time.Duration
		for _, q := range qs {
			s := time.Now()
			f(q)
			ds = append(ds, time.Since(s))
		}
		slices.Sort(ds)
		return ds[len(ds)*95/100]
	}
	one, _ := crossrepo.NewAlias(repos[0].bix)
	var all []*crossrepo.Index
	for _, r := range repos {
		all = append(all, r.bix)
	}
	every, _ := crossrepo.NewAlias(all...)
	pIn := p95(func(q string) {
		repos[0].view.Retriever().Search(ctx, retrieve.Query{Text: q, K: 16, Mode: retrieve.BM25})
	})
	pOne := p95(func(q string) { one.Search(ctx, q, 16, nil) })
	pAll := p95(func(q string) { every.Search(ctx, q, 16, nil) })
	t.Logf("%d repositories, %d files, %d chunks", len(repos), files, nchunks)
	t.Logf("in-house index: build %.1f s, store %.1f MiB, peak RSS %.0f MiB", inHouse.Seconds(), mib(storeBytes), mib(rssInHouse))
	t.Logf("bleve indexes: build %.1f s, %.1f MiB on disk, peak RSS %.0f MiB; update of 10 chunks %.0f ms (%d added, %d deleted)",
		build.Seconds(), mib(bleveBytes), mib(rssBleve), float64(us.Took.Microseconds())/1000, us.Added, us.Deleted)
	t.Logf("query p95 (top 16, %d queries of %s): in-house BM25 one repository %.2f ms; bleve one repository %.2f ms; bleve all %d %.2f ms",
		len(qs), repos[0].name, ms(pIn), ms(pOne), len(repos), ms(pAll))
}

// peakRSS returns the process's peak resident set size in bytes (Linux: ru_maxrss in KiB).
func peakRSS() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Maxrss * 1024
}

func mib(n int64) float64        { return float64(n) / (1 << 20) }
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

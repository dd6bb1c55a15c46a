package dataset

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/repoctx/repoctx/batch"
	"github.com/repoctx/repoctx/internal/benchrepo"
	"github.com/repoctx/repoctx/snapshot"
)

// BenchmarkMemoryPredict20k runs predict on 20,000 datapoints that it generates on one
// snapshot of ../shared/data/dev (kotlin; a random line of a random Kotlin file is the
// hole, the whole file around it prefix and suffix) and reports the process's peak
// RSS (peak-MB; the bound is 400 MB: datapoints are read, composed and written
// as a stream, the output built from the journal) and ms per datapoint. Run it alone:
//
//	go test -run '^$' -bench MemoryPredict20k -benchtime 1x -timeout 1h ./dataset
func BenchmarkMemoryPredict20k(b *testing.B) {
	const n = 20000
	dev := filepath.Join(realDataDir(b), "dev")
	src, err := OpenSource(dev, "kotlin", "dev", snapshot.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	name := src.Names()[0]
	snap, err := src.Open(name)
	if err != nil {
		b.Fatal(err)
	}
	var files []string
	for _, p := range snap.Paths() {
		if strings.HasSuffix(p, ".kt") {
			files = append(files, p)
		}
	}
	src.Close()
	dir := b.TempDir()
	if err := os.Symlink(mustAbsB(b, filepath.Join(dev, "kotlin-dev.zip")), filepath.Join(dir, "kotlin-bench.zip")); err != nil {
		b.Fatal(err)
	}
	i := strings.LastIndex(name, "-")
	repo, rev := strings.Replace(name[:i], "__", "/", 1), name[i+1:]
	f, err := os.Create(filepath.Join(dir, "kotlin-bench.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	rng := rand.New(rand.NewPCG(18, 20000))
	bytes := 0
	for k := range n {
		p := files[rng.IntN(len(files))]
		raw, _ := snap.ReadFile(p)
		lines := strings.SplitAfter(string(raw), "\n")
		at := rng.IntN(len(lines))
		d := batch.Datapoint{ID: fmt.Sprint("bench-", k), Repo: repo, Revision: rev, Path: p, Modified: []string{p},
			Prefix: strings.Join(lines[:at], ""), Suffix: strings.Join(lines[at+1:], "")}
		line, _ := json.Marshal(d)
		bytes += len(line)
		w.Write(append(line, '\n'))
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	b.Logf("%d datapoints on %s, %.0f MB of datapoints", n, name, float64(bytes)/1e6)
	b.ResetTimer()
	for range b.N {
		cfg := batch.DefaultConfig()
		cfg.CacheDir = b.TempDir()
		sum, err := Predict(context.Background(), PredictOptions{DataDir: dir, Lang: "kotlin", Stage: "bench", Out: filepath.Join(b.TempDir(), "out.jsonl"), Batch: cfg})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(sum.Wall.Milliseconds())/float64(sum.Datapoints), "ms/datapoint")
	}
	b.ReportMetric(float64(benchrepo.PeakRSSMB()), "peak-MB")
}

func mustAbsB(b *testing.B, p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		b.Fatal(err)
	}
	return a
}

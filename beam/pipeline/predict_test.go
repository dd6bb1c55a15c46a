package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/repoctx/repoctx/dataset"
)

// genDataset writes a small python-gen dataset under a new folder: three
// repositories' snapshots (unpacked) and datapoints of them interleaved, a bad line
// and a datapoint of a missing snapshot. It returns the folder.
func genDataset(t *testing.T) string {
	dir := t.TempDir()
	repos := []string{"acme__alpha-0123456", "acme__beta-89abcde", "other__gamma-fedcba9"}
	for i, r := range repos {
		writeTree(t, filepath.Join(dir, "repositories-python-gen", r), map[string]string{
			"pkg/core.py":  pyFile(fmt.Sprintf("core%d", i), 4),
			"pkg/util.py":  pyFile(fmt.Sprintf("util%d", i), 3),
			"tests/t.py":   "from pkg.core import *\n\ndef test_core():\n    assert core" + fmt.Sprint(i) + "_1(1) == '2'\n",
			"docs/note.md": "# notes\n",
		})
	}
	var lines []string
	add := func(id, repo, rev, path, prefix, suffix string) {
		b, _ := json.Marshal(map[string]any{"id": id, "repo": repo, "revision": rev, "path": path, "modified": []string{path},
			"prefix": prefix, "suffix": suffix})
		lines = append(lines, string(b))
	}
	for k := range 3 {
		for i, r := range []struct{ repo, rev string }{{"acme/alpha", "0123456"}, {"acme/beta", "89abcde"}, {"other/gamma", "fedcba9"}} {
			add(fmt.Sprintf("dp%d-%d", k, i), r.repo, r.rev, "pkg/new.py",
				fmt.Sprintf("from pkg.util import util%d_1\n\ndef use(x):\n    return core%d_%d(", i, i, k), ")\n")
		}
		if k == 1 {
			lines = append(lines, `{"id": "bad", "repo": 7}`)
			add("missing", "acme/delta", "1111111", "a.py", "x = ", "\n")
		}
	}
	var b bytes.Buffer
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "python-gen.jsonl"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// checkPredict runs the predict pipeline on Prism and dataset.Predict (what `repoctx
// predict` runs) on the same dataset and options, and compares the bytes.
func checkPredict(t *testing.T, data, lang, stage string, opts PredictOptions) {
	t.Helper()
	cfg, err := opts.Config()
	if err != nil {
		t.Fatal(err)
	}
	cfg.CacheDir = t.TempDir()
	want := filepath.Join(t.TempDir(), "want.jsonl")
	if _, err := dataset.Predict(context.Background(), dataset.PredictOptions{DataDir: data, Lang: lang, Stage: stage, Out: want, Batch: cfg}); err != nil {
		t.Logf("library predict: %v", err) // some datapoints fail on purpose
	}
	n, err := dataset.CountDatapoints(filepath.Join(data, lang+"-"+stage+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	got := filepath.Join(t.TempDir(), "got.jsonl")
	opts.CacheDir = t.TempDir()
	pc := PredictConfig{DataDir: data, Lang: lang, Stage: stage, Out: got, N: n, Options: opts}
	c, err := Run(context.Background(), "prism", func(s beam.Scope) error { return Predict(s, pc) })
	if err != nil {
		t.Fatal(err)
	}
	a, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		al, bl := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
		for i := range min(len(al), len(bl)) {
			if !bytes.Equal(al[i], bl[i]) {
				t.Fatalf("line %d differs (of %d / %d):\n got %.300s\nwant %.300s", i+1, len(bl), len(al), bl[i], al[i])
			}
		}
		t.Fatalf("%d lines, want %d", len(bl), len(al))
	}
	if c["datapoints"] != int64(n) {
		t.Errorf("counters %v: want %d datapoints", c, n)
	}
	t.Logf("%d datapoints, %d bytes, counters %v", n, len(a), c)
}

func TestPredictPrismGenerated(t *testing.T) {
	data := genDataset(t)
	checkPredict(t, data, "python", "gen", PredictOptions{Workers: 2})
	// Options from the table travel to the workers.
	checkPredict(t, data, "python", "gen", PredictOptions{Workers: 1, Compose: map[string]float64{"top-k": 3, "plan-window": 0}})
}

func TestPredictPrismDev(t *testing.T) {
	data := filepath.Join("..", "..", "..", "shared", "data", "dev")
	if _, err := os.Stat(data); err != nil {
		t.Skip("no ../shared/data/dev")
	}
	for _, lang := range []string{"python", "kotlin"} {
		t.Run(lang, func(t *testing.T) { checkPredict(t, data, lang, "dev", PredictOptions{Workers: 2}) })
	}
}

package dataset

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/batch"
	"github.com/repoctx/repoctx/internal/racetest"
	"github.com/repoctx/repoctx/internal/ziptest"
	"github.com/repoctx/repoctx/retrieve"
	"github.com/repoctx/repoctx/retrieve/hugot"
)

const sampleDir = "../testdata/sample"

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// cfg returns the default batch configuration with a cache folder of the test's own
// and workers workers (0: the default).
func cfg(t *testing.T, workers int) batch.Config {
	c := batch.DefaultConfig()
	c.CacheDir = t.TempDir()
	if workers > 0 {
		c.Workers = workers
	}
	return c
}

func predict(t *testing.T, opts PredictOptions) (PredictSummary, []string) {
	t.Helper()
	if opts.Batch.Workers == 0 {
		opts.Batch = cfg(t, 0)
	}
	sum, err := Predict(context.Background(), opts)
	if err != nil {
		t.Fatalf("Predict: %v (%+v)", err, sum.Errors)
	}
	return sum, readLines(t, opts.Out)
}

// TestPredictSample runs the main job on the bundled sample, from folders and from a
// zip of zips built here, and checks one non-empty context per datapoint, identical
// for both layouts and for 1 and 3 workers.
func TestPredictSample(t *testing.T) {
	for _, lang := range []string{"python", "kotlin"} {
		t.Run(lang, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.jsonl")
			sum, lines := predict(t, PredictOptions{DataDir: sampleDir, Lang: lang, Stage: "sample", Out: out, Batch: cfg(t, 1)})
			want := readLines(t, filepath.Join(sampleDir, lang+"-sample.jsonl"))
			if len(lines) != len(want) || sum.Datapoints != len(want) {
				t.Fatalf("%d lines for %d datapoints", len(lines), len(want))
			}
			for i, l := range lines {
				var v map[string]string
				if err := json.Unmarshal([]byte(l), &v); err != nil {
					t.Fatalf("line %d: %v", i+1, err)
				}
				if !strings.HasPrefix(v["context"], repoctx.FileSep) {
					t.Errorf("line %d: empty or malformed context %.60q", i+1, v["context"])
				}
			}
			// Two snapshots of one repository: the second shares the first's LSA
			// model and the files they have in common.
			if sum.SharedLSA != 1 || sum.Reused == 0 || sum.Chunked == 0 {
				t.Errorf("shared LSA indexes %d (want 1), files chunked %d, from store %d (want both > 0)", sum.SharedLSA, sum.Chunked, sum.Reused)
			}
			// Same output from the zip layout and with 3 workers.
			zdir := t.TempDir()
			ziptest.WriteZipOfFolders(t, filepath.Join(sampleDir, "repositories-"+lang+"-sample"), filepath.Join(zdir, lang+"-sample.zip"))
			data, _ := os.ReadFile(filepath.Join(sampleDir, lang+"-sample.jsonl"))
			os.WriteFile(filepath.Join(zdir, lang+"-sample.jsonl"), data, 0o644)
			out2 := filepath.Join(t.TempDir(), "out.jsonl")
			_, lines2 := predict(t, PredictOptions{DataDir: zdir, Lang: lang, Stage: "sample", Out: out2, Batch: cfg(t, 3)})
			if strings.Join(lines, "\n") != strings.Join(lines2, "\n") {
				t.Errorf("zip layout / 3 workers gave different output")
			}
		})
	}
}

// TestPredictBadDatapoints: bad lines get an empty context and an error naming them;
// the good ones are still answered; the error wraps ErrSomeFailed.
func TestPredictBadDatapoints(t *testing.T) {
	dir := t.TempDir()
	good := readLines(t, filepath.Join(sampleDir, "python-sample.jsonl"))
	if err := os.Symlink(mustAbs(t, filepath.Join(sampleDir, "repositories-python-sample")), filepath.Join(dir, "repositories-python-bad")); err != nil {
		t.Fatal(err)
	}
	lines := []string{
		good[0],
		`{"id": "broken", "repo": `,
		`{"id": "nosnap", "repo": "acme/nothing", "revision": "abc", "path": "x.py", "modified": [], "prefix": "a", "suffix": "b"}`,
		`{"id": "escape", "repo": "acme/invoicing", "revision": "abc", "path": "../etc/passwd", "modified": [], "prefix": "a", "suffix": "b"}`,
		`{"id": "empty", "repo": "acme/invoicing", "revision": "abc", "path": "x.py", "modified": [], "prefix": "", "suffix": ""}`,
		good[1],
	}
	os.WriteFile(filepath.Join(dir, "python-bad.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	out := filepath.Join(dir, "out.jsonl")
	sum, err := Predict(context.Background(), PredictOptions{DataDir: dir, Lang: "python", Stage: "bad", Out: out, Batch: cfg(t, 0)})
	if !errors.Is(err, repoctx.ErrSomeFailed) || sum.Failed != 4 {
		t.Fatalf("err %v, failed %d; want ErrSomeFailed and 4 failures (%v)", err, sum.Failed, sum.Errors)
	}
	msgs := ""
	for _, e := range sum.Errors {
		msgs += e.Error() + "\n"
	}
	for _, want := range []string{":2", "nosnap", "escape", "empty"} {
		if !strings.Contains(msgs, want) {
			t.Errorf("errors do not mention %q:\n%s", want, msgs)
		}
	}
	got := readLines(t, out)
	if len(got) != len(lines) {
		t.Fatalf("%d output lines for %d input lines", len(got), len(lines))
	}
	for i, l := range got {
		empty := l == `{"context":""}`
		if wantEmpty := i >= 1 && i <= 4; empty != wantEmpty {
			t.Errorf("line %d: %.80s (want empty=%v)", i+1, l, wantEmpty)
		}
	}
}

func mustAbs(t *testing.T, p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestPredictResume: an output resumed from a journal equals an uninterrupted one.
func TestPredictResume(t *testing.T) {
	c := cfg(t, 0)
	full := filepath.Join(t.TempDir(), "full.jsonl")
	_, want := predict(t, PredictOptions{DataDir: sampleDir, Lang: "kotlin", Stage: "sample", Out: full, Batch: c})
	// Simulate a run killed after two datapoints: a journal with two records, the
	// second one truncated mid-write.
	out := filepath.Join(t.TempDir(), "out.jsonl")
	rec := func(i int, line string) string {
		b, _ := json.Marshal(map[string]any{"i": i, "line": line})
		return string(b)
	}
	journal := `{"n":4}` + "\n" + rec(0, want[0]) + "\n" + rec(2, want[2])[:40]
	os.WriteFile(out+".partial", []byte(journal), 0o644)
	sum, got := predict(t, PredictOptions{DataDir: sampleDir, Lang: "kotlin", Stage: "sample", Out: out, Resume: true, Batch: c})
	if sum.Resumed != 1 {
		t.Errorf("resumed %d datapoints, want 1", sum.Resumed)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("resumed output differs from the uninterrupted one")
	}
	if _, err := os.Stat(out + ".partial"); !os.IsNotExist(err) {
		t.Errorf("journal left after Finish: %v", err)
	}
}

// TestPredictSharedDev runs the main job on ../shared/data/dev from the zips (skipped
// when absent): 20 non-empty contexts per language.
func TestPredictSharedDev(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "data", "dev")
	if _, err := os.Stat(dir); err != nil || testing.Short() {
		t.Skip("no shared dev data")
	}
	// The sample tests check predict's workers under -race.
	racetest.Skip(t, "predicts the whole dev set with LSA fits")
	for _, lang := range []string{"kotlin", "python"} {
		out := filepath.Join(t.TempDir(), "out.jsonl")
		c := cfg(t, 0)
		c.Index.Dense = retrieve.DenseLSA
		sum, lines := predict(t, PredictOptions{DataDir: dir, Lang: lang, Stage: "dev", Out: out, Batch: c})
		if len(lines) != 20 {
			t.Errorf("%s: %d lines", lang, len(lines))
		}
		for i, l := range lines {
			if strings.HasPrefix(l, `{"context":""`) {
				t.Errorf("%s line %d: empty context", lang, i+1)
			}
		}
		t.Logf("%s: %d snapshots, %d chunks, %v", lang, sum.Snapshots, sum.Chunks, sum.Wall)
	}
}

// TestPredictDense: a Hugging Face model folder (the tiny test model), opened once
// and shared by every snapshot, works as the dense retriever. The pure-Go model
// runs some 10 times slower under the race detector, whose checks of the model
// itself are retrieve/hugot's tests; make test runs this one without it.
func TestPredictDense(t *testing.T) {
	racetest.Skip(t, "embeds every chunk with the pure-Go dense model")
	emb, err := hugot.New("../testdata/models/tiny-bert", hugot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer emb.Close()
	c := cfg(t, 0)
	c.Index.Dense, c.Index.Embedder = retrieve.DenseModel, emb
	out := filepath.Join(t.TempDir(), "out.jsonl")
	sum, lines := predict(t, PredictOptions{DataDir: sampleDir, Lang: "python", Stage: "sample", Out: out, Batch: c})
	if sum.Failed != 0 || len(lines) != 4 || sum.SharedLSA != 0 {
		t.Fatalf("%d failed, %d lines, %d shared LSA", sum.Failed, len(lines), sum.SharedLSA)
	}
	for i, l := range lines {
		if strings.HasPrefix(l, `{"context":""`) {
			t.Errorf("line %d empty", i+1)
		}
	}
}

// TestPredictResumeOtherOptions: a journal written with other options is refused, so
// a resumed output never mixes lines made two ways.
func TestPredictResumeOtherOptions(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out.jsonl")
	planned := PredictOptions{DataDir: sampleDir, Lang: "kotlin", Stage: "sample", Out: out, Batch: cfg(t, 0)}
	planned.Batch.Compose.Plan.Window = 1000
	digest, err := fileDigest(filepath.Join(sampleDir, "kotlin-sample.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	jc := journalHeader(Shard{}, planned.Batch, digest)
	o, err := CreateOutputConfig(out, 4, false, jc)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Put(0, PredictionLine("x", nil, nil)); err != nil {
		t.Fatal(err)
	}
	// No Finish: the journal stays, as after a killed run.
	_, err = Predict(context.Background(), PredictOptions{DataDir: sampleDir, Lang: "kotlin", Stage: "sample", Out: out, Resume: true, Batch: cfg(t, 0)})
	if err == nil || !strings.Contains(err.Error(), "other options") {
		t.Fatalf("resume with the default planner window after a run planned for 1000 tokens: %v, want an error about other options", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "compose.plan_window 1000 (journal) vs 8000 (this run)") || len(msg) > 600 {
		t.Errorf("the mismatch should name the differing option, not print the structs: %s", msg)
	}
	planned.Resume = true
	if _, err := Predict(context.Background(), planned); err != nil {
		t.Fatalf("resume with the same options: %v", err)
	}
}

// TestPredictResumeOtherDatapoints: a journal written for another datapoint file
// (here the same datapoints in another order, as after regenerating a dataset) is
// refused, so its lines never land at the wrong datapoints.
func TestPredictResumeOtherDatapoints(t *testing.T) {
	data := sampleCopy(t, func(name string, raw []byte) []byte {
		if name != "kotlin-sample.jsonl" {
			return raw
		}
		lines := strings.SplitAfter(strings.TrimSuffix(string(raw), "\n"), "\n")
		slices.Reverse(lines)
		return []byte(strings.Join(lines, "\n") + "\n")
	})
	out := filepath.Join(t.TempDir(), "out.jsonl")
	c := cfg(t, 0)
	digest, err := fileDigest(filepath.Join(sampleDir, "kotlin-sample.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	jc := journalHeader(Shard{}, c, digest)
	o, err := CreateOutputConfig(out, 4, false, jc)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Put(0, PredictionLine("x", nil, nil)); err != nil {
		t.Fatal(err)
	}
	_, err = Predict(context.Background(), PredictOptions{DataDir: data, Lang: "kotlin", Stage: "sample", Out: out, Resume: true, Batch: c})
	if err == nil || !strings.Contains(err.Error(), "another datapoint file") {
		t.Fatalf("resume on a reordered datapoint file: %v, want an error naming the datapoints' digest", err)
	}
}

// TestPredictRefusesInputAsOutput: -o naming the datapoint or truth file is an
// option error, and the file is left as it was.
func TestPredictRefusesInputAsOutput(t *testing.T) {
	data := sampleCopy(t, func(_ string, raw []byte) []byte { return raw })
	if _, err := Predict(context.Background(), PredictOptions{DataDir: data, Lang: "kotlin", Stage: "sample", Out: t.TempDir(), Batch: cfg(t, 0)}); !errors.As(err, new(*repoctx.OptionError)) {
		t.Errorf("-o a folder: %v, want an OptionError", err)
	}
	for _, name := range []string{"kotlin-sample.jsonl", "kotlin-sample.truth.jsonl"} {
		p := filepath.Join(data, name)
		before, _ := os.ReadFile(p)
		_, err := Predict(context.Background(), PredictOptions{DataDir: data, Lang: "kotlin", Stage: "sample", Out: p, Batch: cfg(t, 0)})
		var oe *repoctx.OptionError
		if !errors.As(err, &oe) || oe.Option != "output" {
			t.Errorf("-o %s: %v, want an OptionError for output", name, err)
		}
		if after, _ := os.ReadFile(p); !bytes.Equal(before, after) {
			t.Errorf("-o %s: the input changed", name)
		}
	}
}

// sampleCopy makes a dataset folder from the bundled sample: its .jsonl files
// copied through edit (given each file's name and bytes), the rest linked.
func sampleCopy(t *testing.T, edit func(name string, raw []byte) []byte) string {
	t.Helper()
	data := t.TempDir()
	ents, err := os.ReadDir(sampleDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		abs, _ := filepath.Abs(filepath.Join(sampleDir, e.Name()))
		if strings.HasSuffix(e.Name(), ".jsonl") {
			raw, err := os.ReadFile(abs)
			if err == nil {
				err = os.WriteFile(filepath.Join(data, e.Name()), edit(e.Name(), raw), 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.Symlink(abs, filepath.Join(data, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	return data
}

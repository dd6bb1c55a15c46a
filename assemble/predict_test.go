package assemble

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/dataset"
	"github.com/repoctx/repoctx/symbols"
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

func predict(t *testing.T, opts PredictOptions) (Summary, []string) {
	t.Helper()
	if opts.Index.CacheDir == "" {
		opts.Index.CacheDir = t.TempDir()
	}
	sum, err := Predict(opts)
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
			sum, lines := predict(t, PredictOptions{DataDir: sampleDir, Lang: lang, Stage: "sample", Out: out, Workers: 1})
			want := readLines(t, filepath.Join(sampleDir, lang+"-sample.jsonl"))
			if len(lines) != len(want) || sum.Datapoints != len(want) {
				t.Fatalf("%d lines for %d datapoints", len(lines), len(want))
			}
			for i, l := range lines {
				var v map[string]string
				if err := json.Unmarshal([]byte(l), &v); err != nil {
					t.Fatalf("line %d: %v", i+1, err)
				}
				if !strings.HasPrefix(v["context"], FileSep) {
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
			writeZipOfZips(t, filepath.Join(sampleDir, "repositories-"+lang+"-sample"), filepath.Join(zdir, lang+"-sample.zip"))
			data, _ := os.ReadFile(filepath.Join(sampleDir, lang+"-sample.jsonl"))
			os.WriteFile(filepath.Join(zdir, lang+"-sample.jsonl"), data, 0o644)
			out2 := filepath.Join(t.TempDir(), "out.jsonl")
			_, lines2 := predict(t, PredictOptions{DataDir: zdir, Lang: lang, Stage: "sample", Out: out2, Workers: 3})
			if strings.Join(lines, "\n") != strings.Join(lines2, "\n") {
				t.Errorf("zip layout / 3 workers gave different output")
			}
		})
	}
}

// writeZipOfZips packs each snapshot folder of dir into an inner zip inside out.
func writeZipOfZips(t *testing.T, dir, out string) {
	t.Helper()
	var outer bytes.Buffer
	ow := zip.NewWriter(&outer)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		var inner bytes.Buffer
		iw := zip.NewWriter(&inner)
		root := filepath.Join(dir, e.Name())
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			w, _ := iw.Create(filepath.ToSlash(rel))
			b, _ := os.ReadFile(p)
			w.Write(b)
			return nil
		})
		iw.Close()
		w, _ := ow.Create(e.Name() + ".zip")
		w.Write(inner.Bytes())
	}
	ow.Close()
	if err := os.WriteFile(out, outer.Bytes(), 0o644); err != nil {
		t.Fatal(err)
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
	sum, err := Predict(PredictOptions{DataDir: dir, Lang: "python", Stage: "bad", Out: out, Index: IndexOptions{CacheDir: t.TempDir()}})
	if !errors.Is(err, ErrSomeFailed) || sum.Failed != 4 {
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
	cache := t.TempDir()
	full := filepath.Join(t.TempDir(), "full.jsonl")
	_, want := predict(t, PredictOptions{DataDir: sampleDir, Lang: "kotlin", Stage: "sample", Out: full, Index: IndexOptions{CacheDir: cache}})
	// Simulate a run killed after two datapoints: a journal with two records, the
	// second one truncated mid-write.
	out := filepath.Join(t.TempDir(), "out.jsonl")
	rec := func(i int, line string) string {
		b, _ := json.Marshal(map[string]any{"i": i, "line": line})
		return string(b)
	}
	journal := `{"n":4}` + "\n" + rec(0, want[0]) + "\n" + rec(2, want[2])[:40]
	os.WriteFile(out+".partial", []byte(journal), 0o644)
	sum, got := predict(t, PredictOptions{DataDir: sampleDir, Lang: "kotlin", Stage: "sample", Out: out, Resume: true, Index: IndexOptions{CacheDir: cache}})
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
	langs, dense := []string{"kotlin", "python"}, ""
	if raceEnabled {
		// Kotlin's 20 snapshots and the LSA fits take minutes under -race.
		langs, dense = []string{"python"}, "none"
	}
	for _, lang := range langs {
		out := filepath.Join(t.TempDir(), "out.jsonl")
		sum, lines := predict(t, PredictOptions{DataDir: dir, Lang: lang, Stage: "dev", Out: out, Index: IndexOptions{Dense: dense}})
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

// TestPredictDense: the default index is hybrid (LSA vectors), and a Hugging Face
// model folder (the tiny test model) works as the dense retriever; parts say which
// retriever ranked them.
func TestPredictDense(t *testing.T) {
	for _, dense := range []string{"", "../testdata/models/tiny-bert"} {
		out := filepath.Join(t.TempDir(), "out.jsonl")
		sum, lines := predict(t, PredictOptions{DataDir: sampleDir, Lang: "python", Stage: "sample", Out: out,
			Index: IndexOptions{Dense: dense}})
		if sum.Failed != 0 || len(lines) != 4 {
			t.Fatalf("dense %q: %d failed, %d lines", dense, sum.Failed, len(lines))
		}
		for i, l := range lines {
			if strings.HasPrefix(l, `{"context":""`) {
				t.Errorf("dense %q: line %d empty", dense, i+1)
			}
		}
	}
	src, err := dataset.OpenSource(sampleDir, "kotlin", "sample", dataset.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := src.Open(src.Names()[0])
	if err != nil {
		t.Fatal(err)
	}
	ch := chunker.NewStructural(chunker.Options{})
	defer ch.Close()
	ix, _, err := IndexSnapshot(snap, ch, IndexOptions{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if !ix.HasDense() {
		t.Fatal("default index has no dense vectors")
	}
	_, parts, err := Compose(ix, Hole{Path: "x.kt", Prefix: "fun escalate(issue: Issue): Issue {\n    val raised = issue.priority.", Suffix: "\n}\n"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	fused := false
	for _, p := range parts {
		for _, w := range p.Why {
			fused = fused || strings.Contains(w, "dense")
		}
	}
	if !fused {
		t.Errorf("no part shows fused ranks: %+v", parts)
	}
}

// TestCachedSymbols: the symbol table is stored beside the index and read back equal.
func TestCachedSymbols(t *testing.T) {
	src, err := dataset.OpenSource(sampleDir, "python", "sample", dataset.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	snap, _ := src.Open(src.Names()[0])
	ch := chunker.NewStructural(chunker.Options{})
	defer ch.Close()
	cache := t.TempDir()
	ix, _, err := IndexSnapshot(snap, ch, IndexOptions{CacheDir: cache, Dense: "none"})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	ex := symbols.NewExtractor(0)
	defer ex.Close()
	a := CachedSymbols(snap, ix, ex, cache, 0)
	files, _ := filepath.Glob(filepath.Join(cache, "symbols", "*.gob"))
	if len(files) != 1 {
		t.Fatalf("symbol cache files %v", files)
	}
	b := CachedSymbols(snap, ix, ex, cache, 0)
	ra, rb := a.Resolve("parse_amount", "invoicing/cli.py", nil, 1), b.Resolve("parse_amount", "invoicing/cli.py", nil, 1)
	if len(ra) != 1 || len(rb) != 1 || *ra[0].Def != *rb[0].Def {
		t.Errorf("cached table differs: %+v vs %+v", ra, rb)
	}
}

// TestPredictResumeOtherOptions: a journal written with other options is refused, so
// a resumed output never mixes lines made two ways.
func TestPredictResumeOtherOptions(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out.jsonl")
	planned := PredictOptions{DataDir: sampleDir, Lang: "kotlin", Stage: "sample", Out: out, Compose: Options{Plan: Plan{Window: 1000}}}
	o, err := dataset.CreateOutputConfig(out, 4, false, configFingerprint(planned))
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Put(0, dataset.PredictionLine("x", nil, nil)); err != nil {
		t.Fatal(err)
	}
	// No Finish: the journal stays, as after a killed run.
	_, err = Predict(PredictOptions{DataDir: sampleDir, Lang: "kotlin", Stage: "sample", Out: out, Resume: true, Index: IndexOptions{CacheDir: t.TempDir()}})
	if err == nil || !strings.Contains(err.Error(), "other options") {
		t.Fatalf("resume with the planner off after a planned run: %v, want an error about other options", err)
	}
	planned.Resume, planned.Index.CacheDir = true, t.TempDir()
	if _, err := Predict(planned); err != nil {
		t.Fatalf("resume with the same options: %v", err)
	}
}

package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/dataset"
	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/internal/racetest"
)

const sampleDir = "../testdata/sample"

var (
	cacheOnce sync.Once
	cacheDir  string
)

// sharedCache returns an index cache directory shared by the tests of this
// run, so that each sample snapshot is indexed once.
func sharedCache(t *testing.T) string {
	cacheOnce.Do(func() {
		d, err := os.MkdirTemp("", "repoctx-eval-test-")
		if err != nil {
			t.Fatal(err)
		}
		cacheDir = d
	})
	return cacheDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if cacheDir != "" {
		os.RemoveAll(cacheDir)
	}
	os.Exit(code)
}

func allConfigs() []string { return append([]string{ConfigCurrent}, Baselines()...) }

// checkReport checks what every report must satisfy.
func checkReport(t *testing.T, rep *Report, n int, names []string) {
	t.Helper()
	if rep.Datapoints != n {
		t.Errorf("%d datapoints, want %d", rep.Datapoints, n)
	}
	var got []string
	for _, c := range rep.Configs {
		got = append(got, c.Name)
		if c.Failed != 0 {
			t.Errorf("%s: %d failed: %+v", c.Name, c.Failed, c.PerDatapoint)
		}
		if len(c.PerDatapoint) != n || len(c.Scores) != len(rep.Settings) {
			t.Fatalf("%s: %d datapoints, %d settings", c.Name, len(c.PerDatapoint), len(c.Scores))
		}
		for _, d := range c.PerDatapoint {
			prev := -1
			for k := len(rep.Settings) - 1; k >= 0; k-- {
				p := d.Settings[k]
				for _, v := range []float64{p.LineChrF, p.CopyChrF} {
					if v < 0 || v > 1 {
						t.Errorf("%s %s: metric %v outside [0, 1]", c.Name, d.ID, v)
					}
				}
				if (p.IDRec != nil) != (d.NewIDs > 0) || (p.IDRec != nil && (*p.IDRec < 0 || *p.IDRec > 1)) {
					t.Errorf("%s %s: idrec %v with %d new identifiers", c.Name, d.ID, p.IDRec, d.NewIDs)
				}
				if (p.NovelRec != nil) != (d.NovelIDs > 0) || (p.NovelRec != nil && (*p.NovelRec < 0 || *p.NovelRec > 1)) {
					t.Errorf("%s %s: novelrec %v with %d novel identifiers", c.Name, d.ID, p.NovelRec, d.NovelIDs)
				}
				if (p.AllRec != nil) != (d.AllIDs > 0) || (p.AllRec != nil && (*p.AllRec < 0 || *p.AllRec > 1)) {
					t.Errorf("%s %s: allrec %v with %d identifiers", c.Name, d.ID, p.AllRec, d.AllIDs)
				}
				_ = prev
			}
			// Trimming only removes: full >= w16000 >= w8000.
			if rep.Settings[0].Name == "full" && len(rep.Settings) >= 3 {
				f, w8, w16 := d.Settings[0], d.Settings[1], d.Settings[2]
				if !(f.CtxChars >= w16.CtxChars && w16.CtxChars >= w8.CtxChars && f.LineChrF >= w16.LineChrF && w16.LineChrF >= w8.LineChrF) {
					t.Errorf("%s %s: trimming added something: %+v", c.Name, d.ID, d.Settings)
				}
				if d.NovelIDs > 0 && !(*f.NovelRec >= *w16.NovelRec && *w16.NovelRec >= *w8.NovelRec) ||
					d.AllIDs > 0 && !(*f.AllRec >= *w16.AllRec && *w16.AllRec >= *w8.AllRec) {
					t.Errorf("%s %s: trimming found more identifiers: %+v", c.Name, d.ID, d.Settings)
				}
			}
		}
		// novelrec's and allrec's datapoints are the datapoint file's: the same in every row.
		first := rep.Configs[0]
		if c.NovelRecN != first.NovelRecN || c.AllRecN != first.AllRecN {
			t.Errorf("%s: novelrec over %d, allrec over %d datapoints; %s: %d, %d", c.Name, c.NovelRecN, c.AllRecN, first.Name, first.NovelRecN, first.AllRecN)
		}
		for i, d := range c.PerDatapoint {
			if d.NovelIDs != first.PerDatapoint[i].NovelIDs || d.AllIDs != first.PerDatapoint[i].AllIDs {
				t.Errorf("%s %s: %d novel, %d identifiers; %s: %d, %d", c.Name, d.ID, d.NovelIDs, d.AllIDs, first.Name, first.PerDatapoint[i].NovelIDs, first.PerDatapoint[i].AllIDs)
			}
		}
		if c.Name == ConfigEmpty {
			for _, s := range c.Scores {
				if s.LineChrF != 0 || s.CopyChrF != 0 || s.CtxCharsMean != 0 || (s.IDRec != nil && *s.IDRec != 0) || (s.NovelRec != nil && *s.NovelRec != 0) {
					t.Errorf("empty context scored %+v", s)
				}
			}
		}
	}
	if !reflect.DeepEqual(got, names) {
		t.Errorf("configurations %q, want %q", got, names)
	}
	var table, js bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	for _, want := range append([]string{"idrec:", "novelrec:", "allrec:", "line_chrf:", "copy_chrf:", "ctx_chars:", "configurations:"}, names...) {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back.Configs) != len(rep.Configs) {
		t.Errorf("JSON does not read back: %v", err)
	}
}

// TestRunSample runs every configuration on the bundled sample, twice, and
// checks the report and that it is deterministic.
func TestRunSample(t *testing.T) {
	for _, lang := range []string{"python", "kotlin"} {
		t.Run(lang, func(t *testing.T) {
			opts := Options{DataDir: sampleDir, Lang: lang, Stage: "sample", Configs: allConfigs(),
				Batch: testBatch(sharedCache(t))}
			rep, err := Run(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			checkReport(t, rep, 4, []string{"current", "empty", "recent", "bm25file", "windows", "windows-old", "seed-bm25", "oracle"})
			if len(rep.Notes) == 0 || !strings.Contains(rep.Notes[0], "BM25 only") {
				t.Errorf("notes %q should say that seed-bm25 lacks dense retrieval", rep.Notes)
			}
			opts.Batch.Workers = 1
			again, err := Run(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			for i := range rep.Configs {
				if !reflect.DeepEqual(rep.Configs[i], again.Configs[i]) {
					t.Errorf("%s: second run differs", rep.Configs[i].Name)
				}
			}
		})
	}
}

// TestCurrentMatchesPredict checks that the current configuration's contexts
// are what dataset.Predict writes, also when only the first datapoints are
// scored.
func TestCurrentMatchesPredict(t *testing.T) {
	for _, lang := range []string{"python", "kotlin"} {
		out := filepath.Join(t.TempDir(), "out.jsonl")
		bc := testBatch(sharedCache(t))
		if _, err := dataset.Predict(context.Background(), dataset.PredictOptions{DataDir: sampleDir, Lang: lang, Stage: "sample", Out: out, Batch: bc}); err != nil {
			t.Fatal(err)
		}
		preds, err := ReadPredictions(out, 4)
		if err != nil {
			t.Fatal(err)
		}
		dps, _, err := dataset.ReadDatapointsFile(filepath.Join(sampleDir, lang+"-sample.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		opts := Options{DataDir: sampleDir, Lang: lang, Stage: "sample", Batch: bc}
		for _, n := range []int{4, 2} {
			ctxs, errs, err := buildContexts(opts, grammars.Lookup(lang), dps[:n], []string{ConfigCurrent})
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < n; i++ {
				if preds[i].Context != ctxs[ConfigCurrent][i].Context || errs[ConfigCurrent][i] != nil {
					t.Errorf("%s, %d datapoints: datapoint %d: eval's context differs from predict's (%v)", lang, n, i, errs[ConfigCurrent][i])
				}
			}
		}
	}
}

// TestScoreDatapointMatchesExported checks that the scorer, which shares work
// between settings, gives the numbers of the exported functions applied to
// the trimmed contexts.
func TestScoreDatapointMatchesExported(t *testing.T) {
	settings := Settings([]int{450, 2000, 5000}, []int{1500})
	for _, lang := range []string{"python", "kotlin"} {
		spec := grammars.Lookup(lang)
		dps, _, err := dataset.ReadDatapointsFile(filepath.Join(sampleDir, lang+"-sample.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		truth, err := dataset.ReadTruth(filepath.Join(sampleDir, lang+"-sample.truth.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		opts := Options{DataDir: sampleDir, Lang: lang, Stage: "sample", Batch: testBatch(sharedCache(t))}
		ctxs, _, err := buildContexts(opts, spec, dps, allConfigs())
		if err != nil {
			t.Fatal(err)
		}
		// Bytes as tokens for Python, so that its windows cut too; the estimate for Kotlin.
		tc := repoctx.TokenCounter(byteCounter{})
		if lang == "kotlin" {
			tc = repoctx.CharEstimate{}
		}
		{
			for i, d := range dps {
				c := newCaches()
				middle := truth[d.ID].Middle
				for _, cfg := range allConfigs() {
					ctx := ctxs[cfg][i].Context
					got := scoreDatapoint(middle, d.Prefix, d.Suffix, d.Prefix, d.Suffix, ctx, settings, tc, spec.IsKeyword, c, false)
					for k, s := range settings {
						trimmed := ctx
						switch {
						case s.Window > 0:
							trimmed = TrimToWindow(ctx, d.Prefix, d.Suffix, s.Window, tc)
						case s.Chars > 0:
							trimmed = TrimToChars(ctx, s.Chars)
						}
						p := got.Settings[k]
						r, n := IDRecall(middle, d.Prefix, d.Suffix, trimmed, spec.IsKeyword)
						if n != got.NewIDs || (n > 0 && (p.IDRec == nil || !near(*p.IDRec, r))) {
							t.Errorf("%s %s %s %s: idrec %v over %d, want %v over %d", lang, d.ID, cfg, s.Name, p.IDRec, got.NewIDs, r, n)
						}
						if want := LineChrF(middle, trimmed); !near(p.LineChrF, want) {
							t.Errorf("%s %s %s %s: line_chrf %v, want %v", lang, d.ID, cfg, s.Name, p.LineChrF, want)
						}
						if want := CopyChrF(d.Prefix, middle, trimmed); !near(p.CopyChrF, want) {
							t.Errorf("%s %s %s %s: copy_chrf %v, want %v", lang, d.ID, cfg, s.Name, p.CopyChrF, want)
						}
						pre, suf := d.Prefix, d.Suffix
						if s.Window > 0 {
							pre, suf = TrimPromptToWindow(d.Prefix, d.Suffix, s.Window, tc)
						}
						r, n = NovelRecall(middle, d.Prefix, d.Suffix, trimmed, spec.IsKeyword)
						if n != got.NovelIDs || (n > 0 && (p.NovelRec == nil || !near(*p.NovelRec, r))) {
							t.Errorf("%s %s %s %s: novelrec %v over %d, want %v over %d", lang, d.ID, cfg, s.Name, p.NovelRec, got.NovelIDs, r, n)
						}
						r, n = AllRecall(middle, pre, suf, trimmed, spec.IsKeyword)
						if n != got.AllIDs || (n > 0 && (p.AllRec == nil || !near(*p.AllRec, r))) {
							t.Errorf("%s %s %s %s: allrec %v over %d, want %v over %d", lang, d.ID, cfg, s.Name, p.AllRec, got.AllIDs, r, n)
						}
						if p.CtxChars != len(trimmed) {
							t.Errorf("%s %s %s %s: %d chars, want %d", lang, d.ID, cfg, s.Name, p.CtxChars, len(trimmed))
						}
					}
				}
			}
		}
	}
}

// sampleCopy copies the python sample's jsonl files into a new directory and
// links its snapshots, so that tests can alter the files.
func sampleCopy(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"python-sample.jsonl", "python-sample.truth.jsonl"} {
		b, err := os.ReadFile(filepath.Join(sampleDir, f))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, dir, f, string(b))
	}
	abs, err := filepath.Abs(filepath.Join(sampleDir, "repositories-python-sample"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(abs, filepath.Join(dir, "repositories-python-sample")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestRunPredictions scores a hand-made predictions file whose lines use the
// prefix and suffix overrides.
func TestRunPredictions(t *testing.T) {
	dir := sampleCopy(t)
	dps, _, _ := dataset.ReadDatapointsFile(filepath.Join(dir, "python-sample.jsonl"))
	truth, _ := dataset.ReadTruth(filepath.Join(dir, "python-sample.truth.jsonl"))
	mid := func(i int) string { return truth[dps[i].ID].Middle }
	huge := strings.Repeat("x = 1\n", 6000) // 36000 runes: over 8000 tokens alone
	lines := []string{
		// 0: the middle itself as context: every metric is perfect.
		string(dataset.PredictionLine(repoctx.FileSep+"m.py\n"+mid(0), nil, nil)),
		// 1: a prefix override so long that nothing fits an 8000-token window.
		string(dataset.PredictionLine(repoctx.FileSep+"m.py\n"+mid(1), &huge, nil)),
		// 2: a suffix override that shows the middle: it has no new identifiers left.
		string(dataset.PredictionLine("", nil, ptr(mid(2)))),
		// 3: empty.
		string(dataset.PredictionLine("", nil, nil)),
	}
	p := writeFile(t, dir, "mine.jsonl", strings.Join(lines, "\n")+"\n")
	rep, err := Run(context.Background(), Options{DataDir: dir, Lang: "python", Stage: "sample", Predictions: []string{p}, Configs: []string{ConfigEmpty}})
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, rep, 4, []string{"mine", "empty"})
	pd := rep.Configs[0].PerDatapoint
	full, w8 := 0, 1
	if s := pd[0].Settings[full]; s.LineChrF != 1 || (s.IDRec != nil && *s.IDRec != 1) {
		t.Errorf("datapoint 0 (the middle as context): %+v", s)
	}
	if s := pd[1].Settings[w8]; s.CtxChars != 0 || pd[1].Settings[full].CtxChars == 0 {
		t.Errorf("datapoint 1 (huge prefix): w8000 %+v, full %+v", s, pd[1].Settings[full])
	}
	if pd[2].NewIDs != 0 {
		t.Errorf("datapoint 2: %d new identifiers despite the suffix showing the middle", pd[2].NewIDs)
	}
	if s := pd[3].Settings[full]; s.CtxChars != 0 || s.LineChrF != 0 {
		t.Errorf("datapoint 3: %+v", s)
	}
	// Limit scores the first datapoints of a full-length file.
	rep, err = Run(context.Background(), Options{DataDir: dir, Lang: "python", Stage: "sample", Predictions: []string{p}, Limit: 2})
	if err != nil || rep.Datapoints != 2 || len(rep.Configs[0].PerDatapoint) != 2 {
		t.Errorf("Limit 2: %v, %+v", err, rep)
	}
}

func ptr(s string) *string { return &s }

// TestRunErrors checks the errors for bad input: each names the file, line or
// datapoint at fault.
func TestRunErrors(t *testing.T) {
	dir := sampleCopy(t)
	dpFile := filepath.Join(dir, "python-sample.jsonl")
	truthFile := filepath.Join(dir, "python-sample.truth.jsonl")
	base := Options{DataDir: dir, Lang: "python", Stage: "sample", Configs: []string{ConfigEmpty}}
	run := func(mod func(*Options)) error {
		o := base
		mod(&o)
		_, err := Run(context.Background(), o)
		return err
	}
	expect := func(name string, err error, parts ...string) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: no error", name)
			return
		}
		if !strings.HasPrefix(err.Error(), "eval: ") {
			t.Errorf("%s: error %q lacks the eval: prefix", name, err)
		}
		for _, p := range parts {
			if !strings.Contains(err.Error(), p) {
				t.Errorf("%s: error %q lacks %q", name, err, p)
			}
		}
	}
	expect("unknown language", run(func(o *Options) { o.Lang = "cobol" }), `unknown language "cobol"`)
	expect("unknown configuration", run(func(o *Options) { o.Configs = []string{"bm25"} }), `unknown configuration "bm25"`)
	expect("nothing to score", run(func(o *Options) { o.Configs = nil }), "nothing to score")
	expect("bad window", run(func(o *Options) { o.Windows = []int{0} }), "window 0")
	expect("window without room", run(func(o *Options) { o.Windows = []int{repoctx.MaxNewTokens} }), "must be more than 384 tokens")
	expect("bad budget", run(func(o *Options) { o.BudgetChars = []int{-5} }), "budget -5")
	expect("missing datapoints", run(func(o *Options) { o.Stage = "nope" }), "python-nope.jsonl")

	p := writeFile(t, dir, "three.jsonl", strings.Repeat(`{"context":""}`+"\n", 3))
	expect("wrong number of prediction lines", run(func(o *Options) { o.Predictions = []string{p} }), "three.jsonl: 3 lines, want 4")

	// A datapoint without truth.
	truth, _ := os.ReadFile(truthFile)
	tl := strings.SplitAfter(string(truth), "\n")
	writeFile(t, dir, "python-sample.truth.jsonl", tl[0]+tl[2]+tl[3])
	dps, _, _ := dataset.ReadDatapointsFile(dpFile)
	expect("datapoint without truth", run(func(*Options) {}), `datapoint "`+dps[1].ID+`"`, "python-sample.jsonl:2", "has no truth in", "python-sample.truth.jsonl")

	// No truth file at all.
	os.Remove(truthFile)
	expect("missing truth file", run(func(*Options) {}), "truth for python-sample", "python-sample.truth.jsonl", "no such file")
	writeFile(t, dir, "python-sample.truth.jsonl", string(truth))

	// A bad datapoint line.
	data, _ := os.ReadFile(dpFile)
	writeFile(t, dir, "python-sample.jsonl", string(data)+"{not json\n")
	expect("bad datapoint line", run(func(*Options) {}), "python-sample.jsonl:5", "malformed JSON")
	writeFile(t, dir, "python-sample.jsonl", string(data))

	// No snapshots at all: built-in configurations cannot run.
	os.Remove(filepath.Join(dir, "repositories-python-sample"))
	expect("no snapshots", run(func(o *Options) { o.Configs = []string{ConfigRecent} }), "no snapshots for python-sample")
}

// TestRunMissingSnapshot checks that a datapoint whose snapshot is missing
// is logged, counted as failed and scored empty, and the run goes on.
func TestRunMissingSnapshot(t *testing.T) {
	dir := sampleCopy(t)
	data, _ := os.ReadFile(filepath.Join(dir, "python-sample.jsonl"))
	lines := strings.SplitAfter(string(data), "\n")
	var d map[string]any
	json.Unmarshal([]byte(lines[0]), &d)
	d["revision"] = "0000000"
	b, _ := json.Marshal(d)
	lines[0] = string(b) + "\n"
	writeFile(t, dir, "python-sample.jsonl", strings.Join(lines, ""))
	var log bytes.Buffer
	rep, err := Run(context.Background(), Options{DataDir: dir, Lang: "python", Stage: "sample", Configs: []string{ConfigBM25File, ConfigCurrent},
		Batch: testBatch(sharedCache(t)), Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Configs {
		if c.Failed != 1 || c.PerDatapoint[0].Error == "" || c.PerDatapoint[0].Settings[0].CtxChars != 0 || c.PerDatapoint[1].Settings[0].CtxChars == 0 {
			t.Errorf("%s: failed %d, per datapoint %+v", c.Name, c.Failed, c.PerDatapoint[:2])
		}
	}
	if !strings.Contains(log.String(), "datapoint "+d["id"].(string)) || !strings.Contains(log.String(), "not found") {
		t.Errorf("log: %q", log.String())
	}
	var table bytes.Buffer
	rep.WriteTable(&table)
	if !strings.Contains(table.String(), "1 datapoints failed") {
		t.Errorf("table does not report the failure:\n%s", table.String())
	}
}

// TestRunDev runs every configuration on the shared dev data, both languages
// (what `repoctx eval --baselines` does there). It is skipped with -short and
// when ../shared is absent. To stay within the test time budget it scores the
// first 5 datapoints of each language (2 and 1 under the race detector, which
// slows indexing up to 30 times); REPOCTX_EVAL_DEV_ALL=1 scores all 20.
func TestRunDev(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	// The other Run tests cover its concurrency under -race.
	racetest.Skip(t, "scores every configuration on real data")
	dev := filepath.Join("..", "..", "shared", "data", "dev")
	if _, err := os.Stat(filepath.Join(dev, "python-dev.jsonl")); err != nil {
		t.Skipf("no dev data: %v", err)
	}
	for _, tc := range []struct {
		lang  string
		limit int
	}{{"python", 5}, {"kotlin", 5}} {
		t.Run(tc.lang, func(t *testing.T) {
			start := time.Now()
			opts := Options{DataDir: dev, Lang: tc.lang, Stage: "dev", Configs: allConfigs(),
				Batch: testBatch(sharedCache(t)), Limit: tc.limit}
			if os.Getenv("REPOCTX_EVAL_DEV_ALL") == "1" {
				opts.Limit = 0
			}
			rep, err := Run(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			n := opts.Limit
			if n == 0 {
				n = 20
			}
			checkReport(t, rep, n, []string{"current", "empty", "recent", "bm25file", "windows", "windows-old", "seed-bm25", "oracle"})
			t.Logf("%s: %d datapoints in %.1fs", tc.lang, n, time.Since(start).Seconds())
		})
	}
}

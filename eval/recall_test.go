package eval

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/dataset"
	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/internal/racetest"
	"github.com/repoctx/repoctx/tokens"
)

// The hand-computed datapoint of the novelrec and allrec tests (Python).
//
//	prefix lines: "import alpha\n" (13 bytes), "x = beta\n" (9), "    " (4): 26 bytes
//	suffix lines: "\n" (1), "print(total)\n" (13): 14 bytes
//
// The middle's identifiers are alpha, beta, compute and total (4: allrec's
// denominator); only compute is absent from the prefix and suffix (1: novelrec's).
const (
	recPrefix = "import alpha\nx = beta\n    "
	recSuffix = "\nprint(total)\n"
	recMiddle = "total = compute(alpha, beta)\n"
	// recContext is configuration A's context: its last line (15 bytes) holds compute.
	recContext = repoctx.FileSep + "lib.py\ndef compute():\n"
	// Configuration B, like the budget planner, gives the prefix without its far
	// line and shows that line in the context instead.
	recPrefixB  = "x = beta\n    "
	recContextB = "import alpha\n"
)

func TestTrimPromptToWindow(t *testing.T) {
	// One token a byte: prefix 26 + suffix 14 = 40 tokens.
	for _, tc := range []struct {
		window         int
		prefix, suffix string
	}{
		{384 + 40, recPrefix, recSuffix},        // both fit exactly
		{1 << 20, recPrefix, recSuffix},         // plenty of room
		{384 + 39, "x = beta\n    ", recSuffix}, // prefix room 25: 4 + 9 fit, + 13 does not
		{384 + 27, "x = beta\n    ", recSuffix}, // prefix room 13: 4 + 9 exactly
		{384 + 26, "    ", recSuffix},           // prefix room 12
		{384 + 17, "", recSuffix},               // prefix room 3: the last line (4) does not fit
		{384 + 14, "", recSuffix},               // the suffix alone fits exactly
		{384 + 13, "", "\n"},                    // the suffix is cut too: 1 fits, 1 + 13 does not
		{384, "", ""},                           // no room at all
	} {
		p, s := TrimPromptToWindow(recPrefix, recSuffix, tc.window, byteCounter{})
		if p != tc.prefix || s != tc.suffix {
			t.Errorf("bytes, window %d: %q + %q, want %q + %q", tc.window, p, s, tc.prefix, tc.suffix)
		}
	}
	// characters/4: prefix 6.5 tokens (lines 3.25, 2.25, 1), suffix 3.5 (0.25, 3.25).
	for _, tc := range []struct {
		window         int
		prefix, suffix string
	}{
		{384 + 10, recPrefix, recSuffix},
		{384 + 9, "x = beta\n    ", recSuffix}, // prefix room 5.5: 1 + 2.25 fit, + 3.25 does not
		{384 + 4, "", recSuffix},               // prefix room 0.5: the last line (1) does not fit
		{384 + 3, "", "\n"},                    // room 3 < 3.5: 0.25 fits, + 3.25 does not
	} {
		want := tc.prefix
		p, s := TrimPromptToWindow(recPrefix, recSuffix, tc.window, repoctx.CharEstimate{})
		if p != want || s != tc.suffix {
			t.Errorf("characters/4, window %d: %q + %q, want %q + %q", tc.window, p, s, want, tc.suffix)
		}
	}
}

func TestNovelAndAllRecall(t *testing.T) {
	py := grammars.Lookup("python").IsKeyword
	check := func(name string, r float64, n int, wantR float64, wantN int) {
		t.Helper()
		if n != wantN || !near(r, wantR) {
			t.Errorf("%s = %v over %d, want %v over %d", name, r, n, wantR, wantN)
		}
	}
	// A: the whole prefix and a context holding compute.
	r, n := NovelRecall(recMiddle, recPrefix, recSuffix, recContext, py)
	check("novelrec A", r, n, 1, 1)
	r, n = AllRecall(recMiddle, recPrefix, recSuffix, recContext, py)
	check("allrec A", r, n, 1, 4)
	// B: the far prefix line in the context instead of compute. idrec's new
	// identifiers are counted against B's own prefix (alpha and compute), novelrec's
	// against the datapoint's (compute): B is scored on the same identifier as A.
	r, n = IDRecall(recMiddle, recPrefixB, recSuffix, recContextB, py)
	check("idrec B", r, n, 0.5, 2)
	r, n = NovelRecall(recMiddle, recPrefix, recSuffix, recContextB, py)
	check("novelrec B", r, n, 0, 1)
	r, n = AllRecall(recMiddle, recPrefixB, recSuffix, recContextB, py)
	check("allrec B", r, n, 0.75, 4) // alpha (context), beta (prefix), total (suffix)
	// No novel identifiers: "return" is a keyword, alpha is in the prefix.
	r, n = NovelRecall("return alpha\n", recPrefix, "", "", py)
	check("novelrec without novel identifiers", r, n, 0, 0)
	r, n = AllRecall("return alpha\n", recPrefix, "", "", py)
	check("allrec without novel identifiers", r, n, 1, 1)
	// No identifiers at all.
	r, n = AllRecall("x = 1\n", "", "", "x", py)
	check("allrec without identifiers", r, n, 0, 0)
}

// recScores scores the hand-made datapoint with configuration A's or B's prefix
// and context (the datapoint's own prefix and suffix are recPrefix and recSuffix).
func recScores(b bool, middle string, windows []int, tc repoctx.TokenCounter) DatapointScores {
	prefix, context := recPrefix, recContext
	if b {
		prefix, context = recPrefixB, recContextB
	}
	return scoreDatapoint(middle, prefix, recSuffix, recPrefix, recSuffix, context, Settings(windows, nil),
		tc, grammars.Lookup("python").IsKeyword, newCaches(), true)
}

// checkRecs compares a datapoint's novelrec and allrec per setting with want
// ({novelrec, allrec} each; -1 for none).
func checkRecs(t *testing.T, name string, ds DatapointScores, settings []Setting, want [][2]float64) {
	t.Helper()
	val := func(v *float64) float64 {
		if v == nil {
			return -1
		}
		return *v
	}
	for k, w := range want {
		p := ds.Settings[k]
		if got := [2]float64{val(p.NovelRec), val(p.AllRec)}; !near(got[0], w[0]) || !near(got[1], w[1]) {
			t.Errorf("%s, %s: novelrec, allrec = %v, want %v", name, settings[k].Name, got, w)
		}
	}
}

func TestScoreNovelAndAllRecall(t *testing.T) {
	// One token a byte. A's prefix + suffix take 40 tokens, its context's lines 19
	// and 15 (compute in the last); B's prefix + suffix 27, its context 13 (alpha).
	windows := []int{384 + 40 + 15, 384 + 40 + 14, 384 + 40, 384 + 30, 384 + 10}
	settings := Settings(windows, nil)
	a := recScores(false, recMiddle, windows, byteCounter{})
	checkRecs(t, "A", a, settings, [][2]float64{
		{1, 1},    // full
		{1, 1},    // room 15: compute's line kept
		{0, 0.75}, // room 14: no context; alpha, beta, total in the prefix and suffix
		{0, 0.75}, // room 0
		{0, 0.5},  // 40 > 30: the far prefix line (alpha) is cut: beta, total
		{0, 0},    // 14 > 10: no prefix, and the suffix keeps "\n" only
	})
	b := recScores(true, recMiddle, windows, byteCounter{})
	checkRecs(t, "B", b, settings, [][2]float64{
		{0, 0.75}, // full: alpha in the context
		{0, 0.75}, // room 28 for the context: kept
		{0, 0.75}, // room 27
		{0, 0.75}, // room 13: the context's line exactly
		{0, 0.5},  // room 3: no context; beta, total
		{0, 0},    // as A
	})
	// novelrec's denominator is the datapoint's, the same for A and B; idrec's is not.
	if a.NovelIDs != 1 || b.NovelIDs != 1 || a.AllIDs != 4 || b.AllIDs != 4 || a.NewIDs != 1 || b.NewIDs != 2 {
		t.Errorf("novel / all / new identifiers: A %d / %d / %d, B %d / %d / %d; want 1 / 4 / 1 and 1 / 4 / 2",
			a.NovelIDs, a.AllIDs, a.NewIDs, b.NovelIDs, b.AllIDs, b.NewIDs)
	}
	// No novel identifiers: novelrec undefined, allrec defined.
	c := recScores(false, "return alpha\n", windows, byteCounter{})
	checkRecs(t, "no novel identifiers", c, settings, [][2]float64{{-1, 1}, {-1, 1}, {-1, 1}, {-1, 1}, {-1, 0}, {-1, 0}})

	// characters/4: A's prefix 6.5 tokens, suffix 3.5, context lines 4.75 and 3.75.
	windows = []int{384 + 10 + 4, 384 + 10 + 3, 384 + 9, 384 + 3}
	settings = Settings(windows, nil)
	a = recScores(false, recMiddle, windows, repoctx.CharEstimate{})
	checkRecs(t, "A, characters/4", a, settings, [][2]float64{
		{1, 1},    // full
		{1, 1},    // room 4 >= 3.75
		{0, 0.75}, // room 3
		{0, 0.5},  // 10 > 9: prefix room 5.5 keeps 1 + 2.25, cuts import alpha
		{0, 0},    // 3 < 3.5: no prefix; the suffix keeps "\n"
	})
}

// With Qwen2.5's tokenizer: "import alpha\n" 3 tokens, "x = beta\n" 4, "    " 1 (the
// prefix 8 as a whole), "\n" 1, "print(total)\n" 3 (the suffix 4), "def compute():\n" 3.
func TestScoreNovelAndAllRecallQwen(t *testing.T) {
	racetest.Skip(t, "scores recall with Qwen token counts on one goroutine")
	path := "../../shared/tokenizers/qwen2.5/tokenizer.json"
	if _, err := os.Stat(path); err != nil {
		t.Skip("no ../shared tokenizer")
	}
	tk, err := tokens.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var counts []float64
	for _, s := range []string{"import alpha\n", "x = beta\n", "    ", recPrefix, "\n", "print(total)\n", recSuffix, "def compute():\n"} {
		counts = append(counts, tk.Count(s))
	}
	if want := []float64{3, 4, 1, 8, 1, 3, 4, 3}; !reflect.DeepEqual(counts, want) {
		t.Fatalf("Qwen2.5 token counts %v, want %v", counts, want)
	}
	windows := []int{384 + 12 + 3, 384 + 12 + 2, 384 + 9, 384 + 3}
	settings := Settings(windows, nil)
	a := recScores(false, recMiddle, windows, tk)
	checkRecs(t, "A, Qwen2.5", a, settings, [][2]float64{
		{1, 1},    // full
		{1, 1},    // room 3: compute's line kept
		{0, 0.75}, // room 2
		{0, 0.5},  // 12 > 9: prefix room 5 keeps 1 + 4, cuts import alpha (3)
		{0, 0},    // 4 > 3: no prefix; the suffix keeps "\n" (1), not print(total) (+3)
	})
	if p, s := TrimPromptToWindow(recPrefix, recSuffix, 384+9, tk); p != recPrefixB || s != recSuffix {
		t.Errorf("Qwen2.5, window 393: %q + %q", p, s)
	}
}

// TestRunNovelRecSameDatapoints scores two prediction files that give the model
// different prefixes (one only the cursor's line, like an aggressive planner):
// idrec's denominators differ, novelrec's do not, and the paired novelrec table
// compares the rows on all of novelrec's datapoints.
func TestRunNovelRecSameDatapoints(t *testing.T) {
	dir := sampleCopy(t)
	dps, _, err := dataset.ReadDatapointsFile(filepath.Join(dir, "python-sample.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var whole, cut []string
	for _, d := range dps {
		whole = append(whole, string(dataset.PredictionLine("", nil, nil)))
		last := d.Prefix[strings.LastIndexByte(d.Prefix, '\n')+1:]
		cut = append(cut, string(dataset.PredictionLine("", &last, nil)))
	}
	pw := writeFile(t, dir, "whole.jsonl", strings.Join(whole, "\n")+"\n")
	pc := writeFile(t, dir, "cut.jsonl", strings.Join(cut, "\n")+"\n")
	rep, err := Run(context.Background(), Options{DataDir: dir, Lang: "python", Stage: "sample", Predictions: []string{pw, pc}})
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, rep, len(dps), []string{"whole", "cut"})
	w, c := rep.Configs[0], rep.Configs[1]
	if w.IDRecN >= c.IDRecN || w.NovelRecN != c.NovelRecN || w.NovelRecN != w.IDRecN || w.AllRecN < w.NovelRecN {
		t.Errorf("idrec over %d / %d datapoints, novelrec over %d / %d, allrec over %d; want idrec's to grow with the cut prefix, novelrec's the same",
			w.IDRecN, c.IDRecN, w.NovelRecN, c.NovelRecN, w.AllRecN)
	}
	ps := rep.Paired.Configs[0].Settings[0]
	if ps.NovelRec == nil || ps.NovelRec.N != w.NovelRecN || ps.AllRec == nil || ps.AllRec.N != w.AllRecN || ps.NovelRec.Mean != 0 {
		t.Errorf("paired novelrec %+v, allrec %+v; want n %d (mean 0: no contexts) and n %d", ps.NovelRec, ps.AllRec, w.NovelRecN, w.AllRecN)
	}
	if ps.AllRec.Mean >= 0 || ps.AllRec.Verdict != VerdictLoss {
		t.Errorf("paired allrec %+v: the cut prefix shows fewer identifiers", *ps.AllRec)
	}
	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\nnovelrec  n", "\nallrec  n"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("no paired %q table:\n%s", want, table.String())
		}
	}
}

package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/repoctx/repoctx/dataset"
	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/internal/racetest"
	"github.com/repoctx/repoctx/snapshot"
)

// oracleData writes a tiny python dataset (stage "t") of two datapoints over one
// snapshot and returns its folder.
//
// Datapoint "line": middle "xy = ab" (the main line; squeezed "xy=ab", 5
// characters) after the prefix "import os\nxy = ". The candidate lines by hand
// (P_n, R_n: clipped n-gram matches over the hypothesis's and the reference's
// n-grams; orders 1..4 are effective for "xy=1"):
//
//	"xy = 1" (a.py): P = (3/4 + 2/3 + 1/2 + 0)/4 = 23/48, R = (3/5 + 2/4 + 1/3 + 0)/4 = 43/120,
//	                 F = 5PR/(4P+R) = 4945/13104 ≈ 0.3774: the oracle's line_chrf
//	"bar" (b.py) 0.145, "return ab" (suffix) 0.115, "import os" (prefix) 0
//	"xy = ab" in README.md and in c.kt would score 1, but they are not Python files;
//	"xy = " (the prefix's unfinished cursor line) would score 0.533, but it is not a line.
//
// Datapoint "ids": middle "total = compute(items, tax_rate)" after the prefix
// "def f(items):\n    ": new identifiers compute, tax_rate, total; only
// compute is in a Python file (tax_rate is in README.md): idrec 1/3.
func oracleData(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	snap := filepath.Join(dir, "repositories-python-t", "acme__o-1")
	writeFile(t, snap, "a.py", oracleFiles[0])
	writeFile(t, snap, "b.py", oracleFiles[1])
	writeFile(t, snap, "README.md", "xy = ab\ntax_rate\n")
	writeFile(t, snap, "c.kt", "xy = ab\n")
	var dps, truth string
	for _, d := range oraclePoints {
		b, _ := json.Marshal(map[string]any{"id": d.id, "repo": "acme/o", "revision": "1", "path": "a.py", "modified": []string{}, "prefix": d.prefix, "suffix": d.suffix})
		dps += string(b) + "\n"
		b, _ = json.Marshal(map[string]any{"id": d.id, "middle": d.middle})
		truth += string(b) + "\n"
	}
	writeFile(t, dir, "python-t.jsonl", dps)
	writeFile(t, dir, "python-t.truth.jsonl", truth)
	return dir
}

// oracleFiles are oracleData's Python files; oraclePoints its datapoints.
var (
	oracleFiles  = []string{"xy = 1\nfoo\n", "bar\ndef compute(xs): pass\n"}
	oraclePoints = []struct{ id, prefix, middle, suffix string }{
		{"line", "import os\nxy = ", "xy = ab\n", "  # done\nreturn ab\n"},
		{"ids", "def f(items):\n    ", "total = compute(items, tax_rate)\n", "\n"},
	}
)

// TestOracleHandComputed checks the oracle row against the hand computation of
// oracleData.
func TestOracleHandComputed(t *testing.T) {
	rep, err := Run(context.Background(), Options{DataDir: oracleData(t), Lang: "python", Stage: "t",
		Configs: []string{ConfigOracle, ConfigEmpty}, Batch: testBatch(t.TempDir())})
	if err != nil {
		t.Fatal(err)
	}
	or := rep.Configs[0]
	if or.Name != ConfigOracle || !or.Oracle || or.Failed != 0 || or.IDRecN != 1 {
		t.Fatalf("first row %+v", or)
	}
	const hand = 4945.0 / 13104
	line, ids := or.PerDatapoint[0], or.PerDatapoint[1]
	for k := range rep.Settings {
		if s := line.Settings[k]; !near(s.LineChrF, hand) || s.IDRec != nil {
			t.Errorf("line, %s: line_chrf %v, want 4945/13104 = %v; idrec %v, want none", rep.Settings[k].Name, s.LineChrF, hand, s.IDRec)
		}
		if s := ids.Settings[k]; s.IDRec == nil || *s.IDRec != 1.0/3 || ids.NewIDs != 3 {
			t.Errorf("ids, %s: idrec %v over %d new identifiers, want 1/3 over 3", rep.Settings[k].Name, s.IDRec, ids.NewIDs)
		}
	}
	if s := or.Scores[0]; !near(s.LineChrF, hand/2+ids.Settings[0].LineChrF/2) || *s.IDRec != 1.0/3 {
		t.Errorf("means %+v", s)
	}
	// The exported brute force agrees, datapoint by datapoint.
	py := grammars.Lookup("python")
	for i, d := range oraclePoints {
		if want := OracleLineChrF(d.middle, d.prefix, d.suffix, oracleFiles...); or.PerDatapoint[i].Settings[0].LineChrF != want {
			t.Errorf("%s: line_chrf %v, OracleLineChrF %v", d.id, or.PerDatapoint[i].Settings[0].LineChrF, want)
		}
	}
	if r, n := OracleIDRecall(oraclePoints[1].middle, oraclePoints[1].prefix, oraclePoints[1].suffix, py.IsKeyword, oracleFiles...); r != 1.0/3 || n != 3 {
		t.Errorf("OracleIDRecall = %v over %d, want 1/3 over 3", r, n)
	}
	// The cursor line's piece is not a line; as a complete prefix line it counts (0.533).
	if got := OracleLineChrF("xy = ab\n", "xy = \n", "", oracleFiles...); !near(got, 0.5334987593052108) {
		t.Errorf("with the prefix line \"xy = \": %v, want 0.5335", got)
	}

	var table, js bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"oracle", "paired differences against oracle", "does not depend on trimming"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	if err := rep.WriteJSON(&js); err != nil || !strings.Contains(js.String(), `"oracle": true`) {
		t.Errorf("JSON (%v) lacks the oracle flag", err)
	}
}

// TestHeadroomHandComputed checks Headroom on a made-up report.
func TestHeadroomHandComputed(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	row := func(name string, id, line float64, oracle bool) *ConfigResult {
		return &ConfigResult{Name: name, Oracle: oracle, Scores: []SettingScores{
			{Setting: "full", IDRec: f(id), LineChrF: line}, {Setting: "w8000", IDRec: f(id / 2), LineChrF: line}}}
	}
	rep := &Report{Settings: Settings([]int{8000}, nil), Configs: []*ConfigResult{
		row("current", 0.6, 0.71, false), row(ConfigBM25File, 0.4, 0.70, false), row(ConfigOracle, 0.9, 0.72, true)}}
	if !Headroom(rep) {
		t.Fatal("Headroom found no bm25file/oracle rows")
	}
	cur := rep.Configs[0].Scores
	// idrec full: (0.6 - 0.4) / (0.9 - 0.4) = 0.4; w8000: (0.3 - 0.2) / (0.45 - 0.2) = 0.4.
	for k := range cur {
		if h := cur[k].IDRecHeadroom; h == nil || !near(*h, 0.4) {
			t.Errorf("setting %d: idrec headroom %v, want 0.4", k, h)
		}
		// line_chrf: oracle - bm25file = 0.02 < 0.03: blank.
		if cur[k].LineChrFHeadroom != nil {
			t.Errorf("setting %d: line_chrf headroom %v, want none (gap 0.02)", k, *cur[k].LineChrFHeadroom)
		}
	}
	if h := rep.Configs[2].Scores[0].IDRecHeadroom; h == nil || *h != 1 {
		t.Errorf("the oracle's own headroom %v, want 1", h)
	}
	if Headroom(&Report{Configs: rep.Configs[:2]}) {
		t.Error("Headroom without an oracle row")
	}
}

// TestOracleBestIsExact checks the pruned search against scoring every line,
// on the sample snapshots (and the dev snapshots when ../shared is there), with
// every line of every file as the main line of a few hundred draws.
func TestOracleBestIsExact(t *testing.T) {
	racetest.Skip(t, "scores every middle of random draws on one goroutine")
	srcs := []string{filepath.Join(sampleDir, "repositories-python-sample"), filepath.Join(sampleDir, "repositories-kotlin-sample")}
	if dev := filepath.Join("..", "..", "shared", "data", "dev"); !testing.Short() {
		if _, err := os.Stat(filepath.Join(dev, "python-dev.zip")); err == nil {
			srcs = append(srcs, filepath.Join(dev, "python-dev.zip"), filepath.Join(dev, "kotlin-dev.zip"))
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, p := range srcs {
		var src snapshot.Source
		var err error
		if strings.HasSuffix(p, ".zip") {
			src, err = snapshot.OpenZipSource(p, snapshot.Limits{})
		} else {
			src, err = snapshot.OpenDirSource(p, snapshot.Limits{})
		}
		if err != nil {
			t.Fatal(err)
		}
		lang := "python"
		if strings.Contains(p, "kotlin") {
			lang = "kotlin"
		}
		names := src.Names()
		snap, err := src.Open(names[0])
		if err != nil {
			t.Fatal(err)
		}
		files := newSnapData(snap, grammars.Lookup(lang)).files
		sd := newOracleSnap(files)
		var all []string
		for _, f := range files {
			all = append(all, f.text)
		}
		draws := 200 // scoring every line is slow (about 10 µs a line): fewer draws on the dev snapshots
		if strings.HasSuffix(p, ".zip") {
			draws = 15
		}
		for i := 0; i < draws; i++ {
			l := sd.lines[rng.IntN(len(sd.lines))].text
			// Perturb the main line: drop a few characters, add some.
			b := []byte(l)
			for j := 0; j < 3 && len(b) > 1; j++ {
				k := rng.IntN(len(b))
				b = append(b[:k], b[k+1:]...)
			}
			middle := string(b) + "Zq(e)" // ASCII: the fast scorer
			if i%3 == 2 {
				middle = string(b) + "Zq(é)" // chrFRef
			}
			st := &oracleStats{}
			r := newOracleRef(MainLine(middle))
			got := r.best(sd.lines, 0, st)
			want := 0.0
			for _, text := range all {
				want = max(want, LineChrF(middle, text))
			}
			if got != want {
				t.Fatalf("%s %s: main line %q: pruned %v, every line %v", p, names[0], MainLine(middle), got, want)
			}
		}
		src.Close()
	}
}

// BenchmarkOracle measures the oracle on a large folder when REPOCTX_ORACLE_DIR
// names one (e.g. a Python installation's lib folder; REPOCTX_ORACLE_LANG, default
// python, picks the files): the snapshot's table is built once outside the timer,
// then each iteration scores one datapoint per middle of ../shared/data/{dev,devb}'s
// truth of that language (real main lines that the folder does not hold) with a
// blank prefix and suffix (no floor: the slowest case). ns/op is per datapoint.
func BenchmarkOracle(b *testing.B) {
	dir, lang := os.Getenv("REPOCTX_ORACLE_DIR"), os.Getenv("REPOCTX_ORACLE_LANG")
	if dir == "" {
		b.Skip("REPOCTX_ORACLE_DIR not set")
	}
	if lang == "" {
		lang = "python"
	}
	var middles []string
	for _, st := range []string{"dev", "devb"} {
		truth, err := dataset.ReadTruth(filepath.Join("..", "..", "shared", "data", st, lang+"-"+st+".truth.jsonl"))
		if err != nil {
			b.Skipf("no truth: %v", err)
		}
		for _, v := range truth {
			middles = append(middles, v.Middle)
		}
	}
	sort.Strings(middles)
	snap, err := snapshot.OpenDir(dir, snapshot.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	files := newSnapData(snap, grammars.Lookup(lang)).files
	start := time.Now()
	sd := newOracleSnap(files)
	build := time.Since(start)
	var st oracleStats
	var sum float64
	n := 0
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		m := middles[i%len(middles)]
		sum += sd.score(m, "", "", Settings(nil, nil), nil, &st).Settings[0].LineChrF
		n++
	}
	b.StopTimer()
	bytes := 0
	for _, f := range files {
		bytes += len(f.text)
	}
	b.ReportMetric(float64(st.scored)/float64(n), "exact/op")
	b.Logf("%s: %d %s files, %d MB, %d distinct lines, %d identifiers, table %v; mean line_chrf %.3f over %d scores (per datapoint: %d lines bounded by classes, %d by characters, %d scored exactly)",
		dir, len(files), lang, bytes>>20, len(sd.lines), len(sd.ids), build.Round(time.Millisecond),
		sum/float64(n), n, st.classed/n, st.bounded/n, st.scored/n)
}

// TestOracleMissingSnapshot checks that a datapoint without a snapshot fails
// alone, logged as batch.Run logs.
func TestOracleMissingSnapshot(t *testing.T) {
	dir := oracleData(t)
	data, _ := os.ReadFile(filepath.Join(dir, "python-t.jsonl"))
	writeFile(t, dir, "python-t.jsonl", strings.Replace(string(data), `"revision":"1"`, `"revision":"2"`, 1))
	var log bytes.Buffer
	rep, err := Run(context.Background(), Options{DataDir: dir, Lang: "python", Stage: "t", Configs: []string{ConfigOracle}, Log: &log, Batch: testBatch(t.TempDir())})
	if err != nil {
		t.Fatal(err)
	}
	or := rep.Configs[0]
	if or.Failed != 1 || or.PerDatapoint[0].Error == "" || or.PerDatapoint[1].Error != "" {
		t.Errorf("failed %d: %+v", or.Failed, or.PerDatapoint)
	}
	if !strings.Contains(log.String(), "error: datapoint line") || !strings.Contains(log.String(), "acme__o-2") {
		t.Errorf("log %q", log.String())
	}
}

// BenchmarkOracleScore scores the dev and devb middles of REPOCTX_ORACLE_LANG
// against the folder REPOCTX_ORACLE_DIR (see TestOracleSpeed); one op is all
// the middles.
func BenchmarkOracleScore(b *testing.B) {
	dir, lang := os.Getenv("REPOCTX_ORACLE_DIR"), os.Getenv("REPOCTX_ORACLE_LANG")
	if dir == "" {
		b.Skip("REPOCTX_ORACLE_DIR not set")
	}
	if lang == "" {
		lang = "python"
	}
	var middles []string
	for _, st := range []string{"dev", "devb"} {
		truth, err := dataset.ReadTruth(filepath.Join("..", "..", "shared", "data", st, lang+"-"+st+".truth.jsonl"))
		if err != nil {
			b.Skipf("no truth: %v", err)
		}
		for _, v := range truth {
			middles = append(middles, v.Middle)
		}
	}
	snap, err := snapshot.OpenDir(dir, snapshot.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	sd := newOracleSnap(newSnapData(snap, grammars.Lookup(lang)).files)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, m := range middles {
			sd.score(m, "", "", Settings(nil, nil), nil, &oracleStats{})
		}
	}
}

// TestOracleBounds checks, on random strings over small alphabets (repeated
// n-grams, clipping), that the packed ASCII scorer gives ChrF's very number and
// that every bound of the oracle's search is at least the score.
func TestOracleBounds(t *testing.T) {
	racetest.Skip(t, "checks the oracle's bounds on 3000 random pairs on one goroutine")
	rng := rand.New(rand.NewPCG(5, 6))
	word := func(alphabet string, n int) string {
		r := []rune(alphabet)
		var sb strings.Builder
		for i := 0; i < n; i++ {
			sb.WriteRune(r[rng.IntN(len(r))])
		}
		return sb.String()
	}
	for i := 0; i < 3000; i++ {
		alpha := "ab(c)="
		if i%4 == 3 {
			alpha = "abé ("
		}
		ref, hyp := word(alpha, 1+rng.IntN(12)), word(alpha, rng.IntN(14))
		r := newOracleRef(ref)
		h, offs := squeeze(hyp, nil, nil)
		l := newOracleLine(h, len(offs)-1)
		want := ChrF(hyp, ref)
		m := 0
		for k, v := range l.sig {
			m += min(int(v), r.sig[k])
		}
		bounds := []float64{r.bound(l.runes, min(l.runes, r.runes)), r.bound(l.runes, m), r.bound(l.runes, r.unigramMatches(h))}
		if r.fast != nil && l.ascii {
			if got := r.fast.score(h); got != want {
				t.Fatalf("ref %q hyp %q: ascii score %v, ChrF %v", ref, hyp, got, want)
			}
			bounds = append(bounds, r.bound2(l.runes, r.fast.matches(h, 1), r.fast.matches(h, 2)))
		}
		for k, b := range bounds {
			if b < want {
				t.Fatalf("ref %q hyp %q: bound %d = %v < ChrF %v", ref, hyp, k, b, want)
			}
		}
	}
}

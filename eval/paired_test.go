package eval

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestBootstrapMeanHandCases checks the bootstrap on cases whose answer is known.
func TestBootstrapMeanHandCases(t *testing.T) {
	// Identical configurations: every difference 0.
	if m, lo, hi := BootstrapMean(make([]float64, 40), 2000, BootstrapSeed, 0.95); m != 0 || lo != 0 || hi != 0 {
		t.Errorf("zeros: %v [%v, %v], want 0 [0, 0]", m, lo, hi)
	}
	// A constant shift: every resample's mean is the shift.
	shift := make([]float64, 37)
	for i := range shift {
		shift[i] = 0.125
	}
	if m, lo, hi := BootstrapMean(shift, 2000, BootstrapSeed, 0.95); m != 0.125 || lo != 0.125 || hi != 0.125 {
		t.Errorf("shift 0.125: %v [%v, %v]", m, lo, hi)
	}
	// A shift that is not a binary fraction: the same up to rounding.
	for i := range shift {
		shift[i] = 0.1
	}
	if m, lo, hi := BootstrapMean(shift, 2000, BootstrapSeed, 0.95); !near(m, 0.1) || lo != m || hi != m {
		t.Errorf("shift 0.1: %v [%v, %v]", m, lo, hi)
	}
	// Two values, 0 and 1, n = 2: a resample's mean is 0, 1/2 or 1 with
	// probabilities 1/4, 1/2, 1/4, so the 2.5th and 97.5th percentiles of 2000
	// resamples are 0 and 1, the mean 1/2.
	if m, lo, hi := BootstrapMean([]float64{0, 1}, 2000, BootstrapSeed, 0.95); m != 0.5 || lo != 0 || hi != 1 {
		t.Errorf("{0, 1}: %v [%v, %v], want 0.5 [0, 1]", m, lo, hi)
	}
	// Deterministic.
	d := []float64{0.3, -0.1, 0.2, 0, 0.05, -0.4, 0.7}
	m1, lo1, hi1 := BootstrapMean(d, 2000, BootstrapSeed, 0.95)
	m2, lo2, hi2 := BootstrapMean(d, 2000, BootstrapSeed, 0.95)
	if m1 != m2 || lo1 != lo2 || hi1 != hi2 || !(lo1 < m1 && m1 < hi1) {
		t.Errorf("not deterministic or not around the mean: %v [%v, %v] then %v [%v, %v]", m1, lo1, hi1, m2, lo2, hi2)
	}
	if m, lo, hi := BootstrapMean(nil, 2000, 1, 0.95); m != 0 || lo != 0 || hi != 0 {
		t.Errorf("no values: %v [%v, %v]", m, lo, hi)
	}
}

func TestVerdict(t *testing.T) {
	for _, c := range []struct {
		m, lo, hi float64
		want      string
	}{
		{0.01, -0.2, 0.3, VerdictTie}, // a positive mean whose interval reaches 0
		{0.1, 0, 0.2, VerdictTie},
		{0.2, 0.1, 0.3, VerdictWin},
		{-0.01, -0.2, 0.3, VerdictTie},
		{-0.1, -0.2, 0, VerdictTie}, // the interval reaches 0
		{-0.1, -0.2, -0.01, VerdictLoss},
		{0, 0, 0, VerdictTie},
	} {
		if got := Verdict(c.m, c.lo, c.hi); got != c.want {
			t.Errorf("Verdict(%v, %v, %v) = %s, want %s", c.m, c.lo, c.hi, got, c.want)
		}
	}
}

// TestPairedComparison checks the pairing on a made-up report: idrec pairs only
// the datapoints with a value on both sides, copy_chrf is not compared with the
// oracle, and the reference is current unless named.
func TestPairedComparison(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	row := func(name string, oracle bool, ids []*float64, line []float64) *ConfigResult {
		c := &ConfigResult{Name: name, Oracle: oracle}
		for i := range line {
			c.PerDatapoint = append(c.PerDatapoint, DatapointScores{Settings: []PointScores{{IDRec: ids[i], LineChrF: line[i], CopyChrF: line[i] / 2}}})
		}
		return c
	}
	rep := &Report{Settings: Settings(nil, nil), Configs: []*ConfigResult{
		row("bm25file", false, []*float64{f(0.5), nil, f(0.5)}, []float64{0.5, 0.5, 0.5}),
		row("current", false, []*float64{f(1), f(1), nil}, []float64{0.75, 0.75, 0.75}),
		row("same", false, []*float64{f(1), f(1), nil}, []float64{0.75, 0.75, 0.75}),
		row("oracle", true, []*float64{f(1), f(1), f(1)}, []float64{1, 1, 1}),
	}}
	p := PairedComparison(rep, compareTo(rep, ""))
	if p.Reference != "current" || len(p.Configs) != 3 || p.Configs[0].Name != "bm25file" {
		t.Fatalf("reference %s, rows %+v", p.Reference, p.Configs)
	}
	bm := p.Configs[0].Settings[0]
	if bm.IDRec.N != 1 || bm.IDRec.Mean != -0.5 || bm.IDRec.Verdict != VerdictLoss {
		t.Errorf("bm25file idrec %+v, want n 1 (one datapoint with both), mean -0.5, loss", *bm.IDRec)
	}
	if bm.LineChrF.N != 3 || bm.LineChrF.Mean != -0.25 || bm.LineChrF.Lo != -0.25 || bm.LineChrF.Hi != -0.25 || bm.LineChrF.Verdict != VerdictLoss {
		t.Errorf("bm25file line_chrf %+v", *bm.LineChrF)
	}
	if s := p.Configs[1].Settings[0]; s.LineChrF.Mean != 0 || s.LineChrF.Lo != 0 || s.LineChrF.Hi != 0 || s.LineChrF.Verdict != VerdictTie || s.IDRec.N != 2 {
		t.Errorf("identical row: %+v %+v", *s.LineChrF, *s.IDRec)
	}
	if s := p.Configs[2].Settings[0]; s.CopyChrF != nil || s.LineChrF.Verdict != VerdictWin {
		t.Errorf("oracle row: copy %v, line %+v", s.CopyChrF, *s.LineChrF)
	}
	if p := PairedComparison(rep, "oracle"); p.Reference != "oracle" || p.Configs[0].Settings[0].CopyChrF != nil {
		t.Errorf("against the oracle: %+v", p)
	}
	if PairedComparison(&Report{Configs: rep.Configs[:1]}, "") != nil {
		t.Error("one row compared")
	}
}

// TestRunNamedPredictions checks NAME=FILE, the plain FILE's name, the refusal
// of two rows of one name and of an unknown --compare-to, and that the paired
// table and JSON come out.
func TestRunNamedPredictions(t *testing.T) {
	dir := sampleCopy(t)
	p := writeFile(t, dir, "python-mine.jsonl", strings.Repeat(`{"context":""}`+"\n", 4))
	if name, path := PredictionArg("sparecode=" + p); name != "sparecode" || path != p {
		t.Errorf("PredictionArg(sparecode=FILE) = %q, %q", name, path)
	}
	if name, path := PredictionArg(p); name != "python-mine" || path != p {
		t.Errorf("PredictionArg(FILE) = %q, %q", name, path)
	}
	odd := writeFile(t, dir, "a=b.jsonl", strings.Repeat(`{"context":""}`+"\n", 4))
	if name, path := PredictionArg(odd); name != "a=b" || path != odd {
		t.Errorf("an existing file with '=': %q, %q", name, path)
	}
	if name, _ := PredictionArg(writeFile(t, dir, filepath.Join("x=y", "f.jsonl"), "")); name != "f" {
		t.Errorf("an existing file in a folder with '=': %q", name)
	}
	opts := Options{DataDir: dir, Lang: "python", Stage: "sample", Predictions: []string{"sparecode=" + p, p}, Configs: []string{ConfigEmpty}, CompareTo: "sparecode"}
	rep, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, rep, 4, []string{"sparecode", "python-mine", "empty"})
	if rep.Paired == nil || rep.Paired.Reference != "sparecode" || len(rep.Paired.Configs) != 2 {
		t.Fatalf("paired %+v", rep.Paired)
	}
	for _, bad := range []struct {
		mod  func(*Options)
		want string
	}{
		{func(o *Options) { o.Predictions = []string{p, p} }, `two rows named "python-mine"`},
		{func(o *Options) { o.Predictions = []string{"empty=" + p} }, `two rows named "empty"`},
		{func(o *Options) { o.CompareTo = "nope" }, `compare to "nope"`},
	} {
		o := opts
		bad.mod(&o)
		if _, err := Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("error %v, want %q", err, bad.want)
		}
	}
}

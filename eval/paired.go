package eval

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

// Paired bootstrap parameters of [PairedComparison].
const (
	// BootstrapResamples is the number of resamples of the datapoints.
	BootstrapResamples = 2000
	// BootstrapSeed seeds every comparison's resampling, so that reports are
	// deterministic (and every comparison of n datapoints draws the same
	// resamples).
	BootstrapSeed = 19
	// BootstrapLevel is the confidence level of the intervals.
	BootstrapLevel = 0.95
)

// MinHeadroom is the smallest oracle − bm25file gap, in metric units, for
// which [Headroom] reports the headroom captured: below it the ratio is
// noise.
const MinHeadroom = 0.03

// Verdicts of a paired comparison ([Verdict]).
const (
	VerdictWin  = "win"
	VerdictLoss = "loss"
	VerdictTie  = "tie"
)

// Paired is a run's paired comparisons: every row against Reference, datapoint
// by datapoint.
type Paired struct {
	// Reference is the row every other row is compared with.
	Reference string `json:"reference"`
	// Resamples, Seed and Level are the bootstrap's: BootstrapResamples,
	// BootstrapSeed and BootstrapLevel.
	Resamples int     `json:"resamples"`
	Seed      uint64  `json:"seed"`
	Level     float64 `json:"level"`
	// Configs has one entry per row but the reference, in row order.
	Configs []PairedConfig `json:"configs"`
}

// PairedConfig is one row's comparison with the reference.
type PairedConfig struct {
	// Name is the row's name.
	Name string `json:"name"`
	// Settings follow Report.Settings.
	Settings []PairedSetting `json:"settings"`
}

// PairedSetting holds one setting's paired differences (row − reference), per
// metric; a metric is nil when no datapoint has a value on both sides
// (copy_chrf against the oracle, idrec without new identifiers, model_chrf
// without a model or outside the window settings). novelrec's and allrec's
// datapoints depend on the datapoint file only: every row is compared on the
// same ones.
type PairedSetting struct {
	Setting   string      `json:"setting"`
	IDRec     *PairedDiff `json:"idrec,omitempty"`
	NovelRec  *PairedDiff `json:"novelrec,omitempty"`
	AllRec    *PairedDiff `json:"allrec,omitempty"`
	LineChrF  *PairedDiff `json:"line_chrf,omitempty"`
	CopyChrF  *PairedDiff `json:"copy_chrf,omitempty"`
	ModelChrF *PairedDiff `json:"model_chrf,omitempty"`
}

// PairedDiff is the mean of per-datapoint differences with its bootstrap
// interval and verdict, in the metric's units.
type PairedDiff struct {
	N       int     `json:"n"`       // datapoints with a value on both sides
	Mean    float64 `json:"mean"`    // mean of row − reference
	Lo      float64 `json:"lo"`      // lower end of the interval
	Hi      float64 `json:"hi"`      // upper end of the interval
	Verdict string  `json:"verdict"` // Verdict(Mean, Lo, Hi)
}

// BootstrapMean returns the mean of diffs and its percentile bootstrap
// interval at level (0 < level < 1; 0.95 for a 95% interval) from resamples
// resamples of len(diffs) values drawn with replacement (Efron & Tibshirani,
// "An Introduction to the Bootstrap", 1993, §13.3): lo and hi are the
// nearest-rank [Percentile]s 100·(1−level)/2 and 100·(1+level)/2 of the
// resampled means. The draws come from a PCG generator seeded with seed, so
// the result is deterministic. For paired data, diffs holds one difference
// per datapoint: resampling them resamples datapoints. It returns zeros for no
// diffs.
func BootstrapMean(diffs []float64, resamples int, seed uint64, level float64) (mean, lo, hi float64) {
	n := len(diffs)
	if n == 0 {
		return 0, 0, 0
	}
	mean = sumOf(diffs) / float64(n)
	if resamples <= 0 {
		return mean, mean, mean
	}
	rng := rand.New(rand.NewPCG(seed, 0x9a1bed))
	means := make([]float64, resamples)
	draw := make([]float64, n)
	for r := range means {
		for j := range draw {
			draw[j] = diffs[rng.IntN(n)]
		}
		means[r] = sumOf(draw) / float64(n)
	}
	tail := 100 * (1 - level) / 2
	return mean, Percentile(means, tail), Percentile(means, 100-tail)
}

// sumOf adds values in order (the same values in the same order give the same
// sum: a constant's resamples all have the constant's mean).
func sumOf(values []float64) float64 {
	s := 0.0
	for _, v := range values {
		s += v
	}
	return s
}

// Verdict classifies a paired difference (row − reference): VerdictWin when
// its interval lies above 0 (lo > 0), VerdictLoss when it lies below 0 (hi <
// 0), else VerdictTie: a mean of either sign whose interval reaches 0 is a tie.
// mean is not consulted (the interval holds it).
func Verdict(mean, lo, hi float64) string {
	switch {
	case lo > 0:
		return VerdictWin
	case hi < 0:
		return VerdictLoss
	}
	return VerdictTie
}

// PairedComparison compares every row of rep with the row named ref (the
// first row when ref names none), datapoint by datapoint, under every setting:
// for each metric, the differences row − reference of the datapoints that have
// a value on both sides, their mean, its 95% paired percentile bootstrap
// interval ([BootstrapMean] with BootstrapResamples and BootstrapSeed) and the
// [Verdict]. copy_chrf is not compared when either side is the oracle. It
// returns nil for fewer than two rows.
func PairedComparison(rep *Report, ref string) *Paired {
	if len(rep.Configs) < 2 {
		return nil
	}
	base := rep.Configs[0]
	for _, c := range rep.Configs {
		if c.Name == ref {
			base = c
		}
	}
	p := &Paired{Reference: base.Name, Resamples: BootstrapResamples, Seed: BootstrapSeed, Level: BootstrapLevel}
	for _, c := range rep.Configs {
		if c == base {
			continue
		}
		pc := PairedConfig{Name: c.Name}
		for k, s := range rep.Settings {
			ps := PairedSetting{Setting: s.Name}
			ps.IDRec = pairedDiff(c, base, func(p PointScores) *float64 { return p.IDRec }, k)
			ps.NovelRec = pairedDiff(c, base, func(p PointScores) *float64 { return p.NovelRec }, k)
			ps.AllRec = pairedDiff(c, base, func(p PointScores) *float64 { return p.AllRec }, k)
			ps.LineChrF = pairedDiff(c, base, func(p PointScores) *float64 { return &p.LineChrF }, k)
			if !c.Oracle && !base.Oracle {
				ps.CopyChrF = pairedDiff(c, base, func(p PointScores) *float64 { return &p.CopyChrF }, k)
			}
			ps.ModelChrF = pairedDiff(c, base, func(p PointScores) *float64 { return p.ModelChrF }, k)
			pc.Settings = append(pc.Settings, ps)
		}
		p.Configs = append(p.Configs, pc)
	}
	return p
}

// pairedDiff compares one metric of setting k of c and base.
func pairedDiff(c, base *ConfigResult, value func(PointScores) *float64, k int) *PairedDiff {
	var diffs []float64
	for i := range c.PerDatapoint {
		if i >= len(base.PerDatapoint) {
			break
		}
		a, b := value(c.PerDatapoint[i].Settings[k]), value(base.PerDatapoint[i].Settings[k])
		if a != nil && b != nil {
			diffs = append(diffs, *a-*b)
		}
	}
	if len(diffs) == 0 {
		return nil
	}
	mean, lo, hi := BootstrapMean(diffs, BootstrapResamples, BootstrapSeed, BootstrapLevel)
	return &PairedDiff{N: len(diffs), Mean: mean, Lo: lo, Hi: hi, Verdict: Verdict(mean, lo, hi)}
}

// compareTo returns the reference row's name: name if given, else
// ConfigCurrent when it is a row, else the first row's ("" for none).
func compareTo(rep *Report, name string) string {
	if name != "" {
		return name
	}
	for _, c := range rep.Configs {
		if c.Name == ConfigCurrent {
			return ConfigCurrent
		}
	}
	if len(rep.Configs) > 0 {
		return rep.Configs[0].Name
	}
	return ""
}

// Headroom fills the headroom captured of every row and setting of rep
// (SettingScores.IDRecHeadroom and LineChrFHeadroom): (row − bm25file) /
// (oracle − bm25file), where oracle − bm25file >= MinHeadroom. It reports
// whether rep has both the bm25file and the oracle rows (else it leaves rep
// alone). copy_chrf has no oracle and so no headroom.
func Headroom(rep *Report) bool {
	var bm, or *ConfigResult
	for _, c := range rep.Configs {
		switch c.Name {
		case ConfigBM25File:
			bm = c
		case ConfigOracle:
			if c.Oracle {
				or = c
			}
		}
	}
	if bm == nil || or == nil {
		return false
	}
	ratio := func(v, b, o *float64) *float64 {
		if v == nil || b == nil || o == nil || *o-*b < MinHeadroom {
			return nil
		}
		r := (*v - *b) / (*o - *b)
		return &r
	}
	for _, c := range rep.Configs {
		for k := range c.Scores {
			s := &c.Scores[k]
			b, o := bm.Scores[k], or.Scores[k]
			s.IDRecHeadroom = ratio(s.IDRec, b.IDRec, o.IDRec)
			s.LineChrFHeadroom = ratio(&s.LineChrF, &b.LineChrF, &o.LineChrF)
		}
	}
	return true
}

// PredictionArg splits a predictions argument into the row's name and the
// file: "NAME=FILE" when the text before the first "=" is not empty and holds
// no path separator and arg itself is not an existing file; otherwise arg is
// the file, named after its base name without ".jsonl".
func PredictionArg(arg string) (name, path string) {
	if i := strings.IndexByte(arg, '='); i > 0 && !strings.ContainsAny(arg[:i], `/\`) {
		if _, err := os.Stat(arg); err != nil {
			return arg[:i], arg[i+1:]
		}
	}
	return strings.TrimSuffix(filepath.Base(arg), ".jsonl"), arg
}

// oracleNote says what the oracle row is.
func oracleNote(lang string) string {
	return fmt.Sprintf("%s: line_chrf = best chrF of one line of any %s file of the snapshot or of the given prefix/suffix (complete lines); idrec = novelrec = share of the new identifiers that occur in those files; allrec = share of all the middle's identifiers in those files or the prefix/suffix; the same in every setting: it does not depend on trimming; copy_chrf and ctx_chars do not apply (-)",
		ConfigOracle, lang)
}

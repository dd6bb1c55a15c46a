package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/symbols"
)

// comparePy has no blank lines, so that 4-line fixed windows without overlap
// are lines 1-4, 5-8 and 9-10. Definitions: alpha 2-5, beta 6-7, Gamma 8-10
// and its method one 9-10 (innermost: alpha, beta, one).
const comparePy = `import os
def alpha(x):
    y = x + 1
    z = y * 2
    return z
def beta():
    return 1
class Gamma:
    def one(self):
        return 1
`

// compareKt: Foo 2-5 with a (3) and b (4), top 6-8. Windows: 1-4 and 5-8.
const compareKt = `package demo
class Foo {
    fun a() = 1
    fun b() = 2
}
fun top(): Int {
    return 3
}
`

// writeCompareRepo writes a small repository with one Python and one
// Kotlin file (and a file of no known language) and returns its folder.
func writeCompareRepo(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "demo")
	for name, text := range map[string]string{
		"pkg/mod.py":            comparePy,
		"src/Foo.kt":            compareKt,
		"README.md":             "# demo\n",
		"pkg/empty/__init__.py": "",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// windows4 gives fixed windows of 4 lines without overlap.
var windows4 = chunker.Options{WindowLines: 4, WindowOverlap: 0}

func TestCompareChunkingCounts(t *testing.T) {
	dir := writeCompareRepo(t)
	type want struct {
		files, defs, innermost           int
		chunks, cutInner, cutAny, fallbk [2]int // structural, fixed
		fixedLines                       Distribution
	}
	cases := []struct {
		lang string
		want want
	}{
		// Python. Structural: one chunk (every definition is small, so all merge):
		// nothing cut. Fixed: 1-4 ends inside alpha, 5-8
		// starts inside alpha and ends inside Gamma, 9-10 starts inside Gamma
		// (but before one's first byte: the indentation).
		{"python", want{files: 2, defs: 4, innermost: 3, chunks: [2]int{1, 3}, cutInner: [2]int{0, 2}, cutAny: [2]int{0, 3},
			fixedLines: Distribution{P50: 4, P90: 4, Max: 4, Mean: 10.0 / 3}}},
		// Kotlin. Structural: package, "class Foo {", a + b + "}" (small
		// definitions merge), top: the two chunks of Foo cut Foo but no innermost
		// definition. Fixed: 1-4 and 5-8 both cut Foo only.
		{"kotlin", want{files: 1, defs: 4, innermost: 3, chunks: [2]int{4, 2}, cutInner: [2]int{0, 0}, cutAny: [2]int{2, 2},
			fixedLines: Distribution{P50: 4, P90: 4, Max: 4, Mean: 4}}},
	}
	for _, tc := range cases {
		t.Run(tc.lang, func(t *testing.T) {
			cmp, err := CompareChunking(context.Background(), []string{dir}, CompareOptions{Chunk: windows4, Lang: tc.lang})
			if err != nil {
				t.Fatal(err)
			}
			w := tc.want
			if cmp.Files != w.files || cmp.Definitions != w.defs || cmp.Innermost != w.innermost || cmp.Skipped != 0 || cmp.SymbolErrors != 0 {
				t.Errorf("files %d defs %d innermost %d skipped %d symbol errors %d, want %d %d %d 0 0",
					cmp.Files, cmp.Definitions, cmp.Innermost, cmp.Skipped, cmp.SymbolErrors, w.files, w.defs, w.innermost)
			}
			if len(cmp.Strategies) != 2 || cmp.Strategies[0].Strategy != StrategyStructural || cmp.Strategies[1].Strategy != StrategyFixed {
				t.Fatalf("strategies %+v", cmp.Strategies)
			}
			for i, s := range cmp.Strategies {
				if s.Chunks != w.chunks[i] || s.CutInnermost != w.cutInner[i] || s.CutAny != w.cutAny[i] || s.Fallback != w.fallbk[i] {
					t.Errorf("%s: chunks %d, cut innermost %d, cut any %d, fallback %d; want %d %d %d %d",
						s.Strategy, s.Chunks, s.CutInnermost, s.CutAny, s.Fallback, w.chunks[i], w.cutInner[i], w.cutAny[i], w.fallbk[i])
				}
				if s.CutFitting != s.CutInnermost { // every definition here is small
					t.Errorf("%s: cut fitting %d, want %d", s.Strategy, s.CutFitting, s.CutInnermost)
				}
				if s.MBPerSec <= 0 || s.Seconds <= 0 {
					t.Errorf("%s: throughput %v MB/s in %vs", s.Strategy, s.MBPerSec, s.Seconds)
				}
				if s.Eval != nil {
					t.Errorf("%s: eval without a dataset", s.Strategy)
				}
			}
			if p := cmp.Strategies[0].ParseErrorFiles; p == nil || *p != 0 {
				t.Errorf("structural parse-error files %v, want 0", p)
			}
			if cmp.Strategies[1].ParseErrorFiles != nil {
				t.Errorf("fixed parse-error files should be nil (not parsed)")
			}
			if got := cmp.Strategies[1].Lines; got != w.fixedLines {
				t.Errorf("fixed lines %+v, want %+v", got, w.fixedLines)
			}
			if got := cmp.Strategies[1].Config; got != "fixed/c800/w4/o0" {
				t.Errorf("fixed config %q", got)
			}
		})
	}

	// All languages: the sums of both.
	cmp, err := CompareChunking(context.Background(), []string{dir}, CompareOptions{Chunk: windows4})
	if err != nil {
		t.Fatal(err)
	}
	if cmp.Files != 3 || cmp.Strategies[0].Chunks != 5 || cmp.Strategies[1].CutAny != 5 || cmp.Lines != 18 {
		t.Errorf("all languages: %d files, %d structural chunks, %d fixed any-cuts, %d lines; want 3, 5, 5, 18",
			cmp.Files, cmp.Strategies[0].Chunks, cmp.Strategies[1].CutAny, cmp.Lines)
	}
	if len(cmp.Repos) != 1 || cmp.Repos[0].Name != "demo" || cmp.Repos[0].Files != 3 || cmp.Repos[0].Bytes != cmp.Bytes {
		t.Errorf("repos %+v", cmp.Repos)
	}
}

// TestCompareSizes checks the size distributions against the chunks
// themselves.
func TestCompareSizes(t *testing.T) {
	dir := writeCompareRepo(t)
	cmp, err := CompareChunking(context.Background(), []string{dir}, CompareOptions{Chunk: windows4, Lang: "python"})
	if err != nil {
		t.Fatal(err)
	}
	// Fixed windows of comparePy: lines 1-4, 5-8, 9-10.
	lines := strings.SplitAfter(comparePy, "\n")
	var sizes []float64
	for _, r := range [][2]int{{0, 4}, {4, 8}, {8, 10}} {
		sizes = append(sizes, float64(len(strings.Join(strings.Fields(strings.Join(lines[r[0]:r[1]], "")), ""))))
	}
	want := Distribution{P50: Percentile(sizes, 50), P90: Percentile(sizes, 90), Max: Percentile(sizes, 100), Mean: (sizes[0] + sizes[1] + sizes[2]) / 3}
	if got := cmp.Strategies[1].Chars; got != want {
		t.Errorf("fixed chars %+v, want %+v (sizes %v)", got, want, sizes)
	}
}

func TestDistribution(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want Distribution
	}{
		{nil, Distribution{}},
		{[]float64{7}, Distribution{7, 7, 7, 7}},
		{[]float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, Distribution{P50: 5, P90: 9, Max: 10, Mean: 5.5}},
		{[]float64{1, 1, 1, 100}, Distribution{P50: 1, P90: 100, Max: 100, Mean: 25.75}},
	} {
		if got := distribution(tc.in); got != tc.want {
			t.Errorf("distribution(%v) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func TestCutsDefinition(t *testing.T) {
	def := &symbols.Def{StartByte: 10, EndByte: 50}
	for _, tc := range []struct {
		name       string
		start, end int
		want       bool
	}{
		{"before", 0, 10, false},
		{"after", 50, 60, false},
		{"holds it whole", 5, 55, false},
		{"exactly", 10, 50, false},
		{"ends inside", 0, 30, true},
		{"starts inside", 30, 60, true},
		{"inside", 20, 30, true},
		{"starts at its start, ends inside", 10, 49, true},
		{"starts one byte in", 11, 50, true},
		{"ends one byte after its start", 0, 11, true},
	} {
		c := &chunker.Chunk{StartByte: tc.start, EndByte: tc.end}
		if got := CutsDefinition(c, def); got != tc.want {
			t.Errorf("%s: chunk [%d, %d) cuts [10, 50) = %v, want %v", tc.name, tc.start, tc.end, got, tc.want)
		}
	}
}

func TestInnermost(t *testing.T) {
	d := func(s, e int) symbols.Def { return symbols.Def{StartByte: s, EndByte: e} }
	for _, tc := range []struct {
		name string
		defs []symbols.Def
		want []bool
	}{
		{"none", nil, []bool{}},
		{"class with two methods, then a function", []symbols.Def{d(0, 100), d(10, 40), d(50, 90), d(100, 120)}, []bool{false, true, true, true}},
		{"same start: the inner listed first", []symbols.Def{d(0, 40), d(0, 100)}, []bool{true, false}},
		{"same end", []symbols.Def{d(0, 100), d(60, 100)}, []bool{false, true}},
		{"identical ranges contain nothing", []symbols.Def{d(0, 10), d(0, 10)}, []bool{true, true}},
		{"nested three deep", []symbols.Def{d(0, 100), d(10, 90), d(20, 30)}, []bool{false, false, true}},
	} {
		if got := innermost(tc.defs); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestCompareOutputs(t *testing.T) {
	dir := writeCompareRepo(t)
	cmp, err := CompareChunking(context.Background(), []string{dir}, CompareOptions{Chunk: windows4})
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := cmp.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| measure | structural `structural/c800/w4/o0` | fixed `fixed/c800/w4/o0` |",
		"| chunks | 5 | 5 |",
		"| chunks cutting a definition in two¹ | 0.0% (0) | 40.0% (2) |",
		"| chunks cutting any definition, classes included² | 40.0% (2) | 100.0% (5) |",
		"| files with parse errors | 0 of 3 | n/a (not parsed) |",
		"| fallback chunks | 0.0% (0) | n/a (all windows) |",
		"MB/s",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	if strings.Contains(md.String(), "eval idrec") {
		t.Errorf("eval rows without a dataset:\n%s", md.String())
	}

	out := t.TempDir()
	for _, tc := range []struct {
		name  string
		write func(string) error
		magic string
	}{
		{"chart.svg", cmp.WriteSVG, "<?xml"},
		{"chart.png", cmp.WritePNG, "\x89PNG"},
	} {
		p := filepath.Join(out, tc.name)
		if err := tc.write(p); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) < 1000 || !bytes.HasPrefix(b, []byte(tc.magic)) {
			t.Errorf("%s: %d bytes starting %q", tc.name, len(b), b[:min(len(b), 8)])
		}
	}
	checkSVGFonts(t, filepath.Join(out, "chart.svg"))
	if err := cmp.WriteSVG(filepath.Join(out, "no", "such", "dir.svg")); err == nil || !strings.HasPrefix(err.Error(), "eval: ") || !strings.Contains(err.Error(), "dir.svg") {
		t.Errorf("chart into a missing folder: %v", err)
	}

	// JSON round trip keeps the numbers; a chart needs the per-chunk sizes.
	b, err := json.Marshal(cmp)
	if err != nil {
		t.Fatal(err)
	}
	var back Comparison
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Strategies[1].CutAny != 5 || back.Files != 3 {
		t.Errorf("JSON round trip: %s", b)
	}
	if err := back.WriteSVG(filepath.Join(out, "x.svg")); err == nil || !strings.Contains(err.Error(), "per-chunk sizes") {
		t.Errorf("chart of a comparison read from JSON: %v", err)
	}
}

func TestCompareErrors(t *testing.T) {
	dir := writeCompareRepo(t)
	file := filepath.Join(dir, "README.md")
	missing := filepath.Join(dir, "missing")
	mdOnly := filepath.Join(t.TempDir(), "docs")
	if err := os.MkdirAll(mdOnly, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mdOnly, "a.md"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		dirs []string
		opts CompareOptions
		want string
	}{
		{"no folder", nil, CompareOptions{}, "no repository folder"},
		{"missing folder", []string{dir, missing}, CompareOptions{}, missing},
		{"a file", []string{file}, CompareOptions{}, file + ": not a folder"},
		{"unknown language", []string{dir}, CompareOptions{Lang: "cobol"}, `unknown language "cobol"`},
		{"no source files", []string{mdOnly}, CompareOptions{}, "no source files in " + mdOnly},
		{"no files of the language", []string{mdOnly}, CompareOptions{Lang: "kotlin"}, "no kotlin files"},
		{"language differs from the dataset's", []string{dir}, CompareOptions{Lang: "kotlin", Eval: Options{DataDir: sampleDir, Lang: "python", Stage: "sample"}}, "differs"},
		{"dataset without language", []string{dir}, CompareOptions{Eval: Options{DataDir: sampleDir, Stage: "sample"}}, "no language"},
		{"missing datapoint file", []string{dir}, CompareOptions{Eval: Options{DataDir: sampleDir, Lang: "python", Stage: "nope"}}, "python-nope.jsonl"},
	} {
		_, err := CompareChunking(context.Background(), tc.dirs, tc.opts)
		if err == nil || !strings.HasPrefix(err.Error(), "eval: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one starting with \"eval: \" and containing %q", tc.name, err, tc.want)
		}
	}
}

// TestCompareWithEval scores both strategies on the sample dataset.
func TestCompareWithEval(t *testing.T) {
	snaps, err := filepath.Glob(filepath.Join(sampleDir, "repositories-python-sample", "*"))
	if err != nil || len(snaps) == 0 {
		t.Fatalf("sample snapshots: %v %v", snaps, err)
	}
	var progress bytes.Buffer
	cmp, err := CompareChunking(context.Background(), snaps, CompareOptions{Progress: &progress, Eval: Options{
		DataDir: sampleDir, Lang: "python", Stage: "sample", Limit: 2,
		Batch: testBatch(sharedCache(t)),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if cmp.Lang != "python" || cmp.EvalLang != "python" || cmp.Stage != "sample" || len(cmp.Settings) != 2 || cmp.Settings[1].Name != "w8000" {
		t.Errorf("lang %q eval %q-%q settings %+v", cmp.Lang, cmp.EvalLang, cmp.Stage, cmp.Settings)
	}
	for _, s := range cmp.Strategies {
		if s.Eval == nil || s.Eval.Datapoints != 2 || s.Eval.Failed != 0 || len(s.Eval.Scores) != 2 {
			t.Fatalf("%s: eval %+v", s.Strategy, s.Eval)
		}
		if s.Eval.NovelRecN != cmp.Strategies[0].Eval.NovelRecN || s.Eval.AllRecN != 2 {
			t.Errorf("%s: novelrec over %d, allrec over %d datapoints", s.Strategy, s.Eval.NovelRecN, s.Eval.AllRecN)
		}
		for _, sc := range s.Eval.Scores {
			if sc.LineChrF <= 0 || sc.LineChrF > 1 || sc.CopyChrF < 0 || sc.CopyChrF > 1 || sc.AllRec == nil || *sc.AllRec <= 0 || *sc.AllRec > 1 {
				t.Errorf("%s %s: scores %+v", s.Strategy, sc.Setting, sc)
			}
		}
	}
	for _, want := range []string{"eval python-sample with --strategy structural", "eval python-sample with --strategy fixed"} {
		if !strings.Contains(progress.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, progress.String())
		}
	}
	var md bytes.Buffer
	if err := cmp.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| eval idrec, full⁴ |", "| eval novelrec, full⁴ |", "| eval allrec, w8000⁴ |", "| eval copy_chrf, w8000⁴ |",
		"| eval datapoints (failed) | 2 (0) | 2 (0) |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	if err := cmp.WriteSVG(filepath.Join(t.TempDir(), "c.svg")); err != nil {
		t.Fatal(err)
	}
}

// checkSVGFonts asserts that every font-family the SVG at path uses is embedded
// in it by an @font-face rule with font data, so it renders without system fonts.
func checkSVGFonts(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	svg := string(b)
	embedded := map[string]bool{}
	for _, face := range regexp.MustCompile(`(?s)@font-face\s*\{(.*?)\}`).FindAllStringSubmatch(svg, -1) {
		fam := regexp.MustCompile(`font-family:\s*"?([^";]+)"?;`).FindStringSubmatch(face[1])
		if fam != nil && strings.Contains(face[1], "src: url(data:font/ttf;") {
			embedded[fam[1]] = true
		}
	}
	used := map[string]bool{}
	for _, m := range regexp.MustCompile(`font-family:\s*"?([^";]+)"?;`).FindAllStringSubmatch(svg, -1) {
		used[m[1]] = true
	}
	if len(used) == 0 {
		t.Fatalf("%s names no font-family: is there any text?", path)
	}
	for fam := range used {
		if !embedded[fam] {
			t.Errorf("%s uses font-family %q without embedding it (embedded: %v)", path, fam, embedded)
		}
	}
}

package eval

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
	"unicode"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/snapshot"
	"github.com/repoctx/repoctx/symbols"
)

// Chunking strategies compared by [CompareChunking], in report order.
const (
	StrategyStructural = chunker.StrategyStructural
	StrategyFixed      = chunker.StrategyFixed
)

// CompareOptions configures [CompareChunking].
type CompareOptions struct {
	// Chunk configures both strategies with the same value. A zero field
	// means the strategy's own default, so the default window overlap differs:
	// 5 lines for structural fallback windows, 10 for fixed windows.
	Chunk chunker.Options
	// Lang, if not empty, restricts the repository files to that language
	// ("kotlin", "python"); empty means every file of a registered grammar,
	// or Eval.Lang when a dataset is given.
	Lang string
	// Limits bound reading the repository folders; zero fields mean
	// snapshot.DefaultLimits.
	Limits snapshot.Limits
	// Eval, when Eval.DataDir is not empty, also scores the current
	// configuration on that dataset once per strategy, with [Run]:
	// CompareChunking sets Configs to [ConfigCurrent], clears Predictions,
	// and sets Batch.Index.Strategy and .Chunk (to Chunk); everything else
	// (Lang, Stage, Batch.Compose, Batch.CacheDir, Limit, ...) is used
	// as given. Windows nil means the 8000-token window only.
	Eval Options
	// Log, if not nil, receives one line per repository file that was
	// skipped (unreadable, binary, too large) or whose definitions could
	// not be extracted.
	Log io.Writer
	// Progress, if not nil, receives one line per phase (reading, chunking,
	// each evaluation run).
	Progress io.Writer
}

// Comparison is the result of [CompareChunking]: the two strategies side by
// side on the same files. Print it with [Comparison.WriteMarkdown], draw it
// with [Comparison.WriteSVG] or [Comparison.WritePNG]; it marshals to JSON.
type Comparison struct {
	// Repos are the repository folders, in the order given.
	Repos []RepoSummary `json:"repos"`
	// Lang is the language the files were restricted to, or "" for all
	// registered languages.
	Lang string `json:"lang,omitempty"`
	// Files counts the source files chunked; Skipped those left out
	// (unreadable, binary, over the size limit).
	Files   int `json:"files"`
	Skipped int `json:"skipped"`
	// Bytes and Lines are the size of the files chunked: bytes of decoded
	// text (UTF-8, LF line endings) and lines.
	Bytes int64 `json:"bytes"`
	Lines int   `json:"lines"`
	// Definitions counts the definitions the symbols package found in the
	// files (functions, methods, classes, objects, properties, at any depth
	// it indexes); Innermost those among them that contain no other one.
	Definitions int `json:"definitions"`
	Innermost   int `json:"innermost_definitions"`
	// SymbolErrors counts files whose definitions could not be extracted
	// (the parse failed or timed out); their chunks count as cutting nothing.
	SymbolErrors int `json:"symbol_errors"`
	// Strategies holds structural first, then fixed.
	Strategies []*StrategyStats `json:"strategies"`
	// Data, EvalLang and Stage name the dataset scored, if one was given.
	Data     string `json:"data,omitempty"`
	EvalLang string `json:"eval_lang,omitempty"`
	Stage    string `json:"stage,omitempty"`
	// Settings are the evaluation settings ("full", "w8000", ...), in the
	// order of each StrategyEval.Scores; nil without a dataset.
	Settings []Setting `json:"settings,omitempty"`
	// Notes are caveats to print with the table.
	Notes []string `json:"notes,omitempty"`
}

// RepoSummary describes one repository folder of a comparison.
type RepoSummary struct {
	// Dir is the folder as given; Name its base name.
	Dir  string `json:"dir"`
	Name string `json:"name"`
	// Files and Bytes are the source files chunked and their decoded size.
	Files int   `json:"files"`
	Bytes int64 `json:"bytes"`
}

// StrategyStats are one strategy's chunks of all the files of a comparison.
//
// A chunk "cuts a definition in two" when it holds part of the definition
// but not all of it: see [CutsDefinition]. Definitions come from a
// structural parse (package symbols), the same for both strategies.
type StrategyStats struct {
	// Strategy is StrategyStructural or StrategyFixed; Config the chunker
	// options in effect (chunker.Options.Key, e.g. "fixed/c800/w20/o10").
	Strategy chunker.Strategy `json:"strategy"`
	Config   string           `json:"config"`
	// Chunks counts the chunks of all files.
	Chunks int `json:"chunks"`
	// Chars is the distribution of chunk sizes in non-white-space runes
	// (the chunker's size measure); Lines that of chunk lengths in lines.
	Chars Distribution `json:"chars"`
	Lines Distribution `json:"lines"`
	// CutInnermost counts the chunks that cut an innermost definition in two
	// (one that contains no other definition: a function, method, property,
	// or a class without member definitions); CutAny those that cut any
	// definition, including a class split between two of its members.
	CutInnermost int `json:"cut_innermost"`
	CutAny       int `json:"cut_any"`
	// CutFitting counts the chunks that cut an innermost definition that
	// fits the size cap (at most Chunk.MaxChars non-white-space runes,
	// decorators and annotations included), which a chunker could have kept
	// whole.
	CutFitting int `json:"cut_fitting"`
	// Fallback counts the chunks flagged Fallback (line or rune windows cut
	// where the structural chunker found no usable syntax boundary). Fixed
	// windows are never flagged.
	Fallback int `json:"fallback"`
	// ParseErrorFiles counts files with at least one chunk flagged
	// ParseError (the parser reported ERROR or MISSING nodes); nil for the
	// fixed strategy, which does not parse.
	ParseErrorFiles *int `json:"parse_error_files"`
	// Failed counts files the chunker returned an error for (left out).
	Failed int `json:"failed"`
	// Seconds is the wall time of chunking all the files once, in one
	// goroutine, text already decoded in memory; MBPerSec is Bytes of text
	// (10^6 bytes a MB) per second of it. One run, not a benchmark.
	Seconds  float64 `json:"chunk_seconds"`
	MBPerSec float64 `json:"mb_per_sec"`
	// Eval holds the dataset scores of the current configuration with this
	// strategy, or nil without a dataset.
	Eval *StrategyEval `json:"eval,omitempty"`

	chars, lines []float64 // per chunk, for the histograms
}

// Share returns n as a fraction of the strategy's chunks (0 without chunks).
func (s *StrategyStats) Share(n int) float64 {
	if s.Chunks == 0 {
		return 0
	}
	return float64(n) / float64(s.Chunks)
}

// Distribution summarises chunk sizes: nearest-rank percentiles
// ([Percentile]), maximum and mean.
type Distribution struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

// StrategyEval is what [Run] reports for the current configuration with
// one strategy.
type StrategyEval struct {
	// Datapoints counts the datapoints scored; Failed those whose context
	// could not be built (scored as empty); IDRecN those with new
	// identifiers (idrec's denominator); NovelRecN and AllRecN those that
	// novelrec and allrec are averaged over (see [ConfigResult]).
	Datapoints int `json:"datapoints"`
	Failed     int `json:"failed"`
	IDRecN     int `json:"idrec_n"`
	NovelRecN  int `json:"novelrec_n"`
	AllRecN    int `json:"allrec_n"`
	// Scores has one entry per setting, in Comparison.Settings order.
	Scores []SettingScores `json:"scores"`
	// WallSec is the wall time of the run (indexing included), in seconds.
	WallSec float64 `json:"wall_seconds"`
}

// CutsDefinition reports whether chunk c cuts definition d in two: a
// boundary of the chunk lies strictly inside the definition's byte range,
// that is d.StartByte < c.StartByte < d.EndByte or d.StartByte < c.EndByte
// < d.EndByte. Such a chunk holds part of d but not all of it (d is not
// wholly inside the chunk). Both ranges are half-open byte ranges of the
// same decoded file text; the definition's range starts at its decorators
// or annotations and does not include the comment lines above it.
//
// For chunks cut at line starts, which all are except the rune windows of a
// single over-long line, this means: the chunk starts on a line after the
// definition's first line and not after its last line, or ends on a line
// at or after its first line and before its last line. A chunk that starts
// with the comment lines above a definition, or ends on its last line, does
// not cut it.
func CutsDefinition(c *chunker.Chunk, d *symbols.Def) bool {
	inside := func(b int) bool { return d.StartByte < b && b < d.EndByte }
	return inside(c.StartByte) || inside(c.EndByte)
}

// compareFile is one decoded source file with its definitions.
type compareFile struct {
	f         *chunker.File
	defs      []symbols.Def
	innermost []bool
	fits      []bool // the definition fits the size cap
}

// CompareChunking chunks the source files of the repository folders with
// both strategies (structural, then fixed) and compares the chunks: count,
// size distribution, definitions cut in two, fallback chunks, files with
// parse errors and chunking throughput. With opts.Eval.DataDir it also
// scores the current configuration with each strategy on that dataset (see
// [CompareOptions]).
//
// Files are read through dataset.OpenDir (no .git, no symlinks out of the
// folder), decoded with chunker.Decode, and kept when their extension
// belongs to a registered grammar (and to opts.Lang, if set). Unreadable,
// binary and over-size files are skipped (logged, counted in Skipped).
//
// It returns an error starting with "eval: " when no folder is given, a
// folder cannot be opened (naming it), the language is unknown, no source
// file is found, or the evaluation fails.
func CompareChunking(ctx context.Context, repoDirs []string, opts CompareOptions) (*Comparison, error) {
	lang, err := compareLang(repoDirs, opts)
	if err != nil {
		return nil, err
	}
	cmp := &Comparison{Lang: lang}
	files, err := readCompareFiles(cmp, repoDirs, lang, opts)
	if err != nil {
		return nil, err
	}
	logLine(opts.Progress, "compare: %d files, %.1f MB in %d folders", cmp.Files, float64(cmp.Bytes)/1e6, len(repoDirs))
	extractDefinitions(cmp, files, opts)
	for _, strategy := range []chunker.Strategy{StrategyStructural, StrategyFixed} {
		st, err := chunkAll(strategy, opts.Chunk, files, opts.Log)
		if err != nil {
			return nil, err
		}
		logLine(opts.Progress, "compare: %s: %d chunks in %.2fs", strategy, st.Chunks, st.Seconds)
		cmp.Strategies = append(cmp.Strategies, st)
	}
	if opts.Eval.DataDir != "" {
		if err := evalStrategies(ctx, cmp, opts); err != nil {
			return nil, err
		}
	}
	if cmp.SymbolErrors > 0 {
		cmp.Notes = append(cmp.Notes, fmt.Sprintf("definitions could not be extracted from %d files; their chunks count as cutting nothing", cmp.SymbolErrors))
	}
	return cmp, nil
}

// logLine writes one formatted line to w, if w is not nil.
func logLine(w io.Writer, format string, a ...any) {
	if w != nil {
		fmt.Fprintf(w, format+"\n", a...)
	}
}

// compareLang checks the folders and languages of a comparison and returns the
// language files are restricted to ("" for all).
func compareLang(repoDirs []string, opts CompareOptions) (string, error) {
	if len(repoDirs) == 0 {
		return "", errors.New("eval: compare: no repository folder given")
	}
	lang := opts.Lang
	if opts.Eval.DataDir != "" {
		if opts.Eval.Lang == "" {
			return "", fmt.Errorf("eval: compare: dataset %s: no language given", opts.Eval.DataDir)
		}
		if lang == "" {
			lang = opts.Eval.Lang
		} else if lang != opts.Eval.Lang {
			return "", fmt.Errorf("eval: compare: repository language %q differs from the dataset's %q", lang, opts.Eval.Lang)
		}
	}
	if lang != "" && grammars.Lookup(lang) == nil {
		return "", fmt.Errorf("eval: compare: unknown language %q (known: %s)", lang, strings.Join(grammars.Names(), ", "))
	}
	return lang, nil
}

// readCompareFiles reads and decodes the source files of the folders (of lang, if
// not ""), counting them into cmp.
func readCompareFiles(cmp *Comparison, repoDirs []string, lang string, opts CompareOptions) ([]*compareFile, error) {
	var files []*compareFile
	for _, dir := range repoDirs {
		fi, err := os.Stat(dir)
		if err != nil {
			return nil, fmt.Errorf("eval: compare: repository folder %s: %w", dir, err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("eval: compare: repository folder %s: not a folder", dir)
		}
		snap, err := snapshot.OpenDir(dir, opts.Limits)
		if err != nil {
			return nil, fmt.Errorf("eval: %w", err)
		}
		abs, _ := filepath.Abs(dir)
		rs := RepoSummary{Dir: dir, Name: filepath.Base(abs)}
		for _, p := range snap.Paths() {
			spec := grammars.ForPath(p)
			if spec == nil || lang != "" && spec.Name != lang {
				continue
			}
			raw, err := snap.ReadFile(p)
			if err == nil {
				var f *chunker.File
				if f, err = chunker.Decode(p, raw, 0); err == nil {
					files = append(files, &compareFile{f: f})
					rs.Files++
					rs.Bytes += int64(len(f.Text))
					cmp.Lines += countLines(f.Text)
					continue
				}
			}
			cmp.Skipped++
			logLine(opts.Log, "skip %s: %v", filepath.Join(dir, p), err)
		}
		cmp.Repos = append(cmp.Repos, rs)
		cmp.Files += rs.Files
		cmp.Bytes += rs.Bytes
	}
	if len(files) == 0 {
		what := "source"
		if lang != "" {
			what = lang
		}
		return nil, fmt.Errorf("eval: compare: no %s files in %s", what, strings.Join(repoDirs, ", "))
	}
	return files, nil
}

// extractDefinitions finds every file's definitions (the same for both strategies)
// and which of them fit the size cap, counting them into cmp.
func extractDefinitions(cmp *Comparison, files []*compareFile, opts CompareOptions) {
	maxChars := chunker.DefaultOptions(StrategyStructural).MaxChars
	if opts.Chunk.MaxChars > 0 {
		maxChars = opts.Chunk.MaxChars
	}
	ex := symbols.NewExtractor(opts.Chunk.ParseCPULimit)
	defer ex.Close()
	for _, cf := range files {
		sf, err := ex.Extract(cf.f)
		if err != nil {
			cmp.SymbolErrors++
			logLine(opts.Log, "no definitions: %v", err)
			continue
		}
		cf.defs = sf.Defs
		cf.innermost = innermost(cf.defs)
		cf.fits = make([]bool, len(cf.defs))
		for i, d := range cf.defs {
			cf.fits[i] = nonSpaceRunes(string(cf.f.Text[d.StartByte:d.EndByte])) <= maxChars
		}
		cmp.Definitions += len(cf.defs)
		for _, in := range cf.innermost {
			if in {
				cmp.Innermost++
			}
		}
	}
}

// evalStrategies scores the current configuration on opts.Eval's dataset once per
// strategy of cmp.
func evalStrategies(ctx context.Context, cmp *Comparison, opts CompareOptions) error {
	cmp.Data, cmp.EvalLang, cmp.Stage = opts.Eval.DataDir, opts.Eval.Lang, opts.Eval.Stage
	for _, st := range cmp.Strategies {
		eo := opts.Eval
		eo.Configs = []string{ConfigCurrent}
		eo.Predictions = nil
		eo.Batch.Index.Strategy = st.Strategy
		eo.Batch.Index.Chunk = opts.Chunk
		if eo.Windows == nil {
			eo.Windows = []int{8000}
		}
		logLine(opts.Progress, "compare: eval %s-%s with --strategy %s", eo.Lang, eo.Stage, st.Strategy)
		rep, err := Run(ctx, eo)
		if err != nil {
			return err
		}
		c := rep.Configs[0]
		st.Eval = &StrategyEval{Datapoints: rep.Datapoints, Failed: c.Failed, IDRecN: c.IDRecN, NovelRecN: c.NovelRecN, AllRecN: c.AllRecN,
			Scores: c.Scores, WallSec: rep.WallSec}
		cmp.Settings = rep.Settings
		for _, n := range rep.Notes {
			cmp.Notes = append(cmp.Notes, string(st.Strategy)+" eval: "+n)
		}
		logLine(opts.Progress, "compare: eval %s: %d datapoints, %.1fs", st.Strategy, rep.Datapoints, rep.WallSec)
	}
	return nil
}

// chunkAll chunks every file with one strategy and measures the chunks.
func chunkAll(strategy chunker.Strategy, copts chunker.Options, files []*compareFile, log io.Writer) (*StrategyStats, error) {
	st := &StrategyStats{Strategy: strategy, Config: copts.Key(strategy)}
	results := make([][]chunker.Chunk, len(files))
	var size int64
	runtime.GC() // do not bill the previous phase's garbage to this one
	start := time.Now()
	ch, err := chunker.New(strategy, copts)
	if err != nil {
		return nil, fmt.Errorf("eval: compare: %w", err)
	}
	for i, cf := range files {
		cs, err := ch.Chunk(cf.f)
		if err != nil {
			st.Failed++
			if log != nil {
				fmt.Fprintf(log, "%s: %s: %v\n", strategy, cf.f.Path, err)
			}
			continue
		}
		results[i] = cs
		size += int64(len(cf.f.Text))
	}
	st.Seconds = time.Since(start).Seconds()
	if s, ok := ch.(*chunker.Structural); ok {
		s.Close()
	}
	if st.Seconds > 0 {
		st.MBPerSec = float64(size) / 1e6 / st.Seconds
	}
	parseErrFiles := 0
	for i, cs := range results {
		cf := files[i]
		perr := false
		for k := range cs {
			c := &cs[k]
			st.Chunks++
			st.chars = append(st.chars, float64(nonSpaceRunes(c.Text)))
			st.lines = append(st.lines, float64(c.EndLine-c.StartLine+1))
			if c.Fallback {
				st.Fallback++
			}
			perr = perr || c.ParseError
			cutAny, cutInner, cutFitting := false, false, false
			for j := range cf.defs {
				if CutsDefinition(c, &cf.defs[j]) {
					cutAny = true
					if cf.innermost[j] {
						cutInner = true
						cutFitting = cutFitting || cf.fits[j]
					}
				}
			}
			if cutAny {
				st.CutAny++
			}
			if cutInner {
				st.CutInnermost++
			}
			if cutFitting {
				st.CutFitting++
			}
		}
		if perr {
			parseErrFiles++
		}
	}
	if strategy == StrategyStructural {
		st.ParseErrorFiles = &parseErrFiles
	}
	st.Chars, st.Lines = distribution(st.chars), distribution(st.lines)
	return st, nil
}

// innermost reports for each definition whether it contains no other one
// (by byte range; a definition never counts as containing itself).
func innermost(defs []symbols.Def) []bool {
	out := make([]bool, len(defs))
	idx := make([]int, len(defs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		da, db := defs[idx[a]], defs[idx[b]]
		if da.StartByte != db.StartByte {
			return da.StartByte < db.StartByte
		}
		return da.EndByte > db.EndByte // an enclosing definition before what it holds
	})
	for a, i := range idx {
		d := defs[i]
		out[i] = true
		// Definitions inside d start at or after d's start; scan those.
		for _, j := range idx[a+1:] {
			e := defs[j]
			if e.StartByte >= d.EndByte {
				break
			}
			if e.EndByte <= d.EndByte && (e.StartByte > d.StartByte || e.EndByte < d.EndByte) {
				out[i] = false
				break
			}
		}
	}
	return out
}

// distribution summarises values (nearest-rank percentiles).
func distribution(v []float64) Distribution {
	if len(v) == 0 {
		return Distribution{}
	}
	d := Distribution{P50: Percentile(v, 50), P90: Percentile(v, 90), Max: Percentile(v, 100)}
	sum := 0.0
	for _, x := range v {
		sum += x
	}
	d.Mean = sum / float64(len(v))
	return d
}

// nonSpaceRunes counts the runes of s that are not white space, as the
// chunker measures its size cap.
func nonSpaceRunes(s string) int {
	n := 0
	for _, r := range s {
		if !unicode.IsSpace(r) && r != '\uFEFF' {
			n++
		}
	}
	return n
}

// countLines returns the number of lines of text (a last line without a
// line break counts).
func countLines(text []byte) int {
	n := bytes.Count(text, []byte{'\n'})
	if len(text) > 0 && text[len(text)-1] != '\n' {
		n++
	}
	return n
}

// WriteMarkdown writes the comparison as Markdown: a line saying what was
// chunked, a table with a column per strategy, and the definitions of its
// rows. It returns the first write error.
func (c *Comparison) WriteMarkdown(w io.Writer) error {
	ew := &errWriter{w: w}
	var names []string
	for _, r := range c.Repos {
		names = append(names, fmt.Sprintf("`%s` (%d files)", r.Name, r.Files))
	}
	what := "source"
	if c.Lang != "" {
		what = c.Lang
	}
	fmt.Fprintf(ew, "Chunked %s: %d %s files, %.2f MB, %d lines (%d skipped); %d definitions, %d of them innermost.\n\n",
		strings.Join(names, ", "), c.Files, what, float64(c.Bytes)/1e6, c.Lines, c.Skipped, c.Definitions, c.Innermost)

	header := []string{"measure"}
	align := []string{"---"}
	for _, s := range c.Strategies {
		header = append(header, fmt.Sprintf("%s `%s`", s.Strategy, s.Config))
		align = append(align, "--:")
	}
	rows := [][]string{header, align}
	row := func(name string, cell func(s *StrategyStats) string) {
		r := []string{name}
		for _, s := range c.Strategies {
			r = append(r, cell(s))
		}
		rows = append(rows, r)
	}
	dist := func(d Distribution) string { return fmt.Sprintf("%.0f / %.0f / %.0f", d.P50, d.P90, d.Max) }
	share := func(s *StrategyStats, n int) string { return fmt.Sprintf("%.1f%% (%d)", 100*s.Share(n), n) }
	row("chunks", func(s *StrategyStats) string { return fmt.Sprint(s.Chunks) })
	row("non-space chars per chunk, p50 / p90 / max", func(s *StrategyStats) string { return dist(s.Chars) })
	row("lines per chunk, p50 / p90 / max", func(s *StrategyStats) string { return dist(s.Lines) })
	row("chunks cutting a definition in two¹", func(s *StrategyStats) string { return share(s, s.CutInnermost) })
	row("… of which cut a definition that fits the size cap", func(s *StrategyStats) string { return share(s, s.CutFitting) })
	row("chunks cutting any definition, classes included²", func(s *StrategyStats) string { return share(s, s.CutAny) })
	row("fallback chunks", func(s *StrategyStats) string {
		if s.Strategy == StrategyFixed {
			return "n/a (all windows)"
		}
		return share(s, s.Fallback)
	})
	row("files with parse errors", func(s *StrategyStats) string {
		if s.ParseErrorFiles == nil {
			return "n/a (not parsed)"
		}
		return fmt.Sprintf("%d of %d", *s.ParseErrorFiles, c.Files)
	})
	row("chunking throughput³", func(s *StrategyStats) string {
		return fmt.Sprintf("%.1f MB/s (%.2fs)", s.MBPerSec, s.Seconds)
	})
	c.evalRows(row)
	for _, r := range rows {
		fmt.Fprintf(ew, "| %s |\n", strings.Join(r, " | "))
	}
	c.writeFootnotes(ew)
	for _, n := range c.Notes {
		fmt.Fprintf(ew, "Note: %s\n\n", n)
	}
	return ew.err
}

// evalRows adds the evaluation rows (one per metric and setting) through row, when
// the comparison scored a dataset.
func (c *Comparison) evalRows(row func(name string, cell func(s *StrategyStats) string)) {
	if len(c.Settings) == 0 {
		return
	}
	for k, set := range c.Settings {
		for m, name := range compareMetrics {
			row(fmt.Sprintf("eval %s, %s⁴", name, set.Name), func(s *StrategyStats) string {
				if s.Eval == nil || k >= len(s.Eval.Scores) {
					return "-"
				}
				v := compareValue(s.Eval.Scores[k], m)
				if math.IsNaN(v) {
					return "-"
				}
				return fmt.Sprintf("%.3f", v)
			})
		}
	}
	row("eval datapoints (failed)", func(s *StrategyStats) string {
		if s.Eval == nil {
			return "-"
		}
		return fmt.Sprintf("%d (%d)", s.Eval.Datapoints, s.Eval.Failed)
	})
}

// compareMetrics are the metrics a comparison shows per setting, in order
// (see [compareValue]).
var compareMetrics = []string{"idrec", "novelrec", "allrec", "line_chrf", "copy_chrf"}

// compareValue returns metric m (an index of compareMetrics) of sc, NaN when
// it has none.
func compareValue(sc SettingScores, m int) float64 {
	opt := func(v *float64) float64 {
		if v == nil {
			return math.NaN()
		}
		return *v
	}
	switch compareMetrics[m] {
	case "idrec":
		return opt(sc.IDRec)
	case "novelrec":
		return opt(sc.NovelRec)
	case "allrec":
		return opt(sc.AllRec)
	case "line_chrf":
		return sc.LineChrF
	}
	return sc.CopyChrF
}

// writeFootnotes writes the definitions of the table's marked rows.
func (c *Comparison) writeFootnotes(ew io.Writer) {
	fmt.Fprintf(ew, "\n¹ A chunk cuts a definition in two when one of its boundaries lies strictly inside the definition "+
		"(start byte < boundary < end byte), so that it holds part of the definition but not all of it; counted against the "+
		"innermost definitions found by a tree-sitter parse (package symbols): functions, methods, properties and classes "+
		"without member definitions. The same definitions are used for both strategies. A definition fits the size cap when it has at most "+
		"max-chars non-white-space characters (decorators and annotations included, the comment lines above it not): a chunker could keep it whole.\n\n")
	fmt.Fprintf(ew, "² The same against every definition: a class split between two of its methods counts too "+
		"(the structural chunker splits a class with two or more methods on purpose).\n\n")
	fmt.Fprintf(ew, "³ Bytes of decoded source over the wall time of chunking all files once in one goroutine, "+
		"in memory (one run, not a benchmark; 1 MB = 10⁶ bytes).\n\n")
	if len(c.Settings) > 0 {
		fmt.Fprintf(ew, "⁴ `repoctx eval` of the current configuration with `--strategy structural` and `--strategy fixed`, "+
			"the same other flags, on %s-%s (%s): full = untrimmed context", c.EvalLang, c.Stage, c.Data)
		for _, s := range c.Settings {
			switch {
			case s.Window > 0:
				fmt.Fprintf(ew, ", %s = trimmed from the left to a %d-token window", s.Name, s.Window)
			case s.Chars > 0:
				fmt.Fprintf(ew, ", %s = at most %d bytes", s.Name, s.Chars)
			}
		}
		fmt.Fprintf(ew, "; metrics as `repoctx eval --help` and docs/metrics.md define them (novelrec: share of the middle's identifiers absent from "+
			"the datapoint's prefix/suffix found in the kept context; allrec: share of all its identifiers found anywhere in the prompt).\n\n")
	}
}

// Colours of the strategies in charts (structural, fixed) and the
// transparency of overlaid histogram fills.
var strategyColors = []color.NRGBA{{31, 119, 180, 255}, {255, 127, 14, 255}}

func strategyColor(i int, alpha uint8) color.NRGBA {
	c := strategyColors[i%len(strategyColors)]
	c.A = alpha
	return c
}

// WriteSVG draws the comparison's chart into an SVG file at path: the
// histograms of chunk sizes (non-space characters and lines, as shares of
// each strategy's chunks), the shares of chunks cutting definitions and of
// fallback chunks, and, with a dataset, the evaluation metrics. It needs a
// Comparison returned by CompareChunking (the per-chunk sizes are not kept
// in JSON). The fonts its text uses are embedded (@font-face with the TrueType
// data, gonum/plot's vgsvg.EmbedFonts), so the chart looks the same where they
// are not installed.
func (c *Comparison) WriteSVG(path string) error {
	return c.writeChart(path, vgsvg.NewWith(vgsvg.UseWH(chartWidth, chartHeight), vgsvg.EmbedFonts(true)))
}

// WritePNG draws the chart of [Comparison.WriteSVG] into a PNG file at path.
func (c *Comparison) WritePNG(path string) error {
	img := vgimg.NewWith(vgimg.UseWH(chartWidth, chartHeight), vgimg.UseDPI(144))
	return c.writeChart(path, vgimg.PngCanvas{Canvas: img})
}

// Chart size.
const (
	chartWidth  = 11 * vg.Inch
	chartHeight = 8 * vg.Inch
)

// chartCanvas is a vg canvas that can write itself out.
type chartCanvas interface {
	vg.CanvasSizer
	io.WriterTo
}

func (c *Comparison) writeChart(path string, cv chartCanvas) error {
	plots, err := c.chartPlots()
	if err != nil {
		return err
	}
	dc := draw.New(cv)
	tiles := draw.Tiles{Rows: len(plots), Cols: len(plots[0]), PadX: vg.Millimeter * 6, PadY: vg.Millimeter * 6,
		PadTop: vg.Millimeter * 3, PadBottom: vg.Millimeter * 3, PadLeft: vg.Millimeter * 3, PadRight: vg.Millimeter * 3}
	canvases := plot.Align(plots, tiles, dc)
	for i := range plots {
		for j := range plots[i] {
			if plots[i][j] != nil {
				plots[i][j].Draw(canvases[i][j])
			}
		}
	}
	var buf bytes.Buffer
	if _, err := cv.WriteTo(&buf); err != nil {
		return fmt.Errorf("eval: chart %s: %w", path, err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("eval: write chart: %w", err)
	}
	return nil
}

// chartPlots returns the panels, two a row.
func (c *Comparison) chartPlots() ([][]*plot.Plot, error) {
	if len(c.Strategies) == 0 {
		return nil, errors.New("eval: chart: the comparison has no strategies")
	}
	for _, s := range c.Strategies {
		if s.Chunks > 0 && len(s.chars) != s.Chunks {
			return nil, errors.New("eval: chart: per-chunk sizes missing (a chart needs the Comparison CompareChunking returned, not one read from JSON)")
		}
	}
	chars := c.histPlot("chunk size in non-space characters", func(s *StrategyStats) []float64 { return s.chars }, 100)
	lines := c.histPlot("chunk length in lines", func(s *StrategyStats) []float64 { return s.lines }, 99)
	quality, err := c.barPlot("chunks cutting definitions, fallback chunks (% of chunks)", "%.1f",
		[]string{"cut a definition", "… that fits the cap", "cut any definition", "fallback"},
		func(s *StrategyStats) []float64 {
			fb := 100 * s.Share(s.Fallback)
			if s.Strategy == StrategyFixed {
				fb = math.NaN()
			}
			return []float64{100 * s.Share(s.CutInnermost), 100 * s.Share(s.CutFitting), 100 * s.Share(s.CutAny), fb}
		})
	if err != nil {
		return nil, err
	}
	if len(c.Settings) == 0 {
		return [][]*plot.Plot{{chars, lines}, {quality, nil}}, nil
	}
	var labels []string
	for _, set := range c.Settings {
		for _, m := range compareMetrics {
			labels = append(labels, m+"\n"+set.Name)
		}
	}
	metrics, err := c.barPlot(fmt.Sprintf("eval on %s-%s, current configuration", c.EvalLang, c.Stage), "%.3f", labels,
		func(s *StrategyStats) []float64 {
			out := make([]float64, len(labels))
			for k := range out {
				out[k] = math.NaN()
			}
			if s.Eval == nil {
				return out
			}
			nm := len(compareMetrics)
			for k, sc := range s.Eval.Scores {
				for m := range nm {
					if nm*k+m < len(out) {
						out[nm*k+m] = compareValue(sc, m)
					}
				}
			}
			return out
		})
	if err != nil {
		return nil, err
	}
	return [][]*plot.Plot{{chars, lines}, {quality, metrics}}, nil
}

// histPlot overlays one histogram per strategy of values(s) (whole
// numbers), in percent of the strategy's chunks, on common bins from 0 to
// the pct-th percentile of all values; larger values fall in the last bin.
func (c *Comparison) histPlot(title string, values func(s *StrategyStats) []float64, pct float64) *plot.Plot {
	var all []float64
	for _, s := range c.Strategies {
		all = append(all, values(s)...)
	}
	const maxBins = 24
	upper := Percentile(all, pct)
	width := math.Max(1, math.Ceil((upper+1)/maxBins))
	nBins := int(math.Ceil((upper + 1) / width))
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = title
	if Percentile(all, 100) > upper {
		p.X.Label.Text += fmt.Sprintf(" (last bin: %.0f and more)", width*float64(nBins-1))
	}
	p.Y.Label.Text = "% of chunks"
	p.Legend.Top = true
	p.Y.Min = 0
	top := 0.0
	for i, s := range c.Strategies {
		v := values(s)
		bins := make([]plotter.HistogramBin, nBins)
		for k := range bins {
			bins[k] = plotter.HistogramBin{Min: float64(k) * width, Max: float64(k+1) * width}
		}
		for _, x := range v {
			bins[max(0, min(int(x/width), nBins-1))].Weight++
		}
		for k := range bins {
			if len(v) > 0 {
				bins[k].Weight *= 100 / float64(len(v))
			}
			top = math.Max(top, bins[k].Weight)
		}
		h := &plotter.Histogram{Bins: bins, Width: width, FillColor: strategyColor(i, 90), LineStyle: plotter.DefaultLineStyle}
		h.LineStyle.Color = strategyColor(i, 255)
		h.LineStyle.Width = vg.Points(0.8)
		p.Add(h)
		p.Legend.Add(fmt.Sprintf("%s: %d chunks, p50 %.0f, p90 %.0f", s.Strategy, len(v), Percentile(v, 50), Percentile(v, 90)), h)
	}
	p.Y.Max = top * 1.3 // room for the legend
	return p
}

// barPlot draws grouped bars, one group per label and one bar per
// strategy, each with its value printed above it by format; a NaN value
// draws no bar and is labelled "n/a".
func (c *Comparison) barPlot(title, format string, labels []string, values func(s *StrategyStats) []float64) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.Legend.Top = true
	p.Y.Min = 0
	n := len(c.Strategies)
	w := vg.Points(float64(min(40, 240/max(1, len(labels)*n))))
	top := 0.0
	for i, s := range c.Strategies {
		v := values(s)
		bars := make(plotter.Values, len(v))
		xys := make(plotter.XYs, len(v))
		texts := make([]string, len(v))
		for k, x := range v {
			texts[k] = fmt.Sprintf(format, x)
			if math.IsNaN(x) {
				x, texts[k] = 0, "n/a"
			}
			bars[k], xys[k] = x, plotter.XY{X: float64(k), Y: x}
			top = math.Max(top, x)
		}
		b, err := plotter.NewBarChart(bars, w)
		if err != nil {
			return nil, fmt.Errorf("eval: chart: %w", err)
		}
		b.Color = strategyColor(i, 255)
		b.LineStyle.Width = 0
		b.Offset = w * vg.Length(float64(i)-float64(n-1)/2)
		p.Add(b)
		p.Legend.Add(string(s.Strategy), b)
		lb, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: texts})
		if err != nil {
			return nil, fmt.Errorf("eval: chart: %w", err)
		}
		for k := range lb.TextStyle {
			lb.TextStyle[k].XAlign = draw.XCenter
			lb.TextStyle[k].Font.Size = vg.Points(7)
		}
		lb.Offset = vg.Point{X: b.Offset, Y: vg.Points(2)}
		p.Add(lb)
	}
	if top <= 0 {
		top = 1
	}
	p.Y.Max = top * 1.3 // room for the labels and the legend
	p.NominalX(labels...)
	p.X.Tick.Label.Font.Size = vg.Points(9)
	return p, nil
}

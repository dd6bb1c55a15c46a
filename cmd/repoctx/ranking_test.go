package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/batch"
	"github.com/repoctx/repoctx/dataset"
	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/internal/racetest"
	"github.com/repoctx/repoctx/snapshot"
)

// rankingDir holds the readable ranking goldens: one text file per hole and preset
// listing the context's parts in prompt order (least relevant first) with their
// path, line range, score, reasons and first lines, so that a change of ranking is a
// diff a reviewer can read (the digests of golden_test.go only say that something
// changed). Kotlin files carry the Kotlin grammar's name ([grammars.KotlinGrammar]):
// its outputs differ between grammars. Rewrite them with
// go test [-tags kotlin2] ./cmd/repoctx -run TestRankingGoldens -update.
var rankingDir = filepath.Join("..", "..", "testdata", "ranking")

// rankingHole names one golden: datapoint Index (0-based line) of {Lang}-{Stage}.jsonl
// in Data, composed with preset "batch" (as predict does) or "live" (as query does;
// only for unpacked snapshot folders). Excerpts shows the expected line and each
// part's first lines: only for testdata/sample, whose code is the project's own (the
// shared sets' repositories are others' code, kept out of the repository).
type rankingHole struct {
	Data, Lang, Stage string
	Index             int
	Preset            string
	Excerpts          bool
}

// name is the golden's file name: {stage}-{lang}-{index}-{preset}[.{grammar}].txt.
func (h rankingHole) name() string {
	n := fmt.Sprintf("%s-%s-%d-%s", h.Stage, h.Lang, h.Index, h.Preset)
	if h.Lang == "kotlin" {
		n += "." + grammars.KotlinGrammar
	}
	return n + ".txt"
}

// rankingPartLines is how many lines of each part's text a golden shows.
const rankingPartLines = 2

// rankingLineRunes caps the shown lines' length, in runes.
const rankingLineRunes = 100

// TestRankingGoldens composes a few holes of testdata/sample (always) and of
// ../shared/data/dev and devb (when present) with the batch and live presets'
// defaults and compares a readable listing of each context with its file in
// rankingDir; -update rewrites the files instead.
func TestRankingGoldens(t *testing.T) {
	sample := filepath.Join("..", "..", "testdata", "sample")
	holes := []rankingHole{
		{sample, "python", "sample", 0, "batch", true},
		{sample, "python", "sample", 3, "batch", true},
		{sample, "kotlin", "sample", 0, "batch", true},
		{sample, "kotlin", "sample", 3, "batch", true},
		{sample, "python", "sample", 0, "live", true},
		{sample, "kotlin", "sample", 0, "live", true},
	}
	shared := filepath.Join("..", "..", "..", "shared", "data")
	if _, err := os.Stat(filepath.Join(shared, "dev")); err == nil && !racetest.Enabled {
		holes = append(holes,
			rankingHole{filepath.Join(shared, "dev"), "python", "dev", 0, "batch", false},
			rankingHole{filepath.Join(shared, "dev"), "kotlin", "dev", 0, "batch", false},
			rankingHole{filepath.Join(shared, "devb"), "python", "devb", 0, "batch", false},
			rankingHole{filepath.Join(shared, "devb"), "kotlin", "devb", 0, "batch", false},
		)
	} else {
		t.Log("no shared data, or -race (too slow): only testdata/sample's holes")
	}
	cache := t.TempDir()
	for _, h := range holes {
		t.Run(strings.TrimSuffix(h.name(), ".txt"), func(t *testing.T) {
			got := rankingListing(t, h, cache)
			path := filepath.Join(rankingDir, h.name())
			if *update {
				if err := os.MkdirAll(rankingDir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (write it: go test -tags kotlin2 ./cmd/repoctx -run TestRankingGoldens -update)", err)
			}
			if d := firstDiff(string(want), got, 3); d != "" {
				t.Errorf("%s: the ranking changed (- golden, + now). If on purpose, rewrite the goldens of both Kotlin grammars"+
					" (go test [-tags kotlin2] ./cmd/repoctx -run 'TestRankingGoldens|TestGoldenDigests' -update) in the change's commit,"+
					" with `repoctx eval --baselines --visible` on dev and devb before and after in its message.\n%s", path, d)
			}
		})
	}
}

// rankingListing composes hole h and renders the golden's text.
func rankingListing(t *testing.T, h rankingHole, cache string) string {
	t.Helper()
	dps, errs, err := dataset.ReadDatapointsFile(filepath.Join(h.Data, h.Lang+"-"+h.Stage+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range errs {
		if e != nil {
			t.Fatal(e)
		}
	}
	if h.Index >= len(dps) {
		t.Fatalf("%s-%s has %d datapoints, not %d", h.Lang, h.Stage, len(dps), h.Index+1)
	}
	dp := dps[h.Index]
	var ctx repoctx.Context
	switch h.Preset {
	case "batch":
		ctx = batchContext(t, h, dp, cache)
	case "live":
		ctx = liveContext(t, h, dp, cache)
	default:
		t.Fatalf("unknown preset %q", h.Preset)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "hole: %s (%s-%s.jsonl line %d)\n", dp.ID, h.Lang, h.Stage, h.Index+1)
	fmt.Fprintf(&sb, "preset: %s\n", h.Preset)
	fmt.Fprintf(&sb, "file: %s, cursor at line %d\n", dp.Path, strings.Count(dp.Prefix, "\n")+1)
	if mid := truthMiddle(t, h, dp.ID); mid != "" && h.Excerpts {
		fmt.Fprintf(&sb, "expected: %s\n", clip(firstLines(mid, 1)[0]))
	}
	if ctx.Prefix != nil || ctx.Suffix != nil {
		fmt.Fprintf(&sb, "planner: prefix %s, suffix %s\n", trimmed(ctx.Prefix, dp.Prefix), trimmed(ctx.Suffix, dp.Suffix))
	}
	fmt.Fprintf(&sb, "parts: %d in prompt order (least relevant first), %d characters\n", len(ctx.Parts), len(ctx.Text))
	for i, p := range ctx.Parts {
		fmt.Fprintf(&sb, "\n%d. %s:%d-%d score %.4f\n", i+1, p.Path, p.StartLine, p.EndLine, p.Score)
		fmt.Fprintf(&sb, "   why: %s\n", strings.Join(p.Why, " "))
		if !h.Excerpts {
			continue
		}
		lines := firstLines(p.Text, rankingPartLines+1)
		shown := min(len(lines), rankingPartLines)
		for _, l := range lines[:shown] {
			fmt.Fprintln(&sb, strings.TrimRight("   | "+clip(l), " "))
		}
		if n := strings.Count(strings.TrimSuffix(p.Text, "\n"), "\n") + 1 - shown; n > 0 && p.Text != "" {
			fmt.Fprintf(&sb, "   hidden %d more lines\n", n)
		}
	}
	return sb.String()
}

// batchContext composes dp as `repoctx predict` does by default (batch.DefaultConfig,
// the dataset language's family indexed), in a batch of dp alone.
func batchContext(t *testing.T, h rankingHole, dp batch.Datapoint, cache string) repoctx.Context {
	t.Helper()
	src, err := dataset.OpenSource(h.Data, h.Lang, h.Stage, snapshot.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	cfg := batch.DefaultConfig()
	cfg.CacheDir = cache
	cfg.Index.Languages = batch.DatasetLanguages(h.Lang)
	var res batch.Result
	if _, err := batch.Run(context.Background(), src, batch.FromSlice([]batch.Datapoint{dp}), cfg, func(r batch.Result) { res = r }); err != nil {
		t.Fatal(err)
	}
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	return res.Context
}

// liveContext composes dp with `repoctx query --json` (the live preset's defaults) on
// its unpacked snapshot folder.
func liveContext(t *testing.T, h rankingHole, dp batch.Datapoint, cache string) repoctx.Context {
	t.Helper()
	repo := filepath.Join(h.Data, "repositories-"+h.Lang+"-"+h.Stage, dp.SnapshotName())
	dir := t.TempDir()
	pf, sf := filepath.Join(dir, "prefix.txt"), filepath.Join(dir, "suffix.txt")
	if err := os.WriteFile(pf, []byte(dp.Prefix), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sf, []byte(dp.Suffix), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := run(t, "query", repo, "--file", dp.Path, "--prefix-file", pf, "--suffix-file", sf, "--cache-dir", cache, "--json")
	if code != 0 {
		t.Fatalf("query: exit %d: %s", code, stderr)
	}
	var got struct {
		Parts   []repoctx.Part `json:"parts"`
		Context string         `json:"context"`
		Prefix  *string        `json:"prefix"`
		Suffix  *string        `json:"suffix"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("query --json: %v", err)
	}
	return repoctx.Context{Text: got.Context, Parts: got.Parts, Prefix: got.Prefix, Suffix: got.Suffix}
}

// truthMiddle returns the expected middle of datapoint id from the set's truth
// file, "" when there is none.
func truthMiddle(t *testing.T, h rankingHole, id string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(h.Data, h.Lang+"-"+h.Stage+".truth.jsonl"))
	if err != nil {
		return ""
	}
	for _, l := range bytes.Split(b, []byte("\n")) {
		var tr struct {
			ID     string `json:"id"`
			Middle string `json:"middle"`
		}
		if json.Unmarshal(l, &tr) == nil && tr.ID == id {
			return tr.Middle
		}
	}
	return ""
}

// trimmed says what the budget planner made of the hole's text: "kept" or its
// lines after and before.
func trimmed(got *string, orig string) string {
	if got == nil {
		return "kept"
	}
	return fmt.Sprintf("%d of %d lines", strings.Count(*got, "\n"), strings.Count(orig, "\n"))
}

// firstLines returns up to n lines of s, without their newlines.
func firstLines(s string, n int) []string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return lines
}

// clip shows line l on one golden line: right-trimmed, each tab as 4
// spaces, at most rankingLineRunes runes ("..." marks a cut).
func clip(l string) string {
	l = strings.TrimRight(strings.ReplaceAll(l, "\t", "    "), " \r")
	if utf8.RuneCountInString(l) > rankingLineRunes {
		l = string([]rune(l)[:rankingLineRunes]) + "..."
	}
	return l
}

// firstDiff returns "" when want and got are equal, else the first differing line
// with ctx lines of context either side, "-" marking want's lines and "+" got's.
func firstDiff(want, got string, ctx int) string {
	if want == got {
		return ""
	}
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	i := 0
	for i < len(w) && i < len(g) && w[i] == g[i] {
		i++
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "first difference at line %d:\n", i+1)
	for j := max(0, i-ctx); j < i; j++ {
		fmt.Fprintf(&sb, "  %s\n", w[j])
	}
	for j := i; j < min(len(w), i+ctx+1); j++ {
		fmt.Fprintf(&sb, "- %s\n", w[j])
	}
	for j := i; j < min(len(g), i+ctx+1); j++ {
		fmt.Fprintf(&sb, "+ %s\n", g[j])
	}
	return sb.String()
}

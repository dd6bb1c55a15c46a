package eval

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/dataset"
	"github.com/repoctx/repoctx/grammars"
)

// TestRunPlanner: with the budget planner on, the current configuration's
// prefix overrides reach the scorer: a datapoint whose prefix was trimmed is
// scored against the trimmed prefix (its new identifiers are the middle's
// identifiers missing from the trimmed prefix and the suffix), and its context
// fits the planned window.
func TestRunPlanner(t *testing.T) {
	const window = 1000
	dir := sampleCopy(t)
	lang := "python"
	dps, _, err := dataset.ReadDatapointsFile(filepath.Join(dir, lang+"-sample.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	truth, _ := dataset.ReadTruth(filepath.Join(dir, lang+"-sample.truth.jsonl"))
	opts := Options{DataDir: dir, Lang: lang, Stage: "sample", Batch: plannerBatch(sharedCache(t), window), Windows: []int{window}}
	ctxs, _, err := buildContexts(opts, grammars.Lookup(lang), dps, []string{ConfigCurrent})
	if err != nil {
		t.Fatal(err)
	}
	trimmed := -1
	for i, p := range ctxs[ConfigCurrent] {
		if p.Prefix != nil {
			trimmed = i
			if !strings.HasSuffix(dps[i].Prefix, *p.Prefix) || len(*p.Prefix) >= len(dps[i].Prefix) {
				t.Errorf("datapoint %d: override is not a trimmed prefix", i)
			}
		}
	}
	if trimmed < 0 {
		t.Fatalf("no prefix trimmed for a %d-token window", window)
	}
	opts.Configs = []string{ConfigCurrent}
	rep, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	p := ctxs[ConfigCurrent][trimmed]
	ds := rep.Configs[0].PerDatapoint[trimmed]
	want := NewIdentifiers(truth[dps[trimmed].ID].Middle, *p.Prefix, dps[trimmed].Suffix, grammars.Lookup(lang).IsKeyword)
	if ds.NewIDs != len(want) {
		t.Errorf("datapoint %d: %d new identifiers, want %d (against the override)", trimmed, ds.NewIDs, len(want))
	}
	suffix := dps[trimmed].Suffix
	if p.Suffix != nil {
		suffix = *p.Suffix
	}
	// The planner budgeted with the scorer's rule: nothing is trimmed off.
	if got := TrimToWindow(p.Context, *p.Prefix, suffix, window, repoctx.CharEstimate{}); got != p.Context || p.Context == "" {
		t.Errorf("datapoint %d: context of %d bytes trimmed to %d by the scorer", trimmed, len(p.Context), len(got))
	}
	if s := ds.Settings[1]; s.CtxChars != len(p.Context) {
		t.Errorf("w%d kept %d bytes, want all %d", window, s.CtxChars, len(p.Context))
	}
}

func TestVisibleText(t *testing.T) {
	prefix := "import os\n\ndef f():\n    a = 1\n    b = 2\n    c = 3\n    d = "
	suffix := "4\n    return d\n"
	got := VisibleText(prefix, suffix)
	want := repoctx.FileSep + "(prefix)\nimport os\n\ndef f():\n" + repoctx.FileSep + "(suffix)\n    return d\n"
	if got != want {
		t.Errorf("VisibleText = %q, want %q", got, want)
	}
	if got := VisibleText("a\nb\n", "x"); got != "" {
		t.Errorf("VisibleText of query lines only = %q, want \"\"", got)
	}
	// Scoring with visible: a line of the prefix counts for line_chrf.
	middle := "    value = compute_total(items)\n"
	pre := "    value = compute_total(items)\n\n\nx = 1\ny = 2\nz = 3\n"
	settings := Settings([]int{8000}, nil)
	c := newCaches()
	off := scoreDatapoint(middle, pre, "", pre, "", "", settings, repoctx.CharEstimate{}, nil, c, false)
	on := scoreDatapoint(middle, pre, "", pre, "", "", settings, repoctx.CharEstimate{}, nil, c, true)
	if off.Settings[0].LineChrF != 0 || on.Settings[0].LineChrF != 1 {
		t.Errorf("line_chrf without/with visible = %v / %v, want 0 / 1", off.Settings[0].LineChrF, on.Settings[0].LineChrF)
	}
}

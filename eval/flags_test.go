package eval

import (
	"strings"
	"testing"

	"github.com/repoctx/repoctx/assemble"
	"github.com/repoctx/repoctx/batch"
	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/retrieve"
)

// TestConfigFlags: the current configuration is described by the flags that make it,
// not a Go struct dump.
func TestConfigFlags(t *testing.T) {
	cfg := batch.DefaultConfig()
	want := "--strategy structural --max-chars 800 --window-lines 20 --overlap-lines 5 --dense lsa --query-lines 8 --top-k 16 --budget 24000 --min-score-ratio 0 --relative-weight 1.05 --relative-lines 20 --hit-margin 10 --plan-window 8000 --plan-share 0 --plan-suffix-share 0.25 --plan-context-window 16000 --prefix-outline 0 --iterations 3 --suffix-weight 0.6 --modified-boost 1.5 --edit-identifiers 8 --definition-weight 0.9 --bm25-weight 0.2 --dense-weight 0.8 --rrf-k 60 --fusion-depth 0 --dense-candidates 0 --old-file-weight 1.2 --old-file-decay 40 --draft-query-lines 3 --draft-weight 1"
	if got := ConfigFlags(cfg); got != want {
		t.Errorf("defaults:\n got  %s\n want %s", got, want)
	}
	cfg.Index.Strategy = chunker.StrategyFixed
	cfg.Index.Dense = retrieve.DenseNone
	cfg.Compose.TopK, cfg.Compose.NoRelative, cfg.Compose.NoDense = 3, true, true
	cfg.Compose.SuffixWeight = 0.7
	got := ConfigFlags(cfg)
	for _, part := range []string{"--strategy fixed", "--overlap-lines 10", "--dense none", "--top-k 3", "--no-relative", "--no-dense",
		"--plan-window 8000 --plan-share 0 --plan-suffix-share 0.25 --plan-context-window 16000 --prefix-outline 0", "--suffix-weight 0.7"} {
		if !strings.Contains(got, part) {
			t.Errorf("%s: no %q", got, part)
		}
	}
	if strings.ContainsAny(got, "{}") {
		t.Errorf("struct dump: %s", got)
	}
	// The planner off: its settings are left out (they need --plan-window).
	cfg.Compose.Plan.Window = 0
	if got := ConfigFlags(cfg); !strings.Contains(got, "--plan-window 0 --iterations 3") || strings.Contains(got, "--plan-share") {
		t.Errorf("planner off: %s, want --plan-window 0 and no planner settings", got)
	}
}

// TestConfigFlagsCoverTable: ConfigFlags names every option of assemble.OptionTable
// (a switch when on), with predict's defaults for the defaults.
func TestConfigFlagsCoverTable(t *testing.T) {
	cfg := batch.DefaultConfig()
	for i := range assemble.OptionTable {
		s := &assemble.OptionTable[i]
		if s.Kind == assemble.KindBool {
			s.Set(&cfg.Compose, 1)
		}
	}
	got := " " + ConfigFlags(cfg) + " "
	for i := range assemble.OptionTable {
		s := &assemble.OptionTable[i]
		want := " --" + s.Name + " "
		if s.Kind != assemble.KindBool {
			want += s.Format(assemble.PresetBatch.Default(s)) + " "
		}
		if !strings.Contains(got, want) {
			t.Errorf("ConfigFlags has no %q: %s", want, got)
		}
	}
}

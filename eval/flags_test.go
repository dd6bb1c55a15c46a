package eval

import (
	"strings"
	"testing"

	"github.com/repoctx/repoctx/batch"
	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/retrieve"
)

// TestConfigFlags: the current configuration is described by the flags that make it,
// not a Go struct dump.
func TestConfigFlags(t *testing.T) {
	cfg := batch.DefaultConfig()
	want := "--strategy structural --max-chars 800 --window-lines 20 --overlap-lines 5 --dense lsa --query-lines 8 --top-k 16 --budget 24000 --relative-weight 1.05 --min-score-ratio 0 --iterations 3 --plan-window 8000 --plan-suffix-share 0.25 --plan-context-window 16000"
	if got := ConfigFlags(cfg); got != want {
		t.Errorf("defaults:\n got  %s\n want %s", got, want)
	}
	cfg.Index.Strategy = chunker.StrategyFixed
	cfg.Index.Dense = retrieve.DenseNone
	cfg.Compose.TopK, cfg.Compose.NoRelative, cfg.Compose.NoDense = 3, true, true
	cfg.Compose.SuffixWeight = 0.7
	got := ConfigFlags(cfg)
	for _, part := range []string{"--strategy fixed", "--overlap-lines 10", "--dense none", "--top-k 3", "--no-relative", "--no-dense",
		"--plan-window 8000 --plan-suffix-share 0.25 --plan-context-window 16000", "(library options: suffix-weight 0.7)"} {
		if !strings.Contains(got, part) {
			t.Errorf("%s: no %q", got, part)
		}
	}
	if strings.ContainsAny(got, "{}") {
		t.Errorf("struct dump: %s", got)
	}
	// A context budgeted for the plan window alone is written, not left to
	// predict's default (16000).
	for _, cw := range []int{0, 4000, 8000} {
		c := cfg
		c.Compose.Plan.ContextWindow = cw
		if got := ConfigFlags(c); !strings.Contains(got, "--plan-suffix-share 0.25 --plan-context-window 0 ") {
			t.Errorf("context window %d: %s, want --plan-context-window 0", cw, got)
		}
	}
	cfg.Compose.Plan.Window = 0
	if got := ConfigFlags(cfg); !strings.HasSuffix(got, "--plan-window 0 (library options: suffix-weight 0.7)") {
		t.Errorf("planner off: %s, want --plan-window 0", got)
	}
}

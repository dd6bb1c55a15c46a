package eval

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/assemble"
	"github.com/repoctx/repoctx/batch"
	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/complete"
)

// ConfigFlags returns the `repoctx predict` flags that make the configuration cfg
// runs (ConfigCurrent): chunking (--strategy, --max-chars, --window-lines,
// --overlap-lines, with the chunker's defaults filled in), the dense retriever
// (--dense, or --model with the model's ID), assembly (--query-lines, --top-k,
// --budget, --relative-weight, --min-score-ratio and the --no-... switches that are
// on), --iterations (with the draft model's --draft-endpoint, --draft-model and
// --fim-template) when it or its default is not 1, and the budget planner when it
// is on (--plan-context-window always, 0 when the context is budgeted for the plan
// window alone). Library options that have no flag are
// added as "(library options: name value, ...)", by the names Options.Validate
// gives them, when they differ from assemble.DefaultOptions.
func ConfigFlags(cfg batch.Config) string {
	ws := cfg.Index
	s := ws.Strategy
	if s == "" {
		s = chunker.StrategyStructural
	}
	def, co := chunker.DefaultOptions(s), ws.Chunk
	if co.MaxChars <= 0 {
		co.MaxChars = def.MaxChars
	}
	if co.WindowLines <= 0 {
		co.WindowLines, co.WindowOverlap = def.WindowLines, def.WindowOverlap
	}
	num := func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
	args := []string{"--strategy", string(s), "--max-chars", strconv.Itoa(co.MaxChars),
		"--window-lines", strconv.Itoa(co.WindowLines), "--overlap-lines", strconv.Itoa(co.WindowOverlap)}
	if ws.Embedder != nil {
		args = append(args, "--model", ws.Embedder.ID())
	} else {
		args = append(args, "--dense", ws.Dense.String())
	}
	if cfg.LSAPerSnapshot {
		args = append(args, "--lsa-per-snapshot")
	}
	if cfg.CrossSnapshot {
		args = append(args, "--cross-snapshot")
	}
	c := cfg.Compose
	args = append(args, "--query-lines", strconv.Itoa(c.QueryLines), "--top-k", strconv.Itoa(c.TopK),
		"--budget", strconv.Itoa(c.BudgetChars), "--relative-weight", num(c.RelativeWeight),
		"--min-score-ratio", num(c.MinScoreRatio))
	for _, sw := range []struct {
		on   bool
		flag string
	}{{c.NoRelative, "--no-relative"}, {c.NoEditQuery, "--no-edit-query"}, {c.NoDefinitions, "--no-definitions"},
		{c.NoOldFile, "--no-old-file"}, {c.NoDense, "--no-dense"}} {
		if sw.on {
			args = append(args, sw.flag)
		}
	}
	if it, def := max(1, c.Iterations), max(1, assemble.DefaultOptions().Iterations); it != 1 || def != 1 {
		args = append(args, "--iterations", strconv.Itoa(it))
		if m, ok := c.Drafter.(*complete.Model); ok && it > 1 {
			args = append(args, "--draft-endpoint", strings.TrimSuffix(m.Client.URL(), "/completions"), "--draft-model", m.Name, "--fim-template", m.Template.Name)
		} else if c.Drafter != nil && it > 1 {
			args = append(args, fmt.Sprintf("(drafter %T)", c.Drafter))
		}
	}
	if c.Plan.On() {
		args = append(args, "--plan-window", strconv.Itoa(c.Plan.Window))
		if c.Plan.Share > 0 { // 0: the language's share, the default
			args = append(args, "--plan-share", num(c.Plan.Share))
		}
		args = append(args, "--plan-suffix-share", num(c.Plan.SuffixShare))
		// Always written: predict's default is batch.DefaultContextWindow, so a
		// context budgeted for the plan window alone (ContextWindow <= Window)
		// needs its 0.
		cw := 0
		if c.Plan.ContextWindow > c.Plan.Window {
			cw = c.Plan.ContextWindow
		}
		args = append(args, "--plan-context-window", strconv.Itoa(cw))
		if t := c.Plan.Tokens; t != nil && t.Name() != (repoctx.CharEstimate{}).Name() {
			args = append(args, "--tokenizer", t.Name())
		}
	} else {
		args = append(args, "--plan-window", "0") // predict's default plans for batch.DefaultPlanWindow
	}
	d := assemble.DefaultOptions()
	var lib []string
	for _, o := range []struct {
		name   string
		v, def float64
	}{
		{"suffix-weight", c.SuffixWeight, d.SuffixWeight}, {"modified-boost", c.ModifiedBoost, d.ModifiedBoost},
		{"edit-identifiers", float64(c.EditIdentifiers), float64(d.EditIdentifiers)},
		{"definition-weight", c.DefinitionWeight, d.DefinitionWeight}, {"old-file-weight", c.OldFileWeight, d.OldFileWeight},
		{"old-file-decay", c.OldFileDecay, d.OldFileDecay},
		{"bm25-weight", c.Fusion.BM25, d.Fusion.BM25}, {"dense-weight", c.Fusion.Dense, d.Fusion.Dense},
		{"rrf-k", c.Fusion.K, d.Fusion.K}, {"fusion-depth", float64(c.Fusion.Depth), float64(d.Fusion.Depth)},
		{"draft-weight", c.DraftWeight, d.DraftWeight}, {"draft-query-lines", float64(c.DraftQueryLines), float64(d.DraftQueryLines)},
	} {
		if o.v != o.def {
			lib = append(lib, o.name+" "+num(o.v))
		}
	}
	out := strings.Join(args, " ")
	if len(lib) > 0 {
		out += fmt.Sprintf(" (library options: %s)", strings.Join(lib, ", "))
	}
	return out
}

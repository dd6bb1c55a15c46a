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
// (--dense, or --model with the model's ID), then every assembly option of
// assemble.OptionTable in its order (numbers always, switches when on, the budget
// planner's settings only when --plan-window is above 0), --tokenizer when the
// planner counts with one, and the draft model's --draft-endpoint, --draft-model
// and --fim-template when it drafts.
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
	if cfg.CrossRepo {
		args = append(args, "--cross-repo")
	}
	c := cfg.Compose
	for i := range assemble.OptionTable {
		o := &assemble.OptionTable[i]
		v := o.Get(&c)
		switch {
		case o.Requires != "" && assemble.Option(o.Requires).Get(&c) == 0:
		case o.Kind == assemble.KindBool:
			if v != 0 {
				args = append(args, "--"+o.Name)
			}
		default:
			args = append(args, "--"+o.Name, o.Format(v))
		}
	}
	if t := c.Plan.Tokens; c.Plan.On() && t != nil && t.Name() != (repoctx.CharEstimate{}).Name() {
		args = append(args, "--tokenizer", t.Name())
	}
	if m, ok := c.Drafter.(*complete.Model); ok && c.Iterations > 1 {
		args = append(args, "--draft-endpoint", strings.TrimSuffix(m.Client.URL(), "/completions"), "--draft-model", m.Name, "--fim-template", m.Template.Name)
	} else if c.Drafter != nil && c.Iterations > 1 {
		args = append(args, fmt.Sprintf("(drafter %T)", c.Drafter))
	}
	return strings.Join(args, " ")
}

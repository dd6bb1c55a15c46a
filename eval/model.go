package eval

import (
	"context"
	"fmt"
	"sync"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/complete"
	"github.com/repoctx/repoctx/dataset"
)

// modelRuns asks opts.Model for the completion of every run's prompt under every
// window setting and fills the PointScores' ModelChrF, Completion and ModelError
// and the runs' ModelFailed. Identical prompts (the same context kept, e.g. by two
// configurations that both fit nothing) are asked once. It returns an error when
// ctx ends or when every request failed (naming the last failure).
func modelRuns(ctx context.Context, runs []scoredConfig, dps []dataset.Datapoint, middles []string, settings []Setting, opts Options) error {
	type slot struct{ run, dp, setting int }
	type ask struct {
		built complete.Built
		slots []slot
		text  string
		err   error
	}
	m := *opts.Model
	m.Tokens = opts.Tokens
	var asks []*ask
	byPrompt := map[string]*ask{}
	for ri, r := range runs {
		if r.scored {
			continue // the oracle has no context to ask with
		}
		for i := range dps {
			d, p := &dps[i], r.preds[i]
			prefix, suffix := d.Prefix, d.Suffix
			if p.Prefix != nil {
				prefix = *p.Prefix
			}
			if p.Suffix != nil {
				suffix = *p.Suffix
			}
			for k, s := range settings {
				if s.Window <= 0 {
					continue
				}
				b := m.Template.Build(complete.Prompt{Path: d.Path, Context: p.Context, Prefix: prefix, Suffix: suffix}, s.Window, m.Tokens)
				a := byPrompt[b.Text]
				if a == nil {
					a = &ask{built: b}
					byPrompt[b.Text] = a
					asks = append(asks, a)
				}
				a.slots = append(a.slots, slot{ri, i, k})
			}
		}
	}
	if len(asks) == 0 {
		return nil
	}
	var wg sync.WaitGroup
	next := make(chan *ask)
	for w := 0; w < m.Client.Concurrency(); w++ { // the client bounds what is in flight
		wg.Add(1)
		go func() {
			defer wg.Done()
			for a := range next {
				res, err := m.Ask(ctx, a.built)
				a.text, a.err = res.Text, err
			}
		}()
	}
feed:
	for _, a := range asks {
		select {
		case next <- a:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("eval: model completions: %w", err)
	}
	failed := 0
	var last error
	for _, a := range asks {
		if a.err != nil {
			failed++
			last = a.err
		}
		for _, s := range a.slots {
			ps := &runs[s.run].res.PerDatapoint[s.dp].Settings[s.setting]
			v := 0.0
			if a.err != nil {
				ps.ModelError = a.err.Error()
				runs[s.run].res.ModelFailed++
			} else {
				v = ChrF(a.text, middles[s.dp])
				ps.Completion = a.text
			}
			ps.ModelChrF = &v
		}
	}
	if failed == len(asks) {
		return fmt.Errorf("eval: model completions: all %d requests failed; the last: %w", failed, last)
	}
	return nil
}

// modelNote says how model_chrf was computed.
func modelNote(opts Options) string {
	m := opts.Model
	n := m.MaxTokens
	if n <= 0 {
		n = repoctx.MaxNewTokens
	}
	return fmt.Sprintf("model_chrf: chrF of %s's completions (via %s, template %s, greedy, at most %d new tokens) against the whole middle, the prompt trimmed to each window with %s; requests that failed score 0",
		modelName(m), m.Client.URL(), m.Template.Name, n, opts.Tokens.Name())
}

func modelName(m *complete.Model) string {
	if m.Name == "" {
		return "the served model"
	}
	return m.Name
}

package eval

import (
	"context"

	"github.com/repoctx/repoctx/batch"
	"github.com/repoctx/repoctx/dataset"
	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/retrieve"
)

// testBatch returns the default batch configuration with the given cache folder and
// two workers.
func testBatch(cache string) batch.Config {
	c := batch.DefaultConfig()
	c.CacheDir = cache
	c.Workers = 2
	return c
}

// buildContexts runs buildConfigs (after checkOptions' defaults) and returns the
// predictions and errors by configuration.
func buildContexts(opts Options, spec *grammars.Spec, dps []dataset.Datapoint, configs []string) (map[string][]Prediction, map[string][]error, error) {
	if _, _, err := checkOptions(&opts); err != nil && len(configs) == 0 {
		return nil, nil, err
	}
	runs, err := buildConfigs(context.Background(), opts, spec, dps, make([]string, len(dps)), configs) // blank middles: the oracle scores 0
	if err != nil {
		return nil, nil, err
	}
	ctxs, errs := map[string][]Prediction{}, map[string][]error{}
	for i, c := range configs {
		ctxs[c], errs[c] = runs[i].preds, runs[i].errs
	}
	return ctxs, errs, nil
}

// plannerBatch is testBatch with BM25 only and the budget planner on for window
// tokens.
func plannerBatch(cache string, window int) batch.Config {
	c := testBatch(cache)
	c.Index.Dense = retrieve.DenseNone
	c.Compose.Plan.Window = window
	c.Compose.Plan.ContextWindow = 0 // the context budgeted for window itself, so that it fits it
	return c
}

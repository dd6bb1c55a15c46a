package assemble

import (
	"context"

	"github.com/repoctx/repoctx"
)

// Drafter guesses the middle of hole h given its first composed context c
// (RepoCoder's generation step, Zhang et al. 2023 §3): iterative retrieval then
// queries again with the last prefix lines plus the draft, which looks like the
// code to retrieve where the unfinished code does not.
//
// Draft returns the guessed middle as text (one or more lines, without the
// prefix and suffix around it). When c carries prefix or suffix overrides
// (the budget planner's), they are what the model is given. A non-nil error means
// there is no draft for this hole: the caller counts it and falls back on the
// built-in drafter; it never fails a batch. Draft must honour ctx and be safe
// for concurrent use (batch workers call it at once).
//
// [CopyDrafter] is the built-in drafter (no model); complete.Model implements
// Drafter with a code model behind an OpenAI-compatible endpoint. Options.Drafter
// picks one, Options.Iterations turns the loop on.
type Drafter interface {
	Draft(ctx context.Context, h repoctx.Hole, c repoctx.Context) (string, error)
}

package assemble

// Iterative retrieval (RepoCoder, Zhang et al. 2023, §3): the unfinished code is
// a poor query for the code that completes it; a draft of the completion looks
// like it. After the first composition, round r (2 <= r <= Options.Iterations)
// asks the drafter for the middle given the last context, queries with the last
// prefix lines plus the draft, and composes again.
//
// The draft query's prefix window is short (DraftQueryLines, 3 by default, the
// copy completer's window; the first round's is QueryLines, 12). RepoCoder's query
// is S_w lines centred on the cursor, the last S_w/2 prefix lines and the first
// S_w/2 non-blank lines of the generated code (microsoft/CodeT,
// RepoCoder/make_window.py, PredictionWindowMaker), because each of its rounds
// replaces the last one's retrieval; here the first round's candidates stay, so
// the second query is there to find what the long window did not. On dev+devb
// (docs/cli.md, "Iterative retrieval") the whole 12-line window plus the draft re-found
// the first round's chunks and changed no metric; 0 or 3 lines found one more
// middle line.
//
// How the rounds merge: the first round's candidates (every source: the prefix and
// suffix queries with relative positioning, the old file, the replaced region,
// the definitions) are kept, and the draft query's hits are fused into them by
// reciprocal rank, DraftWeight / (RRFK + rank), the same term each first-round
// query adds (Cormack et al. 2009). Candidates already hold sums of such terms,
// so this is RRF of the draft ranking with the first ones: a span both rounds
// found rises above one either found alone, and a span only the draft finds
// enters at the score of a first-round hit of its rank. Raw BM25 or cosine
// scores of two different queries are not on one scale; ranks are. RepoCoder
// replaces the retrieved code each round; keeping the first round's candidates
// keeps what the draft cannot find (definitions, the edit's old lines) and lets a
// poor draft cost little: its hits must outrank first-round ones to displace
// them. Each later round replaces the previous draft's hits by the new draft's
// (round r = the first round plus draft r-1's hits), as RepoCoder replaces its
// query: the count of rounds does not turn into a weight on the drafts.
//
// A round whose context text equals the previous one ends the loop (its parts'
// Why still say which the draft found): the built-in drafter would draft the same
// again (a model at temperature 0 nearly so).

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/complete"
	"github.com/repoctx/repoctx/retrieve"
)

// errBlankDraft is reported to Options.OnDraft when the Drafter returns a blank
// draft without an error.
var errBlankDraft = errors.New("assemble: the drafter returned a blank draft")

// iterate runs the retrieval rounds after the first, whose context is first; fit
// budgets a round's parts as the first round's were. It returns the last round's
// context, or ctx's error when ctx is done.
func (c *composer) iterate(first repoctx.Context, fit func([]repoctx.Part) []repoctx.Part) (repoctx.Context, error) {
	out := first
	if c.opts.Iterations <= 1 {
		return out, nil
	}
	base := c.cands
	for round := 2; round <= c.opts.Iterations; round++ {
		if err := c.ctx.Err(); err != nil {
			return repoctx.Context{}, err
		}
		draft, err := c.draft(out)
		if err != nil {
			return repoctx.Context{}, err
		}
		if strings.TrimSpace(draft) == "" {
			break // nothing to query with: the last context stands
		}
		c.cands = base.clone()
		if err := c.draftRetrieval(draft, round); err != nil {
			return repoctx.Context{}, err
		}
		next := c.context(fit(c.cands.parts(c.files)))
		same := next.Text == out.Text
		out = next // with the same text, its parts' Why still names the draft's hits
		if same {
			break
		}
	}
	c.cands = base
	return out, nil
}

// draft returns the draft of the middle given the last context cur: Options.Drafter's
// when it makes one, else the built-in drafter's. Only ctx's error is returned.
func (c *composer) draft(cur repoctx.Context) (string, error) {
	if c.opts.Drafter != nil {
		d, err := c.userDraft(cur)
		if cerr := c.ctx.Err(); cerr != nil {
			return "", cerr
		}
		if err == nil && strings.TrimSpace(d) == "" {
			err = errBlankDraft
		}
		if c.opts.OnDraft != nil {
			c.opts.OnDraft(c.h, err)
		}
		if err == nil {
			return d, nil
		}
	}
	return CopyDrafter{}.Draft(c.ctx, c.h, cur)
}

// userDraft calls Options.Drafter; its panic is a failed draft.
func (c *composer) userDraft(cur repoctx.Context) (d string, err error) {
	defer func() {
		if r := recover(); r != nil {
			d, err = "", fmt.Errorf("assemble: the drafter panicked drafting %s: %v", c.h.Path, r)
		}
	}()
	return c.opts.Drafter.Draft(c.ctx, c.h, cur)
}

// draftRetrieval runs round's query, the cursor's unfinished line and the
// DraftQueryLines complete prefix lines before it plus draft, and fuses its hits
// into the candidates. The hits themselves are what resembles the middle: relative
// positioning does not apply.
func (c *composer) draftRetrieval(draft string, round int) error {
	pq, _ := QueryText(c.h.Prefix, c.h.Suffix, c.opts.DraftQueryLines)
	q := query{name: "draft", text: pq + "\n" + draft, weight: c.opts.DraftWeight, keep: retrieve.KeepTail}
	results, err := c.search([]query{q})
	if err != nil {
		return err
	}
	hits := results[0]
	for _, hit := range hits {
		if c.opts.MinScoreRatio > 0 && hit.Score < c.opts.MinScoreRatio*hits[0].Score {
			break
		}
		tag := fmt.Sprintf("draft%d#%d", round, hit.Rank)
		if hit.BM25Rank > 0 || hit.DenseRank > 0 {
			tag += fmt.Sprintf("(bm25 %d, dense %d)", hit.BM25Rank, hit.DenseRank)
		}
		ch, _ := c.ix.Chunk(hit.ID)
		c.addHit(ch, q.weight/float64(retrieve.RRFK+hit.Rank), tag, c.ix.Chunk)
	}
	return nil
}

// DefaultDraftLines and DefaultDraftParts are the built-in drafter's defaults (see
// [CopyDrafter]).
const (
	DefaultDraftLines = 3
	DefaultDraftParts = 2
)

// CopyDrafter is the built-in [Drafter]; it needs no model. Its draft is the copy
// completer's guess (complete.CopyLines: the Lines non-blank lines after the window
// of the context that best matches the last prefix lines, eval's copy_chrf
// completer) followed by, for each of the TopParts most relevant parts of the
// context (its last ones), the Lines lines after that part's own best match, when
// they are not in the draft already. RepoCoder's generator is a model (Zhang et al.
// 2023, §3); this one copies, as its sparse retriever does: code that followed code
// like the prefix elsewhere is the best guess of what follows it here.
//
// The prefix matched is c's prefix override when it has one, else h's (their last
// lines are the same). The draft is the lines joined by "\n", stripped of white
// space at both ends; "" when no window shares a token with the prefix's last
// lines. Its only error is ctx's, when ctx is done.
type CopyDrafter struct {
	// Lines is how many lines follow each match in the draft; 0 means
	// DefaultDraftLines.
	Lines int
	// TopParts is how many of the most relevant parts add their own best match's
	// lines; 0 means DefaultDraftParts, a negative value none.
	TopParts int
}

// Draft implements [Drafter].
func (d CopyDrafter) Draft(ctx context.Context, h repoctx.Hole, c repoctx.Context) (string, error) {
	n, top := d.Lines, d.TopParts
	if n == 0 {
		n = DefaultDraftLines
	}
	if top == 0 {
		top = DefaultDraftParts
	}
	prefix := h.Prefix
	if c.Prefix != nil {
		prefix = *c.Prefix
	}
	seen := map[string]bool{}
	var out []string
	note := func(lines []string) {
		for _, l := range lines {
			if l = strings.TrimSpace(l); l != "" && !seen[l] {
				seen[l] = true
				out = append(out, l)
			}
		}
	}
	note(complete.CopyLines(prefix, c.Text, n))
	for i := len(c.Parts) - 1; i >= 0 && i >= len(c.Parts)-top; i-- {
		p := c.Parts[i]
		note(complete.CopyLines(prefix, repoctx.FileSep+p.Path+"\n"+p.Text, n))
	}
	return strings.Join(out, "\n"), ctx.Err()
}

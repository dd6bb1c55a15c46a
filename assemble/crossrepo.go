package assemble

import (
	"fmt"

	"github.com/repoctx/repoctx/crossrepo"
	"github.com/repoctx/repoctx/retrieve"
	"github.com/repoctx/repoctx/symbols"
)

// CrossRepo is what [Options.CrossRepo] searches besides the view's repository: an
// alias of bleve indexes ([crossrepo.Alias]) that holds the other repositories and,
// to place their hits among the view's own, the view's repository too (named Own).
//
// Dense vectors of per-repository LSA models are not comparable across repositories,
// so other repositories' hits are fused by BM25 alone: each query is run on the alias
// (scores over the joint statistics of every repository), and a hit of another
// repository at rank r of that joint list (the own repository's hits count toward r
// but are not added again: the view's hybrid search found them) adds the query's
// weight / (k + r), k = retrieve.RRFK, the scale of the view's own hits. Its part's
// path is the repository name, "/", and the file's path; the budget and the planner
// treat it like any part. Relative positioning brings the lines after (before) it as
// for the view's hits; the old-file sources stay in the view's repository.
//
// Definitions: a use near the cursor that the view's own symbol table does not
// resolve (an import naming a module the repository does not hold) is resolved in
// the tables of Definitions, in their order, through the completion file's imports
// alone (symbols.Table.ResolveForeign); the first repository that resolves it gives
// its definitions, a `def:` part named like the repository's other parts. The
// view's own definitions always win.
type CrossRepo struct {
	// Alias holds the repositories searched.
	Alias *crossrepo.Alias
	// Own is the name of the view's repository in Alias, "" when it is not in it.
	Own string
	// Definitions are the other repositories whose definitions the completion file's
	// imports may name, in the alias's order; nil: none.
	Definitions []DefSource
}

// DefSource is one other repository whose definitions a completion file may import.
type DefSource struct {
	// Repository is its name in the alias: its parts' paths start with it and "/".
	Repository string
	// Symbols is its symbol table.
	Symbols *symbols.Table
	// Text returns the text of one of its files as indexed (the text the table's byte
	// ranges are of, retrieve.Index.FileText), "" when unknown.
	Text func(path string) string
	// Names are the names code imports the repository by (symbols.ResolveForeign):
	// its name, and symbols.ImportNames of its folder.
	Names []string
}

// foreignFiles resolves the prefixed paths of other repositories' parts to the
// files' texts.
type foreignFiles map[string]foreignFile

type foreignFile struct {
	text func(string) string // the repository's file texts
	path string              // the file's path in its repository
}

// crossRetrieval runs query q on the alias and adds other repositories' hits (see
// [CrossRepo]).
func (c *composer) crossRetrieval(q query) error {
	cr := c.opts.CrossRepo
	hits, err := cr.Alias.Search(c.ctx, q.text, c.opts.TopK, func(h *crossrepo.Hit) bool {
		return h.Repository == cr.Own || h.Chunk != nil && (c.langs == nil || c.langs[h.Chunk.Lang])
	})
	if err != nil {
		return fmt.Errorf("assemble: %s query on other repositories: %w", q.name, err)
	}
	for _, h := range hits {
		if h.Repository == cr.Own || h.Chunk == nil {
			continue
		}
		if c.opts.MinScoreRatio > 0 && h.Score < c.opts.MinScoreRatio*hits[0].Score {
			break
		}
		ch := *h.Chunk
		ch.Path = h.Repository + "/" + h.Chunk.Path
		c.files.foreign[ch.Path] = foreignFile{h.Index.FileText, h.Chunk.Path}
		s := q.weight / float64(retrieve.RRFK+h.Rank)
		tag := fmt.Sprintf("%s#%d(cross-repo bm25 %d)", q.name, h.Rank, h.Rank)
		c.addHit(&ch, s, tag, h.Index.Chunk)
		if c.opts.NoRelative {
			continue
		}
		if c.opts.RelativeLines > 0 {
			c.addLines(&ch, q.name == "prefix", s*c.opts.RelativeWeight, map[string]string{"prefix": "after:", "suffix": "before:"}[q.name]+tag)
			continue
		}
		if rid := q.rel(h.Chunk); rid != "" {
			if rc, ok := h.Index.Chunk(rid); ok {
				n := *rc
				n.Path = ch.Path
				c.add(&n, s*c.opts.RelativeWeight, map[string]string{"prefix": "next-of:", "suffix": "prev-of:"}[q.name]+tag)
			}
		}
	}
	return nil
}

// foreignText returns the text of a prefixed path of another repository, if path is one.
func (ff foreignFiles) text(path string) (string, bool) {
	f, ok := ff[path]
	if !ok {
		return "", false
	}
	return f.text(f.path), true
}

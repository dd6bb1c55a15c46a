package batch

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/assemble"
	"github.com/repoctx/repoctx/crossrepo"
	"github.com/repoctx/repoctx/index"
	"github.com/repoctx/repoctx/retrieve"
	"github.com/repoctx/repoctx/snapshot"
	"github.com/repoctx/repoctx/store"
	"github.com/repoctx/repoctx/symbols"
)

// Repoctx returns repoctx's own method: one [index.Index] per repository over st,
// a view of each snapshot (its files' chunks, symbols and vectors from the index, or
// the store when an earlier run made them) and each datapoint's context composed with
// assemble.Compose. The symbol table is built unless compose turns the definitions
// source off. The symbols of each completion file's text are kept in the store
// (assemble.Options.TextSymbols), so that a later run over the same datapoints
// reads them back instead of parsing the text again. Close the method (it implements
// io.Closer) to close its indexes.
//
// Snapshots of one repository share the built-in LSA model, unless lsaPerSnapshot or
// opts selects another dense retriever ([index.Options.SharedLSA]): it is fitted once,
// on the repository's first snapshot in name order among the snapshots src holds,
// whichever datapoints come first, so that the output depends neither on the cache,
// nor on resuming, nor on the order of the datapoints; the repository's other
// snapshots are embedded with it. (The competition's sources hold exactly the
// snapshots their datapoints name.) A repository whose model snapshot cannot be
// indexed falls back to one model per snapshot, with a warning in the log.
//
// Its answerers have a method View() *index.View (see repoAnswerer.View).
func Repoctx(src snapshot.Source, st *store.Store, opts index.Options, compose assemble.Options, lsaPerSnapshot bool) Method {
	opts.Symbols = !compose.NoDefinitions
	compose.TextSymbols = (*index.View).TextSymbols // a dataset's texts come back run after run
	m := &repoctxMethod{src: src, st: st, opts: opts, compose: compose, indexes: map[string]*repoIndex{}, snaps: map[string]snapshot.Snapshot{}}
	m.share = !lsaPerSnapshot && opts.Embedder == nil && opts.Dense == retrieve.DenseLSA
	m.names = src.Names()
	return m
}

type repoctxMethod struct {
	src     snapshot.Source
	st      *store.Store
	opts    index.Options
	compose assemble.Options
	share   bool
	cross   bool                         // search the repository's other snapshots too (Config.CrossSnapshot)
	names   []string                     // the source's snapshots, sorted
	snaps   map[string]snapshot.Snapshot // other snapshots opened for cross-snapshot search (mu)

	crossRepo bool             // search the other repositories too (Config.CrossRepo)
	aliasOnce sync.Once        // builds alias
	alias     *crossrepo.Alias // every repository's bleve index, at its first snapshot
	aliasErr  error
	bleves    []*crossrepo.Index
	defs      []assemble.DefSource // the symbol tables of bleves' snapshots, in their order

	mu      sync.Mutex
	indexes map[string]*repoIndex // by repository
	idle    []string              // repositories whose index no answerer uses, least recently used first
}

// repoIndex is one repository's index with the answerers using it.
type repoIndex struct {
	ix    *index.Index
	users int
}

// keepIndexes is the number of unused repository indexes kept in memory (a repository's
// snapshots usually come together; one that comes back later reads its files' records
// from the store again).
const keepIndexes = 4

// Open makes the view of snap over its repository's index.
func (m *repoctxMethod) Open(ctx context.Context, snap snapshot.Snapshot, repo string) (Answerer, error) {
	ri, err := m.acquire(repo)
	if err != nil {
		return nil, err
	}
	v, err := ri.ix.View(ctx, snap)
	if err != nil {
		m.release(repo, ri)
		return nil, err
	}
	compose := m.compose
	if m.crossRepo {
		m.aliasOnce.Do(func() { m.alias, m.aliasErr = m.buildAlias(ctx) })
		if m.aliasErr != nil {
			v.Close()
			m.release(repo, ri)
			return nil, m.aliasErr
		}
		compose.CrossRepo = &assemble.CrossRepo{Alias: m.alias, Own: repo, Definitions: m.defs}
	}
	return &repoAnswerer{view: v, compose: compose, done: func() { m.release(repo, ri) }}, nil
}

// buildAlias opens and brings up to date the bleve index of every repository of the
// source at its first snapshot in name order (so the output does not depend on the
// order of the datapoints), and returns their alias. A snapshot's chunks come from
// its view over the repository's index (the store's records when an earlier run made
// them); the view itself is closed, its chunks stay with the bleve index and its
// symbol table with m.defs (the definitions other repositories' files import).
func (m *repoctxMethod) buildAlias(ctx context.Context) (*crossrepo.Alias, error) {
	var repos []string
	seen := map[string]bool{}
	for _, n := range m.names {
		if r := index.RepoID(n); !seen[r] {
			seen[r] = true
			repos = append(repos, r)
		}
	}
	for _, repo := range repos {
		first := m.firstSnapshot(repo)
		if first == "" {
			continue
		}
		snap, err := m.src.Open(first)
		if err != nil {
			return nil, fmt.Errorf("batch: cross-repo: snapshot %s: %w", first, err)
		}
		ri, err := m.acquire(repo)
		if err != nil {

			return nil, err
		}
		v, err := ri.ix.View(ctx, snap)
		if err != nil {
			m.release(repo, ri)

			return nil, fmt.Errorf("batch: cross-repo: %w", err)
		}
		bix, err := crossrepo.Open(m.st, repo, repo, first)
		if err == nil {
			_, err = bix.Sync(v.Retriever().Chunks())
		}
		syms := v.Symbols()
		v.Close()
		m.release(repo, ri)

		if err != nil {
			return nil, fmt.Errorf("batch: cross-repo: %w", err)
		}
		m.bleves = append(m.bleves, bix)
		if syms != nil {
			// The bleve index holds the view's chunks: its file texts are those the
			// table's byte ranges are of.
			m.defs = append(m.defs, assemble.DefSource{Repository: repo, Symbols: syms, Text: bix.FileText,
				Names: append([]string{repo, path.Base(repo)}, symbols.ImportNames(snap)...)})
		}
	}
	return crossrepo.NewAlias(m.bleves...)
}

// acquire returns repo's index, opening it on first use.
func (m *repoctxMethod) acquire(repo string) (*repoIndex, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.idle = slices.DeleteFunc(m.idle, func(r string) bool { return r == repo })
	if ri := m.indexes[repo]; ri != nil {
		ri.users++
		return ri, nil
	}
	opts := m.opts
	if m.cross {
		opts.Extra = func(name string) []snapshot.Snapshot { return m.others(repo, name) }
	}
	if m.share {
		snaps := m.repoSnapshots(repo)
		first := ""
		if len(snaps) > 0 {
			first = snaps[0]
		}
		opts.SharedLSA = &index.SharedLSA{Snapshot: first, Open: m.src.Open, Prefetch: snaps}
	}
	ix, err := index.Open(m.st, repo, opts)
	if err != nil {
		return nil, err
	}
	ri := &repoIndex{ix: ix, users: 1}
	m.indexes[repo] = ri
	return ri, nil
}

// release ends one use of repo's index; unused indexes beyond keepIndexes are closed.
func (m *repoctxMethod) release(repo string, ri *repoIndex) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ri.users--
	if ri.users > 0 || m.indexes[repo] != ri {
		return
	}
	m.idle = append(m.idle, repo)
	for len(m.idle) > keepIndexes {
		old := m.idle[0]
		m.idle = m.idle[1:]
		if o := m.indexes[old]; o != nil {
			delete(m.indexes, old)
			o.ix.Close()
		}
	}
}

// others returns the source's other snapshots of repo (name order), opened once.
func (m *repoctxMethod) others(repo, self string) []snapshot.Snapshot {
	var out []snapshot.Snapshot
	for _, n := range m.repoSnapshots(repo) {
		if n == self {
			continue
		}
		m.mu.Lock()
		s := m.snaps[n]
		m.mu.Unlock()
		if s == nil {
			var err error
			if s, err = m.src.Open(n); err != nil {
				continue
			}
			m.mu.Lock()
			m.snaps[n] = s
			m.mu.Unlock()
		}
		out = append(out, s)
	}
	return out
}

// repoSnapshots returns the names in m.names that are snapshots of repo
// ("{owner}__{repo}-{revision}", the revision holding no "-").
func (m *repoctxMethod) repoSnapshots(repo string) []string {
	prefix := RepoPrefix(repo)
	i, _ := slices.BinarySearch(m.names, prefix)
	var out []string
	for ; i < len(m.names) && strings.HasPrefix(m.names[i], prefix); i++ {
		if !strings.Contains(m.names[i][len(prefix):], "-") {
			out = append(out, m.names[i])
		}
	}
	return out
}

// firstSnapshot returns the first (name order) snapshot of repo in the source, or "".
func (m *repoctxMethod) firstSnapshot(repo string) string {
	if s := m.repoSnapshots(repo); len(s) > 0 {
		return s[0]
	}
	return ""
}

// Close closes the repositories' indexes (and the model views no datapoint took over).
func (m *repoctxMethod) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var first error
	for repo, ri := range m.indexes {
		if err := ri.ix.Close(); err != nil && first == nil {
			first = err
		}
		delete(m.indexes, repo)
	}
	m.idle = nil
	for _, b := range m.bleves {
		b.Close()
	}
	m.bleves, m.defs = nil, nil
	return first
}

// repoAnswerer composes with assemble.Compose from one snapshot's view.
type repoAnswerer struct {
	view    *index.View
	compose assemble.Options
	done    func() // ends the use of the view's index
	once    sync.Once
}

func (a *repoAnswerer) Answer(ctx context.Context, d *Datapoint) (repoctx.Context, error) {
	return assemble.Compose(ctx, a.view, d.Hole(), a.compose)
}

// View returns the snapshot's view the answerer composes from: callers that compose
// one snapshot with several option sets (scripts/tune) find it with a type assertion
// to interface{ View() *index.View } on [Repoctx]'s answerers. It is closed with the
// answerer.
func (a *repoAnswerer) View() *index.View { return a.view }

func (a *repoAnswerer) Close() error {
	err := a.view.Close()
	a.once.Do(a.done)
	return err
}
func (a *repoAnswerer) stats() index.Stats { return a.view.Stats() }
func (a *repoAnswerer) shared() bool       { return a.view.Stats().SharedLSA }

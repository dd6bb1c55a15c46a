package batch

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/assemble"
	"github.com/repoctx/repoctx/retrieve"
	"github.com/repoctx/repoctx/workspace"
)

// Repoctx returns repoctx's own method: open each snapshot with workspace.Open (its
// index from the cache when an earlier run built it; unchanged files' chunks and
// symbols from the content-addressed store) and compose each datapoint's context with
// assemble.Compose. The symbol table is built unless compose turns the definitions
// source off.
//
// Snapshots of one repository share the built-in LSA model, unless lsaPerSnapshot or
// ws selects another dense retriever: it is fitted once, on the repository's first
// snapshot in name order among the snapshots src holds, whichever datapoints come
// first, so that the output depends neither on the cache, nor on resuming, nor on
// the order of the datapoints; the repository's other snapshots are embedded with
// it. (The competition's sources hold exactly the snapshots their datapoints name.)
// Its answerers have a method Repo() *workspace.Repo (see repoAnswerer.Repo).
// A repository whose model snapshot cannot be indexed falls back to one model per
// snapshot, with a warning in the log.
func Repoctx(src workspace.Source, ws workspace.Options, compose assemble.Options, lsaPerSnapshot bool) Method {
	ws.Symbols = !compose.NoDefinitions
	m := &repoctxMethod{src: src, ws: ws, compose: compose, models: map[string]*repoModel{}, snaps: map[string]workspace.Snapshot{}}
	m.share = !lsaPerSnapshot && ws.Embedder == nil && ws.Dense == retrieve.DenseLSA
	m.names = src.Names()
	return m
}

type repoctxMethod struct {
	src     workspace.Source
	ws      workspace.Options
	compose assemble.Options
	share   bool
	cross   bool                          // search the repository's other snapshots too (Config.CrossSnapshot)
	names   []string                      // the source's snapshots, sorted
	snaps   map[string]workspace.Snapshot // other snapshots opened for cross-snapshot search

	mu     sync.Mutex
	models map[string]*repoModel // by repository
}

// repoModel is the LSA model a repository's snapshots share.
type repoModel struct {
	once     sync.Once
	snapshot string        // the snapshot it is fitted on
	lsa      *retrieve.LSA // nil: none (each snapshot fits its own)
	err      error
	repo     *workspace.Repo // the model snapshot, opened by the fit, until Open takes it
}

// Open opens snap as a workspace.Repo, with its repository's shared LSA model.
func (m *repoctxMethod) Open(ctx context.Context, snap workspace.Snapshot, repo string) (Answerer, error) {
	opts := m.ws
	opts.Repo = repo
	if m.cross {
		opts.Extra = m.others(repo, snap.Name())
	}
	shared := false
	if m.share {
		if m.modelSnapshot(repo) == snap.Name() {
			if _, _, err := m.model(ctx, repo); err != nil {
				return nil, err
			}
			if r := m.takeModelRepo(repo); r != nil {
				return &repoAnswerer{repo: r, compose: m.compose}, nil
			}
		} else {
			// Chunk while the model is fitted (possibly by another worker), then wait.
			opts.EmbedderFunc = func(ctx context.Context) (retrieve.Embedder, error) {
				lsa, _, err := m.model(ctx, repo)
				if err != nil || lsa == nil {
					return nil, err
				}
				shared = true
				return lsa, nil
			}
		}
	}
	r, err := workspace.Open(ctx, snap, opts)
	if err != nil {
		return nil, err
	}
	return &repoAnswerer{repo: r, compose: m.compose, isShared: shared}, nil
}

// modelSnapshot returns the snapshot repo's shared model is fitted on ("" when the
// source holds none of repo's).
func (m *repoctxMethod) modelSnapshot(repo string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	rm := m.models[repo]
	if rm == nil {
		rm = &repoModel{snapshot: m.firstSnapshot(repo)}
		m.models[repo] = rm
	}
	return rm.snapshot
}

// model returns repo's shared LSA model and the snapshot it is fitted on, fitting it
// on first use (nil when the repository has no snapshot in the source, or its model
// snapshot failed).
func (m *repoctxMethod) model(ctx context.Context, repo string) (*retrieve.LSA, string, error) {
	m.mu.Lock()
	rm := m.models[repo]
	if rm == nil {
		rm = &repoModel{snapshot: m.firstSnapshot(repo)}
		m.models[repo] = rm
	}
	m.mu.Unlock()
	rm.once.Do(func() { rm.lsa, rm.repo, rm.err = m.fit(ctx, repo, rm.snapshot) })
	if rm.err != nil && (ctx.Err() != nil || repoctx.IsEnvironment(rm.err)) {
		// A cancelled fit, or one the machine failed, is not the model's fault: let a
		// later run try again.
		m.mu.Lock()
		delete(m.models, repo)
		m.mu.Unlock()
		if ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
		return nil, "", rm.err
	}
	return rm.lsa, rm.snapshot, nil
}

// others returns the source's other snapshots of repo (name order), opened once.
func (m *repoctxMethod) others(repo, self string) []workspace.Snapshot {
	var out []workspace.Snapshot
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

// firstSnapshot returns the first name in m.names that is a snapshot of repo
// ("{owner}__{repo}-{revision}", the revision holding no "-"), or "".
func (m *repoctxMethod) firstSnapshot(repo string) string {
	if s := m.repoSnapshots(repo); len(s) > 0 {
		return s[0]
	}
	return ""
}

// takeModelRepo hands over the model snapshot of repo opened by its fit, once (nil
// when there is none or it was taken).
func (m *repoctxMethod) takeModelRepo(repo string) *workspace.Repo {
	m.mu.Lock()
	defer m.mu.Unlock()
	rm := m.models[repo]
	if rm == nil {
		return nil
	}
	r := rm.repo
	rm.repo = nil
	return r
}

// Close closes the model snapshots no datapoint took over.
func (m *repoctxMethod) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, rm := range m.models {
		if rm.repo != nil {
			rm.repo.Close()
			rm.repo = nil
		}
	}
	return nil
}

// fit indexes the model snapshot with its own LSA model and returns that model,
// labelled with the index key so that the indexes built with it never mix with
// per-snapshot fits, and the opened snapshot (for its own datapoints).
func (m *repoctxMethod) fit(ctx context.Context, repo, name string) (*retrieve.LSA, *workspace.Repo, error) {
	lsa, r, err := m.fitRepo(ctx, repo, name)
	if err != nil || lsa == nil {
		if r != nil {
			r.Close()
		}
		return nil, nil, err
	}
	return lsa, r, nil
}

func (m *repoctxMethod) fitRepo(ctx context.Context, repo, name string) (*retrieve.LSA, *workspace.Repo, error) {
	if name == "" {
		return nil, nil, nil
	}
	warn := func(err error) {
		if m.ws.Log != nil {
			fmt.Fprintf(m.ws.Log, "warning: %s: %s; its repository's snapshots fit their own LSA models\n", name, strings.ReplaceAll(err.Error(), "\n", "; "))
		}
	}
	snap, err := m.src.Open(name)
	if err != nil {
		if repoctx.IsEnvironment(err) {
			return nil, nil, err
		}
		warn(err)
		return nil, nil, nil
	}
	opts := m.ws
	opts.Repo = repo
	if m.cross {
		opts.Extra = m.others(repo, name)
	}
	r, err := workspace.Open(ctx, snap, opts)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		if repoctx.IsEnvironment(err) {
			return nil, nil, fmt.Errorf("fit the repository's LSA model on snapshot %s: %w", name, err)
		}
		warn(err)
		return nil, nil, nil
	}
	lsa, err := r.Index().LSA()
	if err != nil {
		warn(err)
		return nil, r, nil
	}
	if lsa == nil {
		return nil, r, nil
	}
	return lsa, r, nil // labelled with the model snapshot's view key
}

// repoAnswerer composes with assemble.Compose from one opened repository.
type repoAnswerer struct {
	repo     *workspace.Repo
	compose  assemble.Options
	isShared bool
}

func (a *repoAnswerer) Answer(ctx context.Context, d *Datapoint) (repoctx.Context, error) {
	return assemble.Compose(ctx, a.repo, d.Hole(), a.compose)
}

// Repo returns the opened repository the answerer composes from: callers that
// compose one snapshot with several option sets (scripts/tune) find it with a type
// assertion to interface{ Repo() *workspace.Repo } on [Repoctx]'s answerers. It is
// closed with the answerer.
func (a *repoAnswerer) Repo() *workspace.Repo { return a.repo }

func (a *repoAnswerer) Close() error           { return a.repo.Close() }
func (a *repoAnswerer) stats() workspace.Stats { return a.repo.Stats() }
func (a *repoAnswerer) shared() bool           { return a.isShared }

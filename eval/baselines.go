package eval

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/repoctx/repoctx"

	"github.com/repoctx/repoctx/assemble"
	"github.com/repoctx/repoctx/batch"
	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/complete"
	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/index"
	"github.com/repoctx/repoctx/retrieve"
	"github.com/repoctx/repoctx/snapshot"
	"github.com/repoctx/repoctx/store"
)

// Names of the built-in configurations.
const (
	// ConfigCurrent is what `repoctx predict` writes with the given options: the
	// batch engine's default method, run in-process.
	ConfigCurrent = "current"
	// ConfigEmpty is the empty context.
	ConfigEmpty = "empty"
	// ConfigRecent is the starter kit's "recent" baseline, seeded per datapoint id.
	ConfigRecent = "recent"
	// ConfigBM25File is the starter kit's BM25 file baseline.
	ConfigBM25File = "bm25file"
	// ConfigWindows is RepoCoder's sliding-window Jaccard retrieval.
	ConfigWindows = "windows"
	// ConfigWindowsOld is RepoCoder's retrieval over every file of the
	// language, the old completion file included, less the old file's windows
	// that the prefix and suffix already show. [ConfigWindows] has always
	// searched those files with that rule too, so the two give the same
	// contexts: windows-old names the rule for the users of RepoCoder-style
	// retrieval (the reference script's repocoder_old) without changing what
	// earlier windows rows meant.
	ConfigWindowsOld = "windows-old"
	// ConfigSeed is the seed's submitted configuration; its name in reports is
	// [SeedOptions.Name] ("seed-bm25" while only BM25 is available).
	ConfigSeed = "seed"
)

// Baselines returns the names of the built-in baselines in report order:
// empty, recent, bm25file, windows, windows-old, seed, oracle.
func Baselines() []string {
	return []string{ConfigEmpty, ConfigRecent, ConfigBM25File, ConfigWindows, ConfigWindowsOld, ConfigSeed, ConfigOracle}
}

// Parameters of the built-in baselines.
const (
	// MinFileLines is the starter kit's minimum file length, in lines, for
	// the recent and bm25file baselines.
	MinFileLines = 10
	// RepoCoder's window retrieval (Zhang et al., "RepoCoder", EMNLP 2023,
	// §3.2): windows of WindowsLines lines every WindowsStride lines, the
	// last WindowsLines prefix lines as the query, the WindowsTopK best.
	WindowsLines  = 20
	WindowsStride = 10
	WindowsTopK   = 10
)

// Ranker ranks the chunks of an index against a query and returns at most k
// hits, best first, with 1-based ranks. filter, if not nil, decides which
// chunks may be returned. [BM25Ranker] is retrieve's BM25; a dense ranker
// can be plugged into [SeedOptions] with the same signature.
type Ranker func(ctx context.Context, ix *retrieve.Index, query string, k int, filter func(*chunker.Chunk) bool) ([]retrieve.FusedHit, error)

// BM25Ranker ranks with retrieve's BM25 (Okapi BM25 over text, header and path).
func BM25Ranker(ctx context.Context, ix *retrieve.Index, query string, k int, filter func(*chunker.Chunk) bool) ([]retrieve.FusedHit, error) {
	return ix.Search(ctx, retrieve.Query{Text: query, K: k, Mode: retrieve.BM25, Filter: filter})
}

// WeightedRanker is one ranker of a weighted reciprocal-rank fusion.
type WeightedRanker struct {
	Name   string  // short name used in the configuration's name, e.g. "bm25"
	Weight float64 // RRF weight: a hit at rank r adds Weight/(60+r)
	Rank   Ranker  // the ranking function
}

// SeedOptions configures the seed baseline. The zero value means the seed's
// submitted settings with the rankers of [DefaultSeedRankers].
type SeedOptions struct {
	// Rankers are fused by weighted RRF (k = 60). The seed used BM25 with
	// weight 0.2 and all-MiniLM-L6-v2 embeddings with weight 0.8; default
	// DefaultSeedRankers().
	Rankers []WeightedRanker
	// TopK windows are kept for the prefix query and for the suffix query.
	// Default 15.
	TopK int
	// WindowLines and OverlapLines are the window size and overlap in
	// lines. Defaults 8 and 2.
	WindowLines, OverlapLines int
}

// DefaultSeedRankers returns the rankers available for the seed baseline:
// BM25 with its RRF weight 0.2. The seed's dense ranker (weight 0.8) is not
// available yet.
func DefaultSeedRankers() []WeightedRanker {
	return []WeightedRanker{{Name: "bm25", Weight: 0.2, Rank: BM25Ranker}}
}

func (o SeedOptions) withDefaults() SeedOptions {
	if len(o.Rankers) == 0 {
		o.Rankers = DefaultSeedRankers()
	}
	if o.TopK <= 0 {
		o.TopK = 15
	}
	if o.WindowLines <= 0 {
		o.WindowLines = 8
	}
	if o.OverlapLines <= 0 || o.OverlapLines >= o.WindowLines {
		o.OverlapLines = 2
	}
	return o
}

// Name returns the seed configuration's report name: "seed-" and the ranker
// names joined by "+", e.g. "seed-bm25".
func (o SeedOptions) Name() string {
	o = o.withDefaults()
	names := make([]string, len(o.Rankers))
	for i, r := range o.Rankers {
		names[i] = r.Name
	}
	return "seed-" + strings.Join(names, "+")
}

// chunkOptions returns the fixed chunker options of the seed's windows. The
// size cap is lifted: the seed's windows were plain line windows.
func (o SeedOptions) chunkOptions() chunker.Options {
	o = o.withDefaults()
	return chunker.Options{MaxChars: 1 << 30, WindowLines: o.WindowLines, WindowOverlap: o.OverlapLines}
}

// srcFile is a source file of a snapshot as the starter kit reads it.
type srcFile struct {
	path  string
	text  string // valid UTF-8, universal newlines ("\r\n" and "\r" became "\n")
	lines int    // Python's len(f.readlines())
}

// snapData holds what the baselines need from one snapshot; it is safe for
// concurrent use (its lazily built parts are built once).
type snapData struct {
	snap  snapshot.Snapshot
	spec  *grammars.Spec
	files []srcFile // files of the language, sorted by path

	kit       []int // indexes into files of the starter kit's corpus: ext0 files with >= MinFileLines lines
	okapiOnce sync.Once
	okapi     *okapi
	winOnce   sync.Once
	windows   []window
}

type window struct {
	file       int // index into files
	start, end int // 0-based line range [start, end)
	text       string
	toks       map[string]struct{}
}

// newSnapData reads the snapshot's files of the language. Files that cannot
// be read or are not valid UTF-8 are left out (the starter kit skips files
// it cannot decode).
func newSnapData(snap snapshot.Snapshot, spec *grammars.Spec) *snapData {
	sd := &snapData{snap: snap, spec: spec}
	for _, p := range snap.Paths() {
		if s := grammars.ForPath(p); s == nil || s.Name != spec.Name {
			continue
		}
		raw, err := snap.ReadFile(p)
		if err != nil || !utf8.Valid(raw) {
			continue
		}
		text := strings.ReplaceAll(string(raw), "\r\n", "\n")
		text = strings.ReplaceAll(text, "\r", "\n")
		sd.files = append(sd.files, srcFile{path: p, text: text, lines: len(splitLines(text))})
	}
	sort.Slice(sd.files, func(i, j int) bool { return sd.files[i].path < sd.files[j].path })
	ext := spec.Extensions[0]
	for i, f := range sd.files {
		if strings.HasSuffix(f.path, ext) && f.lines >= MinFileLines {
			sd.kit = append(sd.kit, i)
		}
	}
	return sd
}

// filePart renders one part of a context.
func filePart(path, content string) string { return repoctx.FileSep + path + "\n" + content }

// recentContext is the starter kit's recent baseline: a random file among the
// datapoint's modified files that have the language's main extension and at
// least MinFileLines lines (in the datapoint's order), else a random file of
// the starter kit's corpus, else "". The choice is seeded by the datapoint id.
func (sd *snapData) recentContext(d *batch.Datapoint) string {
	byPath := map[string]int{}
	for _, i := range sd.kit {
		byPath[sd.files[i].path] = i
	}
	var cands []int
	for _, m := range d.Modified {
		if i, ok := byPath[m]; ok {
			cands = append(cands, i)
		}
	}
	if len(cands) == 0 {
		cands = sd.kit
	}
	if len(cands) == 0 {
		return ""
	}
	f := sd.files[cands[seededRand(d.ID).IntN(len(cands))]]
	return filePart(f.path, f.text)
}

// seededRand returns a random source seeded by the FNV-1a hash of id.
func seededRand(id string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(id))
	return rand.New(rand.NewPCG(h.Sum64(), 0x5eed))
}

// bm25FileContext is the starter kit's BM25 baseline: the file of its corpus
// with the highest Okapi BM25 score for prefix + " " + suffix, whole. The
// completion file's old copy is part of the corpus, as in the starter kit.
func (sd *snapData) bm25FileContext(d *batch.Datapoint) string {
	sd.okapiOnce.Do(func() {
		docs := make([][]string, len(sd.kit))
		for j, i := range sd.kit {
			docs[j] = starterKitTokens(sd.files[i].text)
		}
		sd.okapi = newOkapi(docs)
	})
	b := sd.okapi.best(starterKitTokens(d.Prefix + " " + d.Suffix))
	if b < 0 {
		return ""
	}
	f := sd.files[sd.kit[b]]
	return filePart(f.path, f.text)
}

// windowsContext is RepoCoder's retrieval: windows of WindowsLines lines every
// WindowsStride lines over the language's files, ranked by the Jaccard
// similarity of their token sets ([A-Za-z0-9_]+) with the last WindowsLines
// lines of the prefix; the WindowsTopK best with a positive similarity, best
// last. Windows of the completion file whose non-blank lines all appear in the
// prefix or suffix are left out: they show nothing new.
func (sd *snapData) windowsContext(d *batch.Datapoint) string {
	sd.winOnce.Do(func() {
		sd.windows = []window{}
		for fi, f := range sd.files {
			lines := strings.Split(strings.TrimSuffix(f.text, "\n"), "\n")
			for start := 0; start < len(lines); start += WindowsStride {
				end := min(start+WindowsLines, len(lines))
				text := strings.Join(lines[start:end], "\n") + "\n"
				if toks := complete.TokenSet(text); len(toks) > 0 {
					sd.windows = append(sd.windows, window{file: fi, start: start, end: end, text: text, toks: toks})
				}
				if end == len(lines) {
					break
				}
			}
		}
	})
	plines := strings.Split(strings.TrimSuffix(d.Prefix, "\n"), "\n")
	query := complete.TokenSet(plines[max(0, len(plines)-WindowsLines):]...)
	visible := assemble.LineSet(d.Prefix, d.Suffix)
	type scored struct {
		w *window
		s float64
	}
	var top []scored
	for i := range sd.windows {
		w := &sd.windows[i]
		s := jaccard(query, w.toks)
		if s <= 0 {
			continue
		}
		if sd.files[w.file].path == d.Path && assemble.AllLinesIn(w.text, visible) {
			continue
		}
		top = append(top, scored{w, s})
	}
	sort.SliceStable(top, func(i, j int) bool { return top[i].s > top[j].s }) // windows are in path, line order
	top = top[:min(len(top), WindowsTopK)]
	var sb strings.Builder
	for i := len(top) - 1; i >= 0; i-- {
		sb.WriteString(filePart(sd.files[top[i].w.file].path, top[i].w.text))
	}
	return sb.String()
}

// seedContext is the seed's submitted method (with the rankers given): the
// old completion file and the other modified files of a registered language,
// whole and first; then, best first, each of the TopK windows retrieved for
// the whole prefix followed by the window after it, then each of the TopK
// windows retrieved for the whole suffix preceded by the window before it.
// Windows of files already shown whole are not searched; a window appears
// once. Rankings are fused by weighted RRF. ix must index the snapshot's
// fixed windows of opts.WindowLines lines overlapping by opts.OverlapLines. langs
// are the languages of the modified files shown whole (empty: every registered one;
// a run over a dataset passes the languages its index holds).
func seedContext(ctx context.Context, ix *retrieve.Index, snap snapshot.Snapshot, d *batch.Datapoint, opts SeedOptions, langs []string) (string, error) {
	opts = opts.withDefaults()
	var sb strings.Builder
	whole := map[string]bool{}
	for _, p := range append([]string{d.Path}, d.Modified...) {
		if s := grammars.ForPath(p); whole[p] || s == nil || len(langs) > 0 && !slices.Contains(langs, s.Name) {
			continue
		}
		raw, err := snap.ReadFile(p)
		if err != nil {
			continue // not in the snapshot (a new file) or unreadable
		}
		f, err := chunker.Decode(p, raw, 0)
		if err != nil {
			continue
		}
		whole[p] = true
		sb.WriteString(filePart(p, string(f.Text)))
	}
	keep := func(c *chunker.Chunk) bool { return !whole[c.Path] }
	shown := map[string]bool{}
	emit := func(id string) {
		c, ok := ix.Chunk(id)
		if !ok || shown[id] || whole[c.Path] {
			return
		}
		shown[id] = true
		sb.WriteString(filePart(c.Path, c.Text))
	}
	for _, q := range []struct {
		text   string
		prefix bool
	}{{d.Prefix, true}, {d.Suffix, false}} {
		if strings.TrimSpace(q.text) == "" {
			continue
		}
		ids, err := fuse(ctx, ix, q.text, opts.TopK, keep, opts.Rankers)
		if err != nil {
			return "", err
		}
		for _, id := range ids {
			c, _ := ix.Chunk(id)
			if q.prefix {
				emit(id)
				emit(c.Next)
			} else {
				emit(c.Prev)
				emit(id)
			}
		}
	}
	return sb.String(), nil
}

// fuse runs every ranker for k hits and returns the k chunk IDs with the
// highest weighted RRF score, best first (ties by ID).
func fuse(ctx context.Context, ix *retrieve.Index, query string, k int, filter func(*chunker.Chunk) bool, rankers []WeightedRanker) ([]string, error) {
	score := map[string]float64{}
	for _, r := range rankers {
		hits, err := r.Rank(ctx, ix, query, k, filter)
		if err != nil {
			return nil, fmt.Errorf("%s ranker: %w", r.Name, err)
		}
		for _, h := range hits {
			score[h.ID] += r.Weight / float64(retrieve.RRFK+h.Rank)
		}
	}
	ids := make([]string, 0, len(score))
	for id := range score {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		if score[ids[i]] != score[ids[j]] {
			return score[ids[i]] > score[ids[j]]
		}
		return ids[i] < ids[j]
	})
	return ids[:min(len(ids), k)], nil
}

// baseline is a built-in baseline configuration as a batch method: it reads each
// snapshot's files of the language (and, for the seed, indexes its fixed windows).
type baseline struct {
	config string
	spec   *grammars.Spec
	seed   SeedOptions
	ws     index.Options // file size limit and log of the seed's index
	cache  string        // cache directory of the seed's store ("": store.DefaultCacheDir())
}

// Open implements batch.Method.
func (b *baseline) Open(ctx context.Context, snap snapshot.Snapshot, repo string) (batch.Answerer, error) {
	a := &baselineAnswerer{b: b, snap: snap}
	switch b.config {
	case ConfigSeed:
		ws := b.ws
		ws.Strategy, ws.Chunk, ws.Symbols = chunker.StrategyFixed, b.seed.chunkOptions(), false
		ws.Dense, ws.Embedder = retrieve.DenseNone, nil // seed-bm25 ranks with BM25 only
		if repo == "" {
			repo = index.RepoID(snap.Name())
		}
		cache := b.cache
		if cache == "" {
			cache = store.DefaultCacheDir()
		}
		st := store.Open(cache)
		ix, err := index.Open(st, repo, ws)
		if err != nil {
			st.Close()
			return nil, err
		}
		v, err := ix.View(ctx, snap)
		ix.Close()
		if err != nil {
			st.Close()
			return nil, err
		}
		a.repo, a.st = v, st
	case ConfigEmpty:
	default:
		a.sd = newSnapData(snap, b.spec)
	}
	return a, nil
}

type baselineAnswerer struct {
	b    *baseline
	snap snapshot.Snapshot
	sd   *snapData
	repo *index.View
	st   *store.Store // the seed index's store, closed with the answerer
}

func (a *baselineAnswerer) Answer(ctx context.Context, d *batch.Datapoint) (repoctx.Context, error) {
	var text string
	switch a.b.config {
	case ConfigRecent:
		text = a.sd.recentContext(d)
	case ConfigBM25File:
		text = a.sd.bm25FileContext(d)
	case ConfigWindows, ConfigWindowsOld:
		text = a.sd.windowsContext(d)
	case ConfigSeed:
		var err error
		if text, err = seedContext(ctx, a.repo.Retriever(), a.snap, d, a.b.seed, a.b.ws.Languages); err != nil {
			return repoctx.Context{}, err
		}
	}
	return repoctx.Context{Text: text}, nil
}

func (a *baselineAnswerer) Close() error {
	if a.repo != nil {
		a.repo.Close()
		return a.st.Close()
	}
	return nil
}

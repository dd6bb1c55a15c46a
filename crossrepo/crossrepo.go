// Package crossrepo searches several repositories as one: one bleve index (scorch,
// BM25 scoring) per repository revision in use, kept in the cache directory beside
// the store's records of that repository, fed incrementally from a view's chunks and
// searched together by an [Alias] (each index searched with the statistics of all).
//
// Scores are comparable across repositories: an [Alias] gathers the BM25 statistics
// (document count, average field lengths, each query term's document frequency per
// field) over every index it searches and scores each index's hits with them, so a
// chunk scores as it would in one index holding every repository's chunks, and two
// equal chunks in two repositories score equally (TestEqualChunksScoreEqually).
// bleve's own alias with global scoring does not suffice for that (see [Alias]).
//
// Documents are chunks, with the fields repository, path, language, family, header,
// text and kind; path, header and text are analysed by the code analyser
// ([AnalyzerName], the terms of [retrieve.Tokens]) and searched with the boosts of the
// in-house BM25 ([retrieve.BoostText], [retrieve.BoostHeader], [retrieve.BoostPath]);
// the others are keywords.
//
// The flow:
//
//	ix, err := crossrepo.Open(st, "/src/lib", "lib", "live") // one repository revision
//	_, err = ix.Sync(view.Retriever().Chunks())              // only changed chunks are written
//	a, err := crossrepo.NewAlias(app, lib)
//	hits, err := a.Search(ctx, queryText, 16, nil)
package crossrepo

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	bindex "github.com/blevesearch/bleve_index_api"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/retrieve"
	"github.com/repoctx/repoctx/store"
)

// DirName is the folder of a repository's store folder ([store.Records.Dir]) that
// holds its bleve indexes, one subfolder per revision; the store's Stat, GC and cap
// count it with the repository's records and evict it with them.
const DirName = store.IndexDirName

// formatVersion is kept in every index (internal key versionKey); an index of another
// version (another mapping or analyser) is rebuilt, never misread.
const formatVersion = "2"

var (
	versionKey  = []byte("repoctx_format")
	manifestKey = []byte("repoctx_manifest")
	revisionKey = []byte("repoctx_revision")
)

// Field names of a chunk document.
const (
	FieldRepository = "repository"
	FieldPath       = "path"
	FieldLanguage   = "language"
	FieldFamily     = "family"
	FieldHeader     = "header"
	FieldText       = "text"
	FieldKind       = "kind"
)

// Mapping returns the index mapping every index of the package uses: BM25 scoring,
// the code analyser on path, header and text, keywords for the other fields, nothing
// stored (texts come from the caller's chunks).
func Mapping() *mapping.IndexMappingImpl {
	im := bleve.NewIndexMapping()
	im.ScoringModel = bindex.BM25Scoring
	im.DefaultAnalyzer = AnalyzerName
	im.StoreDynamic, im.IndexDynamic, im.DocValuesDynamic = false, false, false
	dm := bleve.NewDocumentStaticMapping()
	field := func(analyzer string) *mapping.FieldMapping {
		f := bleve.NewTextFieldMapping()
		f.Analyzer = analyzer
		f.Store, f.IncludeTermVectors, f.IncludeInAll, f.DocValues = false, false, false, false
		return f
	}
	for _, name := range []string{FieldPath, FieldHeader, FieldText} {
		dm.AddFieldMappingsAt(name, field(AnalyzerName))
	}
	for _, name := range []string{FieldRepository, FieldLanguage, FieldFamily, FieldKind} {
		dm.AddFieldMappingsAt(name, field(keyword.Name))
	}
	im.DefaultMapping = dm
	return im
}

// Index is the bleve index of one repository revision. It is safe for concurrent use.
type Index struct {
	repo, revision, dir string
	bi                  bleve.Index
	closeOnce           sync.Once

	mu      sync.RWMutex
	chunks  map[string]*chunker.Chunk // by chunk ID, of the last Sync
	byFile  map[string]int            // chunks per path, of the last Sync
	hashes  map[string]entry          // chunk ID -> what the index holds of it
	fields  fieldTotals               // sums over hashes
	updated time.Time
	texts   map[string]string // file texts rebuilt since the last Sync
}

// Open opens (or creates) the bleve index of revision ("live" for a served folder, a
// snapshot's name for a dataset's) of the repository whose records in st are named
// records ([store.Store.Records]); name is what hits and other repositories' parts
// call it (a short name: a folder's base name, "owner/repo"). Holding st's records of
// the repository keeps the store's GC from evicting the index while it is open. An
// index that cannot be opened (damaged, of another format) is rebuilt empty.
func Open(st *store.Store, records, name, revision string) (*Index, error) {
	sum := sha256.Sum256([]byte(revision))
	dir := filepath.Join(st.Records(records).Dir(), DirName, hex.EncodeToString(sum[:8]))
	return OpenDir(dir, name, revision)
}

// OpenDir is [Open] on the index folder dir.
func OpenDir(dir, repo, revision string) (*Index, error) {
	ix := &Index{repo: repo, revision: revision, dir: dir, hashes: map[string]entry{}}
	bi, err := bleve.Open(dir)
	if err == nil {
		if v, _ := bi.GetInternal(versionKey); string(v) != formatVersion {
			bi.Close()
			err = errors.New("format")
		}
	}
	if err != nil {
		if rerr := os.RemoveAll(dir); rerr != nil {
			return nil, fmt.Errorf("crossrepo: remove the index %s: %w", dir, rerr)
		}
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			return nil, fmt.Errorf("crossrepo: %w", err)
		}
		if bi, err = bleve.NewUsing(dir, Mapping(), scorch.Name, scorch.Name, nil); err != nil {
			return nil, fmt.Errorf("crossrepo: create the index %s: %w", dir, err)
		}
		b := bi.NewBatch()
		b.SetInternal(versionKey, []byte(formatVersion))
		b.SetInternal(revisionKey, []byte(repo+"\n"+revision))
		if err := bi.Batch(b); err != nil {
			bi.Close()
			return nil, fmt.Errorf("crossrepo: create the index %s: %w", dir, err)
		}
	} else if m, err := bi.GetInternal(manifestKey); err == nil {
		ix.hashes = decodeManifest(m)
		ix.fields = totals(ix.hashes)
	}
	bi.SetName(repo)
	ix.bi = bi
	if fi, err := os.Stat(filepath.Join(dir, "index_meta.json")); err == nil {
		ix.updated = fi.ModTime()
	}
	return ix, nil
}

// Repository returns the repository name the index was opened with (its hits'
// [Hit.Repository]).
func (ix *Index) Repository() string { return ix.repo }

// Close closes the bleve index; later calls do nothing.
func (ix *Index) Close() error {
	var err error
	ix.closeOnce.Do(func() { err = ix.bi.Close() })
	return err
}

// SyncStats says what [Index.Sync] wrote.
type SyncStats struct {
	// Added counts the chunks indexed (new or changed); Deleted the chunks removed
	// (gone or changed); Kept the chunks already indexed as they are.
	Added, Deleted, Kept int
	// Took is the time the update took.
	Took time.Duration
}

// chunkHash is what a document is made of, hashed: a changed hash re-indexes it.
func chunkHash(c *chunker.Chunk) string {
	h := sha256.New()
	for _, s := range []string{c.Path, c.Lang, string(c.Kind), strings.Join(c.Header, "\n"), c.Text} {
		fmt.Fprintf(h, "%d:%s", len(s), s)
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// family names a language's family: its family's languages joined by "+".
func family(lang string) string {
	if lang == "" {
		return ""
	}
	return strings.Join(grammars.Family(lang), "+")
}

// document returns the bleve document of chunk c of repository repo.
func document(repo string, c *chunker.Chunk) map[string]any {
	return map[string]any{
		FieldRepository: repo, FieldPath: c.Path, FieldLanguage: c.Lang, FieldFamily: family(c.Lang),
		FieldHeader: strings.Join(c.Header, "\n"), FieldText: c.Text, FieldKind: string(c.Kind),
	}
}

// Sync makes the index hold exactly chunks (a snapshot's chunks, IDs unique): chunks
// not indexed or changed since are indexed, indexed chunks gone or changed are
// deleted, the rest is left alone. The update and the record of what the index holds
// are one bleve batch, so an interrupted Sync leaves the index as it was before it
// or as after it. chunks is kept (not copied) for [Alias.Search]'s hits and must not
// be modified.
func (ix *Index) Sync(chunks []chunker.Chunk) (SyncStats, error) {
	start := time.Now()
	var st SyncStats
	next := make(map[string]entry, len(chunks))
	byID := make(map[string]*chunker.Chunk, len(chunks))
	byFile := map[string]int{}
	ix.mu.RLock()
	old := ix.hashes
	ix.mu.RUnlock()
	b := ix.bi.NewBatch()
	for i := range chunks {
		c := &chunks[i]
		h := chunkHash(c)
		byID[c.ID] = c
		byFile[c.Path]++
		if e, ok := old[c.ID]; ok && e.hash == h {
			next[c.ID] = e
			st.Kept++
			continue
		}
		if _, ok := old[c.ID]; ok {
			st.Deleted++ // replaced: Index overwrites the document of the same ID
		}
		doc := document(ix.repo, c)
		e := entry{hash: h}
		for f, fd := range searchFields {
			e.lens[f] = len(retrieve.Tokens(doc[fd.name].(string)))
		}
		next[c.ID] = e
		if err := b.Index(c.ID, doc); err != nil {
			return st, fmt.Errorf("crossrepo: index chunk %s of %s: %w", c.ID, ix.repo, err)
		}
		st.Added++
	}
	for id := range old {
		if _, ok := next[id]; !ok {
			b.Delete(id)
			st.Deleted++
		}
	}
	if st.Added > 0 || st.Deleted > 0 {
		b.SetInternal(manifestKey, encodeManifest(next))
		if err := ix.bi.Batch(b); err != nil {
			return st, fmt.Errorf("crossrepo: update the index of %s: %w", ix.repo, err)
		}
	}
	tot := totals(next)
	ix.mu.Lock()
	ix.hashes, ix.fields, ix.chunks, ix.byFile, ix.texts = next, tot, byID, byFile, map[string]string{}
	if st.Added > 0 || st.Deleted > 0 || ix.updated.IsZero() {
		ix.updated = time.Now()
	}
	ix.mu.Unlock()
	st.Took = time.Since(start)
	return st, nil
}

// entry is what the index holds of a chunk: its content hash and its searched
// fields' lengths in terms (searchFields' order).
type entry struct {
	hash string
	lens [3]int
}

// fieldTotals are the BM25 statistics of an index's searched fields (searchFields'
// order): the number of chunks whose field has terms, and their terms in all.
type fieldTotals struct {
	docs, terms [3]int64
}

// totals sums the field statistics of m.
func totals(m map[string]entry) fieldTotals {
	var t fieldTotals
	for _, e := range m {
		for f, n := range e.lens {
			if n > 0 {
				t.docs[f]++
				t.terms[f] += int64(n)
			}
		}
	}
	return t
}

// encodeManifest writes what the index holds: one "id\thash\tlen1\tlen2\tlen3\n"
// line per chunk, sorted.
func encodeManifest(m map[string]entry) []byte {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var buf bytes.Buffer
	for _, id := range ids {
		e := m[id]
		fmt.Fprintf(&buf, "%s\t%s\t%d\t%d\t%d\n", id, e.hash, e.lens[0], e.lens[1], e.lens[2])
	}
	return buf.Bytes()
}

// decodeManifest reads encodeManifest's lines; a malformed line is skipped (its
// chunk is indexed again by the next Sync).
func decodeManifest(b []byte) map[string]entry {
	m := map[string]entry{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 5 {
			continue
		}
		e := entry{hash: f[1]}
		ok := true
		for i := range e.lens {
			n, err := strconv.Atoi(f[2+i])
			ok = ok && err == nil && n >= 0
			e.lens[i] = n
		}
		if ok {
			m[f[0]] = e
		}
	}
	return m
}

// Chunk returns the chunk of the last Sync with ID id.
func (ix *Index) Chunk(id string) (*chunker.Chunk, bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	c, ok := ix.chunks[id]
	return c, ok
}

// FileText returns the normalised text of the file at path as the last Sync's chunks
// hold it (chunks tile their file), or "".
func (ix *Index) FileText(path string) string {
	ix.mu.RLock()
	t, ok := ix.texts[path]
	n := ix.byFile[path]
	chunks := ix.chunks
	ix.mu.RUnlock()
	if ok {
		return t
	}
	var sb strings.Builder
	end := 0
	for i := 0; i < n; i++ {
		c := chunks[chunker.ChunkID(path, i)]
		if c == nil {
			break
		}
		if c.EndByte > end {
			sb.WriteString(c.Text[max(0, min(len(c.Text), end-c.StartByte)):])
			end = c.EndByte
		}
	}
	t = sb.String()
	ix.mu.Lock()
	if ix.texts != nil {
		ix.texts[path] = t
	}
	ix.mu.Unlock()
	return t
}

// Status describes an index for `/v1/status`.
type Status struct {
	// Repository and Revision name the index.
	Repository string `json:"repository"`
	Revision   string `json:"revision"`
	// Documents is the number of chunks it holds.
	Documents uint64 `json:"documents"`
	// Bytes is its size on disk.
	Bytes int64 `json:"bytes"`
	// Updated is when a Sync last changed it (or when it was last written, for an
	// index not synced by this process).
	Updated time.Time `json:"updated"`
}

// Status returns the index's document count, size on disk and last update.
func (ix *Index) Status() Status {
	n, _ := ix.bi.DocCount()
	ix.mu.RLock()
	up := ix.updated
	ix.mu.RUnlock()
	return Status{Repository: ix.repo, Revision: ix.revision, Documents: n, Bytes: store.DirBytes(ix.dir), Updated: up}
}

// Hit is one chunk an [Alias.Search] found.
type Hit struct {
	// Repository is the name of the chunk's index ([Index.Repository]).
	Repository string
	// ID is the chunk's ID in its repository.
	ID string
	// Score is its BM25 score over the statistics of every index of the alias.
	Score float64
	// Rank is its 1-based rank among the hits of every repository.
	Rank int
	// Chunk is the chunk as its index's last Sync gave it, nil for an index opened
	// but not synced by this process.
	Chunk *chunker.Chunk
	// Index is the hit's index.
	Index *Index
}

// Alias searches several indexes as one, with BM25 statistics over all of them.
//
// bleve's own index alias with global scoring (search.GlobalScoring, v2.5+) sums the
// document counts and field cardinalities of its indexes but takes each term's
// document frequency from the index being searched (bleve v2.6.3,
// search/searcher/search_term.go), so an equal chunk scores differently in a small
// and a large repository. Alias therefore gathers the statistics itself — document
// count and field cardinality (passed to each index as bleve's BM25 pre-search data)
// and every query term's document frequency per field — and searches each index with
// a query whose term boosts turn the index's idf into the global one (see
// [Alias.Search]): a chunk scores as it would in one index holding every
// repository's chunks. (bleve also takes a field's average length as its distinct
// terms per document; Alias passes the true average.)
type Alias struct {
	byName  map[string]*Index
	indexes []*Index
}

// NewAlias returns the alias of indexes, whose repository names must differ.
func NewAlias(indexes ...*Index) (*Alias, error) {
	a := &Alias{byName: map[string]*Index{}}
	for _, ix := range indexes {
		if _, dup := a.byName[ix.repo]; dup {
			return nil, fmt.Errorf("crossrepo: two indexes of repository %q in one alias", ix.repo)
		}
		a.byName[ix.repo] = ix
		a.indexes = append(a.indexes, ix)
	}
	return a, nil
}

// Indexes returns the alias's indexes in the order given to NewAlias.
func (a *Alias) Indexes() []*Index { return a.indexes }

// Index returns the alias's index of repository repo, or nil.
func (a *Alias) Index(repo string) *Index { return a.byName[repo] }

// searchFields are the searched fields and their boosts (those of the in-house BM25).
var searchFields = []struct {
	name  string
	boost float64
}{{FieldText, retrieve.BoostText}, {FieldHeader, retrieve.BoostHeader}, {FieldPath, retrieve.BoostPath}}

// QueryTerms returns the distinct terms of text the code analyser gives, first
// first, at most [retrieve.MaxQueryTerms].
func QueryTerms(text string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range retrieve.Tokens(text) {
		if !seen[t] && len(out) < retrieve.MaxQueryTerms {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// maxDFShare is the share of a field's chunks (over every index of the alias) above
// which a query term is left out of that field's clauses. Such a term's BM25 idf is
// below ln(4) ≈ 1.4, against 5-9 for the rare identifiers that decide a ranking, yet its
// postings make bleve's disjunction visit and score most chunks (bleve has no top-k
// pruning). Leaving them out halved to quartered the query time over three
// repositories (34k chunks), kept the top hit of 180 of 184 queries and, against the
// in-house BM25 (which keeps every term), raised the agreement of TestAgreesWithInHouseBM25
// from 192 to 193 of 200 (docs/cross-repo.md).
const maxDFShare = 0.25

// tooCommon reports whether a term held by df of a field's n chunks is too common to
// be worth its clause (over maxDFShare of them).
func tooCommon(df uint64, n int64) bool { return float64(df) > maxDFShare*float64(n) }

// minCommonChunks is the number of chunks over every index below which no term
// counts as common: a small index answers fast with every term, and in a few chunks
// a share says little (an identifier in 2 of 6 chunks is no stop word).
const minCommonChunks = 1000

// idf is BM25's idf as bleve computes it: ln(1 + (n - df + 0.5) / (df + 0.5)).
func idf(n, df float64) float64 { return math.Log(1 + (n-df+0.5)/(df+0.5)) }

// indexStats are one index's statistics for a query.
type indexStats struct {
	reader bindex.IndexReader
	docs   uint64
	card   map[string]int
	df     [][]uint64 // [term][field]
}

// stats reads ix's statistics for terms; the caller closes s.reader.
func stats(ctx context.Context, ix *Index, terms []string) (s *indexStats, err error) {
	adv, err := ix.bi.Advanced()
	if err != nil {
		return nil, err
	}
	r, err := adv.Reader()
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	s = &indexStats{reader: r, card: map[string]int{}, df: make([][]uint64, len(terms))}
	if s.docs, err = r.DocCount(); err != nil {
		return nil, err
	}
	if br, ok := r.(bindex.BM25Reader); ok {
		for _, f := range searchFields {
			if s.card[f.name], err = br.FieldCardinality(f.name); err != nil {
				return nil, err
			}
		}
	}
	for i, t := range terms {
		s.df[i] = make([]uint64, len(searchFields))
		for j, f := range searchFields {
			tfr, err := r.TermFieldReader(ctx, []byte(t), f.name, false, false, false)
			if err != nil {
				return nil, err
			}
			s.df[i][j] = tfr.Count()
			tfr.Close()
		}
	}
	return s, nil
}

// tieMargin is how many hits past k Search asks each index for, so that hits tied
// at the k-th score are all seen before ties are ordered.
const tieMargin = 16

// roundScore rounds a bleve score to float32 precision (about 7 significant
// digits): bleve's summation order changes a score's last bits from run to run
// (about 1e-15 relative), which rounding removes but for scores within 1e-15 of a
// rounding boundary.
func roundScore(s float64) float64 { return float64(float32(s)) }

// chunkIDLess orders chunk IDs ("path#N") by path, then by N as a number: the order
// of chunks in a repository, which the in-house BM25 breaks ties by.
func chunkIDLess(a, b string) bool {
	pa, na, oka := chunker.SplitChunkID(a)
	pb, nb, okb := chunker.SplitChunkID(b)
	if !oka || !okb || pa != pb {
		return a < b
	}
	return na < nb
}

// Search returns the k best chunks for text over every index of the alias, best
// first (scores rounded by roundScore; ties by repository, then chunk order), with bleve's BM25 scores over the statistics
// of all of them. keep, if not nil, says which hits count (they are filtered after
// scoring, so statistics do not depend on it); a hit whose chunk is unknown is kept.
//
// The query is an OR over the text's distinct terms ([QueryTerms]) in the fields
// text, header and path with the in-house BM25's boosts, less the (term, field)
// pairs held by more than maxDFShare of the field's chunks over every index (unless
// no pair is rarer). bleve scores a term clause
// of boost w in an index as idf_b² · w · qn · g(tf, dl), where idf_b uses the index's
// document frequency, qn = 1/sqrt(Σ (w·idf_b)²) is the query norm and g bleve's BM25
// saturation (k1 = 1.2, b = 0.75, on the square root of tf). Each index is searched
// with w = boost · idf / idf_b², idf being the in-house BM25's idf over every index
// (ln(1 + (N_f − n_f + 0.5)/(n_f + 0.5)), N_f the chunks whose field has terms, n_f
// those holding the term), with the fields' average lengths over every index passed
// as bleve's BM25 pre-search statistics, and its scores are divided by qn and scaled
// to the clause count of the whole query (bleve's coord factor counts the clauses an
// index was asked): the score is coord · Σ boost · idf · g, the same in every index
// for the same chunk. It differs from the in-house BM25 (which [retrieve.Index]
// computes per snapshot) by the square root of tf and the coord factor: on a real
// repository they agree on the top hit of 192 of 200 queries
// (TestAgreesWithInHouseBM25).
func (a *Alias) Search(ctx context.Context, text string, k int, keep func(h *Hit) bool) ([]Hit, error) {
	terms := QueryTerms(text)
	if len(terms) == 0 || k <= 0 || len(a.indexes) == 0 {
		return nil, nil
	}
	all := make([]*indexStats, len(a.indexes))
	defer func() {
		for _, s := range all {
			if s != nil {
				s.reader.Close()
			}
		}
	}()
	var n uint64
	var ft fieldTotals // per field: chunks with terms, terms
	for i, ix := range a.indexes {
		s, err := stats(ctx, ix, terms)
		if err != nil {
			return nil, fmt.Errorf("crossrepo: statistics of %s: %w", ix.repo, err)
		}
		all[i] = s
		n += s.docs
		ix.mu.RLock()
		for f := range searchFields {
			ft.docs[f] += ix.fields.docs[f]
			ft.terms[f] += ix.fields.terms[f]
		}
		ix.mu.RUnlock()
	}
	// bleve takes a field's average length as its cardinality over the document count:
	// give it the average over the chunks whose field has terms.
	card := map[string]int{}
	for f, fd := range searchFields {
		if ft.docs[f] > 0 {
			card[fd.name] = int(math.Round(float64(ft.terms[f]) / float64(ft.docs[f]) * float64(n)))
		}
	}
	// Global document frequencies; clauses of terms found nowhere are left out, and
	// so are those of common terms (see maxDFShare) unless every clause is common (a
	// query of common words) or the indexes are small (minCommonChunks).
	gdf := make([][]uint64, len(terms))
	found, rare := 0, 0
	for t := range terms {
		gdf[t] = make([]uint64, len(searchFields))
		for f := range searchFields {
			for _, s := range all {
				gdf[t][f] += s.df[t][f]
			}
			if gdf[t][f] > 0 {
				found++
				if !tooCommon(gdf[t][f], ft.docs[f]) {
					rare++
				}
			}
		}
	}
	if found == 0 {
		return nil, nil
	}
	prune := rare > 0 && n >= minCommonChunks
	skip := func(t, f int) bool { return gdf[t][f] == 0 || prune && tooCommon(gdf[t][f], ft.docs[f]) }
	total := found
	if prune {
		total = rare
	}
	// bleve sums a disjunction's clause scores in an order that varies from run to
	// run, so equal scores differ in their last bits and bleve's own order of ties
	// (and its cut at size) is not stable: ask for a margin past k, round the scores
	// (roundScore) and order ties here.
	size := k + tieMargin
	if keep != nil {
		size = 4*k + 16 + tieMargin // filtered hits do not count toward k
	}
	type result struct {
		hits []Hit
		err  error
	}
	results := make([]result, len(a.indexes))
	var wg sync.WaitGroup
	for i, ix := range a.indexes {
		s := all[i]
		var clauses []query.Query
		sumSq := 0.0
		for t, term := range terms {
			for f, fd := range searchFields {
				if s.df[t][f] == 0 || skip(t, f) {
					continue
				}
				gidf := idf(float64(ft.docs[f]), float64(gdf[t][f]))
				lidf := idf(float64(n), float64(s.df[t][f]))
				w := fd.boost * gidf / (lidf * lidf)
				q := bleve.NewTermQuery(term)
				q.SetField(fd.name)
				q.SetBoost(w)
				clauses = append(clauses, q)
				sumSq += (w * lidf) * (w * lidf)
			}
		}
		if len(clauses) == 0 {
			continue
		}
		scale := math.Sqrt(sumSq) * float64(len(clauses)) / float64(total)
		req := bleve.NewSearchRequestOptions(bleve.NewDisjunctionQuery(clauses...), size, 0, false)
		req.SortBy([]string{"-_score", "_id"})
		req.PreSearchData = map[string]any{search.BM25PreSearchDataKey: &search.BM25Stats{DocCount: float64(n), FieldCardinality: card}}
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := ix.bi.SearchInContext(ctx, req)
			if err != nil {
				results[i].err = err
				return
			}
			for _, m := range res.Hits {
				h := Hit{Repository: ix.repo, ID: m.ID, Score: roundScore(m.Score * scale), Index: ix}
				h.Chunk, _ = ix.Chunk(m.ID)
				if keep == nil || keep(&h) {
					results[i].hits = append(results[i].hits, h)
				}
			}
		}()
	}
	wg.Wait()
	var out []Hit
	for i, r := range results {
		if r.err != nil {
			return nil, fmt.Errorf("crossrepo: search %s: %w", a.indexes[i].repo, r.err)
		}
		out = append(out, r.hits...)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		if out[i].Repository != out[j].Repository {
			return out[i].Repository < out[j].Repository
		}
		return chunkIDLess(out[i].ID, out[j].ID)
	})
	if len(out) > k {
		out = out[:k]
	}
	for i := range out {
		out[i].Rank = i + 1
	}
	return out, nil
}

// Package pipeline holds repoctx's Apache Beam pipelines (Go SDK): repository
// preprocessing (Preprocess: walk, chunk, Parquet shards with a content-hash
// duplicate column) and batch prediction (Predict: the same lines as `repoctx
// predict`). Both run repoctx's own library code inside Beam DoFns: the walker and
// chunker of package preprocess, the batch engine of package batch. They run on any
// Beam runner; the command repoctx-beam runs them on Prism, Beam's local runner, by
// default. docs/beam.md describes them.
//
// The package lives in its own module (github.com/repoctx/repoctx/beam) so that the
// library and the CLI do not depend on Beam.
package pipeline

import (
	"bytes"
	"cmp"
	"context"
	"encoding/gob"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/parquet-go/parquet-go"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/preprocess"
	"github.com/repoctx/repoctx/snapshot"
)

// Namespace is the namespace of the pipelines' Beam metrics.
const Namespace = "repoctx"

// DefaultShardRows is the default bound of a Parquet shard, in rows (chunks): five
// of preprocess's row groups.
const DefaultShardRows = 5 * preprocess.ParquetRowsPerGroup

// Row is one chunk as the preprocessing pipeline writes it: preprocess.Row (the
// chunk schema of `repoctx chunk --format parquet`, docs/chunks.md), flattened into
// the same Parquet columns, followed by two columns.
type Row struct {
	preprocess.Row
	// Repository names the repository the chunk's file is in: the input as given,
	// cleaned, as a slash path (RepoSpec.Name).
	Repository string `json:"repository" parquet:"repository,dict"`
	// DuplicateOf is, for a file whose raw bytes are identical (same SHA-256) to a
	// file found before it, that first file as "repository/path"; "" for the first
	// holder and for unique files. "Before" is the order of the input repositories,
	// then each repository's walk order (the order `repoctx chunk` writes).
	DuplicateOf string `json:"duplicate_of" parquet:"duplicate_of"`
}

// RepoSpec is one input repository of the preprocessing pipeline.
type RepoSpec struct {
	// Index is the repository's 0-based position among the inputs; it orders the
	// output and decides which holder of a duplicated file is the first.
	Index int
	// Name is the Repository column's value; Path is the folder walked, or a zip,
	// tar, tar.gz (.tgz) or git bundle file (.bundle) whose files are unpacked into a
	// temporary folder on the worker and walked there (see ArchiveName). A folder is a
	// path on the worker's file system; an archive or bundle is such a path or the
	// URL of a file of a Beam file system (gs://, s3://, memfs://, ...), which the
	// worker reads.
	Name, Path string
}

// ChunkOptions are the walking and chunking options of the preprocessing pipeline,
// those of `repoctx chunk` (see preprocess.Options). They travel to the workers as
// JSON (a DoFn's fields), hence plain values.
type ChunkOptions struct {
	// Strategy is "structural" or "fixed"; MaxChars, WindowLines and WindowOverlap
	// are chunker.Options (0: the strategy's default; MaxChars must be set).
	Strategy                             string
	MaxChars, WindowLines, WindowOverlap int
	// Langs restricts the walk to these grammar names (none: all registered);
	// AllFiles also chunks files of no registered language.
	Langs    []string
	AllFiles bool
	// NoIgnore, KeepVendored, KeepGenerated and Exclude are the walker's switches
	// (snapshot.WalkOptions).
	NoIgnore, KeepVendored, KeepGenerated bool
	Exclude                               []string
	// MaxFileBytes skips larger files (bytes; 0: chunker.DefaultMaxFileBytes).
	MaxFileBytes int64
	// Workers is the number of files chunked in parallel inside one repository
	// (goroutines of one DoFn call; 0: 1).
	Workers int
}

// DefaultChunkOptions returns the options of `repoctx chunk` without flags.
func DefaultChunkOptions() ChunkOptions {
	return ChunkOptions{Strategy: string(chunker.StrategyStructural),
		MaxChars: chunker.DefaultOptions(chunker.StrategyStructural).MaxChars, MaxFileBytes: chunker.DefaultMaxFileBytes, Workers: 1}
}

// preprocessOptions makes the preprocess.Options of o.
func (o ChunkOptions) preprocessOptions() (preprocess.Options, error) {
	s, err := chunker.ParseStrategy(o.Strategy)
	if err != nil {
		return preprocess.Options{}, err
	}
	maxFile := cmp.Or(o.MaxFileBytes, chunker.DefaultMaxFileBytes)
	return preprocess.Options{Strategy: s,
		Chunker: chunker.Options{MaxChars: o.MaxChars, WindowLines: o.WindowLines, WindowOverlap: o.WindowOverlap},
		Walk: snapshot.WalkOptions{Languages: o.Langs, OtherFiles: o.AllFiles, NoIgnoreFiles: o.NoIgnore,
			KeepVendored: o.KeepVendored, KeepGenerated: o.KeepGenerated, Exclude: o.Exclude, MaxFileBytes: maxFile},
		MaxFileBytes: maxFile, Workers: max(o.Workers, 1)}, nil
}

// PreprocessConfig configures Preprocess.
type PreprocessConfig struct {
	// Repos are the input repositories, Index 0..n-1 in order.
	Repos []RepoSpec
	// Chunk are the walking and chunking options.
	Chunk ChunkOptions
	// OutDir is the folder the shards are written to, as
	// chunks-NNNNN-of-MMMMM.parquet (a local path, or a URL of a file system Beam's
	// Go SDK has registered, such as gs://).
	OutDir string
	// ShardRows bounds a shard in rows (0: DefaultShardRows). Shards are cut at
	// fixed row offsets of the full output (every row counted), so a shard holds
	// exactly ShardRows rows but the last, or fewer with DropDuplicates.
	ShardRows int64
	// DropDuplicates leaves out the rows whose DuplicateOf is set.
	DropDuplicates bool
}

// fileRec is one chunked file on its way to the shards.
type fileRec struct {
	Repo   int    // RepoSpec.Index
	Seq    int    // position in the repository's walk order (files with chunks)
	Name   string // RepoSpec.Name
	Path   string // slash path in the repository
	SHA    string // hex SHA-256 of the raw bytes
	Offset int64  // the file's first row, counted from the repository's first
	NRows  int
	Rows   []byte // gob of []preprocess.Row
}

// repoTotal is the number of rows of one repository.
type repoTotal struct {
	Repo int
	Rows int64
}

// holder is one file holding a content hash.
type holder struct {
	Repo, Seq int
	Name      string
	Path      string
	Offset    int64 // within the repository
	NRows     int
}

// dupNote marks the file whose rows start at global row Start as a duplicate of
// DupOf ("repository/path").
type dupNote struct {
	Start int64
	DupOf string
}

// piece is a run of one file's rows that falls in one shard.
type piece struct {
	Start     int64 // global offset of the first row of Rows
	FileStart int64 // global offset of the file's first row
	Name      string
	Rows      []byte // gob of []preprocess.Row
}

func init() {
	register.DoFn4x1[context.Context, RepoSpec, func(fileRec), func(stat), error](&chunkRepoFn{})
	register.Emitter1[fileRec]()
	register.Function1x2[fileRec, int, int64](fileRows)
	register.Function2x2[int, int64, int, repoTotal](keyTotal)
	register.DoFn2x1[int, func(*repoTotal) bool, []int64](&startsFn{})
	register.Iter1[repoTotal]()
	register.DoFn3x1[fileRec, []int64, func(int, piece), error](&pieceFn{})
	register.Emitter2[int, piece]()
	register.Function1x2[fileRec, string, holder](holderOf)
	register.DoFn6x0[context.Context, string, func(*holder) bool, []int64, func(int, dupNote), func(stat)](&dupFn{})
	register.Iter1[holder]()
	register.Emitter2[int, dupNote]()
	register.DoFn6x1[context.Context, int, func(*piece) bool, func(*dupNote) bool, []int64, func(stat), error](&writeShardFn{})
	register.Iter1[piece]()
	register.Iter1[dupNote]()
}

// Preprocess adds the preprocessing pipeline to s: every repository is walked and
// chunked by preprocess.Run (one DoFn call per repository, Chunk.Workers
// goroutines), files are grouped by content hash to find duplicates, and the rows go
// to Parquet shards of at most ShardRows rows, in input order: repositories in
// order, each repository's rows as `repoctx chunk --format parquet` of that folder
// writes them. The output depends on the inputs and the options only.
//
// Where the data moves: the chunk records (the text) cross one shuffle, the
// CoGroupByKey by shard; the duplicate search moves only (hash, repository, path)
// per file, and each repository's row count goes to one worker to fix the shards'
// row offsets (a side input of one number per repository).
//
// Metrics (namespace Namespace): repositories, files, chunks, bytes, fallback,
// parse_error_files and per language files/L, chunks/L, bytes/L; walker skips as
// skipped/REASON; duplicate_files, duplicate_chunks; shards,
// rows_written and rows_dropped. PrintPreprocessSummary prints them. The DoFns emit
// their counts as data and one DoFn call adds the sums to the counters (see stat),
// so the counts are exact, once per input like the output, on any runner.
func Preprocess(s beam.Scope, cfg PreprocessConfig) error {
	if _, err := cfg.Chunk.preprocessOptions(); err != nil {
		return err
	}
	if len(cfg.Repos) == 0 {
		return fmt.Errorf("no repositories to preprocess")
	}
	for i, r := range cfg.Repos {
		if r.Index != i {
			return fmt.Errorf("repository %s has index %d, want %d", r.Name, r.Index, i)
		}
	}
	if cfg.OutDir == "" {
		return fmt.Errorf("no output folder")
	}
	shardRows := cmp.Or(cfg.ShardRows, DefaultShardRows)
	if shardRows < 1 {
		return fmt.Errorf("shard rows must be at least 1, not %d", shardRows)
	}
	s = s.Scope("repoctx.Preprocess")
	repos := beam.Reshuffle(s, beam.CreateList(s, cfg.Repos)) // one repository per element, spread over workers
	files, repoStats := beam.ParDo2(s, &chunkRepoFn{Opts: cfg.Chunk}, repos)

	rows := beam.CombinePerKey(s, addInt64, beam.ParDo(s, fileRows, files))
	starts := beam.ParDo(s, &startsFn{N: len(cfg.Repos)}, beam.GroupByKey(s, beam.ParDo(s, keyTotal, rows)))

	pieces := beam.ParDo(s, &pieceFn{ShardRows: shardRows}, files, beam.SideInput{Input: starts})
	notes, dupStats := beam.ParDo2(s, &dupFn{ShardRows: shardRows}, beam.GroupByKey(s, beam.ParDo(s, holderOf, files)),
		beam.SideInput{Input: starts})
	shardStats := beam.ParDo(s, &writeShardFn{OutDir: cfg.OutDir, ShardRows: shardRows, Drop: cfg.DropDuplicates},
		beam.CoGroupByKey(s, pieces, notes), beam.SideInput{Input: starts})
	countStats(s, repoStats, dupStats, shardStats)
	return nil
}

// chunkRepoFn chunks one repository with preprocess.Run and emits its files with
// chunks, in walk order, and its counts as stats.
type chunkRepoFn struct {
	Opts ChunkOptions
}

// ProcessElement walks and chunks r.
func (f *chunkRepoFn) ProcessElement(ctx context.Context, r RepoSpec, emit func(fileRec), emitStat func(stat)) error {
	opts, err := f.Opts.preprocessOptions()
	if err != nil {
		return err
	}
	dir := r.Path
	if isArchiveInput(r.Path) {
		tmp, err := os.MkdirTemp("", "repoctx-beam-")
		if err != nil {
			return fmt.Errorf("repository %s: %w", r.Name, err)
		}
		defer os.RemoveAll(tmp)
		if err := unpackInput(ctx, r.Path, tmp); err != nil {
			return fmt.Errorf("repository %s: %w", r.Name, err)
		}
		dir = tmp
	}
	w := &emitWriter{name: r.Name, repo: r.Index, emit: emit}
	st, err := preprocess.Run(ctx, []string{dir}, opts, w)
	if err != nil {
		return fmt.Errorf("repository %s (%s): %w", r.Name, r.Path, err)
	}
	if st.Folders != 1 {
		return fmt.Errorf("repository %s: %s is not a folder, zip, tar, tar.gz or git bundle", r.Name, r.Path)
	}
	count := func(name string, n int64) {
		if n != 0 {
			emitStat(stat{Name: name, N: n})
		}
	}
	count("repositories", 1)
	for lang, ls := range st.Langs {
		l := cmp.Or(lang, "(other)")
		count("files/"+l, int64(ls.Files))
		count("chunks/"+l, int64(ls.Chunks))
		count("bytes/"+l, ls.Bytes)
	}
	t := st.Total()
	count("files", int64(t.Files))
	count("chunks", int64(t.Chunks))
	count("bytes", t.Bytes)
	count("fallback", int64(t.Fallback))
	count("parse_error_files", int64(len(t.ParseErrors)))
	for reason, n := range st.Walked.Skipped {
		count("skipped/"+reason.String(), int64(n))
	}
	return nil
}

// emitWriter is the preprocess.Writer of chunkRepoFn: one fileRec per file.
type emitWriter struct {
	name   string
	repo   int
	seq    int
	offset int64
	emit   func(fileRec)
}

func (w *emitWriter) Write(cs []chunker.Chunk, sha string) error {
	if len(cs) == 0 {
		return nil // no rows: nothing to write or to mark
	}
	rows := make([]preprocess.Row, len(cs))
	for i, k := range cs {
		rows[i] = preprocess.NewRow(k, sha)
	}
	b, err := encodeRows(rows)
	if err != nil {
		return err
	}
	w.emit(fileRec{Repo: w.repo, Seq: w.seq, Name: w.name, Path: cs[0].Path, SHA: sha, Offset: w.offset, NRows: len(cs), Rows: b})
	w.seq++
	w.offset += int64(len(cs))
	return nil
}

func (*emitWriter) Close() error { return nil }

// encodeRows and decodeRows carry rows between steps (gob keeps every byte of the
// strings, valid UTF-8 or not).
func encodeRows(rows []preprocess.Row) ([]byte, error) {
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(rows); err != nil {
		return nil, fmt.Errorf("encode rows: %w", err)
	}
	return b.Bytes(), nil
}

func decodeRows(b []byte) ([]preprocess.Row, error) {
	var rows []preprocess.Row
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&rows); err != nil {
		return nil, fmt.Errorf("decode rows: %w", err)
	}
	for i := range rows { // gob drops empty slices; preprocess.NewRow never leaves them nil
		if rows[i].Names == nil {
			rows[i].Names = []string{}
		}
		if rows[i].Header == nil {
			rows[i].Header = []string{}
		}
	}
	return rows, nil
}

func fileRows(f fileRec) (int, int64) { return f.Repo, int64(f.NRows) }

func keyTotal(repo int, rows int64) (int, repoTotal) { return 0, repoTotal{Repo: repo, Rows: rows} }

// startsFn turns the repositories' row counts into their first rows' offsets in the
// output: N+1 numbers, the last the number of rows.
type startsFn struct {
	N int
}

// ProcessElement sums the counts in repository order.
func (f *startsFn) ProcessElement(_ int, totals func(*repoTotal) bool) []int64 {
	starts := make([]int64, f.N+1)
	var t repoTotal
	for totals(&t) {
		starts[t.Repo+1] += t.Rows
	}
	for i := 1; i <= f.N; i++ {
		starts[i] += starts[i-1]
	}
	return starts
}

// pieceFn cuts a file's rows at shard boundaries and keys them by shard.
type pieceFn struct {
	ShardRows int64
}

// ProcessElement emits f's rows as one piece per shard they fall in.
func (p *pieceFn) ProcessElement(f fileRec, starts []int64, emit func(int, piece)) error {
	start := starts[f.Repo] + f.Offset
	end := start + int64(f.NRows)
	first, last := start/p.ShardRows, (end-1)/p.ShardRows
	if first == last {
		emit(int(first), piece{Start: start, FileStart: start, Name: f.Name, Rows: f.Rows})
		return nil
	}
	rows, err := decodeRows(f.Rows)
	if err != nil {
		return fmt.Errorf("%s/%s: %w", f.Name, f.Path, err)
	}
	for sh := first; sh <= last; sh++ {
		lo, hi := max(start, sh*p.ShardRows), min(end, (sh+1)*p.ShardRows)
		b, err := encodeRows(rows[lo-start : hi-start])
		if err != nil {
			return err
		}
		emit(int(sh), piece{Start: lo, FileStart: start, Name: f.Name, Rows: b})
	}
	return nil
}

func holderOf(f fileRec) (string, holder) {
	return f.SHA, holder{Repo: f.Repo, Seq: f.Seq, Name: f.Name, Path: f.Path, Offset: f.Offset, NRows: f.NRows}
}

// dupFn finds the first holder of one content hash and marks the others'
// rows, keyed by the shards they fall in; it counts the others as stats.
type dupFn struct {
	ShardRows int64
}

// ProcessElement orders the holders of sha by repository, then walk order.
func (d *dupFn) ProcessElement(_ context.Context, _ string, holders func(*holder) bool, starts []int64, emit func(int, dupNote), emitStat func(stat)) {
	var hs []holder
	var h holder
	for holders(&h) {
		hs = append(hs, h)
	}
	if len(hs) < 2 {
		return
	}
	slices.SortFunc(hs, func(a, b holder) int { return cmp.Or(cmp.Compare(a.Repo, b.Repo), cmp.Compare(a.Seq, b.Seq)) })
	dupOf := path.Join(hs[0].Name, hs[0].Path)
	for _, h := range hs[1:] {
		emitStat(stat{Name: "duplicate_files", N: 1})
		emitStat(stat{Name: "duplicate_chunks", N: int64(h.NRows)})
		start := starts[h.Repo] + h.Offset
		end := start + int64(h.NRows)
		for sh := start / d.ShardRows; sh <= (end-1)/d.ShardRows; sh++ {
			emit(int(sh), dupNote{Start: start, DupOf: dupOf})
		}
	}
}

// writeShardFn writes one shard: its pieces in row order, duplicate_of set from
// the notes. It emits its counts as stats.
type writeShardFn struct {
	OutDir    string
	ShardRows int64
	Drop      bool
}

// ShardName returns the file name of shard i (0-based) of n.
func ShardName(i, n int) string { return fmt.Sprintf("chunks-%05d-of-%05d.parquet", i, n) }

// ProcessElement writes shard sh.
func (f *writeShardFn) ProcessElement(ctx context.Context, sh int, pieces func(*piece) bool, notes func(*dupNote) bool, starts []int64, emitStat func(stat)) error {
	dup := map[int64]string{}
	var n dupNote
	for notes(&n) {
		dup[n.Start] = n.DupOf
	}
	var ps []piece
	var p piece
	for pieces(&p) {
		ps = append(ps, p)
	}
	slices.SortFunc(ps, func(a, b piece) int { return cmp.Compare(a.Start, b.Start) })
	total := starts[len(starts)-1]
	nShards := int((total + f.ShardRows - 1) / f.ShardRows)
	name := ShardName(sh, nShards)
	var rows []Row
	dropped := 0
	for _, p := range ps {
		rs, err := decodeRows(p.Rows)
		if err != nil {
			return fmt.Errorf("shard %s: %w", name, err)
		}
		d := dup[p.FileStart]
		if d != "" && f.Drop {
			dropped += len(rs)
			continue
		}
		for _, r := range rs {
			rows = append(rows, Row{Row: r, Repository: p.Name, DuplicateOf: d})
		}
	}
	if err := writeParquet(ctx, f.OutDir, name, rows); err != nil {
		return err
	}
	emitStat(stat{Name: "shards", N: 1})
	emitStat(stat{Name: "rows_written", N: int64(len(rows))})
	if dropped > 0 {
		emitStat(stat{Name: "rows_dropped", N: int64(dropped)})
	}
	return nil
}

// NewShardWriter returns the Parquet writer of a shard: preprocess's settings
// (zstd, preprocess.ParquetRowsPerGroup rows per row group, created by "repoctx",
// schema root "chunkRow") over the columns of Row.
func NewShardWriter(w interface{ Write([]byte) (int, error) }) *parquet.GenericWriter[Row] {
	schema := parquet.NewSchema("chunkRow", parquet.SchemaOf(Row{}))
	return parquet.NewGenericWriter[Row](w, schema, parquet.Compression(&parquet.Zstd),
		parquet.MaxRowsPerRowGroup(preprocess.ParquetRowsPerGroup), parquet.CreatedBy("repoctx", "", ""))
}

// isURL reports whether p names a file of a Beam file system (scheme://...).
func isURL(p string) bool { return strings.Contains(p, "://") }

// joinOut joins a file name to the output folder, a local path or a URL.
func joinOut(dir, name string) string {
	if isURL(dir) {
		return strings.TrimSuffix(dir, "/") + "/" + name
	}
	return filepath.Join(dir, name)
}

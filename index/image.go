package index

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/retrieve"
	"github.com/repoctx/repoctx/snapshot"
	"github.com/repoctx/repoctx/store"
	"github.com/repoctx/repoctx/symbols"
)

// Stored views (Options.StoreViews). A view is made from its files' chunk records:
// each record read out of the store, its strings copied, its terms added to the
// corpus, then the BM25 postings, the dense rows and the symbol table built. For a
// process that makes one view (a one-shot `repoctx query`) that is nearly all its
// work, and it is the same work as the last run's when no file changed. A stored
// view is that work's result, written once per snapshot name (store.Records.PutView,
// replaced when the snapshot's files or the settings change) and read back whole when
// the next view of that snapshot has the same key and settings: its chunks (the chunk
// record codec, over the stored bytes), the retrieval index's image
// (retrieve.Index.WriteImage: terms, postings, statistics, vectors), the files'
// symbols with their lookups (see writeSymbols) and the view's statistics and log
// lines. It is read in place: the file is mapped (store.Records.MapView), the chunks'
// strings and the retrieval index's terms, postings, field lengths and vectors are
// the mapping's bytes, so that a process neither copies them nor touches new memory
// for them (on a virtual machine the first touch of a page is the dearest part of
// reading it); a file's symbols are decoded only when a lookup of the symbol table
// first returns it (symbols.NewLazyTable).

// viewMagic starts a stored view; it names the format below ("rcview1": the symbol
// records without their lookups and offsets, each decoded when the view was read;
// "rcview2": the chunk records without the table of files before them; "rcview3":
// without their own checksums).
const viewMagic = "rcview4\n"

// viewNameSeed is part of every stored view's name (viewStoreName). Unlike viewMagic
// it stays when the format changes: a view of the new format then replaces the file
// of the old one (which its magic refuses) instead of leaving it beside.
const viewNameSeed = "rcview1\n"

// viewStoreName returns the name the view of the snapshot named snap is stored under:
// one per snapshot name, whatever the settings or the format (a view made under
// other settings replaces it), so that a folder keeps one stored view.
func (ix *Index) viewStoreName(snap string) string {
	sum := sha256.Sum256([]byte(FormatVersion + "\x00" + viewNameSeed + snap))
	return hex.EncodeToString(sum[:16])
}

// viewStamp returns what a stored view made under key with the index's settings is
// known by (its file's key field, its records; see storeView): key and a hash of the
// settings that shape a view beyond its key (which holds the files, the chunker
// settings and the grammars): the file size limit (the key holds files over it, which
// the view leaves out), the dense retriever, its dimension and model, RepoLSA and
// Symbols, and the view's format (viewMagic: a view of an older format is of other
// settings, so `repoctx index` stores it again).
func (ix *Index) viewStamp(key string) string {
	return key + "\x00" + ix.viewSettings()
}

// viewSettings is the settings part of viewStamp.
func (ix *Index) viewSettings() string {
	o := ix.opts
	emb := ""
	if o.Embedder != nil {
		emb = o.Embedder.ID()
	}
	sum := sha256.Sum256([]byte(viewMagic + ix.chunkSettings + "\x00" + strconv.Itoa(maxBytes(o.MaxFileBytes)) + "\x00" +
		o.Dense.String() + "\x00" + strconv.Itoa(o.LSADim) + "\x00" + emb + "\x00" +
		strconv.FormatBool(o.RepoLSA) + "\x00" + strconv.FormatBool(o.Symbols)))
	return hex.EncodeToString(sum[:16])
}

// storesViews reports whether views are stored and read back under opts: asked for,
// and made of the snapshot's own files (not with Options.Extra, whose views hold other
// snapshots' files). A view embedded with Options.SharedLSA's model is stored under
// that model's key as well (sharedStamp).
func storesViews(opts Options, extra bool) bool {
	return opts.StoreViews != ViewsNotStored && !extra
}

// storedView is a decoded stored view (see writeView).
type storedView struct {
	key     string
	stats   Stats // Skipped: the files the chunkers skipped (not the view key's)
	logs    []string
	files   []retrieve.LazyFile // the files' chunk records (decodeViewChunks), in the view's order
	records []byte              // those records, back to back
	symbols *viewSymbols        // the files' symbols (writeSymbols), nil without Options.Symbols
	rimg    []byte              // retrieve.Index.WriteImage
}

// writeView writes the stored view of v to w: viewMagic, the key, the statistics st
// (Files, Skipped, Lossy, Chunks, ParseErrors, Reused, ParseErrorFiles), the log
// lines, the chunks (a count of files, then a table of them: per file its record's
// length, its chunk count, its path and its chunks' language; then the records back
// to back, a chunk record per file: its CRC-32C, 4 bytes little endian, then encode
// without terms or sums; the reader finds a file's record from the table alone), the
// symbols (a flag, then the section writeSymbols writes), then, at a
// multiple of 8 bytes from the start (zero padding), the retrieval image to the end
// (so that a mapped view uses it in place). Strings and records are a uvarint length
// and bytes, numbers uvarints. It writes file by file through a buffer: a view is
// never whole in memory. It fails for a chunk whose ID is not chunker.ChunkID of its
// path and its place in its file's run (the reader finds chunks by position).
func writeView(w io.Writer, key string, st Stats, logs []string, rix *retrieve.Index, syms []*symbols.File) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	n := 0
	var vb [binary.MaxVarintLen64]byte
	put := func(b []byte) { m, _ := bw.Write(b); n += m } // the error sticks: Flush returns it
	num := func(v int) { put(vb[:binary.PutUvarint(vb[:], uint64(v))]) }
	str := func(s string) { num(len(s)); m, _ := bw.WriteString(s); n += m }
	put([]byte(viewMagic))
	str(key)
	for _, v := range []int{st.Files, st.Skipped, st.Lossy, st.Chunks, st.ParseErrors, st.Reused, len(st.ParseErrorFiles)} {
		num(v)
	}
	for _, p := range st.ParseErrorFiles {
		str(p)
	}
	num(len(logs))
	for _, l := range logs {
		str(l)
	}
	// The chunks, a record per file (its run of consecutive chunks): each record is
	// encoded twice, for the table its length goes into, then to be written (a view
	// is never whole in memory).
	var run []chunker.Chunk
	var sums [][32]byte
	var terms [][]byte
	var buf []byte
	encode := func() []byte {
		sums, terms = slices.Grow(sums[:0], len(run))[:len(run)], slices.Grow(terms[:0], len(run))[:len(run)]
		rec := &chunkRecord{Chunks: run, Sums: sums, Terms: terms}
		buf = rec.appendTo(buf[:0])
		return buf
	}
	// each calls f with each file's chunks (run), in the index's order.
	each := func(f func()) error {
		run = run[:0]
		for i := range rix.Len() {
			c := rix.ChunkAt(i)
			if len(run) > 0 && c.Path != run[0].Path {
				f()
				run = run[:0]
			}
			// A file's chunks are read back by position (retrieve.LoadImageLazy):
			// every view the chunkers make has these IDs, and one language per file.
			if p, j, ok := chunker.SplitChunkID(c.ID); !ok || p != c.Path || j != len(run) || len(run) > 0 && c.Lang != run[0].Lang {
				return fmt.Errorf("index: chunk %q at position %d of %s: not the file's chunk ID or language", c.ID, len(run), c.Path)
			}
			run = append(run, *c)
		}
		if len(run) > 0 {
			f()
		}
		return nil
	}
	// The table, made in the first pass over the chunks (the second writes the records).
	var table []retrieve.LazyFile // without records
	var lens []int                // the records' lengths, checksums included
	if err := each(func() {
		table = append(table, retrieve.LazyFile{Path: run[0].Path, Lang: run[0].Lang, N: len(run)})
		lens = append(lens, 4+len(encode()))
	}); err != nil {
		return err
	}
	num(len(table))
	for i, f := range table {
		num(lens[i])
		num(f.N)
		str(f.Path)
		str(f.Lang)
	}
	// Each record has a checksum of its own, checked when it is decoded (most never
	// are): the reader leaves the records out of the view's (store.MappedView.Verify).
	file := 0
	same := true
	var sum [4]byte
	each(func() {
		b := encode()
		same = same && len(b)+4 == lens[file]
		binary.LittleEndian.PutUint32(sum[:], crc32.Checksum(b, castagnoli))
		put(sum[:])
		put(b)
		file++
	})
	if !same {
		return errors.New("index: a chunk record encoded to another length the second time")
	}
	if syms == nil {
		put([]byte{0})
	} else {
		put([]byte{1})
		buf = writeSymbols(put, num, syms, buf)
	}
	for n%8 != 0 {
		put([]byte{0})
	}
	if _, err := rix.WriteImage(bw); err != nil {
		return err
	}
	return bw.Flush()
}

var errDamagedView = errors.New("index: damaged stored view")

// viewReader reads the uvarints and byte runs of a stored view's sections; ok turns
// false at the first one b cannot hold (and stays so), the reads then giving zeros.
type viewReader struct {
	b   []byte
	pos int
	ok  bool
}

// num reads a uvarint (one over len(b) is damage).
func (r *viewReader) num() int {
	v, n := binary.Uvarint(r.b[r.pos:])
	if n <= 0 || v > uint64(len(r.b)) {
		r.ok = false
		return 0
	}
	r.pos += n
	return int(v)
}

// run reads a length and that many bytes, pointing into b.
func (r *viewReader) run() []byte {
	n := r.num()
	if !r.ok || n > len(r.b)-r.pos {
		r.ok = false
		return nil
	}
	r.pos += n
	return r.b[r.pos-n : r.pos : r.pos]
}

// runs reads a count and that many runs (a count over what b can hold is damage).
func (r *viewReader) runs() [][]byte {
	n := r.num()
	if !r.ok || n > len(r.b)-r.pos {
		r.ok = false
		return nil
	}
	// The runs are found before their slice is made: a damaged count (the checksum is
	// checked beside the decoding) fails here instead of asking for up to 24 bytes of
	// memory per byte of the file.
	start := r.pos
	for range n {
		if r.run(); !r.ok {
			return nil
		}
	}
	r.pos = start
	out := make([][]byte, n)
	for i := range out {
		out[i] = r.run()
	}
	return out
}

// files reads the chunks section of a stored view (see writeView): the table of
// files, then their records, which point into b. A count, or lengths, over what b
// can hold is damage, found before the files' slice is made.
func (r *viewReader) files() ([]retrieve.LazyFile, []byte) {
	n := r.num()
	if !r.ok || n > (len(r.b)-r.pos)/4 { // an entry takes 4 bytes at least
		r.ok = false
		return nil, nil
	}
	start, total := r.pos, 0
	for range n {
		total += r.num()
		r.num()
		r.run()
		r.run()
		if !r.ok || total > len(r.b)-r.pos {
			r.ok = false
			return nil, nil
		}
	}
	recs := r.pos // the records follow the table
	all := r.b[recs : recs+total : recs+total]
	r.pos = start
	out := make([]retrieve.LazyFile, n)
	for i := range out {
		l := r.num()
		f := &out[i]
		f.N = r.num()
		f.Path, f.Lang = string(r.run()), string(r.run())
		f.Record = r.b[recs : recs+l : recs+l]
		recs += l
	}
	r.pos = recs
	return out, all
}

// decodeView reads what writeView wrote; the byte runs point into b.
func decodeView(b []byte) (*storedView, error) {
	if !bytes.HasPrefix(b, []byte(viewMagic)) {
		return nil, errDamagedView
	}
	r := &viewReader{b: b, pos: len(viewMagic), ok: true}
	v := &storedView{key: string(r.run())}
	st := &v.stats
	for _, p := range []*int{&st.Files, &st.Skipped, &st.Lossy, &st.Chunks, &st.ParseErrors, &st.Reused} {
		*p = r.num()
	}
	for _, run := range r.runs() {
		st.ParseErrorFiles = append(st.ParseErrorFiles, string(run))
	}
	for _, run := range r.runs() {
		v.logs = append(v.logs, string(run))
	}
	v.files, v.records = r.files()
	if !r.ok || r.pos >= len(b) {
		return nil, errDamagedView
	}
	flag := b[r.pos]
	pos := r.pos + 1
	switch flag {
	case 0:
	case 1:
		vs, size, ok := decodeViewSymbols(b[pos:])
		if !ok {
			return nil, errDamagedView
		}
		v.symbols = vs
		pos += size
	default:
		return nil, errDamagedView
	}
	pos = (pos + 7) &^ 7
	if pos > len(b) {
		return nil, errDamagedView
	}
	v.rimg = b[pos:]
	return v, nil
}

// storeView writes the stored view of v (made under key from files, its statistics
// st, the lines logged while its files were chunked, the symbols of its files). A
// failed write, a fault of the machine too (a full or read-only cache disk), is
// logged and counted (Stats.CacheWriteFailures): the view is made, and a stored view
// only saves later runs time, so its write must not fail the command (every later
// run on the same files would try it again).
func (ix *Index) storeView(v *View, key string, keySkipped int, logs []string, syms []*symbols.File, logf func(string, ...any)) {
	name, stamp := ix.viewStoreName(v.snap.Name()), ix.viewStamp(key)
	lk := lastViewKey(name)
	last, ok := ix.recs.Get(lk)
	repeat := ok && string(last) == stamp
	if !repeat {
		ix.recs.Put(lk, []byte(stamp))
	}
	if ix.opts.StoreViews == ViewsStoredOnRepeat && !repeat {
		return // stored the second time in a row these files are viewed
	}
	st := v.stats
	st.Skipped -= keySkipped
	st.Reused += st.Chunked
	if !ix.opts.Symbols {
		syms = nil
	} else if syms == nil {
		syms = []*symbols.File{}
	}
	write := func(w io.Writer) error { return writeView(w, stamp, st, logs, v.ix, syms) }
	switch err := putView(ix.recs, name, write); {
	case err == nil:
		ix.recs.Put(storedViewKey(name), []byte(stamp))
		v.stats.ViewWritten = true
	case errors.Is(err, retrieve.ErrClosed):
		// The view was closed meanwhile: nothing to store.
	default:
		v.stats.CacheWriteFailures++
		logf("warning: could not store the view of %s (%v); the next run makes it again", v.snap.Name(), err)
	}
}

// putView writes a stored view (store.Records.PutView; replaced by tests).
var putView = (*store.Records).PutView

// loadView returns the view of snap stored under key (see storeView), or nil when
// none is stored, it is damaged or of other files, or its dense model cannot be had
// without fitting (the caller then makes the view). keySkipped is the number of files
// the view key left out; logf receives the stored log lines.
func (ix *Index) loadView(snap snapshot.Snapshot, key string, keySkipped int, logf func(string, ...any)) *View {
	name, stamp := ix.viewStoreName(snap.Name()), ix.viewStamp(key)
	if last, ok := ix.recs.Get(lastViewKey(name)); !ok || string(last) != stamp {
		return nil // of other files or settings: not even mapped
	}
	rv := ix.readView(name, stamp, nil)
	if rv == nil {
		return nil
	}
	return ix.finishView(snap, rv, keySkipped, logf)
}

// readyView is a stored view read back (readView), before a View is made of it.
type readyView struct {
	sv     *storedView
	rix    *retrieve.Index
	table  *symbols.Table
	shared bool // embedded with Options.SharedLSA's model (see sharedStamp)
}

// readView reads back the view stored under name (see viewStoreName) if it is the one
// known by stamp (see viewStamp: a view key and these settings), or returns nil. stop,
// if not nil, is asked now and then whether to give up (nil then too).
func (ix *Index) readView(name, stamp string, stop func() bool) (rv *readyView) {
	key, ok := strings.CutSuffix(stamp, "\x00"+ix.viewSettings())
	if !ok {
		return nil // made under other settings
	}
	if k, ok := ix.recs.Get(storedViewKey(name)); !ok || string(k) != stamp {
		return nil // the stored view is of other files or settings: not even mapped
	}
	mv, ok := ix.recs.MapView(name)
	if !ok {
		return nil
	}
	// Unmapped when it is not used, once nothing reads it (deferred first: run last).
	defer func() {
		if rv == nil {
			mv.Release()
		}
	}()
	sv, err := decodeView(mv.Payload)
	if err != nil || sv.key != stamp || ix.opts.Symbols && sv.symbols == nil {
		return nil
	}
	// The parts most runs read little of (the chunk records, which carry checksums of
	// their own; the symbol records; the postings lists) are checked as they are read,
	// the rest below before anything is used. A part found damaged then reads as
	// empty (a file's chunks without text, a file without symbols, a term matching
	// nothing) and makes the stored view unknown: the next view of these files is
	// made again and stored anew.
	var damagedOnce sync.Once
	damaged := func() {
		damagedOnce.Do(func() { ix.recs.Put(storedViewKey(name), []byte("damaged")) })
	}
	check := func(b []byte) bool {
		if mv.Check(b) {
			return true
		}
		damaged()
		return false
	}
	opts := ix.opts
	var table *symbols.Table
	if opts.Symbols {
		// Its files are decoded when a lookup first needs them, from the mapping's
		// bytes (the mapping never changes), each record checked first.
		sv.symbols.check = check
		table = symbols.NewLazyTable(sv.symbols)
	}
	emb := opts.Embedder
	fitKey := key
	k, sharedKey, shared := strings.Cut(key, sharedSep)
	if shared {
		key, fitKey = k, sharedKey // embedded with the model fitted on that key's view
	}
	if emb == nil && opts.Dense != retrieve.DenseNone {
		if opts.RepoLSA && !shared {
			fitKey = repoFitKey(ix.repo)
		}
		lsa := ix.storedLSA(fitKey)
		if lsa == nil {
			return nil // no longer stored: the view is made (and fitted)
		}
		emb = lsa
	}
	// The chunks stay encoded, file by file, until a search needs them; their strings
	// then point into the mapping, which never changes. A damaged record decodes as
	// chunks without text (retrieve.LoadImageLazy).
	decode := func(rec []byte) ([]chunker.Chunk, error) {
		cs, err := decodeViewChunks(rec)
		if err != nil {
			damaged()
		}
		return cs, err
	}
	rix, err := retrieve.LoadImageLazy(key, sv.files, decode, sv.rimg, emb)
	if err != nil {
		return nil
	}
	rix.CheckPostings(check)
	lazy := append([][]byte{sv.records}, rix.ImagePostings()...)
	if sv.symbols != nil {
		lazy = append(lazy, sv.symbols.recs)
	}
	if !mv.Verify(lazy, stop) {
		return nil
	}
	return &readyView{sv: sv, rix: rix, table: table, shared: shared}
}

// finishView makes the View of snap from rv: its statistics (keySkipped files the
// view key left out added), its log lines replayed to logf, the progress reported.
func (ix *Index) finishView(snap snapshot.Snapshot, rv *readyView, keySkipped int, logf func(string, ...any)) *View {
	for _, l := range rv.sv.logs {
		logf("%s", l)
	}
	st := rv.sv.stats
	st.Skipped += keySkipped
	st.StoredView = true
	st.SharedLSA = rv.shared
	if ix.opts.Progress != nil {
		ix.opts.Progress(st.Files, st.Files)
	}
	return &View{snap: snap, ix: rv.rix, stats: st, repo: ix.repo, syms: rv.table, recs: ix.recs}
}

// preparedView is a stored view being read back ahead of its View (PrepareView).
type preparedView struct {
	done  chan struct{} // closed when rv is set (nil: none)
	stamp string        // the stamp of the view last made (viewStamp; "": none)
	rv    *readyView
	stop  atomic.Bool
}

// PrepareView starts reading back, on another goroutine, the stored view (see
// [Options.StoreViews]) of the snapshot named name that the last view of it made
// (under ViewsPrepared, which records no views: the one stored), for a View of that
// snapshot made soon after (once its files are walked: a one-shot command calls it
// before walking its folder). That View takes it when its files are the same as then,
// without waiting for more than the rest of the read; otherwise it is dropped (its
// read stops early) and the View is made from the files. It does nothing without
// StoreViews, after Close, or when a read for name is already under way. Close waits
// for the read.
func (ix *Index) PrepareView(name string) {
	if ix.opts.StoreViews == ViewsNotStored {
		return
	}
	p := &preparedView{done: make(chan struct{})}
	ix.mu.Lock()
	if ix.closed || ix.prepared[name] != nil {
		ix.mu.Unlock()
		return
	}
	if ix.prepared == nil {
		ix.prepared = map[string]*preparedView{}
	}
	ix.prepared[name] = p
	ix.mu.Unlock()
	sname := ix.viewStoreName(name)
	// The view the last view made is the likely one; under ViewsPrepared nothing
	// records its views, and only the stored view can be taken: its stamp (another
	// view made since, a query of other files or settings, does not hide it).
	key := lastViewKey(sname)
	if ix.opts.StoreViews == ViewsPrepared {
		key = storedViewKey(sname)
	}
	last, ok := ix.recs.Get(key)
	if !ok {
		close(p.done)
		return
	}
	p.stamp = string(last)
	go func() {
		defer close(p.done)
		p.rv = ix.readView(sname, p.stamp, p.stop.Load)
	}()
}

// takePrepared returns the read PrepareView started for the snapshot named name, if
// any, and forgets it.
func (ix *Index) takePrepared(name string) *preparedView {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	p := ix.prepared[name]
	delete(ix.prepared, name)
	return p
}

// lastViewKey is the store key of the record that holds the stamp (viewStamp) of the
// last view made of the snapshot whose views are stored under name (see
// viewStoreName): a stored view is mapped only when it is that view's, and with
// ViewsStoredOnRepeat a view is stored when its stamp is already there.
func lastViewKey(name string) store.Key {
	return store.Key{Kind: store.KindViewKey, Hash: sha256.Sum256([]byte(name))}
}

// storedViewKey is the store key of the record that holds the stamp (viewStamp) of the
// view stored under name (see viewStoreName): a stored view is mapped only when it is
// the one wanted.
func storedViewKey(name string) store.Key {
	return store.Key{Kind: store.KindViewKey, Hash: sha256.Sum256([]byte("stored\x00" + name))}
}

// storedLSA returns the LSA model fitted under fitKey, from memory or the store, or
// nil when it was never stored (see viewLSA, which fits it).
func (ix *Index) storedLSA(fitKey string) *retrieve.LSA {
	ix.mu.Lock()
	m := ix.fits[fitKey]
	ix.mu.Unlock()
	if m != nil {
		return m
	}
	// Used in place: a query's rows are decoded from the mapping (the model of a big
	// repository is tens of megabytes, most of it never read).
	if b, ok := ix.recs.GetMapped(lsaKey(ix.opts.LSADim, fitKey)); ok {
		if got, l, err := readLabeledLSA(b); err == nil {
			m = got.Labeled(l)
			ix.mu.Lock()
			ix.fits[fitKey] = m
			ix.mu.Unlock()
		}
	}
	return m
}

// repoFitKey is the fit key of repository repo's model (Options.RepoLSA).
func repoFitKey(repo string) string { return "repo\x00" + repo }

// lsaKey is the store key of the LSA model of dimension dim fitted under fitKey.
func lsaKey(dim int, fitKey string) store.Key {
	return store.Key{Kind: store.KindModel, Hash: sha256.Sum256([]byte(fmt.Sprintf("lsa\x00%d\x00%s", dim, fitKey)))}
}

// Package store keeps what repoctx computes per file and per repository on disk, in
// a cache directory shared by any number of processes: records under content keys,
// grouped by repository in append-only segment files, with the locks that let
// processes share them and the garbage collection that bounds them.
//
// A process opens the store of a cache directory ([Open]), the records of one
// repository in it ([Store.Records]), reads ([Records.Get]) and adds ([Records.Put])
// records, and writes what it added as new segments ([Records.Flush]); [GC],
// [Stat] and [Clear] work on a cache directory from outside. The index package
// decides what the records hold (chunks, symbols, vectors, models); the snapshot
// package keeps what walks learnt of a folder.
package store

// Design note. The store keeps what repoctx computes per file and per repository —
// chunks, symbols, dense vectors, fitted LSA models — so that a later snapshot of a
// repository, an edit, or a later run pays only for what changed. Records are keyed by
// a SHA-256 of everything that shapes them (kind, settings, path, content), so a key
// never names two different values and a record never needs updating: the store only
// adds and evicts.
//
// Records live in segment files, grouped by repository (cacheDir/store-v2/repos/<id>/):
// a run buffers the records it makes and writes them as one new segment at the end of
// each snapshot, or sooner once they hold AutoFlushBytes (a temporary file renamed
// into place, so a segment is whole or absent).
// Processes never write the same file, so any number of them can share a cache
// directory at once; each reads the segments that exist when it opens a repository (and
// rescans on a miss). A process using a repository holds a shared lock on the
// repository's lock file; eviction takes the exclusive lock without waiting and skips
// repositories in use. Eviction is least recently used by repository (the mtime of the
// repository's "used" file, touched when it is opened), down to a size cap.

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/internal/atomicfile"
)

// DirName is the subdirectory of a cache directory that holds the store; its name
// carries the format version, so a cache written in another format is never misread.
const DirName = "store-v2"

// IndexDirName is the folder of a repository's store folder ([Records.Dir]) that
// holds its search indexes (package crossrepo's bleve indexes): Stat and GC count
// them in the repository's size, and eviction removes them with its records.
const IndexDirName = "bleve"

// DefaultCacheMaxBytes is the default size cap of a cache directory: 5 GB.
const DefaultCacheMaxBytes = 5 << 30

// DefaultCacheDir returns the directory the cache is kept in by default:
// os.UserCacheDir()/repoctx, or os.TempDir()/repoctx-cache when the user has no cache
// directory (e.g. $HOME unset). It does not create the directory.
func DefaultCacheDir() string {
	if d, err := os.UserCacheDir(); err == nil && d != "" {
		return filepath.Join(d, "repoctx")
	}
	return filepath.Join(os.TempDir(), "repoctx-cache")
}

// Version is part of every record key; bump it when a stored record changes
// meaning (chunker.Chunk or symbols.File fields, or how they are computed).
const Version = "store-2"

// Record kinds: which part of repoctx a record belongs to (the first byte of its
// entry in a segment).
const (
	KindChunks   = 'c' // a file's chunks (the index's chunk record)
	KindSymbols  = 's' // a file's symbols (symbols.File)
	KindVector   = 'v' // a chunk text's vector under one model
	KindModel    = 'l' // a fitted LSA model
	KindManifest = 'm' // a snapshot's files (paths, sizes, hashes) by the snapshot's content digest
	KindWalk     = 'w' // what the walks of a folder learnt of its files (the snapshot package's)
	KindEmbedded = 'e' // a file version's chunk texts all have vectors under one model (empty payload)
	KindViewKey  = 'k' // the key of the last view made of a snapshot (the index package's stored views)
)

// Segment file layout: segMagic; the records, each its kind, its 32-byte key, the
// payload's length (uvarint), the payload's CRC-32C (uint32 LE) and the payload; the
// footer: the record count (uvarint) and per record its kind, key, and the offset and
// length (uvarints) of its CRC and payload; the trailer: the footer's offset (uint64
// LE), length and CRC-32C (uint32 LE each) and segEnd.
const (
	segMagic   = "repoctx-segment-2\n"
	segEnd     = "rcsegend"
	segTrailer = 8 + 4 + 4 + len(segEnd) // footer offset, footer length, footer CRC, end mark
	segExt     = ".seg"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Key names a record: its kind (one of the Kind constants) and a SHA-256 of
// everything that shapes its payload, [Version] included.
type Key struct {
	Kind byte
	Hash [32]byte
}

// recLoc is where a record is.
type recLoc struct {
	seg      *segment
	off, len int64
}

// segment is an opened segment file.
type segment struct {
	name string
	f    *os.File
	size int64
	// data maps the whole file read-only (nil when mapping failed: records are then
	// read with ReadAt). A segment never changes once written (a new one is renamed
	// into place), and a mapping outlives the file's removal by another process's gc
	// or compaction, so the mapping stays valid for the process's life (it is never
	// unmapped); Get copies a record out of it, so that a file truncated or rewritten
	// in place by another program is a miss, not a crash, and a payload returned does
	// not change afterwards (a footer rewritten in place is the exception: see footer).
	data []byte
}

// mapSegment maps seg's file (see segment.data) unless it is mapped; failing, seg is
// read with ReadAt.
func mapSegment(seg *segment) {
	if seg.data != nil || seg.size <= 0 || seg.size != int64(int(seg.size)) {
		return
	}
	if b, err := syscall.Mmap(int(seg.f.Fd()), 0, int(seg.size), syscall.PROT_READ, syscall.MAP_SHARED); err == nil {
		seg.data = b
	}
}

// unmap unmaps a segment that is not used (nothing read from it is kept).
func (seg *segment) unmap() {
	if seg.data != nil {
		syscall.Munmap(seg.data)
		seg.data = nil
	}
}

// copyMapped copies src, a record in a mapped segment, into sum (its 4-byte CRC) and
// payload (the rest, of its length). ok is false when reading it faults: the file was truncated under the mapping (repoctx never
// rewrites a segment in place, but another program may), which would otherwise kill
// the process with SIGBUS; the record is then a miss. Copying also keeps a later change
// of the file's bytes from reaching a payload whose checksum was checked.
func copyMapped(sum, payload, src []byte) bool {
	return faultFree(func() {
		copy(sum, src[:len(sum)])
		copy(payload, src[len(sum):])
	})
}

// faultFree runs read, which reads mapped memory, and reports whether it ran without
// a fault: a file truncated under its mapping makes the read a miss, not a SIGBUS.
func faultFree(read func()) (ok bool) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	read()
	return true
}

// Store is the store of one cache directory (see the design note above). Its methods
// are safe for concurrent use; a failed write only costs a later run the work again,
// and is counted (WriteErrors). Close it when done: it holds a shared lock on each
// repository it opened, which keeps [GC] from evicting it.
type Store struct {
	cacheDir, dir string

	mu     sync.Mutex
	repos  map[string]*Records // by repository name
	closed atomic.Bool         // set by Close: its Records write no more

	writeErrors int
}

// Records are one repository's records in a [Store]: read with Get, added with Put
// and written as a new segment by Flush, or by Put itself once the pending records
// hold [AutoFlushBytes]. Its methods are safe for concurrent use.
type Records struct {
	st   *Store
	id   string
	dir  string
	lock *os.File // shared lock while this process uses the repository

	mu   sync.RWMutex
	segs map[string]*segment
	// index maps every key in a segment to its latest location, once built: until
	// then (a process that reads a handful of records, such as a query over a stored
	// view) the locations wait in unmapped, in the order they were found, and a read
	// looks through them from the newest (see locate).
	index    map[Key]recLoc
	unmapped []footer // by segment, in the order found
	indexed  bool
	lookups  atomic.Int32 // reads of unmapped, until the index is built
	pending  map[Key][]byte
	pendSize int64
	scanned  time.Time
	// flushing holds the records a Flush is writing (outside mu), read as pending
	// ones until they are in the index.
	flushing map[Key][]byte
	// noAuto is set when a write that Put started failed: later writes are left to
	// Flush, which reports the error (and clears it once a write succeeds).
	noAuto bool

	flushMu sync.Mutex // one segment write at a time
}

// AutoFlushBytes is the size of pending payloads (bytes) at which Put writes them as a
// segment without waiting for Flush, so that a process making many records (a first
// index of a big repository) does not hold them all in memory: on 20,000 files that
// kept about 600 MB live until the end.
const AutoFlushBytes = 64 << 20

// autoFlushBytes is AutoFlushBytes (tests lower it).
var autoFlushBytes int64 = AutoFlushBytes

// Open returns the store of cacheDir. It removes what killed runs left behind
// (temporary segment files no process is writing) and caches of older formats (see
// [CleanOldFormats]). It never fails: a store that cannot be written only costs time.
// Two stores of one directory (in one process or two) share its records as two
// processes do.
func Open(cacheDir string) *Store {
	abs, err := filepath.Abs(cacheDir)
	if err != nil {
		abs = cacheDir
	}
	s := &Store{cacheDir: abs, dir: filepath.Join(abs, DirName), repos: map[string]*Records{}}
	CleanOldFormats(abs)
	return s
}

// Dir returns the store's folder (DirName in the cache directory).
func (s *Store) Dir() string { return s.dir }

// CacheDir returns the cache directory the store is in (absolute).
func (s *Store) CacheDir() string { return s.cacheDir }

// repoDir returns the folder of repository id's segments.
func (s *Store) repoDir(id string) string {
	sum := sha256.Sum256([]byte(id))
	return filepath.Join(s.dir, "repos", hex.EncodeToString(sum[:12]))
}

// Records returns the records of the repository named id ("owner/name", or any name
// that stays the same across the repository's revisions), opening its folder (and
// taking its shared lock) on first use.
func (s *Store) Records(id string) *Records {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.repos[id]; r != nil {
		return r
	}
	r := &Records{st: s, id: id, dir: s.repoDir(id), segs: map[string]*segment{}, index: map[Key]recLoc{}, pending: map[Key][]byte{}}
	if err := os.MkdirAll(r.dir, 0o755); err == nil && !s.closed.Load() {
		os.WriteFile(filepath.Join(r.dir, "repo"), []byte(id+"\n"), 0o644)
		if f, err := os.OpenFile(filepath.Join(r.dir, "lock"), os.O_CREATE|os.O_RDONLY, 0o644); err == nil {
			if flock(f, syscall.LOCK_SH) == nil {
				r.lock = f
			} else {
				f.Close()
			}
		}
		touch(filepath.Join(r.dir, "used"))
		removeDeadTemps(r.dir)
	}
	r.rescan()
	s.repos[id] = r
	return r
}

// Dir returns the folder of the repository's segment files.
func (r *Records) Dir() string { return r.dir }

// ErrClosed is the error of a write to a store after its Close: the repositories'
// locks are released, so the records are not written (another process may be
// collecting the folders).
var ErrClosed = errors.New("store: write after Close")

// Close writes every repository's pending records (see Flush), then releases the
// repositories' locks and closes their segment files; the store and its Records must
// not be used afterwards. It returns the first write error.
func (s *Store) Close() error {
	err := s.Flush()
	s.mu.Lock()
	if s.closed.Swap(true) {
		s.mu.Unlock()
		return err
	}
	repos := make([]*Records, 0, len(s.repos))
	for _, r := range s.repos {
		repos = append(repos, r)
	}
	// Records made from now on take no lock (s.closed); the wait for a write under way
	// is outside s.mu, which a failed write takes to count itself.
	s.mu.Unlock()
	for _, r := range repos {
		r.flushMu.Lock() // a write under way ends before the lock is released
		r.mu.Lock()
		if r.lock != nil {
			r.lock.Close()
			r.lock = nil
		}
		for _, seg := range r.segs {
			seg.f.Close()
		}
		r.mu.Unlock()
		r.flushMu.Unlock()
	}
	return err
}

// touch sets path's modification time to now, creating it if needed.
func touch(path string) {
	now := time.Now()
	if err := os.Chtimes(path, now, now); err != nil {
		os.WriteFile(path, nil, 0o644)
	}
}

// rescan opens the segments of the folder not opened yet (r.mu held or not shared).
func (r *Records) rescan() {
	ents, err := os.ReadDir(r.dir)
	r.scanned = time.Now()
	if err != nil {
		return
	}
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, segExt) || strings.HasPrefix(name, ".") || r.segs[name] != nil || !e.Type().IsRegular() {
			continue // a FIFO or a device named like a segment is never opened
		}
		seg, fo, err := openSegmentFooter(filepath.Join(r.dir, name))
		if err != nil {
			continue // damaged or half-written by a crash: ignored (gc removes it)
		}
		mapSegment(seg)
		r.segs[name] = seg
		r.addEntries(fo)
	}
}

// lazyLookups is the number of reads answered by looking through Records.unmapped
// before the index is built.
const lazyLookups = 16

// addEntries adds the locations of a segment's footer, later ones taking precedence
// (r.mu held).
func (r *Records) addEntries(fo footer) {
	if !r.indexed {
		r.unmapped = append(r.unmapped, fo)
		return
	}
	fo.each(func(k Key, loc recLoc) bool {
		r.index[k] = loc
		return true
	})
}

// buildIndex moves Records.unmapped into the index (r.mu held).
func (r *Records) buildIndex() {
	if r.indexed {
		return
	}
	if len(r.index) == 0 {
		n := 0
		for _, fo := range r.unmapped {
			n += fo.n + len(fo.entries)
		}
		r.index = make(map[Key]recLoc, n)
	}
	for _, fo := range r.unmapped {
		fo.each(func(k Key, loc recLoc) bool {
			r.index[k] = loc
			return true
		})
	}
	r.unmapped, r.indexed = nil, true
}

// locate returns where record k is in the segments (r.mu held for reading; lookups
// past lazyLookups ask the caller to build the index: build).
func (r *Records) locate(k Key) (loc recLoc, ok, build bool) {
	if r.indexed {
		loc, ok = r.index[k]
		return loc, ok, false
	}
	if r.lookups.Add(1) > lazyLookups {
		return recLoc{}, false, true
	}
	for _, fo := range slices.Backward(r.unmapped) {
		if loc, ok := fo.find(k); ok {
			return loc, true, false
		}
	}
	return recLoc{}, false, false
}

// find is locate for a caller that holds no lock.
func (r *Records) find(k Key) (recLoc, bool) {
	r.mu.RLock()
	loc, ok, build := r.locate(k)
	r.mu.RUnlock()
	if build {
		r.mu.Lock()
		r.buildIndex()
		loc, ok = r.index[k]
		r.mu.Unlock()
	}
	return loc, ok
}

// segEntry is one record of a segment's footer.
type segEntry struct {
	key Key
	loc recLoc
}

// openSegment opens a segment file and reads its footer (the records in footer order).
func openSegment(path string) (*segment, []segEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	return readSegment(f, filepath.Base(path))
}

// openSegmentFooter is openSegment with the footer checked, not read out.
func openSegmentFooter(path string) (*segment, footer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, footer{}, err
	}
	return readSegmentFooter(f, filepath.Base(path), true)
}

// readSegment is openSegment on f, an open segment file named name; f is closed on
// error.
func readSegmentFooter(f *os.File, name string, inPlace bool) (*segment, footer, error) {
	fail := func(err error) (*segment, footer, error) {
		f.Close()
		return nil, footer{}, err
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() < int64(len(segMagic)+segTrailer) {
		return fail(errors.New("not a segment"))
	}
	size := fi.Size()
	tr := make([]byte, segTrailer)
	if _, err := f.ReadAt(tr, size-int64(segTrailer)); err != nil {
		return fail(err)
	}
	if string(tr[16:]) != segEnd {
		return fail(errors.New("no segment end"))
	}
	off, n, sum := int64(binary.LittleEndian.Uint64(tr)), int64(binary.LittleEndian.Uint32(tr[8:])), binary.LittleEndian.Uint32(tr[12:])
	if off < int64(len(segMagic)) || off+n != size-int64(segTrailer) {
		return fail(errors.New("bad footer position"))
	}
	seg := &segment{name: name, f: f, size: size}
	// inPlace, the footer is read in place from the segment's mapping (a big
	// segment's footer holds tens of megabytes of entries: a copy of it was most of
	// opening the records of a 50,000-file repository), else copied out of the file
	// (a caller that reads the entries once and closes the file: no mapping is left
	// behind).
	if inPlace {
		mapSegment(seg)
	}
	var foot []byte
	if seg.data != nil {
		foot = seg.data[off : off+n : off+n]
	} else {
		foot = make([]byte, n)
		if _, err := f.ReadAt(foot, off); err != nil {
			return fail(err)
		}
	}
	// Checked whole here, read when a record is looked for (see footer): a
	// query that reads a handful of records does not fill memory with every entry.
	var fo footer
	var ferr error
	if !faultFree(func() { fo, ferr = checkFooter(seg, foot, sum, off) }) || ferr != nil {
		seg.unmap()
		return fail(errors.New("damaged footer"))
	}
	return seg, fo, nil
}

// checkFooter checks the footer foot of seg (its CRC-32C sum; the records before off)
// and returns it. A damaged entry panics (footer.entry), as a fault does: run it under
// faultFree, which turns both into false.
func checkFooter(seg *segment, foot []byte, sum uint32, off int64) (footer, error) {
	damaged := errors.New("damaged footer")
	if crc32.Checksum(foot, castagnoli) != sum {
		return footer{}, damaged
	}
	count, p := binary.Uvarint(foot)
	if p <= 0 || count > uint64(len(foot))/uint64(1+len(Key{}.Hash)+2) {
		return footer{}, damaged
	}
	fo := footer{seg: seg, b: foot[p:], n: int(count), recEnd: uint64(off)}
	at := 0
	for range fo.n {
		_, _, _, at = fo.entry(at)
	}
	return fo, nil
}

// readSegment is readSegmentFooter with the footer's entries read out.
func readSegment(f *os.File, name string) (*segment, []segEntry, error) {
	seg, fo, err := readSegmentFooter(f, name, false)
	if err != nil {
		return nil, nil, err
	}
	entries := make([]segEntry, 0, fo.n)
	fo.each(func(k Key, loc recLoc) bool {
		entries = append(entries, segEntry{k, loc})
		return true
	})
	return seg, entries, nil
}

// footer is the record locations of one segment: its footer's entries as written,
// checked (readSegmentFooter), or, for a segment this process wrote, in entries. b is
// in the segment's mapping when it is mapped: its readers turn a fault (the file cut
// short under the mapping by another program) or an entry that no longer parses or
// points past the records into the end of the entries (each) or a miss (find), and
// Get checks the bounds and the checksum of what a location points to. A footer
// rewritten in place with entries that still hold (two keys swapped) can point a key
// at another of the segment's records, whose checksum matches: as with GetMapped and
// stored views, the process trusts that no program rewrites a segment in place
// (repoctx writes a new one and renames it into place).
type footer struct {
	seg     *segment
	b       []byte // the entries: per record its kind, key, offset and length (uvarints)
	n       int    // the number of entries in b
	recEnd  uint64 // where the records end (the footer's offset): no entry points past it
	entries []segEntry
}

// each calls fn with every location in footer order until fn returns false.
func (fo footer) each(fn func(Key, recLoc) bool) {
	if fo.b == nil {
		for _, e := range fo.entries {
			if !fn(e.key, e.loc) {
				return
			}
		}
		return
	}
	// Read in batches, each under faultFree, fn called outside it (a panic of fn's
	// is not a fault of the mapping).
	var batch [256]segEntry
	p, left := 0, fo.n
	for left > 0 {
		m := 0
		faultFree(func() {
			for ; m < len(batch) && m < left; m++ {
				e := &batch[m]
				var hash []byte
				e.key.Kind, hash, e.loc, p = fo.entry(p)
				copy(e.key.Hash[:], hash)
			}
		})
		for _, e := range batch[:m] {
			if !fn(e.key, e.loc) {
				return
			}
		}
		if m < min(len(batch), left) {
			return // a fault, or bytes changed under the mapping
		}
		left -= m
	}
}

// entry decodes the entry of fo.b at p: its kind, its key's hash (in fo.b), its
// location and where the next entry starts. It panics when the entry no longer parses
// or points past the records (b changed under the mapping since it was checked): run
// it under faultFree.
func (fo footer) entry(p int) (kind byte, hash []byte, loc recLoc, next int) {
	kind, hash = fo.b[p], fo.b[p+1:p+1+len(Key{}.Hash)]
	p += 1 + len(Key{}.Hash)
	o, n1 := binary.Uvarint(fo.b[p:])
	p += n1
	l, n2 := binary.Uvarint(fo.b[p:])
	p += n2
	if n1 <= 0 || n2 <= 0 || o > fo.recEnd || l > fo.recEnd-o {
		panic("damaged footer")
	}
	return kind, hash, recLoc{seg: fo.seg, off: int64(o), len: int64(l)}, p
}

// find returns the location of k, the last one in footer order.
func (fo footer) find(k Key) (loc recLoc, ok bool) {
	if fo.b == nil {
		for _, e := range slices.Backward(fo.entries) {
			if e.key == k {
				return e.loc, true
			}
		}
		return recLoc{}, false
	}
	if !faultFree(func() {
		p := 0
		for range fo.n {
			kind, hash, l, q := fo.entry(p)
			if kind == k.Kind && string(hash) == string(k.Hash[:]) {
				loc, ok = l, true
			}
			p = q
		}
	}) {
		return recLoc{}, false // a fault, or bytes changed under the mapping
	}
	return loc, ok
}

// Get returns the payload of record k, from this process's pending writes or a segment,
// and whether it was found intact (a record whose checksum does not match is a miss).
// A record of a mapped segment is copied out of the mapping (see copyMapped) before its
// checksum is checked, so what Get returns never changes afterwards, even when the file
// under the mapping does. The payload must not be modified; it stays valid for the
// process's life.
func (r *Records) Get(k Key) ([]byte, bool) {
	return r.get(k, nil, false)
}

// GetTo is Get reading the payload into buf's memory (new memory when buf is too
// small) instead of into new memory each time, for a caller that decodes each payload
// at once and drops it (a warm run reads thousands of vectors): pass the payload of
// the previous call back in to reuse its memory. The payload, a pending record's too,
// is the caller's, valid until it reuses that memory.
func (r *Records) GetTo(k Key, buf []byte) ([]byte, bool) {
	if buf == nil {
		buf = []byte{}
	}
	return r.get(k, buf, false)
}

// GetMapped is Get without the copy, for a big record that a process reads once and
// then uses in place (a repository's LSA model, whose rows are decoded as queries need
// them): the payload is the record's bytes in its segment's read-only mapping, valid
// for the process's life, its checksum checked over the mapping (reads that fault make
// it a miss). A pending record, or one of a segment that could not be mapped, is
// Get's. Unlike Get's, the payload is not kept from another program that truncates or
// rewrites the segment file in place while it is used: a later read of a truncated
// page stops the process with SIGBUS, as a stored view's does (see MapView; repoctx
// writes a new segment and renames it into place, never rewrites one).
func (r *Records) GetMapped(k Key) ([]byte, bool) {
	return r.get(k, nil, true)
}

// get is Get (buf nil), GetTo, or GetMapped (inPlace).
func (r *Records) get(k Key, buf []byte, inPlace bool) ([]byte, bool) {
	r.mu.RLock()
	p, ok := r.pending[k]
	if !ok {
		p, ok = r.flushing[k]
	}
	if ok {
		r.mu.RUnlock()
		if buf != nil {
			return append(buf[:0], p...), true // GetTo's caller may reuse the memory
		}
		return p, true
	}
	stale := time.Since(r.scanned) > 2*time.Second
	r.mu.RUnlock()
	loc, ok := r.find(k)
	if !ok && stale {
		r.mu.Lock()
		r.rescan()
		r.buildIndex() // a miss after a while: the index is worth it
		loc, ok = r.index[k]
		r.mu.Unlock()
	}
	if !ok || loc.len < 4 {
		return nil, false
	}
	var rec []byte // the record in its segment's mapping (its CRC-32C, then its payload)
	if d := loc.seg.data; d != nil {
		if loc.off < 0 || loc.off > int64(len(d)) || loc.len > int64(len(d))-loc.off {
			return nil, false
		}
		rec = d[loc.off : loc.off+loc.len : loc.off+loc.len]
	}
	if inPlace && rec != nil {
		match := false
		if !faultFree(func() { match = crc32.Checksum(rec[4:], castagnoli) == le32(rec) }) || !match {
			return nil, false
		}
		return rec[4:], true
	}
	n := loc.len - 4 // a record's location covers its CRC-32C and its payload
	var b []byte
	if buf != nil && int64(cap(buf)) >= n {
		b = buf[:n]
	} else {
		b = make([]byte, n)
	}
	var sum [4]byte
	if rec != nil {
		if !copyMapped(sum[:], b, rec) {
			return nil, false
		}
	} else if _, err := loc.seg.f.ReadAt(sum[:], loc.off); err != nil {
		return nil, false
	} else if _, err := loc.seg.f.ReadAt(b, loc.off+4); err != nil {
		return nil, false
	}
	if crc32.Checksum(b, castagnoli) != binary.LittleEndian.Uint32(sum[:]) {
		return nil, false
	}
	return b, true
}

// Has reports whether record k is stored (pending or in a segment), without reading it.
func (r *Records) Has(k Key) bool {
	r.mu.RLock()
	_, ok := r.pending[k]
	if !ok {
		_, ok = r.flushing[k]
	}
	r.mu.RUnlock()
	if !ok {
		_, ok = r.find(k)
	}
	return ok
}

// Put buffers record k (written at the next Flush); a key already pending keeps its
// first payload. Once the pending payloads hold [AutoFlushBytes], Put writes them as a
// segment itself (the caller waits for that write; other callers do not).
func (r *Records) Put(k Key, payload []byte) {
	if r.st.closed.Load() {
		return // its lock is released: another process may be collecting the folder
	}
	r.mu.Lock()
	if _, ok := r.pending[k]; ok {
		r.mu.Unlock()
		return
	}
	// A key being written is taken again (a folder's state written anew): the later
	// segment holds the later payload, as when the key is already in a segment.
	r.pending[k] = payload
	r.pendSize += int64(len(payload))
	full := r.pendSize >= autoFlushBytes && !r.noAuto
	r.mu.Unlock()
	if full && r.flushMu.TryLock() {
		// One write at a time; a Put that finds one under way leaves its records to
		// the next (they would make a small segment).
		defer r.flushMu.Unlock()
		if _, err := r.flushLocked(autoFlushBytes); err != nil {
			r.mu.Lock()
			r.noAuto = true
			r.mu.Unlock()
		}
	}
}

// Flush writes the pending records as a new segment. A failed write is counted in the
// store's statistics; the records stay pending in memory for this process. It returns
// the number of records not written with the error, which is a
// [repoctx.EnvironmentError] for a fault of the machine (see [repoctx.WriteFault]).
// Get, Put and Has do not wait for the write: its records are read from memory until
// they are in the segment's index.
func (r *Records) Flush() (int, error) {
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	return r.flushLocked(0)
}

// flushLocked is Flush (r.flushMu held) when the pending records hold at least
// atLeast bytes; with fewer it writes nothing.
func (r *Records) flushLocked(atLeast int64) (int, error) {
	r.mu.Lock()
	if len(r.pending) == 0 || r.pendSize < atLeast {
		r.mu.Unlock()
		return 0, nil
	}
	if r.st.closed.Load() {
		r.mu.Unlock()
		return len(r.pending), ErrClosed
	}
	recs := r.pending
	r.flushing = recs
	r.pending, r.pendSize = map[Key][]byte{}, 0
	r.mu.Unlock()
	// restore puts the records back as pending after a failed write.
	restore := func() {
		r.mu.Lock()
		for k, p := range recs {
			if _, ok := r.pending[k]; !ok {
				r.pending[k] = p
				r.pendSize += int64(len(p))
			}
		}
		r.flushing = nil
		r.mu.Unlock()
	}
	keys := make([]Key, 0, len(recs))
	for k := range recs {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b Key) int {
		if c := cmp.Compare(a.Kind, b.Kind); c != 0 {
			return c
		}
		return bytes.Compare(a.Hash[:], b.Hash[:])
	})
	name := fmt.Sprintf("seg-%d-%d-%08x%s", time.Now().UnixNano(), os.Getpid(), rand.Uint32(), segExt)
	path := filepath.Join(r.dir, name)
	locs := make(map[Key]recLoc, len(keys))
	if beforeSegmentWrite != nil {
		beforeSegmentWrite(r)
	}
	rf, err := writeSegment(path, keys, func(k Key) ([]byte, bool) { return recs[k], true }, locs)
	if err != nil {
		restore()
		r.st.mu.Lock()
		r.st.writeErrors++
		r.st.mu.Unlock()
		return len(keys), repoctx.WriteFault("cannot write the index cache in "+r.st.cacheDir, err)
	}
	if afterSegmentRenamed != nil {
		afterSegmentRenamed(path)
	}
	// Read back through the file opened before the rename: another process's
	// compaction may already have merged and removed it under its name.
	seg, _, err := readSegment(rf, name)
	if err != nil {
		restore()
		return len(keys), repoctx.WriteFault("cannot read back the index cache in "+r.st.cacheDir, err)
	}
	mapSegment(seg)
	if beforeSegmentInstalled != nil {
		beforeSegmentInstalled(r)
	}
	r.mu.Lock()
	if r.segs[name] != nil {
		// A rescan (another Get's) found the new file first and indexed it: this
		// opening of it is nobody's.
		seg.f.Close()
		if seg.data != nil {
			syscall.Munmap(seg.data)
		}
	} else {
		r.segs[name] = seg
		entries := make([]segEntry, 0, len(locs))
		for k, loc := range locs {
			loc.seg = seg
			entries = append(entries, segEntry{k, loc})
		}
		r.addEntries(footer{seg: seg, entries: entries})
	}
	r.flushing = nil
	r.noAuto = false
	r.mu.Unlock()
	return 0, nil
}

// afterSegmentRenamed, when set (by tests), is called by a Flush between the rename of
// its new segment into place and reading it back.
var afterSegmentRenamed func(path string)

// beforeSegmentWrite, when set (by tests), is called by a Flush after it took the
// pending records and before it writes them.
var beforeSegmentWrite func(r *Records)

// writeSegment writes the records keys to path atomically, each with the payload
// payload gives it (one at a time: a key it gives none for is left out), and returns
// their locations in locs, and the new file opened for reading (opened before the
// rename, so it reads the file written even once another name replaced it or none
// leads to it).
func writeSegment(path string, keys []Key, payload func(Key) ([]byte, bool), locs map[Key]recLoc) (*os.File, error) {
	f, err := createLocked(path)
	if err != nil {
		return nil, err
	}
	w := bufio.NewWriterSize(f, 1<<16)
	off := int64(0)
	write := func(b []byte) {
		w.Write(b)
		off += int64(len(b))
	}
	write([]byte(segMagic))
	var hdr [1 + 32 + binary.MaxVarintLen64 + 4]byte
	written := keys[:0:0]
	for _, k := range keys {
		p, ok := payload(k)
		if !ok {
			continue
		}
		written = append(written, k)
		hdr[0] = k.Kind
		copy(hdr[1:], k.Hash[:])
		n := 33 + binary.PutUvarint(hdr[33:], uint64(len(p)))
		binary.LittleEndian.PutUint32(hdr[n:], crc32.Checksum(p, castagnoli))
		write(hdr[:n])
		// A record's location covers its CRC and its payload.
		locs[k] = recLoc{off: off, len: 4 + int64(len(p))}
		write(hdr[n : n+4])
		write(p)
	}
	footAt := off
	var foot bytes.Buffer
	var vb [binary.MaxVarintLen64]byte
	foot.Write(vb[:binary.PutUvarint(vb[:], uint64(len(written)))])
	for _, k := range written {
		loc := locs[k]
		foot.WriteByte(k.Kind)
		foot.Write(k.Hash[:])
		foot.Write(vb[:binary.PutUvarint(vb[:], uint64(loc.off))])
		foot.Write(vb[:binary.PutUvarint(vb[:], uint64(loc.len))])
	}
	write(foot.Bytes())
	var tr [segTrailer]byte
	binary.LittleEndian.PutUint64(tr[:], uint64(footAt))
	binary.LittleEndian.PutUint32(tr[8:], uint32(foot.Len()))
	binary.LittleEndian.PutUint32(tr[12:], crc32.Checksum(foot.Bytes(), castagnoli))
	copy(tr[16:], segEnd)
	write(tr[:])
	if err := w.Flush(); err != nil {
		f.Abort()
		return nil, err
	}
	rf, err := os.Open(f.Name())
	if err != nil {
		f.Abort()
		return nil, err
	}
	if err := f.Commit(); err != nil {
		rf.Close()
		return nil, err
	}
	return rf, nil
}

// createLocked starts the atomic write of a segment at path, its temporary file
// locked (flock, exclusive) until it has its final name (RenameOpen), so that a cleaner
// can tell it from one a killed process left (see removeDeadTemps). The file is
// unlocked for an instant after its creation, when a cleaner may remove it: a file
// whose name no longer leads to it after the lock is abandoned for a new one.
func createLocked(path string) (*atomicfile.File, error) {
	for try := 0; ; try++ {
		f, err := atomicfile.Create(path, atomicfile.Options{MkdirAll: true, RenameOpen: true, Replace: true})
		if err != nil {
			return nil, err
		}
		if afterTempCreated != nil {
			afterTempCreated(f.Name())
		}
		flock(f.File, syscall.LOCK_EX)
		held, err1 := f.Stat()
		named, err2 := os.Stat(f.Name())
		if (err1 == nil && err2 == nil && os.SameFile(held, named)) || try == createTries {
			return f, nil // then the rename reports the fault
		}
		f.Abort()
	}
}

// flock applies the flock operation how to f, again when a signal interrupts it (Go's
// runtime signals its threads to preempt goroutines, so a lock that has to wait may
// return EINTR without being held).
func flock(f *os.File, how int) error {
	for {
		if err := syscall.Flock(int(f.Fd()), how); err != syscall.EINTR {
			return err
		}
	}
}

// createTries bounds createLocked's new temporary files. Each is lost only to a cleaner
// that ran in the instant before its lock, so more than one is rare; a cleaner in a
// tight loop beside a loaded writer took four in a row about once in 2,000 writes.
const createTries = 100

// beforeSegmentInstalled, when set (by tests), is called by a segment write between
// the rename of the new segment into place and its records' entry in r's index.
var beforeSegmentInstalled func(r *Records)

// afterTempCreated, when set (by tests), is called between the creation of a segment's
// temporary file and its lock.
var afterTempCreated func(name string)

// removeDeadTemps removes the temporary files in dir that no live process is writing:
// a writer holds an exclusive lock on its file until after the rename (createLocked),
// so a file nobody has locked is a killed writer's. (A live writer's file is unlocked
// for an instant after its creation; removed then, its writer notices and makes
// another.) The cleaner removes a file while holding its lock.
func removeDeadTemps(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !atomicfile.IsTemp(e.Name()) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		if flock(f, syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			os.Remove(p) // its writer is gone
		}
		f.Close()
	}
}

// Flush writes every repository's pending records. It returns the first write error.
func (s *Store) Flush() error {
	s.mu.Lock()
	repos := make([]*Records, 0, len(s.repos))
	for _, r := range s.repos {
		repos = append(repos, r)
	}
	s.mu.Unlock()
	var first error
	for _, r := range repos {
		if _, err := r.Flush(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// WriteErrors returns how many segment writes failed in this process (a full disk, a
// read-only cache): every run after such a failure recomputes what was lost.
func (s *Store) WriteErrors() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writeErrors
}

// CleanOldFormats removes from cacheDir what repoctx wrote there in older formats (the
// per-snapshot index folders, the one-file-per-record store, symbol tables and the
// embedding cache of versions before the store-v2 layout), so that they are rebuilt in
// the current format rather than misread. It leaves everything else alone.
func CleanOldFormats(cacheDir string) (removed int64) {
	ents, err := os.ReadDir(cacheDir)
	if err != nil {
		return 0
	}
	for _, e := range ents {
		if isOldFormat(cacheDir, e) {
			p := filepath.Join(cacheDir, e.Name())
			removed += DirBytes(p)
			os.RemoveAll(p)
		}
	}
	return removed
}

// isOldFormat reports whether the entry e of cacheDir is a cache of an older format.
func isOldFormat(cacheDir string, e fs.DirEntry) bool {
	name := e.Name()
	if !e.IsDir() {
		return false
	}
	switch {
	case name == "store" || name == "symbols" || name == "embeddings":
		return true
	case isHex(name, 32):
		p := filepath.Join(cacheDir, name)
		_, err := os.Stat(filepath.Join(p, "bleve"))
		_, err2 := os.Stat(filepath.Join(p, "manifest.json"))
		return err == nil || err2 == nil
	case strings.HasPrefix(name, ".") && len(name) > 33 && isHex(name[1:33], 32):
		return strings.Contains(name, ".tmp-") || strings.Contains(name, ".old-")
	}
	return false
}

// crc32Of returns the CRC-32C of b; le32 the little-endian uint32 at b's start.
func crc32Of(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }
func le32(b []byte) uint32    { return binary.LittleEndian.Uint32(b) }

func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// DirBytes returns the bytes of the regular files under the folder p (0 when p is
// missing; files that vanish during the walk are not counted).
func DirBytes(p string) int64 {
	var n int64
	filepath.WalkDir(p, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

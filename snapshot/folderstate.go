package snapshot

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"syscall"
	"time"

	"github.com/repoctx/repoctx/store"
)

// folderState is what the walks of one folder learnt of its files (see
// OpenFolderCached): per accepted file its metadata and hash, and when it was recorded.
type folderState struct {
	rs      *store.Records
	key     store.Key
	written time.Time            // when the loaded state was recorded
	old     map[string]fileStamp // from the last walk
	cur     map[string]fileStamp // from this walk
}

// fileStamp is a file's metadata as a walk saw it, with its content's SHA-256.
type fileStamp struct {
	size, mtime, ctime int64 // bytes; nanoseconds since the epoch
	ino, dev           uint64
	sum                [32]byte
}

// racyWindow is how recent a modification may be, against the time the state was
// recorded, for the file still to be read (its times may not show a later write).
const racyWindow = 2 * time.Second

func stampOf(fi fs.FileInfo, sum [32]byte) (fileStamp, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileStamp{}, false
	}
	return fileStamp{size: fi.Size(), mtime: fi.ModTime().UnixNano(), ctime: st.Ctim.Nano(),
		ino: uint64(st.Ino), dev: uint64(st.Dev), sum: sum}, true
}

// loadFolderState reads the state of folder abs walked with opts from rs (empty when
// there is none or it is damaged).
func loadFolderState(rs *store.Records, abs string, opts WalkOptions) *folderState {
	slices.Sort(opts.Exclude)
	slices.Sort(opts.Languages)
	h := sha256.Sum256(fmt.Appendf(nil, "%s\x00walk\x00%s\x00%v\x00%v\x00%v\x00%v\x00%q\x00%q\x00%d",
		store.Version, abs, opts.NoIgnoreFiles, opts.KeepVendored, opts.KeepGenerated, opts.OtherFiles,
		opts.Exclude, opts.Languages, opts.MaxFileBytes))
	f := &folderState{rs: rs, key: store.Key{Kind: store.KindWalk, Hash: h}, old: map[string]fileStamp{}, cur: map[string]fileStamp{}}
	if b, ok := rs.Get(f.key); ok {
		f.decode(b)
	}
	return f
}

// known vouches for a file the last walk accepted whose metadata did not change.
func (f *folderState) known(path string, fi fs.FileInfo) ([32]byte, bool) {
	now, ok := stampOf(fi, [32]byte{})
	if !ok {
		return [32]byte{}, false
	}
	return f.knownStamp(path, now)
}

// knownStamp is known for a file whose metadata now holds (its sum ignored).
func (f *folderState) knownStamp(path string, now fileStamp) ([32]byte, bool) {
	old, ok := f.old[path]
	if !ok {
		return [32]byte{}, false
	}
	now.sum = old.sum
	if now != old || time.Unix(0, old.mtime).After(f.written.Add(-racyWindow)) {
		return [32]byte{}, false
	}
	return old.sum, true
}

// FolderState is what the walks of one folder with one set of walk options learnt of
// its files, kept in the store (as [OpenFolderCached] keeps it): per accepted file its
// size, modification and change times, inode and SHA-256. A walk given its Known
// (WalkOptions.Known) yields the files whose metadata did not change unread, as git's
// index trusts a file's stat data, unless they were modified within two seconds before
// the state was recorded. Add every file a walk yields and Save once it ends; the state is
// written with the records' next segment. Not safe for concurrent use.
type FolderState struct{ st *folderState }

// LoadFolderState reads the state of the folder abs (an absolute path) walked with
// opts from recs (empty when there is none or it is damaged).
func LoadFolderState(recs *store.Records, abs string, opts WalkOptions) *FolderState {
	return &FolderState{st: loadFolderState(recs, abs, opts)}
}

// Known vouches for a file the recorded walk accepted whose metadata fi did not
// change: its SHA-256 and true (for WalkOptions.Known).
func (f *FolderState) Known(path string, fi fs.FileInfo) ([32]byte, bool) {
	return f.st.known(path, fi)
}

// Add records a file this walk yielded (read, or vouched for by Known), its metadata
// fi as the walker saw it before reading (File.Info), and its SHA-256.
func (f *FolderState) Add(path string, fi fs.FileInfo, sum [32]byte) { f.st.add(path, fi, sum) }

// Save puts this walk's state in the store when it differs from the recorded one.
func (f *FolderState) Save() { f.st.save() }

// loadSnapshotState reads the state of the folder snapshot abs ([OpenDir]) whose files
// of the languages langs (grammar names, sorted; empty: every language) a view
// indexes, from rs (empty when there is none or it is damaged): what the views of that
// folder learnt of its files, so that a later view hashes only the files whose
// metadata changed.
func loadSnapshotState(rs *store.Records, abs string, langs []string) *folderState {
	h := sha256.Sum256(fmt.Appendf(nil, "%s\x00snapshot-folder\x00%s\x00%q", store.Version, abs, langs))
	f := &folderState{rs: rs, key: store.Key{Kind: store.KindWalk, Hash: h}, old: map[string]fileStamp{}, cur: map[string]fileStamp{}}
	if b, ok := rs.Get(f.key); ok {
		f.decode(b)
	}
	return f
}

// add records an accepted file (nothing when f is nil or the metadata is unknown).
func (f *folderState) add(path string, fi fs.FileInfo, sum [32]byte) {
	if f == nil || fi == nil {
		return
	}
	if st, ok := stampOf(fi, sum); ok {
		f.cur[path] = st
	}
}

// save puts this walk's state in the store when it differs from the last one (or when
// a file was too recent to be vouched for, so the next walk can).
func (f *folderState) save() {
	if f == nil {
		return
	}
	same := len(f.cur) == len(f.old)
	recent := time.Unix(0, 0)
	for p, s := range f.cur {
		if f.old[p] != s {
			same = false
		}
		if t := time.Unix(0, s.mtime); t.After(recent) {
			recent = t
		}
	}
	if same && recent.Before(f.written.Add(-racyWindow)) {
		return
	}
	f.rs.Put(f.key, f.encode(time.Now()))
}

// encode writes the record time (int64 LE nanoseconds), the file count and per file
// its path (uvarint length, bytes), size, times, inode, device (uvarints) and hash.
func (f *folderState) encode(now time.Time) []byte {
	var b bytes.Buffer
	var vb [binary.MaxVarintLen64]byte
	put := func(n uint64) { b.Write(vb[:binary.PutUvarint(vb[:], n)]) }
	binary.Write(&b, binary.LittleEndian, now.UnixNano())
	paths := make([]string, 0, len(f.cur))
	for p := range f.cur {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	put(uint64(len(paths)))
	for _, p := range paths {
		s := f.cur[p]
		put(uint64(len(p)))
		b.WriteString(p)
		for _, n := range []uint64{uint64(s.size), uint64(s.mtime), uint64(s.ctime), s.ino, s.dev} {
			put(n)
		}
		b.Write(s.sum[:])
	}
	return b.Bytes()
}

// decode reads what encode wrote; a damaged record leaves the state empty.
func (f *folderState) decode(b []byte) {
	r := bytes.NewReader(b)
	var ns int64
	if binary.Read(r, binary.LittleEndian, &ns) != nil {
		return
	}
	n, err := binary.ReadUvarint(r)
	if err != nil || n > uint64(len(b)) {
		return
	}
	old := make(map[string]fileStamp, n)
	for range n {
		l, err := binary.ReadUvarint(r)
		if err != nil || l > uint64(r.Len()) {
			return
		}
		p := make([]byte, l)
		io.ReadFull(r, p)
		var v [5]uint64
		for i := range v {
			if v[i], err = binary.ReadUvarint(r); err != nil {
				return
			}
		}
		s := fileStamp{size: int64(v[0]), mtime: int64(v[1]), ctime: int64(v[2]), ino: v[3], dev: v[4]}
		if _, err := io.ReadFull(r, s.sum[:]); err != nil {
			return
		}
		old[string(p)] = s
	}
	f.old, f.written = old, time.Unix(0, ns)
}

// FolderHashes is what the views of a folder snapshot ([OpenDir]) learnt of its
// files' hashes, kept in the store: a view takes the hash of a file whose metadata
// (size, modification and change times, inode) did not change since from it, as git's
// index trusts a file's stat data, and reads and hashes only the others. The zero
// state (nil) knows nothing; its methods do nothing.
type FolderHashes struct {
	snap  *snapshot
	recs  *store.Records
	langs []string
	state *folderState // loaded on first use
}

// LoadFolderHashes returns the hashes that earlier views of snap indexing the files of
// languages langs (grammar names, sorted; empty: every language) left in recs, or nil
// when snap is not a folder snapshot opened by [OpenDir] or [OpenDirFiles].
func LoadFolderHashes(recs *store.Records, snap Snapshot, langs []string) *FolderHashes {
	s, ok := snap.(*snapshot)
	if !ok || s.dir == "" || recs == nil {
		return nil
	}
	return &FolderHashes{snap: s, recs: recs, langs: langs}
}

// Known returns the hash and size of the listed file path when its metadata did not
// change since a view recorded its hash (and it is within the snapshot's size limit);
// the file's bytes are then read only when needed, and must be checked against the
// hash then.
func (h *FolderHashes) Known(path string) (sum [32]byte, size int64, ok bool) {
	if h == nil {
		return sum, 0, false
	}
	dir, stamp, stamped := h.snap.folderStamp(path)
	if !stamped {
		return sum, 0, false
	}
	if h.state == nil {
		h.state = loadSnapshotState(h.recs, dir, h.langs)
	}
	if sum, ok := h.state.knownStamp(path, stamp); ok && stamp.size <= h.snap.fileLimit() {
		stamp.sum = sum
		h.state.cur[path] = stamp
		return sum, stamp.size, true
	}
	return sum, 0, false
}

// Add records the hash of the listed file path, read now (size bytes): a later view
// trusts it while the file's metadata stay as they were when the snapshot listed it.
func (h *FolderHashes) Add(path string, size int64, sum [32]byte) {
	if h == nil {
		return
	}
	dir, stamp, stamped := h.snap.folderStamp(path)
	if !stamped || size != stamp.size {
		return
	}
	if h.state == nil {
		h.state = loadSnapshotState(h.recs, dir, h.langs)
	}
	stamp.sum = sum
	h.state.cur[path] = stamp
}

// Save puts what this view learnt in the store (written with its next segment), when
// it differs from what was there.
func (h *FolderHashes) Save() {
	if h == nil || h.state == nil {
		return
	}
	h.state.save()
}

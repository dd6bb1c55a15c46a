package workspace

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
)

// folderState is what the walks of one folder learnt of its files (see
// OpenFolderCached): per accepted file its metadata and hash, and when it was recorded.
type folderState struct {
	rs      *repoStore
	key     recKey
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
func loadFolderState(rs *repoStore, abs string, opts WalkOptions) *folderState {
	slices.Sort(opts.Exclude)
	slices.Sort(opts.Languages)
	h := sha256.Sum256(fmt.Appendf(nil, "%s\x00walk\x00%s\x00%v\x00%v\x00%v\x00%v\x00%q\x00%q\x00%d",
		storeVersion, abs, opts.NoIgnoreFiles, opts.KeepVendored, opts.KeepGenerated, opts.OtherFiles,
		opts.Exclude, opts.Languages, opts.MaxFileBytes))
	f := &folderState{rs: rs, key: recKey{kindWalk, h}, old: map[string]fileStamp{}, cur: map[string]fileStamp{}}
	if b, ok := rs.get(f.key); ok {
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

// loadSnapshotState reads the state of the folder snapshot abs ([OpenDir]) whose files
// of the languages langs (grammar names, sorted; empty: every language) a view
// indexes, from rs (empty when there is none or it is damaged): what the views of that
// folder learnt of its files, so that a later view hashes only the files whose
// metadata changed.
func loadSnapshotState(rs *repoStore, abs string, langs []string) *folderState {
	h := sha256.Sum256(fmt.Appendf(nil, "%s\x00snapshot-folder\x00%s\x00%q", storeVersion, abs, langs))
	f := &folderState{rs: rs, key: recKey{kindWalk, h}, old: map[string]fileStamp{}, cur: map[string]fileStamp{}}
	if b, ok := rs.get(f.key); ok {
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
	f.rs.put(f.key, f.encode(time.Now()))
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

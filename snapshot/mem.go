package snapshot

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sync"
	"sync/atomic"
)

// MemFile is one file of an in-memory snapshot ([NewMem]): its raw bytes and their
// SHA-256, or, for a file a walk vouched for without reading it, its hash and a
// [Lazy] read of its bytes. A MemFile is never modified once a snapshot holds it.
type MemFile struct {
	Data []byte
	Sum  [32]byte // SHA-256 of Data (or of what Lazy reads)
	// Lazy, when Data is nil and Lazy is not, reads the bytes on first need (see
	// [MemFile.Bytes]); files read whole leave it nil.
	Lazy *Lazy
}

// Lazy is the deferred read of a file's bytes whose size and SHA-256 are known (a
// walk's state vouched for them): Read runs once, on the first [MemFile.Bytes], and
// its bytes must hash to the file's Sum. It is safe for concurrent use.
type Lazy struct {
	// Size is the file's size in bytes, as its metadata said.
	Size int64
	// Read reads the file's bytes.
	Read func() ([]byte, error)

	once   sync.Once
	data   []byte
	err    error
	failed atomic.Bool // set once the read has failed (err is set)
}

// Failed reports whether the read ran and failed (an error, or bytes that did not
// hash to the file's Sum); false before the read and while it runs. It never reads.
func (l *Lazy) Failed() bool { return l.failed.Load() }

// ErrChanged is the error (wrapped) of a lazy read whose bytes no longer hash as the
// walk that vouched for the file recorded: the file changed since.
var ErrChanged = errors.New("snapshot: the file changed since the walk that vouched for it")

// Bytes returns the file's bytes: Data, or Lazy's bytes (read on the first call and
// kept; an error when the read fails or the bytes do not hash to Sum, wrapping
// ErrChanged then). The result must not be modified.
func (f *MemFile) Bytes() ([]byte, error) {
	if f.Data != nil || f.Lazy == nil {
		return f.Data, nil
	}
	l := f.Lazy
	l.once.Do(func() {
		data, err := l.Read()
		switch {
		case err != nil:
			l.err = err
		case sha256.Sum256(data) != f.Sum:
			l.err = ErrChanged
		default:
			l.data = data
		}
		l.failed.Store(l.err != nil)
	})
	return l.data, l.err
}

// Len returns the file's size in bytes: len(Data), or Lazy's Size.
func (f *MemFile) Len() int64 {
	if f.Data == nil && f.Lazy != nil {
		return f.Lazy.Size
	}
	return int64(len(f.Data))
}

// memSnapshot is a [Snapshot] over memory, and a [Hasher] (every file was hashed
// once, when it was stored), so that a view of it reads no file and hashes none.
type memSnapshot struct {
	name  string
	files map[string]*MemFile // by slash path; never modified
	paths []string            // sorted
}

var (
	_ Snapshot = (*memSnapshot)(nil)
	_ Hasher   = (*memSnapshot)(nil)
)

// NewMem returns the snapshot named name of files (slash path relative to the root ->
// file), held in memory, such as one frozen state of an editor's workspace folder. It
// is also a [Hasher]: the files' Sum fields are their hashes. The map and the files
// are kept, not copied: the caller must not modify them afterwards. Limits do not
// apply (the files are already in memory).
func NewMem(name string, files map[string]*MemFile) Snapshot {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	return &memSnapshot{name: name, files: files, paths: paths}
}

// Name implements [Snapshot].
func (s *memSnapshot) Name() string { return s.name }

// Paths implements [Snapshot]: the sorted paths, a copy.
func (s *memSnapshot) Paths() []string { return slices.Clone(s.paths) }

// Size implements [Snapshot]: the size in bytes of the bytes held.
func (s *memSnapshot) Size(p string) (int64, bool) {
	f, ok := s.files[p]
	if !ok {
		return 0, false
	}
	return f.Len(), true
}

// Skipped implements [Snapshot]: none.
func (s *memSnapshot) Skipped() []Skip { return nil }

// SHA256 implements [Hasher].
func (s *memSnapshot) SHA256(p string) ([32]byte, bool) {
	f, ok := s.files[p]
	if !ok {
		return [32]byte{}, false
	}
	return f.Sum, true
}

// ReadFile implements [fs.ReadFileFS]: a copy of the bytes held, or read lazily (the
// caller may modify it, as fs.ReadFileFS allows), or the lazy read's error.
func (s *memSnapshot) ReadFile(p string) ([]byte, error) {
	f, ok := s.files[p]
	if !ok {
		return nil, fmt.Errorf("snapshot: snapshot %s: read %s: %w", s.name, p, fs.ErrNotExist)
	}
	b, err := f.Bytes()
	if err != nil {
		return nil, fmt.Errorf("snapshot: snapshot %s: read %s: %w", s.name, p, err)
	}
	return bytes.Clone(b), nil
}

// Open implements [fs.FS] as a folder or zip snapshot's Open does.
func (s *memSnapshot) Open(name string) (fs.File, error) {
	return openListed(name, s.paths, s.Size, s.ReadFile)
}

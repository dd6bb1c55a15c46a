package snapshot

import (
	"bytes"
	"fmt"
	"io/fs"
	"slices"
)

// MemFile is one file of an in-memory snapshot ([NewMem]): its raw bytes and their
// SHA-256. A MemFile is never modified once a snapshot holds it.
type MemFile struct {
	Data []byte
	Sum  [32]byte // SHA-256 of Data
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
	return int64(len(f.Data)), true
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

// ReadFile implements [fs.ReadFileFS]: a copy of the bytes held (the caller may
// modify it, as fs.ReadFileFS allows).
func (s *memSnapshot) ReadFile(p string) ([]byte, error) {
	f, ok := s.files[p]
	if !ok {
		return nil, fmt.Errorf("snapshot: snapshot %s: read %s: %w", s.name, p, fs.ErrNotExist)
	}
	return bytes.Clone(f.Data), nil
}

// Open implements [fs.FS] as a folder or zip snapshot's Open does.
func (s *memSnapshot) Open(name string) (fs.File, error) {
	return openListed(name, s.paths, s.Size, s.ReadFile)
}

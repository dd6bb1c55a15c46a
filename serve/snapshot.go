package serve

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/repoctx/repoctx/workspace"
)

// memFile is one file of a live workspace: its raw bytes and their SHA-256, and what a
// stat said just before the bytes were read (the polling fallback compares it). A
// memFile is never modified once made: a changed file gets a new one.
type memFile struct {
	data []byte
	sum  [32]byte
	size int64     // bytes, from the stat before reading
	mod  time.Time // modification time, from the stat before reading
}

// memSnapshot is one frozen state of a live workspace: a [workspace.Snapshot] over
// memory, and a [workspace.Hasher] (every file was hashed once, when it was read), so
// that opening a view after an edit reads no file and hashes none.
type memSnapshot struct {
	name  string
	files map[string]*memFile // by slash path; shared with other states, never modified
	paths []string            // sorted
}

var (
	_ workspace.Snapshot = (*memSnapshot)(nil)
	_ workspace.Hasher   = (*memSnapshot)(nil)
)

// newMemSnapshot freezes files (the map is kept: the caller must not modify it).
func newMemSnapshot(name string, files map[string]*memFile) *memSnapshot {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	return &memSnapshot{name: name, files: files, paths: paths}
}

// Name implements [workspace.Snapshot]: the folder's base name.
func (s *memSnapshot) Name() string { return s.name }

// Paths implements [workspace.Snapshot]: the sorted paths, a copy.
func (s *memSnapshot) Paths() []string { return slices.Clone(s.paths) }

// Size implements [workspace.Snapshot]: the size in bytes of the bytes held.
func (s *memSnapshot) Size(p string) (int64, bool) {
	f, ok := s.files[p]
	if !ok {
		return 0, false
	}
	return int64(len(f.data)), true
}

// Skipped implements [workspace.Snapshot]: none (the walker's skips are logged when
// the workspace is read).
func (s *memSnapshot) Skipped() []workspace.Skip { return nil }

// SHA256 implements [workspace.Hasher].
func (s *memSnapshot) SHA256(p string) ([32]byte, bool) {
	f, ok := s.files[p]
	if !ok {
		return [32]byte{}, false
	}
	return f.sum, true
}

// ReadFile implements [fs.ReadFileFS]: the bytes held (shared: callers must not modify
// them, as workspace.Open does not).
func (s *memSnapshot) ReadFile(p string) ([]byte, error) {
	f, ok := s.files[p]
	if !ok {
		return nil, fmt.Errorf("serve: snapshot %s: read %s: %w", s.name, p, fs.ErrNotExist)
	}
	return f.data, nil
}

// Open implements [fs.FS]: a listed file, or a folder holding listed files (listing
// its entries).
func (s *memSnapshot) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if f, ok := s.files[name]; ok {
		return &memOpen{r: bytes.NewReader(f.data), info: memInfo{name: path.Base(name), size: int64(len(f.data))}}, nil
	}
	prefix := name + "/"
	if name == "." {
		prefix = ""
	}
	i := sort.SearchStrings(s.paths, prefix)
	var ents []fs.DirEntry
	seen := map[string]bool{}
	for ; i < len(s.paths) && strings.HasPrefix(s.paths[i], prefix); i++ {
		elem, _, isDir := strings.Cut(s.paths[i][len(prefix):], "/")
		if seen[elem] {
			continue
		}
		seen[elem] = true
		info := memInfo{name: elem, dir: isDir}
		if !isDir {
			info.size = int64(len(s.files[s.paths[i]].data))
		}
		ents = append(ents, fs.FileInfoToDirEntry(info))
	}
	if ents == nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return &memDir{info: memInfo{name: path.Base(name), dir: true}, ents: ents}, nil
}

// memInfo is the fs.FileInfo of a snapshot entry.
type memInfo struct {
	name string
	size int64
	dir  bool
}

func (i memInfo) Name() string { return i.name }
func (i memInfo) Size() int64  { return i.size }
func (i memInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o555
	}
	return 0o444
}
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return i.dir }
func (i memInfo) Sys() any           { return nil }

// memOpen is an opened snapshot file.
type memOpen struct {
	r    *bytes.Reader
	info memInfo
}

func (f *memOpen) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *memOpen) Read(p []byte) (int, error) { return f.r.Read(p) }
func (f *memOpen) Close() error               { return nil }

// memDir is an opened snapshot folder.
type memDir struct {
	info memInfo
	ents []fs.DirEntry
	pos  int
}

func (d *memDir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *memDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.info.name, Err: fs.ErrInvalid}
}
func (d *memDir) Close() error { return nil }

// ReadDir implements fs.ReadDirFile.
func (d *memDir) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.ents[d.pos:]
	if n <= 0 {
		d.pos = len(d.ents)
		return slices.Clone(rest), nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	n = min(n, len(rest))
	d.pos += n
	return slices.Clone(rest[:n]), nil
}

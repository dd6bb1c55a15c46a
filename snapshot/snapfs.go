package snapshot

import (
	"bytes"
	"io"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"
	"time"
)

// Open implements [fs.FS] for a snapshot: a listed file opens as a read-only file
// holding its content (read whole, within the size limit), and any folder that
// holds listed files (the root ".") opens as a directory listing them, so that
// fs.WalkDir and fs.Glob work on a snapshot. Names are slash-separated and
// unrooted (fs.ValidPath); anything not listed gives an *fs.PathError wrapping
// fs.ErrNotExist.
func (s *snapshot) Open(name string) (fs.File, error) {
	return openListed(name, s.paths, s.Size, s.ReadFile)
}

// openListed is the Open of every snapshot: name among the sorted paths of the listed
// files (whose sizes size gives and whose content read returns), or a folder holding
// some of them.
func openListed(name string, paths []string, size func(string) (int64, bool), read func(string) ([]byte, error)) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if _, ok := size(name); ok {
		b, err := read(name)
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
		return &snapFile{r: bytes.NewReader(b), info: snapInfo{name: path.Base(name), size: int64(len(b))}}, nil
	}
	if ents := dirEntries(name, paths, size); ents != nil {
		return &snapDir{info: snapInfo{name: path.Base(name), dir: true}, ents: ents}, nil
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

// dirEntries returns the entries of folder dir (sorted) among the sorted paths of
// listed files (of sizes size), or nil when no listed file is under it.
func dirEntries(dir string, paths []string, size func(string) (int64, bool)) []fs.DirEntry {
	prefix := ""
	if dir != "." {
		prefix = dir + "/"
	}
	i := sort.SearchStrings(paths, prefix)
	var ents []fs.DirEntry
	last := ""
	for ; i < len(paths) && strings.HasPrefix(paths[i], prefix); i++ {
		rest := paths[i][len(prefix):]
		elem, _, isDir := strings.Cut(rest, "/")
		if elem == last {
			continue
		}
		last = elem
		info := snapInfo{name: elem, dir: isDir}
		if !isDir {
			info.size, _ = size(paths[i])
		}
		ents = append(ents, fs.FileInfoToDirEntry(info))
	}
	// A file "a.b" sorts between folder "a"'s files ("a/x") and "a0": entries of one
	// name are adjacent only per kind, so sort and drop repeats.
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return slices.CompactFunc(ents, func(a, b fs.DirEntry) bool { return a.Name() == b.Name() })
}

// snapInfo is the fs.FileInfo of a snapshot entry (no modification time: snapshots
// are content, not file systems with history).
type snapInfo struct {
	name string
	size int64
	dir  bool
}

func (i snapInfo) Name() string { return i.name }
func (i snapInfo) Size() int64  { return i.size }
func (i snapInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o555
	}
	return 0o444
}
func (i snapInfo) ModTime() time.Time { return time.Time{} }
func (i snapInfo) IsDir() bool        { return i.dir }
func (i snapInfo) Sys() any           { return nil }

// snapFile is an opened snapshot file.
type snapFile struct {
	r    *bytes.Reader
	info snapInfo
}

func (f *snapFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *snapFile) Read(p []byte) (int, error) { return f.r.Read(p) }
func (f *snapFile) Close() error               { return nil }

// Seek and ReadAt let http.FileServer and io.SectionReader use a snapshot file.
func (f *snapFile) Seek(off int64, whence int) (int64, error) { return f.r.Seek(off, whence) }
func (f *snapFile) ReadAt(p []byte, off int64) (int, error)   { return f.r.ReadAt(p, off) }

// snapDir is an opened snapshot folder.
type snapDir struct {
	info snapInfo
	ents []fs.DirEntry
	pos  int
}

func (d *snapDir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *snapDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.info.name, Err: fs.ErrInvalid}
}
func (d *snapDir) Close() error { return nil }

// ReadDir implements fs.ReadDirFile.
func (d *snapDir) ReadDir(n int) ([]fs.DirEntry, error) {
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

package snapshot

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
)

// RootFS is root.FS() with the folders on the way kept open: os.Root resolves every
// path one component at a time (an openat per folder of the path, so that no symlink
// leads out of the root), which made the walker open each file's folders again for
// every file (about 40 system calls per file of a deep repository, 4x the walk's
// time). RootFS opens each folder once, as an os.Root of its own below its parent's,
// keeps the most recently used ones open (the walk goes depth first, so a few
// suffice) and opens a file with one openat relative to its folder. A file a folder's
// own root refuses (a symlink to elsewhere in the repository) is opened through the
// repository's root, so what can be opened is exactly what root.FS() opens. It is
// safe for concurrent use. It is meant for one walk or one batch of reads: a folder
// kept open and renamed meanwhile would be read under its old path, so a long-lived
// caller (a live workspace) makes one per walk and closes it after.
type RootFS struct {
	root *os.Root

	mu   sync.Mutex
	subs map[string]*os.Root // folder path -> its root
	lru  []string            // folder paths, least recently used first
	raw  rawDirs             // folder listings without os.Root's per-entry lstat (Linux)
}

// rootFSKeep is the number of folder roots a RootFS keeps open.
const rootFSKeep = 32

// NewRootFS returns the RootFS of root; Close closes the folders it opened (not root).
func NewRootFS(root *os.Root) *RootFS { return &RootFS{root: root, subs: map[string]*os.Root{}} }

// Open implements fs.FS.
func (r *RootFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	dir := path.Dir(name)
	if name == "." || dir == "." {
		return r.root.Open(name)
	}
	r.mu.Lock()
	sub, err := r.sub(dir)
	r.mu.Unlock()
	if err == nil {
		if f, err := sub.Open(path.Base(name)); err == nil {
			return f, nil
		}
	}
	return r.root.Open(name) // the root's own answer (and error)
}

// ReadDir implements fs.ReadDirFS: the entries of folder name, sorted by name. On
// Linux a folder is listed with getdents64 through a descriptor opened below its
// parent's without following symlinks, and an entry is stat'ed only when its Info is
// asked for (os.Root's listing lstats every entry); a path with a symlink on the way
// is listed through the root, which follows it if it stays inside. The entries are the
// same either way.
func (r *RootFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrInvalid}
	}
	if entries, ok, err := r.readDirRaw(name); ok {
		return entries, err
	}
	f, err := r.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d, ok := f.(fs.ReadDirFile)
	if !ok {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errors.New("not implemented")}
	}
	list, err := d.ReadDir(-1)
	slices.SortFunc(list, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return list, err
}

// Stat implements fs.StatFS: the stat of name, following a symlink inside the root
// as os.Root does. On Linux, name (not a symlink) is stat'ed relative to its
// folder's descriptor, without opening it.
func (r *RootFS) Stat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	}
	if name != "." {
		if fi, ok := r.statRaw(name); ok {
			return fi, nil
		}
	}
	return r.root.Stat(name)
}

// sub returns the root of folder dir (not "."), opening it below its parent's (r.mu
// held).
func (r *RootFS) sub(dir string) (*os.Root, error) {
	if s := r.subs[dir]; s != nil {
		r.touch(dir)
		return s, nil
	}
	parent := r.root
	if p := path.Dir(dir); p != "." {
		var err error
		if parent, err = r.sub(p); err != nil {
			return nil, err
		}
	}
	s, err := parent.OpenRoot(path.Base(dir))
	if err != nil {
		return nil, err
	}
	r.subs[dir] = s
	r.lru = append(r.lru, dir)
	for len(r.lru) > rootFSKeep {
		old := r.lru[0]
		r.lru = r.lru[1:]
		r.subs[old].Close()
		delete(r.subs, old)
	}
	return s, nil
}

// touch marks dir most recently used (r.mu held).
func (r *RootFS) touch(dir string) {
	for i, d := range r.lru {
		if d == dir {
			copy(r.lru[i:], r.lru[i+1:])
			r.lru[len(r.lru)-1] = dir
			return
		}
	}
}

// Close closes the folder roots (not the repository's root).
func (r *RootFS) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.subs {
		s.Close()
	}
	clear(r.subs)
	r.lru = nil
	r.closeRaw()
}

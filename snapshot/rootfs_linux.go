package snapshot

import (
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A folder listing through os.Root costs, per folder, an openat, an fstat, four
// fcntl and a failed epoll_ctl (the *os.File's set-up), and an lstat of every entry
// (a File opened in a Root cannot stat lazily). At 50,000 files that was most of a
// one-shot query's walk. The listing below opens each folder with one openat
// relative to its parent's descriptor (O_NOFOLLOW and O_DIRECTORY: no component is a
// symlink, so nothing leads out of the root, as with os.Root), reads it with
// getdents64 and stats an entry only when its Info is asked for, relative to the
// folder's descriptor.

// dirFD is a folder's descriptor, kept open while recent (see rawDirs); fd is -1
// once closed.
type dirFD struct {
	mu     sync.RWMutex // held to read the folder (Lock) or stat an entry (RLock)
	fd     int
	path   string // the folder's slash path ("." for the root)
	listed bool   // read to its end once: the next listing seeks back first
}

// close closes the descriptor once no Info call uses it.
func (d *dirFD) close() {
	d.mu.Lock()
	if d.fd >= 0 {
		unix.Close(d.fd)
		d.fd = -1
	}
	d.mu.Unlock()
}

// rootFSKeepFDs is the number of folder descriptors a RootFS keeps open for listing.
const rootFSKeepFDs = 64

// rawDirs holds the listing side of a RootFS (r.mu held for every field).
type rawDirs struct {
	fds   map[string]*dirFD
	fdLRU []string
	root  *dirFD // the root's own descriptor, opened on first use
	off   bool   // the root's descriptor could not be had: list through os.Root
}

// fdOf returns the descriptor of folder dir, opening it (and the folders above it)
// when not kept (r.mu held). A failure is the openat's errno.
func (r *RootFS) fdOf(dir string) (*dirFD, error) {
	if dir == "." {
		if r.raw.root == nil {
			f, err := r.root.Open(".")
			if err != nil {
				return nil, err
			}
			sc, err := f.SyscallConn()
			if err != nil {
				f.Close()
				return nil, err
			}
			fd, oerr := -1, error(nil)
			if err := sc.Control(func(p uintptr) {
				fd, oerr = unix.Openat(int(p), ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			}); err != nil {
				oerr = err
			}
			f.Close()
			if oerr != nil {
				return nil, oerr
			}
			r.raw.root = &dirFD{fd: fd, path: "."}
		}
		return r.raw.root, nil
	}
	if d := r.raw.fds[dir]; d != nil {
		r.touchFD(dir)
		return d, nil
	}
	parent, err := r.fdOf(path.Dir(dir))
	if err != nil {
		return nil, err
	}
	var fd int
	for {
		fd, err = unix.Openat(parent.fd, path.Base(dir), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	d := &dirFD{fd: fd, path: dir}
	if r.raw.fds == nil {
		r.raw.fds = map[string]*dirFD{}
	}
	r.raw.fds[dir] = d
	r.raw.fdLRU = append(r.raw.fdLRU, dir)
	for len(r.raw.fdLRU) > rootFSKeepFDs {
		old := r.raw.fdLRU[0]
		r.raw.fdLRU = r.raw.fdLRU[1:]
		r.raw.fds[old].close()
		delete(r.raw.fds, old)
	}
	return d, nil
}

// touchFD marks dir most recently used (r.mu held).
func (r *RootFS) touchFD(dir string) {
	i := slices.Index(r.raw.fdLRU, dir)
	if i >= 0 {
		copy(r.raw.fdLRU[i:], r.raw.fdLRU[i+1:])
		r.raw.fdLRU[len(r.raw.fdLRU)-1] = dir
	}
}

// closeRaw closes the listing descriptors (r.mu held).
func (r *RootFS) closeRaw() {
	for _, d := range r.raw.fds {
		d.close()
	}
	clear(r.raw.fds)
	r.raw.fdLRU = nil
	if r.raw.root != nil {
		r.raw.root.close()
		r.raw.root = nil
	}
}

var direntBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// readDirRaw lists folder name with getdents64. ok is false when the listing must go
// through os.Root instead (a component is a symlink, which os.Root follows inside the
// root, or the root's descriptor cannot be had); err is then nil.
func (r *RootFS) readDirRaw(name string) (entries []fs.DirEntry, ok bool, err error) {
	r.mu.Lock()
	if r.raw.off {
		r.mu.Unlock()
		return nil, false, nil
	}
	d, err := r.fdOf(name)
	if err != nil && name == "." {
		r.raw.off = true
	}
	if d != nil {
		d.mu.Lock() // not closed while it is read (the LRU may drop it meanwhile)
	}
	r.mu.Unlock()
	switch {
	case err == unix.ELOOP || err == unix.ENOTDIR || name == "." && err != nil:
		return nil, false, nil // a symlink on the way, or not a folder: os.Root's answer
	case err != nil:
		return nil, true, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	defer d.mu.Unlock()
	if d.fd < 0 {
		return nil, false, nil
	}
	if d.listed {
		// Read to its end by an earlier listing: start again.
		if _, err := unix.Seek(d.fd, 0, 0); err != nil {
			return nil, true, &fs.PathError{Op: "readdirent", Path: name, Err: err}
		}
	}
	d.listed = true
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	for {
		n, err := unix.Getdents(d.fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, true, &fs.PathError{Op: "readdirent", Path: name, Err: err}
		}
		if n <= 0 {
			break
		}
		for b := buf[:n]; len(b) > 0; {
			de := (*unix.Dirent)(unsafe.Pointer(&b[0]))
			rec := int(de.Reclen)
			if rec <= 0 || rec > len(b) {
				return nil, true, &fs.PathError{Op: "readdirent", Path: name, Err: syscall.EIO}
			}
			nb := b[unsafe.Offsetof(de.Name):rec]
			b = b[rec:]
			if i := slices.Index(nb, 0); i >= 0 {
				nb = nb[:i]
			}
			n := string(nb)
			if n == "." || n == ".." || de.Ino == 0 {
				continue
			}
			e := &rawDirEntry{dir: d, root: r.root, name: n, typ: direntType(de.Type)}
			if de.Type == unix.DT_UNKNOWN {
				// A file system that does not fill d_type: stat it now (d.mu is held).
				fi, err := lstatAt(d.fd, n)
				if err != nil {
					continue // gone since listed (as os's listing does)
				}
				e.typ, e.info = fi.Mode().Type(), fi
			}
			entries = append(entries, e)
		}
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, true, nil
}

// statRaw is the stat of name (not "."): an fstatat relative to its folder's
// descriptor. ok is false when the answer must come from os.Root instead (a symlink,
// which os.Root follows inside the root; a symlink on the way; no root descriptor).
func (r *RootFS) statRaw(name string) (fs.FileInfo, bool) {
	r.mu.Lock()
	if r.raw.off {
		r.mu.Unlock()
		return nil, false
	}
	d, err := r.fdOf(path.Dir(name))
	if err != nil && path.Dir(name) == "." {
		r.raw.off = true
	}
	if d != nil {
		d.mu.RLock()
	}
	r.mu.Unlock()
	if err != nil {
		return nil, false // os.Root's answer, and its error
	}
	defer d.mu.RUnlock()
	if d.fd < 0 {
		return nil, false
	}
	fi, err := lstatAt(d.fd, path.Base(name))
	switch {
	case err != nil:
		return nil, false
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, false // followed by os.Root, inside the root only
	}
	return fi, true
}

// direntType is the fs.FileMode type bits of a getdents64 d_type.
func direntType(t uint8) fs.FileMode {
	switch t {
	case unix.DT_DIR:
		return fs.ModeDir
	case unix.DT_LNK:
		return fs.ModeSymlink
	case unix.DT_FIFO:
		return fs.ModeNamedPipe
	case unix.DT_SOCK:
		return fs.ModeSocket
	case unix.DT_CHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.DT_BLK:
		return fs.ModeDevice
	}
	return 0
}

// rawDirEntry is an entry of a raw listing; its Info is an lstat relative to its
// folder's descriptor, or, once that is closed, through the RootFS's root.
type rawDirEntry struct {
	dir  *dirFD
	root *os.Root
	name string
	typ  fs.FileMode
	info fs.FileInfo // the lstat taken while listing an entry of unknown type, else nil
}

func (e *rawDirEntry) Name() string      { return e.name }
func (e *rawDirEntry) IsDir() bool       { return e.typ.IsDir() }
func (e *rawDirEntry) Type() fs.FileMode { return e.typ }
func (e *rawDirEntry) String() string    { return fs.FormatDirEntry(e) }

// Info implements fs.DirEntry: the entry's lstat, taken when asked for (as os's
// listing does, anew at each call: an entry may be shared between goroutines).
func (e *rawDirEntry) Info() (fs.FileInfo, error) {
	if e.info != nil {
		return e.info, nil // taken while listing (no type in the listing)
	}
	return e.stat()
}

func (e *rawDirEntry) stat() (fs.FileInfo, error) {
	e.dir.mu.RLock()
	closed := e.dir.fd < 0
	var fi fs.FileInfo
	var err error
	if !closed {
		fi, err = lstatAt(e.dir.fd, e.name)
	}
	e.dir.mu.RUnlock()
	p := e.name
	if e.dir.path != "." {
		p = e.dir.path + "/" + e.name
	}
	if closed {
		return e.root.Lstat(p) // the folder's descriptor was closed meanwhile
	}
	if err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: p, Err: err}
	}
	return fi, nil
}

// lstatAt is the lstat of name in the folder of descriptor fd.
func lstatAt(fd int, name string) (fs.FileInfo, error) {
	var st unix.Stat_t
	for {
		err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == nil {
			return newRawFileInfo(name, &st), nil
		}
		if err != unix.EINTR {
			return nil, err
		}
	}
}

// rawFileInfo is an lstat's answer as os gives it: the same Mode, ModTime and Sys (a
// *syscall.Stat_t).
type rawFileInfo struct {
	name string
	mode fs.FileMode
	st   syscall.Stat_t
}

func newRawFileInfo(name string, st *unix.Stat_t) *rawFileInfo {
	fi := &rawFileInfo{name: name, st: *(*syscall.Stat_t)(unsafe.Pointer(st))}
	// As os's fillFileStatFromSys.
	m := fs.FileMode(st.Mode & 0o777)
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFBLK:
		m |= fs.ModeDevice
	case syscall.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFDIR:
		m |= fs.ModeDir
	case syscall.S_IFIFO:
		m |= fs.ModeNamedPipe
	case syscall.S_IFLNK:
		m |= fs.ModeSymlink
	case syscall.S_IFSOCK:
		m |= fs.ModeSocket
	}
	if st.Mode&syscall.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if st.Mode&syscall.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if st.Mode&syscall.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	fi.mode = m
	return fi
}

func (fi *rawFileInfo) Name() string       { return fi.name }
func (fi *rawFileInfo) Size() int64        { return fi.st.Size }
func (fi *rawFileInfo) Mode() fs.FileMode  { return fi.mode }
func (fi *rawFileInfo) ModTime() time.Time { return time.Unix(fi.st.Mtim.Unix()) }
func (fi *rawFileInfo) IsDir() bool        { return fi.mode.IsDir() }
func (fi *rawFileInfo) Sys() any           { return &fi.st }

package snapshot

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	pathpkg "path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/internal/pathsafe"
)

// ErrTooLarge is wrapped by the errors of Snapshot.ReadFile for a file over
// Limits.MaxFileBytes, by declared size or by the bytes it really holds.
// Callers typically log such an error and go on without the file.
var ErrTooLarge = errors.New("snapshot: file over the size limit")

// Skip is one entry refused while opening a snapshot: Path is the entry's
// name as found (for a zip, possibly hostile, such as "../x"), Reason says
// why it was left out.
type Skip struct {
	Path   string
	Reason string
}

// Snapshot is a read-only view of one repository revision as a file system
// (io/fs): slash-separated paths relative to its root. The two kinds are a folder
// on disk ([OpenDir]) and an inner zip of the competition's zip of zips
// ([Source.Open]), read in place or held in memory. It lists regular files only; symlinks that stay inside
// the snapshot and point to a regular file are listed under their own name.
//
// Open and ReadFile serve only the listed files (and, for Open, the folders that
// hold them); ReadFile refuses files over [Limits.MaxFileBytes] with an error
// wrapping [ErrTooLarge]. Implementations are safe for concurrent use and stay
// usable after the [Source] that opened them is closed.
type Snapshot interface {
	fs.ReadFileFS
	// Name returns the snapshot's name: the inner zip's name without ".zip", or the
	// folder's base name.
	Name() string
	// Paths returns the paths of the regular files listed, sorted. The slice is a copy.
	Paths() []string
	// Size returns the size in bytes of a listed file (the declared uncompressed
	// size for a zip, the size found when opening for a folder) and whether the
	// snapshot lists path.
	Size(path string) (int64, bool)
	// Skipped returns the entries refused while opening the snapshot, with
	// reasons, in the order they were met.
	Skipped() []Skip
}

// snapshot is the Snapshot of a folder or of an inner zip.
type snapshot struct {
	// digest is an inner zip's digest (the SHA-256 of its bytes, or of its listing
	// for one read in place: see listingDigest): the same digest is the same files,
	// so a view can take its files' hashes from the store without reading them.
	digest    [32]byte
	hasDigest bool
	name      string
	lim       Limits
	dir       string // root folder, for a folder snapshot
	files     map[string]fileEntry
	paths     []string
	skipped   []Skip
	sums      map[string][32]byte // SHA-256 of files hashed when listed (OpenFolder), else nil

	// Inner zip only: what reading the files not counted when it was opened (see
	// newZipSnapshot) may still decompress, in bytes, and which of them were charged.
	mu      sync.Mutex
	budget  int64
	charged map[string]bool
}

type fileEntry struct {
	size  int64     // bytes: declared (zip) or found when opening (folder)
	zf    *zip.File // nil for a folder snapshot
	later bool      // a zip entry not counted when opened: charged to budget when first read
	// stamp is a folder snapshot's file's metadata when it was listed (its sum unset),
	// nil when unknown (and for an inner zip's file, whose entry stays small): a view
	// takes the file's hash from the store's record of the folder when the metadata
	// did not change since (see loadSnapshotState).
	stamp *fileStamp
}

// folderStamp returns the metadata of a listed file of a folder snapshot as it was
// when listed, and the folder; ok is false for an inner zip's file or one whose
// metadata is unknown.
func (s *snapshot) folderStamp(path string) (dir string, st fileStamp, ok bool) {
	e, ok := s.files[path]
	if !ok || e.stamp == nil || s.dir == "" {
		return "", fileStamp{}, false
	}
	return s.dir, *e.stamp, true
}

// fileLimit returns the size limit of ReadFile (bytes).
func (s *snapshot) fileLimit() int64 { return s.lim.MaxFileBytes }

// stampEntry returns the entry of a folder snapshot's file of metadata fi.
func stampEntry(fi fs.FileInfo) fileEntry {
	e := fileEntry{size: fi.Size()}
	if st, ok := stampOf(fi, [32]byte{}); ok {
		e.stamp = &st
	}
	return e
}

// SHA256 implements [Hasher] for the files whose bytes were hashed when the snapshot
// was made (a folder opened by [OpenFolder]: the walker read each file once).
func (s *snapshot) SHA256(path string) ([32]byte, bool) {
	sum, ok := s.sums[path]
	return sum, ok
}

// Name implements [Snapshot].
func (s *snapshot) Name() string { return s.name }

// Paths returns the slash-separated paths, relative to the snapshot root, of
// the regular files it lists, sorted. The slice is a copy.
func (s *snapshot) Paths() []string { return slices.Clone(s.paths) }

// Size returns the size in bytes of a listed file (the declared uncompressed
// size for a zip, the size found when opening for a folder) and whether the
// snapshot lists path.
func (s *snapshot) Size(path string) (int64, bool) {
	e, ok := s.lookup(path)
	return e.size, ok
}

// Skipped returns the entries refused while opening the snapshot, with
// reasons: unsafe names, duplicates, symlinks, non-regular files, .git
// folders, unreadable folders, entries over Limits.MaxFiles. The slice is a
// copy, in the order the entries were met.
func (s *snapshot) Skipped() []Skip { return slices.Clone(s.skipped) }

// lookup returns the entry of a listed file; path must be clean (fs.ValidPath), as
// io/fs requires: "a//b" or "./a" name nothing.
func (s *snapshot) lookup(path string) (fileEntry, bool) {
	e, ok := s.files[path]
	return e, ok
}

func (s *snapshot) skip(path, reason string) {
	s.skipped = append(s.skipped, Skip{Path: path, Reason: reason})
}

// ReadFile returns the contents of a listed file. It returns an error naming
// the snapshot and path when the file is not listed (wrapping
// fs.ErrNotExist), when it is over Limits.MaxFileBytes by its size or by the
// bytes actually read (wrapping [ErrTooLarge]; at most MaxFileBytes+1 bytes are
// ever read), when it is a file of an inner zip that was not counted when the zip
// was opened (not a source or ignore file) and the snapshot's remaining
// uncompressed budget (MaxRatio times the zip's size, and MaxSnapshotBytes, less
// what was counted or read before) does not hold it (wrapping [ErrTooLarge]),
// when its zip entry is corrupt, or when the file cannot be read (for example
// permission denied). It is safe for concurrent use.
func (s *snapshot) ReadFile(path string) ([]byte, error) {
	e, ok := s.lookup(path)
	if !ok {
		return nil, fmt.Errorf("snapshot: snapshot %s: read %s: %w", s.name, path, fs.ErrNotExist)
	}
	max := s.lim.MaxFileBytes
	if e.size > max {
		return nil, wrapf(ErrTooLarge, "snapshot: snapshot %s: read %s: file is %d bytes, over the limit of %d bytes", s.name, path, e.size, max)
	}
	if e.zf != nil {
		if e.later {
			if err := s.charge(path, e.size); err != nil {
				return nil, err
			}
		}
		return s.readZip(path, e)
	}
	return s.readDir(path)
}

// charge takes size bytes from the snapshot's budget the first time path is read
// (a file not counted when its inner zip was opened), or returns an error wrapping
// [ErrTooLarge] when the budget does not hold them: the files a snapshot's readers
// read then decompress, all together, to at most the limits of newZipSnapshot.
func (s *snapshot) charge(path string, size int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.charged[path] {
		return nil
	}
	if size > s.budget {
		return wrapf(ErrTooLarge, "snapshot: snapshot %s: read %s: its %d bytes would take what the snapshot's files decompress to over the limit (%d bytes left: at most %g times the zip's size and %d bytes in all)",
			s.name, path, size, s.budget, s.lim.MaxRatio, s.lim.MaxSnapshotBytes)
	}
	s.budget -= size
	if s.charged == nil {
		s.charged = map[string]bool{}
	}
	s.charged[path] = true
	return nil
}

// countedWhenOpened reports whether a zip entry of path and size counts toward an
// inner zip's uncompressed total when the zip is opened: a file the walker (Walk)
// reads, i.e. a source file of a registered language or an ignore file, no larger
// than MaxFileBytes. Files over MaxFileBytes are never read (ReadFile refuses
// them); other files are charged when first read (see charge).
func countedWhenOpened(path string, size uint64, lim Limits) bool {
	if size > uint64(lim.MaxFileBytes) {
		return false
	}
	switch pathpkg.Base(path) {
	case ".gitignore", ".ignore":
		return true
	}
	return grammars.ForPath(path) != nil
}

func (s *snapshot) readZip(path string, e fileEntry) ([]byte, error) {
	rc, err := e.zf.Open()
	if err != nil {
		return nil, fmt.Errorf("snapshot: snapshot %s: read %s: %w", s.name, path, err)
	}
	defer rc.Close()
	buf := bytes.NewBuffer(make([]byte, 0, e.size+bytes.MinRead))
	// e.size <= MaxFileBytes here: never read more than one byte past it.
	n, err := buf.ReadFrom(io.LimitReader(rc, e.size+1))
	if err != nil {
		return nil, fmt.Errorf("snapshot: snapshot %s: read %s: %w", s.name, path, err)
	}
	if n > e.size {
		return nil, wrapf(ErrTooLarge, "snapshot: snapshot %s: read %s: entry decompresses to more than its declared %d bytes", s.name, path, e.size)
	}
	return buf.Bytes(), nil
}

func (s *snapshot) readDir(path string) ([]byte, error) {
	max := s.lim.MaxFileBytes
	f, err := os.OpenInRoot(s.dir, filepath.FromSlash(path))
	if err != nil {
		return nil, fmt.Errorf("snapshot: snapshot %s: read %s: %w", s.name, path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("snapshot: snapshot %s: read %s: %w", s.name, path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("snapshot: snapshot %s: read %s: not a regular file", s.name, path)
	}
	if fi.Size() > max {
		return nil, wrapf(ErrTooLarge, "snapshot: snapshot %s: read %s: file is %d bytes, over the limit of %d bytes", s.name, path, fi.Size(), max)
	}
	buf := bytes.NewBuffer(make([]byte, 0, fi.Size()+bytes.MinRead))
	n, err := buf.ReadFrom(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("snapshot: snapshot %s: read %s: %w", s.name, path, err)
	}
	if n > max {
		return nil, wrapf(ErrTooLarge, "snapshot: snapshot %s: read %s: file grew over the limit of %d bytes", s.name, path, max)
	}
	return buf.Bytes(), nil
}

func (s *snapshot) finish() {
	s.paths = make([]string, 0, len(s.files))
	for p := range s.files {
		s.paths = append(s.paths, p)
	}
	slices.Sort(s.paths)
}

// OpenDir opens one repository folder as a snapshot named after the folder.
// It lists regular files, skips .git folders and files, never follows a
// symlink out of dir (nor an absolute one), does not descend into symlinked
// folders (so symlink loops cannot recur), lists symlinks to regular files
// inside dir under the link's name, and records refused entries and
// unreadable folders in Skipped. At most lim.MaxFiles files are listed. It
// returns an error when dir cannot be opened or read. Files are read later,
// through the same root-confined access, by ReadFile.
func OpenDir(dir string, lim Limits) (Snapshot, error) {
	lim = lim.withDefaults()
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("snapshot: open snapshot folder %s: %w", dir, err)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("snapshot: open snapshot folder %s: %w", dir, err)
	}
	defer root.Close()
	s := &snapshot{name: filepath.Base(abs), lim: lim, dir: abs, files: map[string]fileEntry{}}
	rfs := NewRootFS(root) // each folder opened once, not once per path component
	defer rfs.Close()
	err = fs.WalkDir(rfs, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == "." {
				return err
			}
			s.skip(p, "unreadable: "+errText(err))
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if p == "." {
			return nil
		}
		if d.Name() == ".git" {
			s.skip(p, "git metadata")
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		clean, reason := pathsafe.Clean(p)
		if reason != "" {
			s.skip(p, reason)
			return nil
		}
		var info fs.FileInfo
		switch t := d.Type(); {
		case t&fs.ModeSymlink != 0:
			fi, err := root.Stat(filepath.FromSlash(p))
			switch {
			case errors.Is(err, syscall.ELOOP):
				s.skip(p, "symlink loop")
				return nil
			case errors.Is(err, fs.ErrNotExist):
				s.skip(p, "broken symlink")
				return nil
			case err != nil:
				s.skip(p, "symlink leaves the snapshot or is absolute: "+errText(err))
				return nil
			case fi.IsDir():
				s.skip(p, "symlink to a folder (not followed)")
				return nil
			case !fi.Mode().IsRegular():
				s.skip(p, "symlink to a non-regular file")
				return nil
			}
			info = fi
		case t.IsRegular():
			fi, err := d.Info()
			if err != nil {
				s.skip(p, "unreadable: "+errText(err))
				return nil
			}
			info = fi
		default:
			s.skip(p, fmt.Sprintf("not a regular file (%v)", t))
			return nil
		}
		if len(s.files) >= lim.MaxFiles {
			s.skip(p, fmt.Sprintf("over the limit of %d files: this and later files left out", lim.MaxFiles))
			return fs.SkipAll
		}
		s.files[clean] = stampEntry(info)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("snapshot: open snapshot folder %s: %w", dir, err)
	}
	s.finish()
	return s, nil
}

// OpenDirFiles opens the repository folder dir as a snapshot that lists only
// paths (slash-separated, relative to dir), such as the files a
// [Walk] yielded after its ignore rules; dir itself is not walked.
// Each path is checked as OpenDir checks what it finds (a clean relative name,
// a regular file or a symlink to one inside dir, at most lim.MaxFiles files);
// refused ones are recorded in Skipped. It returns an error when dir cannot be
// opened.
func OpenDirFiles(dir string, paths []string, lim Limits) (Snapshot, error) {
	lim = lim.withDefaults()
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("snapshot: open snapshot folder %s: %w", dir, err)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("snapshot: open snapshot folder %s: %w", dir, err)
	}
	defer root.Close()
	s := &snapshot{name: filepath.Base(abs), lim: lim, dir: abs, files: map[string]fileEntry{}}
	for _, p := range paths {
		clean, reason := pathsafe.Clean(p)
		switch _, dup := s.files[clean]; {
		case reason != "":
			s.skip(p, reason)
			continue
		case dup:
			s.skip(p, "duplicate entry: the first one is kept")
			continue
		}
		fi, err := root.Stat(filepath.FromSlash(clean))
		switch {
		case err != nil:
			s.skip(p, "unreadable: "+errText(err))
			continue
		case !fi.Mode().IsRegular():
			s.skip(p, "not a regular file")
			continue
		case len(s.files) >= lim.MaxFiles:
			s.skip(p, fmt.Sprintf("over the limit of %d files: this and later files left out", lim.MaxFiles))
			s.finish()
			return s, nil
		}
		s.files[clean] = stampEntry(fi)
	}
	s.finish()
	return s, nil
}

// errText returns err's message without the operation and path that
// *fs.PathError adds, which the caller already reports.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// newZipSnapshot lists the files of an inner zip. zipBytes is the inner
// zip's own size, used for the compression ratio check.
//
// The checks of the uncompressed size (the sum of the declared sizes over
// MaxSnapshotBytes, or over MaxRatio times zipBytes: a zip bomb) count only the
// files the walker reads (countedWhenOpened): one large, very compressible file
// that would be skipped anyway (a fixture of zeros over MaxFileBytes, a data
// file) no longer fails the whole snapshot. The other files the checks leave out
// that ReadFile may return are charged to what the limits leave when first read,
// so that reading every listed file still decompresses no more than the limits.
func newZipSnapshot(name string, zr *zip.Reader, zipBytes int64, lim Limits) (*snapshot, error) {
	s := &snapshot{name: name, lim: lim, files: make(map[string]fileEntry, min(len(zr.File), lim.MaxFiles))} // sized once: no rehash per doubling
	gitSeen := map[string]bool{}
	var total uint64
	dropped := 0
	firstDropped := ""
	for _, zf := range zr.File {
		raw := zf.Name
		mode := zf.Mode()
		isDir := strings.HasSuffix(raw, "/") || mode.IsDir()
		clean, reason := pathsafe.Clean(raw)
		if reason != "" {
			if !(isDir && reason == "empty path") {
				s.skip(raw, reason)
			}
			continue
		}
		if g, ok := pathsafe.HasGitElement(clean); ok {
			if !gitSeen[g] {
				gitSeen[g] = true
				s.skip(g, "git metadata")
			}
			continue
		}
		if isDir {
			continue
		}
		switch {
		case mode&fs.ModeSymlink != 0:
			s.skip(raw, "symlink entry")
			continue
		case !mode.IsRegular():
			s.skip(raw, fmt.Sprintf("not a regular file (%v)", mode.Type()))
			continue
		case zf.Flags&0x1 != 0:
			s.skip(raw, "encrypted entry")
			continue
		case zf.Method != zip.Store && zf.Method != zip.Deflate:
			s.skip(raw, fmt.Sprintf("unsupported compression method %d", zf.Method))
			continue
		case zf.UncompressedSize64 > math.MaxInt64:
			s.skip(raw, "declared size overflows")
			continue
		}
		if _, dup := s.files[clean]; dup {
			s.skip(raw, "duplicate entry: the first one is kept")
			continue
		}
		if len(s.files) >= lim.MaxFiles {
			if dropped == 0 {
				firstDropped = raw
			}
			dropped++
			continue
		}
		later := !countedWhenOpened(clean, zf.UncompressedSize64, lim)
		if !later {
			total += zf.UncompressedSize64
			if total > math.MaxInt64 {
				total = math.MaxInt64
			}
		}
		s.files[clean] = fileEntry{size: int64(zf.UncompressedSize64), zf: zf, later: later}
	}
	if dropped > 0 {
		s.skip(firstDropped, fmt.Sprintf("over the limit of %d files: %d files left out from here on", lim.MaxFiles, dropped))
	}
	if total > uint64(lim.MaxSnapshotBytes) {
		return nil, fmt.Errorf("snapshot: snapshot %s: files declare %d bytes uncompressed, over the limit of %d bytes", name, total, lim.MaxSnapshotBytes)
	}
	if zipBytes > 0 && float64(total) > lim.MaxRatio*float64(zipBytes) {
		return nil, fmt.Errorf("snapshot: snapshot %s: compression ratio %.0f (%d bytes from a %d-byte zip) is over the limit of %g", name, float64(total)/float64(zipBytes), total, zipBytes, lim.MaxRatio)
	}
	limit := float64(lim.MaxSnapshotBytes)
	if zipBytes > 0 {
		limit = min(limit, lim.MaxRatio*float64(zipBytes))
	}
	s.budget = int64(limit - float64(total)) // >= 0: both checks passed
	s.finish()
	return s, nil
}

// wrapError carries its own full message and unwraps to a sentinel.
type wrapError struct {
	msg string
	err error
}

func (e *wrapError) Error() string { return e.msg }
func (e *wrapError) Unwrap() error { return e.err }

func wrapf(target error, format string, args ...any) error {
	return &wrapError{msg: fmt.Sprintf(format, args...), err: target}
}

// ContentDigest implements [Digester]: an inner zip's SHA-256, of its bytes when it
// was read into memory, of its listing when it is read in place (listingDigest).
func (s *snapshot) ContentDigest() ([32]byte, bool) { return s.digest, s.hasDigest }

// Hasher is an optional interface of a [Snapshot] that already knows the SHA-256 of
// its files' raw bytes, such as an in-memory snapshot that hashed each file once when
// it stored it ([NewMem]), or a folder the walker read ([OpenFolder]): a view then
// takes a listed file's hash from SHA256 instead of hashing its bytes again (on a
// 1,000-file repository, about 10 MB hashed per view). SHA256 must return the digest of
// exactly the bytes ReadFile returns for path, and ok false for a path it has no hash
// of (that file is hashed as usual).
type Hasher interface {
	SHA256(path string) (sum [32]byte, ok bool)
}

// RawDigester is an optional interface of a [Snapshot] whose files are stored
// compressed (an inner zip): RawDigest fingerprints a file from its stored bytes
// without decompressing them, so that a caller that already read a file stored as
// the same bytes (the same file in another snapshot of a repository) can take its
// hash from that read instead of decompressing it again. The same digest means the
// same stored entry: the same compression method, CRC-32, sizes and compressed bytes,
// hence the same content. ok is false for a path it cannot fingerprint (not listed,
// over the size limit, not counted when the zip was opened, or unreadable): read it
// as usual.
type RawDigester interface {
	RawDigest(path string) (sum [32]byte, ok bool)
}

// rawDigestBufs lends RawDigest its copy buffers.
var rawDigestBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// RawDigest implements [RawDigester] for an inner zip's files: the SHA-256 of the
// entry's method, CRC-32, uncompressed and compressed sizes (little-endian uint16,
// uint32, uint64, uint64) and compressed bytes. Reading them costs a fraction of
// decompressing the entry (deflate stores source text in about a quarter of its
// size). A folder's files have no RawDigest: ok is false.
func (s *snapshot) RawDigest(path string) ([32]byte, bool) {
	e, ok := s.lookup(path)
	if !ok || e.zf == nil || e.size > s.lim.MaxFileBytes || e.later {
		return [32]byte{}, false
	}
	zf := e.zf
	r, err := zf.OpenRaw()
	if err != nil {
		return [32]byte{}, false
	}
	h := sha256.New()
	var head [22]byte
	binary.LittleEndian.PutUint16(head[0:], zf.Method)
	binary.LittleEndian.PutUint32(head[2:], zf.CRC32)
	binary.LittleEndian.PutUint64(head[6:], zf.UncompressedSize64)
	binary.LittleEndian.PutUint64(head[14:], zf.CompressedSize64)
	h.Write(head[:])
	buf := rawDigestBufs.Get().(*[]byte)
	defer rawDigestBufs.Put(buf)
	n, err := io.CopyBuffer(h, r, *buf)
	if err != nil || uint64(n) != zf.CompressedSize64 {
		return [32]byte{}, false
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return sum, true
}

// Digester is an optional interface of a [Snapshot] with a digest of its whole
// content (an inner zip of a zip of zips, [Source.Open]): the same digest is the same
// files, so a view can take its files' hashes from the store without reading them.
// ok is false when the snapshot has none.
type Digester interface {
	ContentDigest() (sum [32]byte, ok bool)
}

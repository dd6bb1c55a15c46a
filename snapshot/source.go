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
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/repoctx/repoctx/internal/inputfile"
	"github.com/repoctx/repoctx/internal/pathsafe"
)

// ErrNoSnapshot is wrapped by the error of Source.Open when the source has no
// snapshot of that name (or the name cannot be one, such as "../x").
var ErrNoSnapshot = errors.New("snapshot: no such snapshot")

// Source gives repository snapshots by name, such as the snapshots of one
// {lang}-{stage} set of the competition (name "{owner}__{repo}-{revision}"). Its
// methods are safe for concurrent use by several goroutines.
type Source interface {
	// Open returns the snapshot named name. The error wraps ErrNoSnapshot if the source
	// has none of that name; otherwise it names the snapshot and says why it
	// cannot be opened (corrupt inner zip, over a limit, I/O error).
	Open(name string) (Snapshot, error)
	// Names returns the names of the snapshots the source holds, sorted.
	Names() []string
	// Close releases the source. Snapshots already opened stay usable; Open
	// afterwards returns an error.
	Close() error
}

// OpenZipSource opens a zip of zips, the competition's snapshot layout: one zip
// per snapshot named {name}.zip at its root, with the repository's files at the
// inner zip's root (other entries of the outer zip are ignored; of two entries with
// the same name the first is used).
//
// The outer zip's central directory is read once, here. Open then lists one inner
// zip without unpacking anything to disk: an inner zip stored uncompressed in the
// outer one (the competition's layout) is read in place, its central directory only,
// its files when read; a compressed one is read into memory (bounded by
// lim.MaxSnapshotBytes and lim.MaxRatio). It returns an error naming the file when it
// cannot be opened (wrapping fs.ErrNotExist when it is missing), is not a regular
// file, or is corrupt or truncated.
func OpenZipSource(zipPath string, lim Limits) (Source, error) {
	lim = lim.withDefaults()
	f, err := inputfile.Open(zipPath) // a FIFO would block in os.Open
	if err != nil {
		return nil, fmt.Errorf("snapshot: open snapshots: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("snapshot: open snapshots: %w", err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("snapshot: open snapshots %s: not a regular file", zipPath)
	}
	src, err := newZipSource(f, fi.Size(), zipPath, lim, f)
	if err != nil {
		f.Close()
		return nil, err
	}
	return src, nil
}

// OpenDirSource opens a folder whose subfolders are snapshots (each one opened
// with [OpenDir] when asked for by name); symlinks to folders count. It returns
// an error naming dir when it cannot be read.
func OpenDirSource(dir string, lim Limits) (Source, error) {
	return openDirSource(dir, lim.withDefaults())
}

// zipSource reads snapshots from a zip of zips.
type zipSource struct {
	file    string // outer zip's path, for messages
	size    int64  // outer zip's size in bytes
	ra      io.ReaderAt
	lim     Limits
	entries map[string]*zip.File
	names   []string

	mu     sync.RWMutex // held for reading by Open, for writing by Close
	closer io.Closer
	closed bool

	// refs counts the holders of closer: the source until Close, and each snapshot
	// read in place (see Open) until the garbage collector finds it unreachable, so
	// that a snapshot stays usable after Close; the last one closes closer.
	refMu sync.Mutex
	refs  int
}

// newZipSource reads the central directory of the outer zip in ra once.
func newZipSource(ra io.ReaderAt, size int64, file string, lim Limits, closer io.Closer) (*zipSource, error) {
	lim = lim.withDefaults()
	if err := checkZipEnd(ra, size); err != nil {
		return nil, fmt.Errorf("snapshot: open snapshots %s: %w", file, err)
	}
	zr, err := zip.NewReader(ra, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, fmt.Errorf("snapshot: open snapshots %s: %w", file, err)
	}
	s := &zipSource{file: file, size: size, ra: ra, lim: lim, entries: map[string]*zip.File{}, closer: closer, refs: 1}
	for _, zf := range zr.File {
		name, ok := strings.CutSuffix(zf.Name, ".zip")
		if !ok || !pathsafe.SnapshotNameOK(name) || zf.Mode().IsDir() {
			continue
		}
		if _, dup := s.entries[name]; dup {
			continue
		}
		s.entries[name] = zf
		s.names = append(s.names, name)
	}
	slices.Sort(s.names)
	return s, nil
}

// Names returns the snapshot names, sorted.
func (s *zipSource) Names() []string { return slices.Clone(s.names) }

// Close closes the outer zip file.
func (s *zipSource) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if err := s.release(); err != nil {
		return fmt.Errorf("snapshot: close %s: %w", s.file, err)
	}
	return nil
}

// retain makes snap, a snapshot read in place, hold the outer zip open until the
// garbage collector finds it unreachable.
func (s *zipSource) retain(snap *snapshot) {
	s.refMu.Lock()
	s.refs++
	s.refMu.Unlock()
	runtime.AddCleanup(snap, func(s *zipSource) { s.release() }, s)
}

// release drops one holder of the outer zip, closing it with the last.
func (s *zipSource) release() error {
	s.refMu.Lock()
	s.refs--
	last := s.refs == 0
	s.refMu.Unlock()
	if last && s.closer != nil {
		return s.closer.Close()
	}
	return nil
}

// Open lists the inner zip: in place when the outer zip stores it uncompressed (see
// openStored), else read into memory.
func (s *zipSource) Open(name string) (Snapshot, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, fmt.Errorf("snapshot: open snapshot %s: %s is closed", name, s.file)
	}
	zf, ok := s.entries[name]
	if !ok {
		return nil, wrapf(ErrNoSnapshot, "snapshot: snapshot %s not found in %s", name, s.file)
	}
	lim := s.lim
	declared, comp := zf.UncompressedSize64, zf.CompressedSize64
	if declared > uint64(lim.MaxSnapshotBytes) {
		return nil, fmt.Errorf("snapshot: snapshot %s in %s: inner zip is %d bytes, over the limit of %d bytes", name, s.file, declared, lim.MaxSnapshotBytes)
	}
	if comp > uint64(s.size) {
		return nil, fmt.Errorf("snapshot: snapshot %s in %s: entry claims %d compressed bytes, more than the whole file", name, s.file, comp)
	}
	if declared > 0 && (comp == 0 || float64(declared) > lim.MaxRatio*float64(comp)) {
		return nil, fmt.Errorf("snapshot: snapshot %s in %s: inner zip compressed from %d to %d bytes, a ratio over the limit of %g", name, s.file, declared, comp, lim.MaxRatio)
	}
	if zf.Method == zip.Store && zf.Flags&0x1 == 0 && comp == declared {
		return s.openStored(name, zf)
	}
	rc, err := zf.Open()
	if err != nil {
		return nil, fmt.Errorf("snapshot: snapshot %s in %s: %w", name, s.file, err)
	}
	defer rc.Close()
	// declared is bounded by MaxSnapshotBytes and by MaxRatio times the
	// compressed size, itself bounded by the outer file's size.
	buf := bytes.NewBuffer(make([]byte, 0, declared+bytes.MinRead))
	n, err := buf.ReadFrom(io.LimitReader(rc, int64(declared)+1))
	if err != nil {
		return nil, fmt.Errorf("snapshot: snapshot %s in %s: %w", name, s.file, err)
	}
	if uint64(n) > declared {
		return nil, fmt.Errorf("snapshot: snapshot %s in %s: inner zip holds more than its declared %d bytes", name, s.file, declared)
	}
	br := bytes.NewReader(buf.Bytes())
	if err := checkZipEnd(br, n); err != nil {
		return nil, fmt.Errorf("snapshot: snapshot %s in %s: corrupt inner zip: %w", name, s.file, err)
	}
	zr, err := zip.NewReader(br, n)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, fmt.Errorf("snapshot: snapshot %s in %s: corrupt inner zip: %w", name, s.file, err)
	}
	snap, err := newZipSnapshot(name, zr, n, lim)
	if err != nil {
		return nil, err
	}
	snap.digest, snap.hasDigest = sha256.Sum256(buf.Bytes()), true
	return snap, nil
}

// openStored lists the inner zip zf, stored uncompressed in the outer zip, in place:
// only its central directory is read now (its files are read from the outer zip when
// asked for, their CRC-32 checked as they are), and its digest is one of its listing
// (see listingDigest) rather than of all its bytes.
func (s *zipSource) openStored(name string, zf *zip.File) (Snapshot, error) {
	off, err := zf.DataOffset()
	if err != nil {
		return nil, fmt.Errorf("snapshot: snapshot %s in %s: %w", name, s.file, err)
	}
	n := int64(zf.CompressedSize64)
	if off < 0 || off > s.size-n {
		return nil, fmt.Errorf("snapshot: snapshot %s in %s: entry data past the end of the file", name, s.file)
	}
	sr := io.NewSectionReader(s.ra, off, n)
	if err := checkZipEnd(sr, n); err != nil {
		return nil, fmt.Errorf("snapshot: snapshot %s in %s: corrupt inner zip: %w", name, s.file, err)
	}
	zr, err := zip.NewReader(sr, n)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, fmt.Errorf("snapshot: snapshot %s in %s: corrupt inner zip: %w", name, s.file, err)
	}
	snap, err := newZipSnapshot(name, zr, n, s.lim)
	if err != nil {
		return nil, err
	}
	snap.digest, snap.hasDigest = listingDigest(zf.CRC32, n, zr), true
	s.retain(snap)
	return snap, nil
}

// listingDigest returns the digest of an inner zip of n bytes whose CRC-32 is crc (as
// the outer zip's directory declares it) from its listing alone: the SHA-256 of a
// label naming this form, n, crc, the zip's comment, then per entry its name,
// compression method, flags, CRC-32, sizes and mode. Two zips of the same digest hold
// the same files unless a changed file keeps its path, size and CRC-32 while the whole
// zip keeps its CRC-32 too (two 32-bit checks of different data agreeing by chance);
// the label keeps it apart from the SHA-256 of a zip's bytes (an inner zip read into
// memory), so that a cache of either is never read as the other.
func listingDigest(crc uint32, n int64, zr *zip.Reader) [32]byte {
	h := sha256.New()
	var b []byte
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	num := func(v uint64) { b = binary.AppendUvarint(b, v) }
	str("repoctx inner zip listing 1")
	num(uint64(n))
	num(uint64(crc))
	str(zr.Comment)
	num(uint64(len(zr.File)))
	for _, f := range zr.File {
		str(f.Name)
		num(uint64(f.Method))
		num(uint64(f.Flags))
		num(uint64(f.CRC32))
		num(f.CompressedSize64)
		num(f.UncompressedSize64)
		num(uint64(f.Mode()))
		if len(b) > 4096 {
			h.Write(b)
			b = b[:0]
		}
	}
	h.Write(b)
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
}

// dirSource reads snapshots from repositories-{lang}-{stage}/ folders.
type dirSource struct {
	dir   string
	lim   Limits
	names []string

	mu     sync.RWMutex
	closed bool
}

func openDirSource(dir string, lim Limits) (*dirSource, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("snapshot: open snapshots: %w", err)
	}
	s := &dirSource{dir: dir, lim: lim}
	for _, e := range ents {
		if !pathsafe.SnapshotNameOK(e.Name()) {
			continue
		}
		isDir := e.IsDir()
		if e.Type()&fs.ModeSymlink != 0 {
			fi, err := os.Stat(filepath.Join(dir, e.Name()))
			isDir = err == nil && fi.IsDir()
		}
		if isDir {
			s.names = append(s.names, e.Name())
		}
	}
	slices.Sort(s.names)
	return s, nil
}

// Names returns the names of the snapshot folders found when opening, sorted.
func (s *dirSource) Names() []string { return slices.Clone(s.names) }

// Close marks the source closed.
func (s *dirSource) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}

// Open lists the snapshot folder dir/name.
func (s *dirSource) Open(name string) (Snapshot, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, fmt.Errorf("snapshot: open snapshot %s: %s is closed", name, s.dir)
	}
	if !pathsafe.SnapshotNameOK(name) {
		return nil, wrapf(ErrNoSnapshot, "snapshot: snapshot %q not found in %s: not a plain name", name, s.dir)
	}
	p := filepath.Join(s.dir, name)
	fi, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && !fi.IsDir()) {
		return nil, wrapf(ErrNoSnapshot, "snapshot: snapshot %s not found in %s", name, s.dir)
	}
	if err != nil {
		return nil, fmt.Errorf("snapshot: open snapshot %s: %w", name, err)
	}
	return OpenDir(p, s.lim)
}

// checkZipEnd reports an error unless the zip's end-of-central-directory
// record (with its comment) ends exactly at the end of the data. Without this
// check a truncated zip of zips can open as the last stored inner zip, whose
// own end record is found instead.
func checkZipEnd(ra io.ReaderAt, size int64) error {
	const endLen = 22 // end-of-central-directory record without comment
	if size < endLen {
		return errors.New("too short to be a zip")
	}
	// The record is looked for in the last 1 KiB first (zips seldom have a longer
	// comment), then in all the bytes a comment may take.
	for _, tailLen := range []int64{min(size, 1024), min(size, endLen+0xffff)} {
		tail := make([]byte, tailLen)
		if _, err := ra.ReadAt(tail, size-tailLen); err != nil && err != io.EOF {
			return err
		}
		for i := len(tail) - endLen; i >= 0; i-- {
			if tail[i] == 'P' && tail[i+1] == 'K' && tail[i+2] == 5 && tail[i+3] == 6 {
				commentLen := int(tail[i+20]) | int(tail[i+21])<<8
				if i+endLen+commentLen == len(tail) {
					return nil
				}
			}
		}
		if tailLen == size {
			break
		}
	}
	return errors.New("no end-of-central-directory record at the end: truncated or not a zip")
}

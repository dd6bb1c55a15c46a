package store

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/repoctx/repoctx"
)

// viewExt ends the file name of a stored view (Records.PutView).
const viewExt = ".view"

// viewMagic starts a stored view file (16 bytes); the payload's CRC-32C (uint32 LE),
// 4 zero bytes, and the start and end (uint64 LE, from the payload's start) of the
// region the checksum leaves out (see SumSkipper; 0 and 0 for none) follow it, then
// the payload, at offset viewHead: a multiple of 8, so that the payload of a mapped
// file starts at an address that is one too.
const viewMagic = "repoctx-view-3\n\x00"

// viewHead is the offset of a stored view's payload in its file.
const viewHead = len(viewMagic) + 24

// SumSkipper is implemented by the writer that PutView gives its write function:
// the bytes written between SkipSum(true) and SkipSum(false) are left out of the
// view's checksum (MapView's verify does not read them), for a caller that checks
// them itself when, and if, it reads them (records most readers never decode). A view
// has one such region at most: a second one fails PutView.
type SumSkipper interface {
	SkipSum(on bool)
}

// PutView writes the stored view named name, whose payload write writes to the
// writer it is given (buffered by write itself, if it wants), replacing the one of
// that name atomically (a reader sees the old file or the whole new one). Unlike
// records, which are never rewritten, a repository keeps one file per name: the index
// package names a view by its snapshot, so a repository holds one view per folder (or
// per dataset snapshot), and a change of files or settings replaces it. Its size counts in
// the repository's (RepoUsage.Bytes, GC). name is 1-64 characters of [0-9a-f];
// another name is an error. A failed write returns the error, a
// [repoctx.EnvironmentError] for a fault of the machine (a full or read-only disk),
// and write's own error as it is; after Close it writes nothing and returns nil.
func (r *Records) PutView(name string, write func(io.Writer) error) error {
	if !validViewName(name) {
		return fmt.Errorf("store: view name %q is not 1-64 lowercase hex digits", name)
	}
	if r.st.closed.Load() {
		return nil // its lock is released: another process may be collecting the folder
	}
	f, err := createLocked(filepath.Join(r.dir, name+viewExt))
	if err != nil {
		return repoctx.WriteFault("write a stored view", err)
	}
	var head [viewHead]byte
	copy(head[:], viewMagic)
	if _, err := f.Write(head[:]); err != nil {
		f.Abort()
		return repoctx.WriteFault("write a stored view", err)
	}
	cw := &crcWriter{w: f.File}
	if err := write(cw); err != nil {
		f.Abort()
		if cw.err != nil {
			return repoctx.WriteFault("write a stored view", cw.err)
		}
		return err
	}
	if cw.skipping || cw.regions > 1 {
		f.Abort()
		return fmt.Errorf("store: a stored view's unsummed region not ended, or more than one")
	}
	binary.LittleEndian.PutUint32(head[len(viewMagic):], cw.sum)
	binary.LittleEndian.PutUint64(head[len(viewMagic)+8:], uint64(cw.from))
	binary.LittleEndian.PutUint64(head[len(viewMagic)+16:], uint64(cw.to))
	if _, err := f.WriteAt(head[len(viewMagic):], int64(len(viewMagic))); err != nil {
		f.Abort()
		return repoctx.WriteFault("write a stored view", err)
	}
	if err := f.Commit(); err != nil {
		return repoctx.WriteFault("write a stored view", err)
	}
	return nil
}

// crcWriter writes to w and keeps the CRC-32C of what it wrote outside its unsummed
// region (SkipSum), and w's first error.
type crcWriter struct {
	w        io.Writer
	sum      uint32
	err      error
	off      int64 // bytes written
	skipping bool
	regions  int   // SkipSum(true) calls
	from, to int64 // the unsummed region
}

// SkipSum starts (on) or ends the region left out of the checksum (SumSkipper).
func (c *crcWriter) SkipSum(on bool) {
	switch {
	case on && !c.skipping:
		c.skipping, c.from, c.to = true, c.off, c.off
		c.regions++
	case !on && c.skipping:
		c.skipping, c.to = false, c.off
	}
}

func (c *crcWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	if !c.skipping {
		c.sum = crc32.Update(c.sum, castagnoli, p[:n])
	}
	c.off += int64(n)
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}

// MapView returns the payload of the stored view named name (see PutView), mapped
// read-only from its file rather than copied: the slice starts at an address that is a
// multiple of 8 and stays valid for the life of the process (it is never unmapped, as
// segments are not). It returns false when there is none, it is not a regular file or
// it cannot be mapped. release unmaps it: for a caller that uses none of it (nothing
// it decoded is kept, no goroutine still reads it); one that keeps it never calls it.
// verify reports whether the payload's checksum matches (a
// damaged file must be taken as a miss); it reads the whole payload but the region its
// writer left out (SumSkipper), which the caller checks itself, so a caller may
// run it on another goroutine while it decodes, and use nothing it decoded unless it
// returned true. stop, if not nil, is asked between blocks of the payload (1 MiB)
// whether to give up (verify then returns false): a caller that dropped the view does
// not wait for the rest of the checksum. verify reads with faults turned into false; other reads of the memory
// are not protected: a file truncated in place by another program while a process uses
// its view would stop that process with SIGBUS (repoctx never rewrites a view file in
// place: PutView renames a new file over it, and a mapping keeps the old file's
// bytes).
func (r *Records) MapView(name string) (payload []byte, verify func(stop func() bool) bool, release func(), ok bool) {
	if !validViewName(name) {
		return nil, nil, nil, false
	}
	// Not blocking: a FIFO put in the file's place would wait for a writer.
	f, err := os.OpenFile(filepath.Join(r.dir, name+viewExt), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, nil, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() < int64(viewHead) || fi.Size() != int64(int(fi.Size())) {
		return nil, nil, nil, false
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ, syscall.MAP_SHARED|mapPopulate)
	if err != nil {
		return nil, nil, nil, false
	}
	return b[viewHead:], func(stop func() bool) bool { return checkView(b, stop) }, func() { syscall.Munmap(b) }, true
}

// ViewPrefix returns the first n bytes (fewer when the payload is shorter) of the
// payload of the stored view named name (see PutView), read, not mapped, and whether
// there is such a view: a regular file that starts as one does. It reads no more than
// that: a caller that wants to know which view a file holds without reading it whole.
func (r *Records) ViewPrefix(name string, n int) ([]byte, bool) {
	if !validViewName(name) {
		return nil, false
	}
	f, err := os.OpenFile(filepath.Join(r.dir, name+viewExt), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	b := make([]byte, viewHead+n)
	m, _ := io.ReadFull(f, b)
	if m < viewHead || string(b[:len(viewMagic)]) != viewMagic {
		return nil, false
	}
	return b[viewHead:m], true
}

// checkView reports whether the mapped view file b has the magic and its payload's
// checksum; false too when reading it faults (the file was truncated under the
// mapping) and when stop (nil: never) returns true between blocks of checkBlock bytes.
func checkView(b []byte, stop func() bool) bool {
	match := false
	return faultFree(func() {
		if string(b[:len(viewMagic)]) != viewMagic {
			return
		}
		payload := b[viewHead:]
		from := binary.LittleEndian.Uint64(b[len(viewMagic)+8:])
		to := binary.LittleEndian.Uint64(b[len(viewMagic)+16:])
		if from > to || to > uint64(len(payload)) {
			return
		}
		sum := uint32(0)
		for _, p := range [][]byte{payload[:from], payload[to:]} {
			for len(p) > 0 {
				if stop != nil && stop() {
					return
				}
				n := min(len(p), checkBlock)
				sum = crc32.Update(sum, castagnoli, p[:n])
				p = p[n:]
			}
		}
		match = sum == le32(b[len(viewMagic):])
	}) && match
}

// checkBlock is the bytes checkView sums between two calls of its stop function.
const checkBlock = 1 << 20

// validViewName reports whether name is 1-64 characters of [0-9a-f].
func validViewName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

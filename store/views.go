package store

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/repoctx/repoctx"
)

// viewExt ends the file name of a stored view (Records.PutView).
const viewExt = ".view"

// viewMagic starts a stored view file (16 bytes). The payload's length (uint64 LE),
// the CRC-32C of the block table (uint32 LE), the base-2 logarithm of the block size
// (uint32 LE) and 8 zero bytes follow it, then the payload, at offset viewHead: a
// multiple of 8, so that the payload of a mapped file starts at an address that is
// one too. The block table ends the file: the CRC-32C of each block of the payload
// (the last one may be shorter), uint32 LE each.
const viewMagic = "repoctx-view-4\n\x00"

// viewHead is the offset of a stored view's payload in its file.
const viewHead = len(viewMagic) + 24

// viewBlockShift is the base-2 logarithm of a stored view's checksum block size
// (16 KiB): a reader checks what it reads a block at a time (MappedView.Check), so
// a small block keeps the bytes checked near the bytes read.
const viewBlockShift = 14

// PutView writes the stored view named name, whose payload write writes to the
// writer it is given (buffered by write itself, if it wants), replacing the one of
// that name atomically (a reader sees the old file or the whole new one). Unlike
// records, which are never rewritten, a repository keeps one file per name: the index
// package names a view by its snapshot, so a repository holds one view per folder (or
// per dataset snapshot), and a change of files or settings replaces it. Its size counts in
// the repository's (RepoUsage.Bytes, GC). Each 16 KiB block of the payload gets a
// checksum of its own, so that a reader checks only the blocks it reads
// ([MappedView]). name is 1-64 characters of [0-9a-f]; another name is an error. A
// failed write returns the error, a [repoctx.EnvironmentError] for a fault of the
// machine (a full or read-only disk), and write's own error as it is; after Close it
// writes nothing and returns nil.
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
	bw := &blockWriter{w: f.File}
	if err := write(bw); err != nil || bw.err != nil {
		f.Abort()
		if bw.err != nil { // also when write ignored it: the payload is short
			return repoctx.WriteFault("write a stored view", bw.err)
		}
		return err
	}
	table := bw.table()
	if _, err := f.Write(table); err != nil {
		f.Abort()
		return repoctx.WriteFault("write a stored view", err)
	}
	binary.LittleEndian.PutUint64(head[len(viewMagic):], uint64(bw.off))
	binary.LittleEndian.PutUint32(head[len(viewMagic)+8:], crc32.Checksum(table, castagnoli))
	binary.LittleEndian.PutUint32(head[len(viewMagic)+12:], viewBlockShift)
	if _, err := f.WriteAt(head[len(viewMagic):], int64(len(viewMagic))); err != nil {
		f.Abort()
		return repoctx.WriteFault("write a stored view", err)
	}
	if err := f.Commit(); err != nil {
		return repoctx.WriteFault("write a stored view", err)
	}
	return nil
}

// blockWriter writes to w and keeps the CRC-32C of each block of what it wrote, and
// w's first error.
type blockWriter struct {
	w    io.Writer
	err  error
	off  int64  // bytes written
	cur  uint32 // the CRC-32C of the block being written
	sums []byte // of the blocks written whole, uint32 LE each
}

func (c *blockWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	for q := p[:n]; len(q) > 0; {
		k := min(len(q), int(1<<viewBlockShift-c.off%(1<<viewBlockShift)))
		c.cur = crc32.Update(c.cur, castagnoli, q[:k])
		c.off += int64(k)
		q = q[k:]
		if c.off%(1<<viewBlockShift) == 0 {
			c.sums = binary.LittleEndian.AppendUint32(c.sums, c.cur)
			c.cur = 0
		}
	}
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}

// table returns the block table: the sums of the whole blocks and of the last, shorter
// one.
func (c *blockWriter) table() []byte {
	if c.off%(1<<viewBlockShift) != 0 {
		return binary.LittleEndian.AppendUint32(c.sums, c.cur)
	}
	return c.sums
}

// MappedView is a stored view mapped read-only from its file (see Records.MapView),
// with the checksums of its blocks. Its methods are safe for concurrent use.
type MappedView struct {
	// Payload is the view's payload (what PutView's write wrote), at an address that is
	// a multiple of 8. Its bytes are used only once checked: Verify checks them all but
	// the parts its caller checks itself, as it reads them, with Check.
	Payload []byte

	file    []byte          // the whole mapping
	sums    []byte          // the block table, uint32 LE per block
	checked []atomic.Uint64 // a bit per block, set once its checksum matched
}

// MapView maps the stored view named name (see PutView) read-only from its file rather
// than copying it: its payload stays valid for the life of the process (it is never
// unmapped, as segments are not) unless Release is called. It returns false when
// there is none, it is not a regular file, it is not a stored view of this format
// (its magic, its length and its block table's checksum are checked) or it cannot be
// mapped. Nothing of the payload is read here: pages are read as they are first
// touched. Reads of the payload are not protected (Verify and Check read with faults
// turned into false): a file truncated in place by another program while a process
// uses its view would stop that process with SIGBUS (repoctx never rewrites a view
// file in place: PutView renames a new file over it, and a mapping keeps the old
// file's bytes).
func (r *Records) MapView(name string) (*MappedView, bool) {
	if !validViewName(name) {
		return nil, false
	}
	// Not blocking: a FIFO put in the file's place would wait for a writer.
	f, err := os.OpenFile(filepath.Join(r.dir, name+viewExt), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() < int64(viewHead) || fi.Size() != int64(int(fi.Size())) {
		return nil, false
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, false
	}
	v := &MappedView{file: b}
	ok := faultFree(func() {
		if string(b[:len(viewMagic)]) != viewMagic || le32(b[len(viewMagic)+12:]) != viewBlockShift {
			return
		}
		n := binary.LittleEndian.Uint64(b[len(viewMagic):])
		blocks := (n + 1<<viewBlockShift - 1) >> viewBlockShift
		if n > uint64(len(b)-viewHead) || 4*blocks != uint64(len(b)-viewHead)-n {
			return
		}
		v.Payload, v.sums = b[viewHead:viewHead+int(n):viewHead+int(n)], b[viewHead+int(n):]
		if crc32.Checksum(v.sums, castagnoli) != le32(b[len(viewMagic)+8:]) {
			v.Payload = nil
		}
	})
	if !ok || v.Payload == nil {
		syscall.Munmap(b)
		return nil, false
	}
	v.checked = make([]atomic.Uint64, (len(v.sums)/4+63)/64)
	return v, true
}

// Release unmaps the view: for a caller that uses none of it (nothing it decoded is
// kept, no goroutine still reads it); one that keeps it never calls it.
func (v *MappedView) Release() { syscall.Munmap(v.file) }

// Verify reports whether the checksums of the payload's blocks match, every block
// but those wholly inside one of the parts lazy (subslices of Payload) that the
// caller checks itself, with Check, when and if it reads them. It returns false too
// when reading the file faults (it was truncated under the mapping) and when stop
// (nil: never) returns true, which it asks every 1 MiB: a caller that dropped the view
// does not wait for the rest.
func (v *MappedView) Verify(lazy [][]byte, stop func() bool) bool {
	type span struct{ from, to int }
	var skip []span
	for _, l := range lazy {
		if from, ok := v.offset(l); ok && len(l) > 0 {
			skip = append(skip, span{from, from + len(l)})
		}
	}
	match := true
	return faultFree(func() {
		for blk := range len(v.sums) / 4 {
			from := blk << viewBlockShift
			to := min(from+1<<viewBlockShift, len(v.Payload))
			inside := false
			for _, s := range skip {
				inside = inside || s.from <= from && to <= s.to
			}
			if inside {
				continue
			}
			if stop != nil && blk%64 == 0 && stop() || !v.checkBlock(blk) {
				match = false
				return
			}
		}
	}) && match
}

// Check reports whether the checksums of the blocks that b (a subslice of Payload)
// lies in match, checking each block once: the first Check of a block reads it, later
// ones do not. false too for a b that is not a part of Payload and when reading the
// file faults.
func (v *MappedView) Check(b []byte) bool {
	if len(b) == 0 {
		return true
	}
	from, ok := v.offset(b)
	if !ok {
		return false
	}
	match := true
	return faultFree(func() {
		for blk := from >> viewBlockShift; blk <= (from+len(b)-1)>>viewBlockShift; blk++ {
			if !v.checkBlock(blk) {
				match = false
				return
			}
		}
	}) && match
}

// offset returns where b starts in the payload, and whether it lies in it.
func (v *MappedView) offset(b []byte) (int, bool) {
	if len(v.Payload) == 0 {
		return 0, len(b) == 0
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(v.Payload)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	if p < base || p-base > uintptr(len(v.Payload)) || uintptr(len(b)) > uintptr(len(v.Payload))-(p-base) {
		return 0, false
	}
	return int(p - base), true
}

// checkBlock checks block blk once (a fault panics: run it under faultFree).
func (v *MappedView) checkBlock(blk int) bool {
	w, bit := &v.checked[blk/64], uint64(1)<<(blk%64)
	if w.Load()&bit != 0 {
		return true
	}
	from := blk << viewBlockShift
	to := min(from+1<<viewBlockShift, len(v.Payload))
	if crc32.Checksum(v.Payload[from:to], castagnoli) != le32(v.sums[4*blk:]) {
		return false
	}
	w.Or(bit)
	return true
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
	if size := binary.LittleEndian.Uint64(b[len(viewMagic):]); uint64(m-viewHead) > size {
		m = viewHead + int(size) // the block table follows the payload
	}
	return b[viewHead:m], true
}

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

package store

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// segmentFile writes a segment of body (after segMagic) and footer foot, with a
// trailer whose checksum matches foot, and opens it.
func segmentFile(t testing.TB, body, foot []byte) *os.File {
	p := filepath.Join(t.TempDir(), "seg")
	var b bytes.Buffer
	b.WriteString(segMagic)
	b.Write(body)
	off := b.Len()
	b.Write(foot)
	var tr [segTrailer]byte
	binary.LittleEndian.PutUint64(tr[:], uint64(off))
	binary.LittleEndian.PutUint32(tr[8:], uint32(len(foot)))
	binary.LittleEndian.PutUint32(tr[12:], crc32.Checksum(foot, castagnoli))
	copy(tr[16:], segEnd)
	b.Write(tr[:])
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// readFooterRef is the footer's plain reading (through a bytes.Reader): the entries, or
// ok false for a damaged footer; off is where the footer starts.
func readFooterRef(foot []byte, off int64) ([]segEntry, bool) {
	br := bytes.NewReader(foot)
	count, err := binary.ReadUvarint(br)
	if err != nil || count > uint64(len(foot)) {
		return nil, false
	}
	var out []segEntry
	for range count {
		var k Key
		var err error
		if k.Kind, err = br.ReadByte(); err == nil {
			_, err = io.ReadFull(br, k.Hash[:])
		}
		o, err1 := binary.ReadUvarint(br)
		l, err2 := binary.ReadUvarint(br)
		if err != nil || err1 != nil || err2 != nil || o > uint64(off) || l > uint64(off)-o {
			return nil, false
		}
		out = append(out, segEntry{k, recLoc{off: int64(o), len: int64(l)}})
	}
	return out, true
}

// FuzzReadSegmentFooter: readSegment reads any footer whose checksum holds as the
// plain reading does, refusing the same damaged ones, and never panics.
func FuzzReadSegmentFooter(f *testing.F) {
	foot := []byte{2}
	for i := range 2 {
		foot = append(foot, KindChunks)
		foot = append(foot, bytes.Repeat([]byte{byte(i + 1)}, 32)...)
		foot = binary.AppendUvarint(foot, uint64(len(segMagic)+i*10))
		foot = binary.AppendUvarint(foot, 10)
	}
	f.Add(foot, 20)
	f.Add(foot[:40], 20)
	f.Add(append([]byte{0x82, 0x00}, foot[1:]...), 20) // a count of 2 in two bytes
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, 0)
	f.Add(append([]byte{1, 1}, make([]byte, 32)...), 0)
	f.Fuzz(func(t *testing.T, foot []byte, bodyLen int) {
		if bodyLen < 0 || bodyLen > 1<<12 {
			return
		}
		file := segmentFile(t, make([]byte, bodyLen), foot)
		defer file.Close()
		off := int64(len(segMagic) + bodyLen)
		want, wantOK := readFooterRef(foot, off)
		seg, got, err := readSegment(file, "seg")
		if (err == nil) != wantOK {
			t.Fatalf("readSegment: err %v, the plain reading ok = %v", err, wantOK)
		}
		if err != nil {
			return
		}
		if len(got) != len(want) {
			t.Fatalf("%d entries, want %d", len(got), len(want))
		}
		for i := range got {
			if got[i].key != want[i].key || got[i].loc.off != want[i].loc.off || got[i].loc.len != want[i].loc.len || got[i].loc.seg != seg {
				t.Fatalf("entry %d = %+v, want %+v", i, got[i], want[i])
			}
		}
		// A lookup in the unread footer finds each key's last entry.
		_, cn := binary.Uvarint(foot)
		fo := footer{seg: seg, b: foot[cn:], n: len(want), recEnd: uint64(off)}
		for _, e := range want {
			last := e.loc
			for _, o := range want {
				if o.key == e.key {
					last = o.loc
				}
			}
			loc, ok := fo.find(e.key)
			if !ok || loc.off != last.off || loc.len != last.len || loc.seg != seg {
				t.Fatalf("find(%v) = %+v, %v; want %+v", e.key, loc, ok, last)
			}
		}
		if _, ok := fo.find(Key{Kind: 'z'}); ok && !slices.ContainsFunc(want, func(e segEntry) bool { return e.key == Key{Kind: 'z'} }) {
			t.Fatal("find of an absent key found it")
		}
	})
}

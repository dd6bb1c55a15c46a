package index

import (
	"encoding/binary"
	"runtime"
	"testing"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/retrieve"
)

// FuzzChunkRecord: any bytes decode to a record or are refused, never panic; a record
// decoded is added to a corpus by AddEncoded or refused (then tokenised again, as a
// view does), and re-encoding a decoded record's chunks gives a record that decodes.
func FuzzChunkRecord(f *testing.F) {
	cs := []chunker.Chunk{
		{ID: "a.py#0", Path: "a.py", Lang: "python", Kind: "function", Name: "get", Names: []string{"get", "put"}, Text: "def get(self, key):\n    return self.data[key]\n", Header: []string{"class Cache:"}, EndLine: 2, EndByte: 44},
		{ID: "a.py#1", Path: "a.py", Lang: "python", Text: "x = 1\n", Prev: "a.py#0", StartLine: 3, EndLine: 3},
	}
	f.Add(newChunkRecord(cs, false, "").encode())
	f.Add(newChunkRecord(cs[:1], true, "windows-1252").encode())
	f.Add(newChunkRecord(nil, false, "").encode())
	f.Add([]byte{0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, err := decodeChunkRecord(b)
		if err != nil {
			return
		}
		rec.ownStrings()
		c := retrieve.NewCorpus()
		if _, err := c.AddEncoded(rec.Chunks, rec.Table, rec.Terms); err != nil {
			c.Add(rec.Chunks)
		}
		if _, err := decodeChunkRecord(newChunkRecord(rec.Chunks, rec.Lossy, rec.Encoding).encode()); err != nil {
			t.Fatalf("a record of decoded chunks does not decode: %v", err)
		}
	})
}

// TestChunkRecordHugeCount: a record whose chunk count is damaged to its size is
// refused without allocating the chunks (before, a 1 MiB record took 327 MB), and the
// smallest chunk a record can hold still decodes.
func TestChunkRecordHugeCount(t *testing.T) {
	b := make([]byte, 1<<20)
	copy(b, binary.AppendUvarint([]byte{0, 0, 0}, uint64(len(b)-10)))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := decodeChunkRecord(b); err == nil {
		t.Fatal("a record of zeros with a huge count decoded")
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 16*uint64(len(b)) {
		t.Errorf("refusing a %d-byte record allocated %d bytes", len(b), n)
	}
	// The smallest chunk: every string empty, every integer 0, no terms.
	small := []byte{0, 0, 0, 2}
	for range 2 {
		small = append(small, make([]byte, minChunkBytes)...)
	}
	rec, err := decodeChunkRecord(small)
	if err != nil || len(rec.Chunks) != 2 {
		t.Fatalf("two smallest chunks: %v, %v", rec, err)
	}
	if _, err := decodeChunkRecord(small[:len(small)-1]); err == nil {
		t.Error("a record cut by one byte decoded")
	}
}

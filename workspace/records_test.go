package workspace

import (
	"reflect"
	"testing"

	"github.com/repoctx/repoctx/chunker"
)

// TestChunkRecordRoundTrip: a chunk record decodes to what was encoded, and every
// truncation of it is refused (a damaged record is a miss, never misread).
func TestChunkRecordRoundTrip(t *testing.T) {
	src := "class Cache:\n    \"\"\"LRU.\"\"\"\n    def get(self, key):\n        return self.data[key]\n\n    def put(self, key, value):\n        self.data[key] = value\n        self.evict()\n"
	f, err := chunker.Decode("pkg/cache.py", []byte(src), 0)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := chunker.New(chunker.StrategyStructural, chunker.Options{MaxChars: 40})
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	cs, err := ch.Chunk(f)
	if err != nil || len(cs) < 2 {
		t.Fatalf("chunks %v, %v", cs, err)
	}
	cs[0].Fallback, cs[1].ParseError = true, true
	rec := newChunkRecord(cs, true, "windows-1252")
	b := rec.encode()
	got, err := decodeChunkRecord(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Chunks, rec.Chunks) || !reflect.DeepEqual(got.Sums, rec.Sums) ||
		!reflect.DeepEqual(got.Terms, rec.Terms) || got.Lossy != rec.Lossy || got.Encoding != rec.Encoding {
		t.Fatalf("round trip:\n got  %+v\n want %+v", got, rec)
	}
	for n := range len(b) {
		if _, err := decodeChunkRecord(b[:n]); err == nil {
			t.Fatalf("a record cut to %d of %d bytes was accepted", n, len(b))
		}
	}
}

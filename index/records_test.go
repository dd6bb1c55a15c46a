package index

import (
	"bytes"
	"crypto/sha256"
	"encoding/gob"
	"errors"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/retrieve"
	"github.com/repoctx/repoctx/store"
	"github.com/repoctx/repoctx/symbols"
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
	cs[0].Limit, cs[1].Limit = chunker.LimitNesting, chunker.LimitParseCPU
	// Small sibling functions merge into one chunk with a list of names.
	small, err := chunker.Decode("pkg/ops.py", []byte("def a(x): return x\ndef b(x): return x\ndef c(x): return x\n"), 0)
	if err != nil {
		t.Fatal(err)
	}
	dch, err := chunker.New(chunker.StrategyStructural, chunker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer dch.Close()
	merged, err := dch.Chunk(small)
	if err != nil {
		t.Fatal(err)
	}
	cs = append(cs, merged...)
	if !slices.ContainsFunc(cs, func(c chunker.Chunk) bool { return len(c.Names) > 1 }) {
		t.Fatalf("no merged chunk with names: %+v", merged)
	}
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
	// Its chunks' strings moved out of the record: equal, and unchanged when the
	// record's memory is reused.
	want := slices.Clone(rec.Chunks)
	for i := range want {
		want[i].Names, want[i].Header = slices.Clone(want[i].Names), slices.Clone(want[i].Header)
	}
	rb := bytes.Clone(b)
	owned, err := decodeChunkRecord(rb)
	if err != nil {
		t.Fatal(err)
	}
	owned.ownStrings()
	if !reflect.DeepEqual(owned.Chunks, want) || owned.Encoding != rec.Encoding {
		t.Fatalf("ownStrings:\n got  %+v\n want %+v", owned.Chunks, want)
	}
	clear(rb)
	if !reflect.DeepEqual(owned.Chunks, want) || owned.Encoding != rec.Encoding {
		t.Fatalf("ownStrings left strings in the record's memory:\n got  %+v\n want %+v", owned.Chunks, want)
	}
	for n := range len(b) {
		if _, err := decodeChunkRecord(b[:n]); err == nil {
			t.Fatalf("a record cut to %d of %d bytes was accepted", n, len(b))
		}
	}
}

// TestChunkKeyNamesRevision: the keys of chunk records name the chunker's revision and
// the record format, so records of an older format (before Names; before the term
// table) are made again, never read with this decoder.
func TestChunkKeyNamesRevision(t *testing.T) {
	s := chunkSettings(Options{})
	if !strings.Contains(s, "/"+chunker.Revision+"\x00") || !strings.HasSuffix(s, "\x00"+chunkCodec) || chunkCodec[:len("chunks-bin-3+")] != "chunks-bin-3+" {
		t.Fatalf("chunk settings %q do not name revision %s and codec %s", s, chunker.Revision, chunkCodec)
	}
}

// sampleSymbols returns the symbols the extractor finds in a Python and a Kotlin file,
// and a file setting every field (a star import, a relative import's level).
func sampleSymbols(t *testing.T) []*symbols.File {
	t.Helper()
	srcs := map[string]string{
		"pkg/cache.py":    "from . import base\nfrom os.path import *\nimport a.b as ab\n\nclass Cache(base.Base):\n    \"\"\"LRU.\"\"\"\n    def get(self, key):\n        \"\"\"Return the value.\"\"\"\n        return self.data[key]\n\nLIMIT = 3\n",
		"src/app/Main.kt": "package app\n\nimport kotlinx.coroutines.*\nimport app.util.Helper as H\n\n/** Entry. */\nclass Main(val x: Int) {\n    fun run(): Int = x + 1\n    companion object { const val N = 2 }\n}\n\nfun top() = Main(1).run()\n",
	}
	ex := symbols.NewExtractor(0)
	defer ex.Close()
	var out []*symbols.File
	for _, p := range []string{"pkg/cache.py", "src/app/Main.kt"} {
		f, err := chunker.Decode(p, []byte(srcs[p]), 0)
		if err != nil {
			t.Fatal(err)
		}
		s, err := ex.Extract(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Defs) == 0 || len(s.Imports) == 0 {
			t.Fatalf("%s: no definitions or imports extracted: %+v", p, s)
		}
		out = append(out, s)
	}
	out = append(out, &symbols.File{Path: "x/y.py", Lang: "python", Package: "x.y",
		Defs: []symbols.Def{{Name: "f", Kind: "function", Path: "x/y.py", Container: "C", Signature: "def f(a, b)",
			Doc: "Does f.", StartLine: 3, EndLine: 9, StartByte: 40, EndByte: 300}},
		Imports: []grammars.Import{{Module: "m", Level: 2, Name: "n", Alias: "k", Star: true, Line: 1}, {Module: "q", Line: 7}}},
		&symbols.File{Path: "empty.py", Lang: "python"})
	return out
}

// TestSymbolRecordRoundTrip: a symbol record decodes to what was encoded (what gob
// decoded before, nil slices included), and every truncation, a changed byte of the
// magic, and a record of the old gob format are refused with a clear error.
func TestSymbolRecordRoundTrip(t *testing.T) {
	for _, s := range sampleSymbols(t) {
		b := encodeSymbols(s)
		got, err := decodeSymbols(b)
		if err != nil {
			t.Fatalf("%s: %v", s.Path, err)
		}
		if !reflect.DeepEqual(got, s) {
			t.Fatalf("%s: round trip:\n got  %+v\n want %+v", s.Path, got, s)
		}
		var gb bytes.Buffer
		if err := gob.NewEncoder(&gb).Encode(s); err != nil {
			t.Fatal(err)
		}
		var viaGob symbols.File
		if err := gob.NewDecoder(&gb).Decode(&viaGob); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, &viaGob) {
			t.Errorf("%s: differs from what the gob records gave:\n got %+v\n gob %+v", s.Path, got, &viaGob)
		}
		for n := range len(b) {
			if _, err := decodeSymbols(b[:n]); !errors.Is(err, errDamagedSymbols) {
				t.Fatalf("%s: a record cut to %d of %d bytes: error %v, want %v", s.Path, n, len(b), err, errDamagedSymbols)
			}
		}
		bad := bytes.Clone(b)
		bad[2] ^= 1
		if _, err := decodeSymbols(bad); !errors.Is(err, errDamagedSymbols) {
			t.Errorf("%s: a record with a changed magic: error %v", s.Path, err)
		}
		if _, err := decodeSymbols(append(bytes.Clone(b), 0)); !errors.Is(err, errDamagedSymbols) {
			t.Errorf("%s: a record with a trailing byte: error %v", s.Path, err)
		}
		gb.Reset()
		gob.NewEncoder(&gb).Encode(s)
		if _, err := decodeSymbols(gb.Bytes()); !errors.Is(err, errDamagedSymbols) {
			t.Errorf("%s: a gob record: error %v, want %v", s.Path, err, errDamagedSymbols)
		}
	}
	if got := errDamagedSymbols.Error(); !strings.Contains(got, "symbol record") {
		t.Errorf("error %q does not say what is damaged", got)
	}
}

// TestOldSymbolRecordsRebuilt: symbol records of the old format are never misread:
// the keys of the gob-encoded "sym1" records are not those looked up now, and a
// record that is not in the current format under a current key (as a cache of
// another format would hold) is a miss: the symbols are extracted again, equal to a
// fresh build's, and stored in the current format.
func TestOldSymbolRecordsRebuilt(t *testing.T) {
	sum := [32]byte{1}
	if symbolKey("a.py", sum) == storeKey("symbols", "sym1", "a.py", sum) {
		t.Fatal("symbol records of the gob format and of the current one share keys")
	}
	cache := t.TempDir()
	snap := writeRepo(t, filepath.Join(t.TempDir(), "r-1"), storeV2)
	fresh := open(t, snap, t.TempDir(), true)
	// A cache whose symbol records are all gob-encoded.
	open(t, snap, cache, true)
	st := store.Open(cache)
	defer st.Close()
	rs := st.Records("o/r")
	n := 0
	for _, p := range snap.Paths() {
		raw, _ := snap.ReadFile(p)
		k := store.Key{Kind: store.KindSymbols, Hash: symbolKey(p, sha256.Sum256(raw))}
		b, ok := rs.Get(k)
		if !ok {
			t.Fatalf("%s: no symbol record", p)
		}
		s, err := decodeSymbols(b)
		if err != nil {
			t.Fatal(err)
		}
		var gb bytes.Buffer
		gob.NewEncoder(&gb).Encode(s)
		rs.Put(k, gb.Bytes()) // in a newer segment: the record readers find

		n++
	}
	if _, err := rs.Flush(); err != nil || n != len(storeV2) {
		t.Fatalf("flush: %v (%d records)", err, n)
	}
	for _, p := range snap.Paths() {
		raw, _ := snap.ReadFile(p)
		if b, ok := store.Open(cache).Records("o/r").Get(store.Key{Kind: store.KindSymbols, Hash: symbolKey(p, sha256.Sum256(raw))}); !ok || bytes.HasPrefix(b, []byte(symbolsMagic)) {
			t.Fatalf("%s: the old-format record is not the one a new process finds", p)
		}
	}
	r := open(t, snap, cache, true)
	got := r.Symbols().Resolve("alpha", "pkg/d.py", nil, 2)
	want := fresh.Symbols().Resolve("alpha", "pkg/d.py", nil, 2)
	if len(got) != 1 || !reflect.DeepEqual(got, want) {
		t.Errorf("symbols over an old-format cache: %+v, want %+v", got, want)
	}
	rs = store.Open(cache).Records("o/r")
	for _, p := range snap.Paths() {
		raw, _ := snap.ReadFile(p)
		b, ok := rs.Get(store.Key{Kind: store.KindSymbols, Hash: symbolKey(p, sha256.Sum256(raw))})
		if _, err := decodeSymbols(b); !ok || err != nil {
			t.Errorf("%s: the symbol record was not rebuilt in the current format (%v, %v)", p, ok, err)
		}
	}
}

// TestVectorRecordRoundTrip: a stored vector reads back bit for bit, whatever its
// values, and a record of another dimension is a miss.
func TestVectorRecordRoundTrip(t *testing.T) {
	st := store.Open(t.TempDir())
	defer st.Close()
	ix, err := Open(st, "o/v", Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []float32{1.5, -2.25, float32(math.Inf(1)), float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32, float32(math.NaN())}
	sum := sha256.Sum256([]byte("text"))
	putVector(ix.recs, "model", sum, want, retrieve.EmbedStatus(2))
	for _, flush := range []bool{false, true} {
		if flush {
			if _, err := ix.recs.Flush(); err != nil {
				t.Fatal(err)
			}
		}
		var rec []byte
		got := make([]float32, len(want))
		status, ok := ix.storedVector("model", got, sum, &rec)
		if !ok || status != 2 {
			t.Fatalf("stored vector: %v, status %d", ok, status)
		}
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Errorf("element %d = %v, want %v", i, got[i], want[i])
			}
		}
		if _, ok := ix.storedVector("model", make([]float32, 3), sum, &rec); ok {
			t.Error("a vector of another dimension was read")
		}
	}
}

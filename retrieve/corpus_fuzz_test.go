package retrieve

import (
	"reflect"
	"strings"
	"testing"

	"github.com/repoctx/repoctx/chunker"
)

// fuzzChunks makes chunks of one file from fuzz input: text split at "\x00" into
// chunks, the header lines split at "\n" (given to every other chunk).
func fuzzChunks(text, header, path string) []chunker.Chunk {
	var cs []chunker.Chunk
	for i, part := range strings.Split(text, "\x00") {
		c := chunker.Chunk{ID: path + "#" + string(rune('a'+i%26)), Path: path, Text: part}
		if i%2 == 1 && header != "" {
			c.Header = strings.Split(header, "\n")
		}
		cs = append(cs, c)
	}
	return cs
}

// FuzzAddEncodedEqualsAdd: adding chunks with the terms EncodeTerms gave them gives
// the same term IDs, field lengths and frequencies as tokenising them again (Add), in
// a corpus that already holds some of their terms. The seeds run with go test; go test
// -fuzz FuzzAddEncodedEqualsAdd looks further.
func FuzzAddEncodedEqualsAdd(f *testing.F) {
	f.Add("func parseHTTPHeader(r *Reader) error {\x00return r.readLine()\x00}", "class Parser:\ndef parse(self):", "pkg/http/parse.go", "readLine Reader")
	f.Add("x\x00\x00", "", "a.py", "")
	f.Add("ÄÖÜ straße İstanbul ΣΊΣΥΦΟΣ\x00ǅemal\xff\xfe invalid", "ﬁle", "dir/ﬁ.kt", "ǆ istanbul")
	f.Add(strings.Repeat("aVeryLongIdentifierName", 40)+"\x00snake_case_name CamelCaseName", "h1\nh2\nh1", "x/y/z.java", "name case")
	f.Fuzz(func(t *testing.T, text, header, path, known string) {
		cs := fuzzChunks(text, header, path)
		seed := []chunker.Chunk{{ID: "seed#0", Path: "seed.txt", Text: known}}
		a, b := NewCorpus(), NewCorpus()
		a.Add(seed)
		b.Add(seed)
		oa := a.Add(cs)
		table, enc := EncodeTerms(cs)
		ob, err := b.AddEncoded(cs, table, enc)
		if err != nil {
			t.Fatalf("AddEncoded refused what EncodeTerms gave: %v", err)
		}
		if !reflect.DeepEqual(oa, ob) {
			t.Fatalf("ordinals %v vs %v", oa, ob)
		}
		if !reflect.DeepEqual(a.terms, b.terms) {
			t.Fatalf("term IDs differ:\nAdd        %q\nAddEncoded %q", a.terms, b.terms)
		}
		for i := range a.docs {
			da, db := a.docs[i], b.docs[i]
			if da.lens != db.lens || !reflect.DeepEqual(da.tfs, db.tfs) {
				t.Fatalf("chunk %d: lens %v tfs %v vs lens %v tfs %v", i, da.lens, da.tfs, db.lens, db.tfs)
			}
		}
	})
}

// FuzzAddEncodedDamaged: AddEncoded refuses or adds any bytes without panicking, adds
// nothing when it refuses, and gives every frequency a term ID of the corpus.
func FuzzAddEncodedDamaged(f *testing.F) {
	cs := fuzzChunks("alpha beta\x00beta gamma", "class X:", "a.py")
	table, enc := EncodeTerms(cs)
	f.Add(table, enc[0], enc[1])
	f.Add([]byte{1, 1, 'x'}, []byte{0, 1, 5, 1, 0, 0, 0, 0}, []byte{})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x0f}, []byte{0xff, 0xff, 0xff, 0xff, 0x07, 0xff, 0xff, 0xff, 0xff, 0x07}, enc[1])
	f.Add([]byte{2, 1, 'a', 1, 'a'}, []byte{3, 2, 0, 1, 1, 2, 0, 0, 0, 0}, []byte{0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, table, e0, e1 []byte) {
		c := NewCorpus()
		c.Add(cs[:1])
		n := c.Len()
		ords, err := c.AddEncoded(cs, table, [][]byte{e0, e1})
		if err != nil {
			if c.Len() != n {
				t.Fatalf("refused (%v) yet added %d chunks", err, c.Len()-n)
			}
			return
		}
		if len(ords) != len(cs) {
			t.Fatalf("%d ordinals for %d chunks", len(ords), len(cs))
		}
		for _, o := range ords {
			for _, tfs := range c.docs[o].tfs {
				tfs.each(func(term, tf int32) {
					if term < 0 || int(term) >= len(c.terms) || tf <= 0 {
						t.Fatalf("term ID %d of %d terms, frequency %d", term, len(c.terms), tf)
					}
				})
			}
		}
	})
}

package index

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"slices"
	"unsafe"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/retrieve"
	"github.com/repoctx/repoctx/store"
	"github.com/repoctx/repoctx/symbols"
)

// chunkRecord is a stored chunking result: a file version's chunks with, per chunk,
// the SHA-256 of its text (the key of its vectors), and their term frequencies encoded
// by retrieve.EncodeTerms (so a warm run adds it to the corpus without tokenising).
// Files that could not be decoded or chunked are not stored (their errors may depend
// on limits, and they are rare).
type chunkRecord struct {
	Chunks   []chunker.Chunk
	Sums     [][32]byte // SHA-256 of each chunk's text
	Table    []byte     // the file's distinct terms (retrieve.EncodeTerms)
	Terms    [][]byte   // each chunk's encoded term frequencies
	Lossy    bool       // decoded lossily (see chunker.File.Lossy)
	Encoding string     // the encoding it was decoded from
}

// chunkCodec names the record format below and the tokenisation of its terms; it is
// part of every chunk record's key, so a record of another format is never read.
const chunkCodec = "chunks-bin-3+" + retrieve.TermsVersion

// newChunkRecord returns the record of a file version's chunks.
func newChunkRecord(cs []chunker.Chunk, lossy bool, encoding string) *chunkRecord {
	rec := &chunkRecord{Chunks: cs, Lossy: lossy, Encoding: encoding, Sums: make([][32]byte, len(cs))}
	rec.Table, rec.Terms = retrieve.EncodeTerms(cs)
	for i := range cs {
		rec.Sums[i] = sha256.Sum256([]byte(cs[i].Text))
	}
	return rec
}

// encode writes the record: a flag byte (bit 0: lossy), the encoding, the term table
// (uvarint length, bytes), the chunk count,
// then per chunk its string and integer fields (strings as uvarint length and bytes,
// integers as uvarints, lists as a count then their items; Names follows Name), a flag byte (bit 0 fallback, bit 1 parse error, bits 2-3
// chunker.LimitCode of its limit), its text's
// SHA-256 and its encoded terms.
func (r *chunkRecord) encode() []byte {
	return r.appendTo(nil)
}

// appendTo appends encode's bytes to b (allocated once for the record when b has not
// room for it).
func (r *chunkRecord) appendTo(b []byte) []byte {
	// Room for the whole record with its varints of up to 4 bytes (the sum 32, the
	// flags 2), so that b is allocated once.
	size := 20 + len(r.Encoding) + len(r.Table)
	for i := range r.Chunks {
		c := &r.Chunks[i]
		size += 34 + 17*4 + len(c.ID) + len(c.Path) + len(c.Lang) + len(c.Kind) + len(c.Name) + len(c.Parent) + len(c.Prev) + len(c.Next) + len(c.Text) + len(r.Terms[i])
		for _, n := range c.Names {
			size += len(n) + binary.MaxVarintLen64
		}
		for _, h := range c.Header {
			size += len(h) + binary.MaxVarintLen64
		}
	}
	if cap(b)-len(b) < size {
		nb := make([]byte, len(b), len(b)+size)
		copy(nb, b)
		b = nb
	}
	var vb [binary.MaxVarintLen64]byte
	num := func(n int) { b = append(b, vb[:binary.PutUvarint(vb[:], uint64(n))]...) }
	str := func(s string) { num(len(s)); b = append(b, s...) }
	flag := byte(0)
	if r.Lossy {
		flag = 1
	}
	b = append(b, flag)
	str(r.Encoding)
	num(len(r.Table))
	b = append(b, r.Table...)
	num(len(r.Chunks))
	for i := range r.Chunks {
		c := &r.Chunks[i]
		str(c.ID)
		str(c.Path)
		str(c.Lang)
		num(c.Ordinal)
		str(string(c.Kind))
		str(c.Name)
		num(len(c.Names))
		for _, n := range c.Names {
			str(n)
		}
		for _, n := range []int{c.StartLine, c.EndLine, c.StartByte, c.EndByte} {
			num(n)
		}
		num(len(c.Header))
		for _, h := range c.Header {
			str(h)
		}
		str(c.Parent)
		str(c.Prev)
		str(c.Next)
		f := byte(0)
		if c.Fallback {
			f |= 1
		}
		if c.ParseError {
			f |= 2
		}
		f |= chunker.LimitCode(c.Limit) << 2
		b = append(b, f)
		str(c.Text)
		b = append(b, r.Sums[i][:]...)
		num(len(r.Terms[i]))
		b = append(b, r.Terms[i]...)
	}
	return b
}

var errDamagedRecord = errors.New("index: damaged chunk record")

// minChunkBytes is the fewest bytes a chunk takes in a record (see encode): 9 strings
// and 8 integers (its terms' length included) of at least one byte each, the flag
// byte and the 32 bytes of its sum. A damaged chunk count is refused against it before
// the chunks are allocated (a chunker.Chunk takes 256 bytes of memory).
const minChunkBytes = 9 + 8 + 1 + 32

// decodeChunkRecord reads what encode wrote. The chunks' strings and terms point into
// b, which must not change while they are used: b is a payload of encode or of
// store.Records.Get (never modified), or memory a view reuses once the chunks' strings
// are moved out (chunkRecord.ownStrings) and the terms read.
func decodeChunkRecord(b []byte) (*chunkRecord, error) {
	r, _, err := decodeChunkRecordInto(b, nil, true)
	return r, err
}

// decodeChunkRecordInto is decodeChunkRecord with the chunks appended to chunks, which
// it returns (the record's Chunks are the appended ones, in its array), and, unless
// withSums, neither the sums nor the terms kept: a stored view's records, whose chunks
// alone are used, read into one array for the view.
func decodeChunkRecordInto(b []byte, chunks []chunker.Chunk, withSums bool) (*chunkRecord, []chunker.Chunk, error) {
	var s string // every string of the record, over b's bytes (see above)
	if len(b) > 0 {
		s = unsafe.String(&b[0], len(b))
	}
	pos := 0
	ok := true
	num := func() int {
		v, n := binary.Uvarint(b[pos:])
		if n <= 0 || v > 1<<40 {
			ok = false
			return 0
		}
		pos += n
		return int(v)
	}
	str := func() string {
		n := num()
		if !ok || n > len(b)-pos {
			ok = false
			return ""
		}
		pos += n
		return s[pos-n : pos]
	}
	byteAt := func() byte {
		if pos >= len(b) {
			ok = false
			return 0
		}
		pos++
		return b[pos-1]
	}
	r := &chunkRecord{}
	r.Lossy = byteAt()&1 != 0
	r.Encoding = str()
	if tl := num(); ok && tl <= len(b)-pos {
		r.Table = b[pos : pos+tl : pos+tl]
		pos += tl
	} else {
		return nil, chunks, errDamagedRecord
	}
	n := num()
	if !ok || n > (len(b)-pos)/minChunkBytes {
		return nil, chunks, errDamagedRecord
	}
	start := len(chunks)
	if chunks == nil {
		chunks = make([]chunker.Chunk, 0, n)
	}
	chunks = slices.Grow(chunks, n)[:start+n]
	r.Chunks = chunks[start : start+n : start+n]
	clear(r.Chunks)
	if withSums {
		r.Sums = make([][32]byte, n)
		r.Terms = make([][]byte, n)
	}
	for i := range r.Chunks {
		c := &r.Chunks[i]
		c.ID, c.Path, c.Lang = str(), str(), str()
		c.Ordinal = num()
		c.Kind = chunker.Kind(str())
		c.Name = str()
		if k := num(); ok && k > 0 {
			if k > len(b)-pos {
				return nil, chunks, errDamagedRecord
			}
			c.Names = make([]string, k)
			for j := range c.Names {
				c.Names[j] = str()
			}
		}
		c.StartLine, c.EndLine, c.StartByte, c.EndByte = num(), num(), num(), num()
		if h := num(); ok && h > 0 {
			if h > len(b)-pos {
				return nil, chunks, errDamagedRecord
			}
			c.Header = make([]string, h)
			for j := range c.Header {
				c.Header[j] = str()
			}
		}
		c.Parent, c.Prev, c.Next = str(), str(), str()
		f := byteAt()
		c.Fallback, c.ParseError, c.Limit = f&1 != 0, f&2 != 0, chunker.LimitFromCode(f>>2)
		c.Text = str()
		if !ok || len(b)-pos < 32 {
			return nil, chunks, errDamagedRecord
		}
		if withSums {
			copy(r.Sums[i][:], b[pos:pos+32])
		}
		pos += 32
		tl := num()
		if !ok || tl > len(b)-pos {
			return nil, chunks, errDamagedRecord
		}
		if withSums {
			r.Terms[i] = b[pos : pos+tl : pos+tl]
		}
		pos += tl
	}
	if !ok || pos != len(b) {
		return nil, chunks, errDamagedRecord
	}
	return r, chunks, nil
}

// decodeViewChunks decodes a stored view's chunk record, its CRC-32C (4 bytes, little
// endian) then the record (see writeView), into its chunks, which point into the
// record (retrieve.ChunkDecoder). A record whose checksum does not match is
// errDamagedRecord: the view's checksum leaves the records out, each is checked here.
func decodeViewChunks(rec []byte) ([]chunker.Chunk, error) {
	if len(rec) < 4 || crc32.Checksum(rec[4:], castagnoli) != binary.LittleEndian.Uint32(rec) {
		return nil, errDamagedRecord
	}
	_, cs, err := decodeChunkRecordInto(rec[4:], nil, false)
	return cs, err
}

// castagnoli is the CRC-32C table of the records' checksums in a stored view.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ownStrings moves the strings of r's chunks, which point into the record they were
// decoded from, into one new allocation of their size, keeping each path, language,
// kind and ID once (a chunk's Prev, Next and Parent are IDs of the record's chunks,
// and its chunks share a path): for a record read into memory that is reused (see
// store.Records.GetTo), whose terms are added to the corpus and dropped while its
// chunks stay: the encoded terms and the repeated paths and IDs are not kept.
// r.Table and r.Terms still point into the record.
func (r *chunkRecord) ownStrings() {
	ids := make(map[string]int, len(r.Chunks)) // over the record's bytes, for this call
	for i := range r.Chunks {
		ids[r.Chunks[i].ID] = i
	}
	// Two passes over the same decisions: the first counts the bytes, the second
	// copies them into buf (never past its capacity) and sets the fields.
	var buf []byte
	size := 0
	put := func(s string) string {
		if buf == nil {
			size += len(s)
			return s
		}
		if s == "" {
			return ""
		}
		start := len(buf)
		buf = append(buf, s...)
		return unsafe.String(&buf[start], len(s))
	}
	for pass := range 2 {
		set := pass == 1
		if set {
			buf = make([]byte, 0, size)
		}
		if e := put(r.Encoding); set {
			r.Encoding = e
		}
		for i := range r.Chunks {
			if id := put(r.Chunks[i].ID); set {
				r.Chunks[i].ID = id
			}
		}
		for i := range r.Chunks {
			c := &r.Chunks[i]
			var prev *chunker.Chunk
			if i > 0 {
				prev = &r.Chunks[i-1] // its strings owned already in the second pass
			}
			path, lang, kind := c.Path, c.Lang, c.Kind
			if prev == nil || path != prev.Path {
				path = put(path)
			} else {
				path = prev.Path
			}
			if prev == nil || lang != prev.Lang {
				lang = put(lang)
			} else {
				lang = prev.Lang
			}
			if prev == nil || kind != prev.Kind {
				kind = chunker.Kind(put(string(kind)))
			} else {
				kind = prev.Kind
			}
			ref := func(id string) string {
				if j, ok := ids[id]; ok {
					return r.Chunks[j].ID
				}
				return put(id)
			}
			name, parent, prevID, next, text := put(c.Name), ref(c.Parent), ref(c.Prev), ref(c.Next), put(c.Text)
			for j := range c.Names { // slices of their own (decodeChunkRecord's)
				if n := put(c.Names[j]); set {
					c.Names[j] = n
				}
			}
			for j := range c.Header {
				if h := put(c.Header[j]); set {
					c.Header[j] = h
				}
			}
			if set {
				c.Path, c.Lang, c.Kind, c.Name = path, lang, kind, name
				c.Parent, c.Prev, c.Next, c.Text = parent, prevID, next, text
			}
		}
	}
}

// symbolsMagic starts an encoded symbol record; it names the format below, so that a
// record of another format (the gob records of earlier versions, a damaged one) is
// refused instead of misread.
const symbolsMagic = "rcsym1\n"

// errDamagedSymbols is returned by decodeSymbols for a record it cannot read.
var errDamagedSymbols = errors.New("index: damaged symbol record")

// encodeSymbols writes a file's symbols: symbolsMagic; the path, language and package
// (strings as varint length and bytes); the definition count and per definition its
// name, kind, path, container, signature and doc, then its start and end lines and
// bytes; the import count and per import its module, level, name, alias, a flag byte
// (bit 0: star) and line. Integers and lengths are signed varints (encoding/binary).
func encodeSymbols(f *symbols.File) []byte {
	return appendSymbols(make([]byte, 0, 64+len(f.Defs)*96+len(f.Imports)*32), f)
}

// appendSymbols appends encodeSymbols's record of f to b.
func appendSymbols(b []byte, f *symbols.File) []byte {
	var vb [binary.MaxVarintLen64]byte
	num := func(n int) { b = append(b, vb[:binary.PutVarint(vb[:], int64(n))]...) }
	str := func(s string) { num(len(s)); b = append(b, s...) }
	b = append(b, symbolsMagic...)
	str(f.Path)
	str(f.Lang)
	str(f.Package)
	num(len(f.Defs))
	for i := range f.Defs {
		d := &f.Defs[i]
		str(d.Name)
		str(d.Kind)
		str(d.Path)
		str(d.Container)
		str(d.Signature)
		str(d.Doc)
		num(d.StartLine)
		num(d.EndLine)
		num(d.StartByte)
		num(d.EndByte)
	}
	num(len(f.Imports))
	for i := range f.Imports {
		im := &f.Imports[i]
		str(im.Module)
		num(im.Level)
		str(im.Name)
		str(im.Alias)
		flag := byte(0)
		if im.Star {
			flag = 1
		}
		b = append(b, flag)
		num(im.Line)
	}
	return b
}

// decodeSymbols reads what encodeSymbols wrote; it returns errDamagedSymbols for
// anything else (a record of another format, a truncated or altered one). The
// strings share one copy of the record.
func decodeSymbols(b []byte) (*symbols.File, error) {
	return decodeSymbolsOver(b, false)
}

// decodeSymbolsOver is decodeSymbols; with inPlace the strings point into b (which must
// then never change: a mapped stored view), else into a copy of it.
func decodeSymbolsOver(b []byte, inPlace bool) (*symbols.File, error) {
	if len(b) < len(symbolsMagic) || string(b[:len(symbolsMagic)]) != symbolsMagic {
		return nil, errDamagedSymbols
	}
	var s string
	if inPlace {
		s = unsafe.String(&b[0], len(b))
	} else {
		s = string(b)
	}
	pos := len(symbolsMagic)
	ok := true
	num := func() int {
		v, n := binary.Varint(b[pos:])
		if n <= 0 || v > 1<<40 || v < -1<<40 {
			ok = false
			return 0
		}
		pos += n
		return int(v)
	}
	str := func() string {
		n := num()
		if !ok || n < 0 || n > len(b)-pos {
			ok = false
			return ""
		}
		pos += n
		return s[pos-n : pos]
	}
	f := &symbols.File{}
	f.Path, f.Lang, f.Package = str(), str(), str()
	// Each definition takes at least 10 bytes and each import 6: a count over what the
	// record can hold is damage, refused before allocating.
	if n := num(); !ok || n < 0 || n > (len(b)-pos)/10 {
		return nil, errDamagedSymbols
	} else if n > 0 {
		f.Defs = make([]symbols.Def, n)
	}
	for i := range f.Defs {
		d := &f.Defs[i]
		d.Name, d.Kind, d.Path, d.Container, d.Signature, d.Doc = str(), str(), str(), str(), str(), str()
		d.StartLine, d.EndLine, d.StartByte, d.EndByte = num(), num(), num(), num()
	}
	if n := num(); !ok || n < 0 || n > (len(b)-pos)/6 {
		return nil, errDamagedSymbols
	} else if n > 0 {
		f.Imports = make([]grammars.Import, n)
	}
	for i := range f.Imports {
		im := &f.Imports[i]
		im.Module = str()
		im.Level = num()
		im.Name, im.Alias = str(), str()
		if pos >= len(b) {
			return nil, errDamagedSymbols
		}
		im.Star = b[pos]&1 != 0
		if b[pos] > 1 {
			ok = false
		}
		pos++
		im.Line = num()
	}
	if !ok || pos != len(b) {
		return nil, errDamagedSymbols
	}
	return f, nil
}

// symbolsHead returns the path and language an encodeSymbols record b starts with,
// pointing into b (which must never change: a mapped stored view); ok false when b
// does not start with them.
func symbolsHead(b []byte) (path, lang string, ok bool) {
	if len(b) < len(symbolsMagic) || string(b[:len(symbolsMagic)]) != symbolsMagic {
		return "", "", false
	}
	pos := len(symbolsMagic)
	str := func() string {
		n, k := binary.Varint(b[pos:])
		if k <= 0 || n < 0 || n > int64(len(b)-pos-k) {
			ok = false
			return ""
		}
		pos += k + int(n)
		if n == 0 {
			return ""
		}
		return unsafe.String(&b[pos-int(n)], int(n))
	}
	ok = true
	path = str()
	lang = str()
	return path, lang, ok
}

// storeKey returns the key of a record of kind for the file at path whose raw bytes
// hash to sum, under settings: the SHA-256 of store.Version, kind, settings, the
// grammar version of path's language ("" for none), path and sum in hex, separated by
// NUL bytes (the hash the store has always used; built without fmt, as it is
// computed a few times per file of every view).
func storeKey(kind, settings, path string, sum [32]byte) [32]byte {
	var arr [512]byte // on the stack for the usual settings and paths
	buf := append(arr[:0], store.Version...)
	buf = append(buf, 0)
	buf = append(buf, kind...)
	buf = append(buf, 0)
	buf = append(buf, settings...)
	buf = append(buf, 0)
	if g := grammars.ForPath(path); g != nil {
		buf = append(buf, g.Version...)
	}
	buf = append(buf, 0)
	buf = append(buf, path...)
	buf = append(buf, 0)
	buf = hex.AppendEncode(buf, sum[:])
	return sha256.Sum256(buf)
}

package workspace

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/retrieve"
)

// chunkRecord is a stored chunking result: a file version's chunks with, per chunk,
// the SHA-256 of its text (the key of its vectors) and its term frequencies encoded by
// retrieve.EncodeTerms (so a warm run adds it to the corpus without tokenising).
// Files that could not be decoded or chunked are not stored (their errors may depend
// on limits, and they are rare).
type chunkRecord struct {
	Chunks   []chunker.Chunk
	Sums     [][32]byte // SHA-256 of each chunk's text
	Terms    [][]byte   // each chunk's encoded term frequencies
	Lossy    bool       // decoded lossily (see chunker.File.Lossy)
	Encoding string     // the encoding it was decoded from
}

// chunkCodec names the record format below and the tokenisation of its terms; it is
// part of every chunk record's key, so a record of another format is never read.
const chunkCodec = "chunks-bin-1+" + retrieve.TermsVersion

// newChunkRecord returns the record of a file version's chunks.
func newChunkRecord(cs []chunker.Chunk, lossy bool, encoding string) *chunkRecord {
	rec := &chunkRecord{Chunks: cs, Lossy: lossy, Encoding: encoding, Terms: retrieve.EncodeTerms(cs), Sums: make([][32]byte, len(cs))}
	for i := range cs {
		rec.Sums[i] = sha256.Sum256([]byte(cs[i].Text))
	}
	return rec
}

// encode writes the record: a flag byte (bit 0: lossy), the encoding, the chunk count,
// then per chunk its string and integer fields (strings as uvarint length and bytes,
// integers as uvarints), a flag byte (bit 0 fallback, bit 1 parse error), its text's
// SHA-256 and its encoded terms.
func (r *chunkRecord) encode() []byte {
	var b []byte
	var vb [binary.MaxVarintLen64]byte
	num := func(n int) { b = append(b, vb[:binary.PutUvarint(vb[:], uint64(n))]...) }
	str := func(s string) { num(len(s)); b = append(b, s...) }
	flag := byte(0)
	if r.Lossy {
		flag = 1
	}
	b = append(b, flag)
	str(r.Encoding)
	num(len(r.Chunks))
	for i := range r.Chunks {
		c := &r.Chunks[i]
		str(c.ID)
		str(c.Path)
		str(c.Lang)
		num(c.Ordinal)
		str(string(c.Kind))
		str(c.Name)
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
		b = append(b, f)
		str(c.Text)
		b = append(b, r.Sums[i][:]...)
		num(len(r.Terms[i]))
		b = append(b, r.Terms[i]...)
	}
	return b
}

var errDamagedRecord = errors.New("workspace: damaged chunk record")

// decodeChunkRecord reads what encode wrote. The chunks' strings share one copy of
// the record; the terms point into b, which must not change while they are used.
func decodeChunkRecord(b []byte) (*chunkRecord, error) {
	s := string(b) // one allocation for every string of the record
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
	n := num()
	if !ok || n > len(b) {
		return nil, errDamagedRecord
	}
	r.Chunks = make([]chunker.Chunk, n)
	r.Sums = make([][32]byte, n)
	r.Terms = make([][]byte, n)
	for i := range r.Chunks {
		c := &r.Chunks[i]
		c.ID, c.Path, c.Lang = str(), str(), str()
		c.Ordinal = num()
		c.Kind = chunker.Kind(str())
		c.Name = str()
		c.StartLine, c.EndLine, c.StartByte, c.EndByte = num(), num(), num(), num()
		if h := num(); ok && h > 0 {
			if h > len(b)-pos {
				return nil, errDamagedRecord
			}
			c.Header = make([]string, h)
			for j := range c.Header {
				c.Header[j] = str()
			}
		}
		c.Parent, c.Prev, c.Next = str(), str(), str()
		f := byteAt()
		c.Fallback, c.ParseError = f&1 != 0, f&2 != 0
		c.Text = str()
		if !ok || len(b)-pos < 32 {
			return nil, errDamagedRecord
		}
		copy(r.Sums[i][:], b[pos:pos+32])
		pos += 32
		tl := num()
		if !ok || tl > len(b)-pos {
			return nil, errDamagedRecord
		}
		r.Terms[i] = b[pos : pos+tl : pos+tl]
		pos += tl
	}
	if !ok || pos != len(b) {
		return nil, errDamagedRecord
	}
	return r, nil
}

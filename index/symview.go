package index

import (
	"encoding/binary"
	"slices"
	"sort"
	"strings"
	"unsafe"

	"github.com/repoctx/repoctx/symbols"
)

// A stored view's symbols (see writeView) are read on demand: a one-shot query looks
// up a few names, packages and paths, so the view holds, beside each file's symbol
// record, a lookup per symbols.KeyKind from each key (sorted) to the numbers of the
// files symbols.Keys gives it, and the records' offsets, all used in place from the
// mapped file; a record is decoded when a lookup first returns its file
// (symbols.NewLazyTable).

// writeSymbols writes the symbol section of a stored view through put and num (a
// uvarint) and returns buf (a buffer it reused): the file count and the records'
// byte length; each file's symbol record (encodeSymbols); each record's offset from
// the first one's start and the records' length (a little-endian uint64 each); then per
// symbols.KeyKind a lookup: its key count, its entries' byte length, the entries
// (sorted by key; each the key as a uvarint length and bytes, then the file count and
// the file numbers, increasing, each as a uvarint difference from the one before, the
// first from 0), and each entry's offset from the first (a little-endian uint64 per
// key).
func writeSymbols(put func([]byte), num func(int), syms []*symbols.File, buf []byte) []byte {
	// The records are encoded twice, to measure them and to write them: a reader
	// finds what follows them without reading them, and a writer never holds them all.
	offs := make([]uint64, len(syms)+1)
	for i, s := range syms {
		buf = appendSymbols(buf[:0], s)
		offs[i+1] = offs[i] + uint64(len(buf))
	}
	num(len(syms))
	num(int(offs[len(syms)]))
	for _, s := range syms {
		buf = appendSymbols(buf[:0], s)
		put(buf)
	}
	var vb [binary.MaxVarintLen64]byte
	put64s := func(vs []uint64) {
		var b [8]byte
		for _, v := range vs {
			binary.LittleEndian.PutUint64(b[:], v)
			put(b[:])
		}
	}
	put64s(offs)
	// Each lookup's keys, numbered in the order they are first met, and its (key,
	// file) pairs in file order, grouped by key below (no allocation per key).
	type lookup struct {
		ids         map[string]int32
		keys        []string
		last, count []int32  // by key: the last file it was met in, its files
		pairs       []uint64 // key << 32 | file
	}
	var looks [symbols.NumKeyKinds]lookup
	defs := 0
	for _, s := range syms {
		defs += len(s.Defs)
	}
	for k := range looks {
		n := len(syms)
		if symbols.KeyKind(k) == symbols.KeyName {
			n = defs / 2
		}
		looks[k].ids = make(map[string]int32, n)
	}
	for i, s := range syms {
		symbols.Keys(s, func(kind symbols.KeyKind, key string) {
			l := &looks[kind]
			j, ok := l.ids[key]
			if !ok {
				j = int32(len(l.keys))
				l.ids[key] = j
				l.keys = append(l.keys, key)
				l.last = append(l.last, -1)
				l.count = append(l.count, 0)
			}
			if l.last[j] != int32(i) {
				l.last[j] = int32(i)
				l.count[j]++
				l.pairs = append(l.pairs, uint64(j)<<32|uint64(i))
			}
		})
	}
	uvlen := func(v int) int { return binary.PutUvarint(vb[:], uint64(v)) }
	for k := range looks {
		l := &looks[k]
		l.ids = nil // not needed any more
		// The files of key j are files[start[j]:start[j]+count[j]], in file order.
		start := make([]int32, len(l.keys))
		n := int32(0)
		for j, c := range l.count {
			start[j] = n
			n += c
		}
		files := make([]int32, len(l.pairs))
		fill := slices.Clone(start)
		for _, p := range l.pairs {
			j := p >> 32
			files[fill[j]] = int32(uint32(p))
			fill[j]++
		}
		l.pairs = nil
		order := make([]int32, len(l.keys))
		for j := range order {
			order[j] = int32(j)
		}
		slices.SortFunc(order, func(a, b int32) int { return strings.Compare(l.keys[a], l.keys[b]) })
		of := func(j int32) []int32 { return files[start[j] : start[j]+l.count[j]] }
		eoffs := make([]uint64, len(order))
		size := 0
		for i, j := range order {
			eoffs[i] = uint64(size)
			fs := of(j)
			size += uvlen(len(l.keys[j])) + len(l.keys[j]) + uvlen(len(fs))
			last := int32(0)
			for _, f := range fs {
				size += uvlen(int(f - last))
				last = f
			}
		}
		num(len(order))
		num(size)
		for _, j := range order {
			fs := of(j)
			buf = binary.AppendUvarint(buf[:0], uint64(len(l.keys[j])))
			buf = append(buf, l.keys[j]...)
			buf = binary.AppendUvarint(buf, uint64(len(fs)))
			last := int32(0)
			for _, f := range fs {
				buf = binary.AppendUvarint(buf, uint64(f-last))
				last = f
			}
			put(buf)
		}
		put64s(eoffs)
	}
	return buf
}

// viewSymbols is the symbol section of a stored view (writeSymbols), over its bytes:
// the symbols.Source of the view's symbol table.
type viewSymbols struct {
	n    int
	recs []byte // the records
	offs []byte // n+1 little-endian uint64s: each record's offset in recs, then len(recs)
	look [symbols.NumKeyKinds]viewLookup
	// check, when set, checks a record's bytes before they are read (false: damaged).
	check func([]byte) bool
}

// viewLookup is one lookup of a viewSymbols.
type viewLookup struct {
	n    int
	data []byte // the entries
	offs []byte // n little-endian uint64s: each entry's offset in data
}

// decodeViewSymbols reads the symbol section writeSymbols wrote at the start of b; it
// returns the section and its length, or ok false when b holds none. It checks the
// section's layout, not its records or entries, which are read on demand (and
// checked then: one that cannot be read is missing, never a fault).
func decodeViewSymbols(b []byte) (vs *viewSymbols, size int, ok bool) {
	r := &viewReader{b: b, ok: true}
	vs = &viewSymbols{n: r.num()}
	if vs.recs = r.run(); !r.ok || vs.n >= (len(b)-r.pos)/8 {
		return nil, 0, false
	}
	vs.offs = b[r.pos : r.pos+8*(vs.n+1) : r.pos+8*(vs.n+1)]
	r.pos += 8 * (vs.n + 1)
	for k := range vs.look {
		l := &vs.look[k]
		l.n = r.num()
		if l.data = r.run(); !r.ok || l.n > (len(b)-r.pos)/8 {
			return nil, 0, false
		}
		l.offs = b[r.pos : r.pos+8*l.n : r.pos+8*l.n]
		r.pos += 8 * l.n
	}
	return vs, r.pos, true
}

// record returns the symbol record of file i (nil when it cannot be read or check
// finds it damaged).
func (vs *viewSymbols) record(i int) []byte {
	if i < 0 || i >= vs.n {
		return nil
	}
	start, end := binary.LittleEndian.Uint64(vs.offs[8*i:]), binary.LittleEndian.Uint64(vs.offs[8*i+8:])
	if start > end || end > uint64(len(vs.recs)) {
		return nil
	}
	b := vs.recs[start:end:end]
	if vs.check != nil && !vs.check(b) {
		return nil
	}
	return b
}

// Len returns the number of files.
func (vs *viewSymbols) Len() int { return vs.n }

// File decodes the symbols of file i; its strings point into the view, which never
// changes.
func (vs *viewSymbols) File(i int) (*symbols.File, error) {
	b := vs.record(i)
	if b == nil {
		return nil, errDamagedSymbols
	}
	return decodeSymbolsOver(b, true)
}

// Lang returns the language of file i, read from its record's start.
func (vs *viewSymbols) Lang(i int) string {
	_, lang, ok := symbolsHead(vs.record(i))
	if !ok {
		return ""
	}
	return lang
}

// entry returns the key of entry i of lookup l and the bytes after it (its file
// numbers); ok false when it cannot be read.
func (l *viewLookup) entry(i int) (key string, rest []byte, ok bool) {
	o := binary.LittleEndian.Uint64(l.offs[8*i:])
	if o >= uint64(len(l.data)) {
		return "", nil, false
	}
	b := l.data[o:]
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return "", nil, false
	}
	b = b[k:]
	if n == 0 {
		return "", b, true
	}
	return unsafe.String(&b[0], int(n)), b[n:], true
}

// Find returns the numbers of the files key is found under by kind's lookup.
func (vs *viewSymbols) Find(kind symbols.KeyKind, key string) []int {
	l := &vs.look[kind]
	i := sort.Search(l.n, func(i int) bool {
		k, _, _ := l.entry(i)
		return k >= key
	})
	if i == l.n {
		return nil
	}
	k, b, ok := l.entry(i)
	if !ok || k != key {
		return nil
	}
	pos := 0
	num := func() (int, bool) {
		v, n := binary.Uvarint(b[pos:])
		if n <= 0 || v > uint64(vs.n) {
			return 0, false
		}
		pos += n
		return int(v), true
	}
	count, ok := num()
	if !ok || count > len(b)-pos {
		return nil
	}
	out := make([]int, 0, count)
	f := 0
	for range count {
		d, ok := num()
		if !ok || f+d >= vs.n {
			return nil
		}
		f += d
		out = append(out, f)
	}
	return out
}

// Each calls fn with each key of kind's lookup, in order.
func (vs *viewSymbols) Each(kind symbols.KeyKind, fn func(key string)) {
	l := &vs.look[kind]
	for i := range l.n {
		if k, _, ok := l.entry(i); ok {
			fn(k)
		}
	}
}

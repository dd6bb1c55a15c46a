package tokens

import (
	"fmt"
	"unicode/utf8"
)

// A model counts the tokens of one pre-tokenized word.
type model interface {
	count(word string, sc *scratch) int
}

// bpe is the BPE model (tokenizers src/models/bpe): each character of the word
// is a symbol (with continuing_subword_prefix on all but the first and
// end_of_word_suffix on the last), unknown characters become byte-fallback
// tokens, the unknown token (fused when fuse_unk) or nothing; then the pair of
// adjacent symbols with the lowest merge rank is merged, the leftmost on ties,
// until no pair has a merge (Word::merge_all).
//
// When byteLevel is set the words are raw bytes and each byte is the symbol of
// its ByteLevel character (GPT-2's bytes_to_unicode), which is what the ByteLevel
// pre-tokenizer feeds the Rust model; byteID caches those symbols' ids.
type bpe struct {
	vocab        map[string]int32
	merges       map[uint64]uint64 // (left id << 32 | right id) -> (rank << 32 | merged id)
	prefix       string            // continuing_subword_prefix
	suffix       string            // end_of_word_suffix
	unk          int32             // id of unk_token, or -1
	fuseUnk      bool
	byteFallback bool
	ignoreMerges bool

	byteLevel bool
	byteID    [256]int32       // id of each byte's character, -1 if not in the vocabulary
	rawVocab  map[string]int32 // byte-level vocabulary by raw bytes (ignore_merges only)
}

// symbol is one symbol of a word being merged: a doubly linked list over an array,
// as tokenizers' Word.
type symbol struct {
	id         int32
	prev, next int32
	alive      bool
}

// mergeItem is a candidate merge of the symbol at pos with the next one.
type mergeItem struct {
	rank, pos uint32
	newID     int32
}

func (m *bpe) count(word string, sc *scratch) int {
	if word == "" {
		return 0
	}
	if m.ignoreMerges {
		v := m.vocab
		if m.byteLevel {
			v = m.rawVocab
		}
		if _, ok := v[word]; ok {
			return 1
		}
	}
	syms := m.initial(word, sc)
	if len(syms) < 2 {
		return len(syms)
	}
	return m.merge(syms, sc)
}

// initial returns the word's initial symbols (ids, linked).
func (m *bpe) initial(word string, sc *scratch) []symbol {
	syms := sc.syms[:0]
	if m.byteLevel && m.prefix == "" && m.suffix == "" {
		ok := true
		for i := 0; i < len(word); i++ {
			id := m.byteID[word[i]]
			if id < 0 {
				ok = false
				break
			}
			syms = append(syms, symbol{id: id})
		}
		if !ok {
			syms = m.initialSlow(word, syms[:0])
		}
	} else {
		syms = m.initialSlow(word, syms)
	}
	for i := range syms {
		syms[i].prev, syms[i].next, syms[i].alive = int32(i-1), int32(i+1), true
	}
	if len(syms) > 0 {
		syms[len(syms)-1].next = -1
	}
	sc.syms = syms
	return syms
}

// initialSlow is BPE::merge_word's symbol construction, unit by unit (bytes'
// characters when byteLevel, else characters).
func (m *bpe) initialSlow(word string, syms []symbol) []symbol {
	var units []string
	if m.byteLevel {
		for i := 0; i < len(word); i++ {
			units = append(units, string(byteChar[word[i]]))
		}
	} else {
		for i, r := range word {
			units = append(units, word[i:i+utf8.RuneLen(r)])
		}
	}
	unkPending := false
	for i, u := range units {
		s := u
		if i > 0 && m.prefix != "" {
			s = m.prefix + s
		}
		if i == len(units)-1 && m.suffix != "" {
			s += m.suffix
		}
		if id, ok := m.vocab[s]; ok {
			if unkPending {
				syms = append(syms, symbol{id: m.unk})
				unkPending = false
			}
			syms = append(syms, symbol{id: id})
			continue
		}
		if m.byteFallback {
			ids := make([]int32, 0, len(s))
			for j := 0; j < len(s); j++ {
				id, ok := m.vocab[fmt.Sprintf("<0x%02X>", s[j])]
				if !ok {
					ids = nil
					break
				}
				ids = append(ids, id)
			}
			if ids != nil {
				// As in Rust, a pending unknown token is not flushed here.
				for _, id := range ids {
					syms = append(syms, symbol{id: id})
				}
				continue
			}
		}
		if m.unk >= 0 {
			if unkPending && !m.fuseUnk {
				syms = append(syms, symbol{id: m.unk})
			}
			unkPending = true
		}
	}
	if unkPending {
		syms = append(syms, symbol{id: m.unk})
	}
	return syms
}

// merge applies the merges to syms (Word::merge_all without dropout) and
// returns the number of symbols left.
func (m *bpe) merge(syms []symbol, sc *scratch) int {
	h := sc.heap[:0]
	for i := 0; i+1 < len(syms); i++ {
		if r, ok := m.merges[pairKey(syms[i].id, syms[i+1].id)]; ok {
			h = heapPush(h, mergeItem{rank: uint32(r >> 32), pos: uint32(i), newID: int32(uint32(r))})
		}
	}
	n := len(syms)
	for len(h) > 0 {
		var top mergeItem
		top, h = heapPop(h)
		cur := &syms[top.pos]
		if !cur.alive || cur.next < 0 {
			continue
		}
		right := syms[cur.next]
		r, ok := m.merges[pairKey(cur.id, right.id)]
		if !ok || int32(uint32(r)) != top.newID {
			continue // a stale entry
		}
		cur.id = top.newID
		syms[cur.next].alive = false
		n--
		cur.next = right.next
		if right.next >= 0 {
			syms[right.next].prev = int32(top.pos)
		}
		if cur.prev >= 0 {
			if r, ok := m.merges[pairKey(syms[cur.prev].id, cur.id)]; ok {
				h = heapPush(h, mergeItem{rank: uint32(r >> 32), pos: uint32(cur.prev), newID: int32(uint32(r))})
			}
		}
		if cur.next >= 0 {
			if r, ok := m.merges[pairKey(cur.id, syms[cur.next].id)]; ok {
				h = heapPush(h, mergeItem{rank: uint32(r >> 32), pos: top.pos, newID: int32(uint32(r))})
			}
		}
	}
	sc.heap = h
	return n
}

func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

// less orders merges by rank, then position: the heap's top is the lowest rank,
// leftmost.
func (a mergeItem) less(b mergeItem) bool {
	if a.rank != b.rank {
		return a.rank < b.rank
	}
	return a.pos < b.pos
}

func heapPush(h []mergeItem, x mergeItem) []mergeItem {
	h = append(h, x)
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !h[i].less(h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	return h
}

func heapPop(h []mergeItem) (mergeItem, []mergeItem) {
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h) && h[l].less(h[m]) {
			m = l
		}
		if r < len(h) && h[r].less(h[m]) {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	return top, h
}

// byteChar is GPT-2's bytes_to_unicode: the printable characters of Latin-1
// stand for themselves, the other bytes for U+0100 onwards, in byte order.
var byteChar = func() (t [256]rune) {
	n := 0
	for b := 0; b < 256; b++ {
		if b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE && b <= 0xFF {
			t[b] = rune(b)
		} else {
			t[b] = rune(256 + n)
			n++
		}
	}
	return t
}()

// wordPiece is the WordPiece model (tokenizers src/models/wordpiece): greedy
// longest-match-first sub-words, continuing ones with the prefix (e.g. "##");
// a word longer than maxChars characters, or one with a part in no sub-word, is
// one unknown token.
type wordPiece struct {
	vocab    map[string]int32
	prefix   string
	maxChars int
}

func (m *wordPiece) count(word string, sc *scratch) int {
	if word == "" {
		return 0
	}
	if utf8.RuneCountInString(word) > m.maxChars {
		return 1
	}
	n := 0
	for start := 0; start < len(word); {
		end := len(word)
		found := false
		for start < end {
			sub := word[start:end]
			if start > 0 {
				sub = m.prefix + sub
			}
			if _, ok := m.vocab[sub]; ok {
				found = true
				break
			}
			_, w := utf8.DecodeLastRuneInString(word[start:end])
			end -= w
		}
		if !found {
			return 1
		}
		n++
		start = end
	}
	return n
}

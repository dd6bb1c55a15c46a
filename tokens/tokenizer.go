package tokens

import (
	"hash/maphash"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/repoctx/repoctx"
)

var _ repoctx.TokenCounter = (*Tokenizer)(nil)

// Tokenizer counts tokens as a Hugging Face tokenizer.json does (see the package
// comment). It implements repoctx.TokenCounter. It is safe for concurrent use.
type Tokenizer struct {
	name      string
	added     *addedSet // tokens matched on the raw text (normalized false)
	addedNorm *addedSet // tokens matched on the normalized text (normalized true)
	norm      normalizer
	pre       preTokenizer
	model     model
	cache     wordCache
	pool      sync.Pool // *scratch
}

// Name returns "tokenizer PATH", PATH as given to [Load].
func (t *Tokenizer) Name() string { return t.name }

// Count returns the number of tokens of s, without special tokens added around
// it (no BOS/EOS): what tokenizers' encode(s, add_special_tokens=False) gives.
// Added tokens in s (such as "<|file_sep|>") count one each. Invalid UTF-8
// bytes are read as U+FFFD, one each, as Python's decode(errors="replace")
// leaves them. The result is a whole number.
func (t *Tokenizer) Count(s string) float64 {
	return float64(t.CountInt(s))
}

// CountInt is [Tokenizer.Count] as an int.
func (t *Tokenizer) CountInt(s string) int {
	if s == "" {
		return 0
	}
	if !utf8.ValidString(s) {
		s = validUTF8(s)
	}
	sc, _ := t.pool.Get().(*scratch)
	if sc == nil {
		sc = &scratch{}
		sc.init()
	}
	sc.t, sc.n = t, 0
	t.added.split(s, sc.rawText, sc.addToken)
	n := sc.n
	sc.t = nil
	t.pool.Put(sc)
	return n
}

// scratch holds one Count call's state and buffers.
type scratch struct {
	t      *Tokenizer
	n      int
	words  []string
	spans  [][2]int
	segs   []segment
	pieces [][2]int
	seq    [][]string
	syms   []symbol
	heap   []mergeItem

	rawText, normText func(string)
	addToken          func()
}

func (sc *scratch) init() {
	if sc.rawText != nil {
		return
	}
	sc.addToken = func() { sc.n++ }
	sc.normText = func(p string) { sc.countText(p) }
	sc.rawText = func(p string) {
		if sc.t.norm != nil {
			p = sc.t.norm.normalize(p)
		}
		sc.t.addedNorm.split(p, sc.normText, sc.addToken)
	}
}

// countText adds the tokens of a normalized run of text without added tokens.
func (sc *scratch) countText(p string) {
	t := sc.t
	if p == "" {
		return
	}
	words := sc.words[:0]
	if t.pre != nil {
		words = t.pre.split(p, sc, words)
	} else {
		words = append(words, p)
	}
	for _, w := range words {
		sc.n += t.wordCount(w, sc)
	}
	clear(words)
	sc.words = words[:0]
}

func (sc *scratch) seqBuf() []string {
	if n := len(sc.seq); n > 0 {
		b := sc.seq[n-1]
		sc.seq = sc.seq[:n-1]
		return b[:0]
	}
	return nil
}

func (sc *scratch) putSeqBuf(b []string) {
	clear(b)
	sc.seq = append(sc.seq, b[:0])
}

// wordCount returns the model's count for one word, from the cache if there.
func (t *Tokenizer) wordCount(w string, sc *scratch) int {
	if len(w) > maxCachedWord {
		return t.model.count(w, sc)
	}
	if n, ok := t.cache.get(w); ok {
		return n
	}
	n := t.model.count(w, sc)
	t.cache.put(w, n)
	return n
}

// maxCachedWord is the longest word in bytes the cache keeps (the Rust BPE
// cache's MAX_LENGTH).
const maxCachedWord = 256

// wordCache is a bounded, direct-mapped cache of word counts: 2^16 slots, each
// holding its last word; safe for concurrent use without locks.
type wordCache struct {
	seed  maphash.Seed
	slots [1 << 16]atomic.Pointer[cacheEntry]
}

type cacheEntry struct {
	word string
	n    int
}

func (c *wordCache) slot(w string) *atomic.Pointer[cacheEntry] {
	return &c.slots[maphash.String(c.seed, w)&(1<<16-1)]
}

func (c *wordCache) get(w string) (int, bool) {
	if e := c.slot(w).Load(); e != nil && e.word == w {
		return e.n, true
	}
	return 0, false
}

func (c *wordCache) put(w string, n int) {
	c.slot(w).Store(&cacheEntry{word: strings.Clone(w), n: n})
}

// validUTF8 replaces each invalid byte of s with U+FFFD.
func validUTF8(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		b.WriteRune(r)
	}
	return b.String()
}

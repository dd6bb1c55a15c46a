package tokens

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// addedToken is one entry of a tokenizer.json's added_tokens, as matched.
type addedToken struct {
	content                    string // as matched: normalized when the token is normalized
	singleWord, lstrip, rstrip bool
}

// addedSet finds added tokens in text as the Rust library's AddedVocabulary does
// (tokenizers src/tokenizer/added_vocabulary.rs): leftmost-longest matches
// (Aho-Corasick in Rust; here a first-byte table and candidates longest first),
// single_word matches dropped unless the token stands between non-word
// characters, lstrip and rstrip taking the white space beside the token.
type addedSet struct {
	first [256][]int // token indexes by first byte, longest first
	toks  []addedToken
}

func newAddedSet(toks []addedToken) *addedSet {
	if len(toks) == 0 {
		return nil
	}
	a := &addedSet{toks: toks}
	order := make([]int, len(toks))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return len(toks[order[i]].content) > len(toks[order[j]].content) })
	seen := map[string]bool{}
	for _, i := range order {
		c := toks[i].content
		if c == "" || seen[c] {
			continue
		}
		seen[c] = true
		a.first[c[0]] = append(a.first[c[0]], i)
	}
	return a
}

// split calls text(s[a:b]) for the runs of s between added tokens and token()
// for each added token, in order.
func (a *addedSet) split(s string, text func(string), token func()) {
	if a == nil {
		text(s)
		return
	}
	startOffset := 0
	for i := 0; i < len(s); {
		cands := a.first[s[i]]
		k := -1
		for _, c := range cands {
			if strings.HasPrefix(s[i:], a.toks[c].content) {
				k = c
				break
			}
		}
		if k < 0 {
			i++
			continue
		}
		t := &a.toks[k]
		start, stop := i, i+len(t.content)
		i = stop // the search goes on after the match, whatever becomes of it
		if t.singleWord {
			startSpace := start == 0 || !endsWithWord(s[:start])
			stopSpace := stop == len(s) || !startsWithWord(s[stop:])
			if !startSpace || !stopSpace {
				continue
			}
		}
		if t.lstrip {
			newStart := len(strings.TrimRightFunc(s[:start], unicode.IsSpace))
			start = max(newStart, startOffset)
		}
		if t.rstrip {
			stop += len(s[stop:]) - len(strings.TrimLeftFunc(s[stop:], unicode.IsSpace))
		}
		if start < startOffset {
			// Only a token starting with white space that the previous token's
			// rstrip took can get here; Rust would emit overlapping splits.
			start = startOffset
		}
		if startOffset < start {
			text(s[startOffset:start])
		}
		token()
		startOffset = stop
		if i < stop {
			i = stop
		}
	}
	if startOffset < len(s) {
		text(s[startOffset:])
	}
}

// endsWithWord reports whether s ends with a \w character (Rust regex `\w$`).
func endsWithWord(s string) bool {
	r, w := utf8.DecodeLastRuneInString(s)
	return w > 0 && isRustWord(r)
}

// startsWithWord reports whether s starts with a \w character (Rust regex `^\w`).
func startsWithWord(s string) bool {
	r, w := utf8.DecodeRuneInString(s)
	return w > 0 && isRustWord(r)
}

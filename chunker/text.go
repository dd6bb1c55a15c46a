package chunker

import (
	"bytes"
	"sort"
	"unicode"
	"unicode/utf8"
)

// lineIndex answers line and size questions about a text in O(1) or O(log n).
// Lines are 0-based here; a line includes its terminating '\n'.
type lineIndex struct {
	text   []byte
	starts []int // starts[i] is the byte offset of line i; starts[n] == len(text)
	nws    []int // nws[i] is the number of non-white-space runes in lines [0, i)
	blank  []bool
}

func newLineIndex(text []byte) *lineIndex {
	n0 := bytes.Count(text, []byte{'\n'}) + 2
	li := &lineIndex{text: text, starts: make([]int, 0, n0), nws: make([]int, 0, n0), blank: make([]bool, 0, n0)}
	n := 0
	for i := 0; i < len(text); {
		li.starts = append(li.starts, i)
		cnt := 0
		for i < len(text) {
			c := text[i]
			if c == '\n' {
				break
			}
			if c < utf8.RuneSelf { // ASCII fast path of isSpace, without a branch
				cnt += int(asciiNonSpace[c])
				i++
				continue
			}
			r, sz := utf8.DecodeRune(text[i:])
			if !isSpace(r) {
				cnt++
			}
			i += sz
		}
		if i < len(text) {
			i++ // the '\n'
		}
		li.nws = append(li.nws, n)
		n += cnt
		li.blank = append(li.blank, cnt == 0)
	}
	li.starts = append(li.starts, len(text))
	li.nws = append(li.nws, n)
	return li
}

// asciiNonSpace is 1 for the ASCII bytes isSpace rejects, 0 for the others.
var asciiNonSpace = func() (t [utf8.RuneSelf]uint8) {
	for c := range t {
		if !isSpace(rune(c)) {
			t[c] = 1
		}
	}
	return t
}()

func isSpace(r rune) bool {
	if r < utf8.RuneSelf {
		return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' || r == '\v'
	}
	return unicode.IsSpace(r) || r == '\uFEFF'
}

// lines returns the number of lines.
func (li *lineIndex) lines() int { return len(li.starts) - 1 }

// size returns the number of non-white-space runes in lines [lo, hi).
func (li *lineIndex) size(lo, hi int) int { return li.nws[hi] - li.nws[lo] }

// lineOf returns the line holding byte offset b (b == len(text) maps to the last line).
func (li *lineIndex) lineOf(b int) int {
	n := li.lines()
	if n == 0 {
		return 0
	}
	i := sort.Search(n, func(i int) bool { return li.starts[i+1] > b })
	if i >= n {
		i = n - 1
	}
	return i
}

// blankRange reports whether lines [lo, hi) are all blank.
func (li *lineIndex) blankRange(lo, hi int) bool { return li.size(lo, hi) == 0 }

// lineText returns line i without its '\n'.
func (li *lineIndex) lineText(i int) []byte {
	s, e := li.starts[i], li.starts[i+1]
	if e > s && li.text[e-1] == '\n' {
		e--
	}
	return li.text[s:e]
}

// countNonSpace returns the number of non-white-space runes in b.
func countNonSpace(b []byte) int {
	n := 0
	for len(b) > 0 {
		r, sz := rune(b[0]), 1
		if r >= utf8.RuneSelf {
			r, sz = utf8.DecodeRune(b)
		}
		if !isSpace(r) {
			n++
		}
		b = b[sz:]
	}
	return n
}

// Package lex holds the byte-class tests and blank skipping that the text-level
// rules of several languages (languages/c, csharp, kotlin, swift) share.
package lex

import "bytes"

// IsWordByte reports whether c is an ASCII word character (regexp's \w).
func IsWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// IsRegexpSpace reports whether c is white space as regexp's \s defines it.
func IsRegexpSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

// SkipBack returns the offset of the last byte before i that is not a space or tab
// (0 when there is none).
func SkipBack(src []byte, i int) int {
	for i > 0 && (src[i-1] == ' ' || src[i-1] == '\t') {
		i--
	}
	return max(i-1, 0)
}

// SkipBlanks returns the offset of the first byte at or after i that is not a
// space or tab.
func SkipBlanks(src []byte, i int) int {
	for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
		i++
	}
	return i
}

// Lines returns the [start, end) byte ranges of src's lines, without their "\n".
func Lines(src []byte) [][2]int {
	var out [][2]int
	for start := 0; start < len(src); {
		end := bytes.IndexByte(src[start:], '\n')
		if end < 0 {
			end = len(src)
		} else {
			end += start
		}
		out = append(out, [2]int{start, end})
		start = end + 1
	}
	return out
}

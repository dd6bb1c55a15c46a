package tokens

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// A normalizer rewrites text before pre-tokenization (tokenizers
// src/normalizers). Only the text matters for counting, not the alignments the
// Rust library keeps.
type normalizer interface {
	normalize(s string) string
}

// unicodeNorm is NFC, NFD, NFKC or NFKD (golang.org/x/text/unicode/norm).
type unicodeNorm struct{ form norm.Form }

func (n unicodeNorm) normalize(s string) string {
	if isASCII(s) {
		return s
	}
	return n.form.String(s)
}

// lowercase is Lowercase: each character's full lower-case mapping (Rust's
// char::to_lowercase), which differs from Go's simple mapping only for U+0130
// (İ → i + U+0307).
type lowercase struct{}

func (lowercase) normalize(s string) string { return toLowerRust(s) }

func toLowerRust(s string) string {
	if isASCII(s) {
		return strings.ToLower(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r == 0x130 {
			b.WriteString("i\u0307")
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// strip is Strip: white space (Rust's char::is_whitespace) removed at the left,
// right or both ends.
type strip struct{ left, right bool }

func (n strip) normalize(s string) string {
	if n.left {
		s = strings.TrimLeftFunc(s, unicode.IsSpace)
	}
	if n.right {
		s = strings.TrimRightFunc(s, unicode.IsSpace)
	}
	return s
}

// stripAccents is StripAccents: combining marks (general category M) removed.
// The file pairs it with NFD for accents to be marks.
type stripAccents struct{}

func (stripAccents) normalize(s string) string {
	if isASCII(s) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsMark(r) {
			return -1
		}
		return r
	}, s)
}

// sequenceNorm runs normalizers one after the other.
type sequenceNorm []normalizer

func (q sequenceNorm) normalize(s string) string {
	for _, n := range q {
		s = n.normalize(s)
	}
	return s
}

// bertNorm is BertNormalizer (tokenizers src/normalizers/bert.rs): clean_text
// drops NUL, U+FFFD and control characters (other than \t, \n, \r) and turns
// white space into ' '; handle_chinese_chars puts spaces around CJK ideographs;
// strip_accents (null: as lowercase) decomposes (NFD) and drops non-spacing
// marks; lowercase lower-cases.
type bertNorm struct {
	cleanText, chinese, stripAccents, lowercase bool
}

func (n bertNorm) normalize(s string) string {
	ascii := isASCII(s)
	if n.cleanText || n.chinese {
		var b strings.Builder
		b.Grow(len(s))
		for _, r := range s {
			if n.cleanText {
				if r == 0 || r == utf8.RuneError || isBertControl(r) {
					continue
				}
				if unicode.IsSpace(r) {
					r = ' '
				}
			}
			if n.chinese && isChineseChar(r) {
				b.WriteByte(' ')
				b.WriteRune(r)
				b.WriteByte(' ')
				continue
			}
			b.WriteRune(r)
		}
		s = b.String()
	}
	if n.stripAccents && !ascii {
		s = strings.Map(func(r rune) rune {
			if unicode.Is(unicode.Mn, r) {
				return -1
			}
			return r
		}, norm.NFD.String(s))
	}
	if n.lowercase {
		s = toLowerRust(s)
	}
	return s
}

// isBertControl is the BertNormalizer's control test: general category C
// (Cc, Cf, Cn, Co, Cs), except \t, \n and \r.
func isBertControl(r rune) bool {
	switch r {
	case '\t', '\n', '\r':
		return false
	}
	if r < 0x80 {
		return r < 0x20 || r == 0x7f
	}
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs) || !isAssigned(r)
}

// isAssigned reports whether r has a general category other than Cn.
func isAssigned(r rune) bool {
	for _, t := range unicode.Categories {
		if unicode.Is(t, r) {
			return true
		}
	}
	return false
}

// isChineseChar reports whether r is in a CJK ideograph block, as the
// BertNormalizer's is_chinese_char.
func isChineseChar(r rune) bool {
	return r >= 0x4E00 && r <= 0x9FFF || r >= 0x3400 && r <= 0x4DBF || r >= 0x20000 && r <= 0x2A6DF ||
		r >= 0x2A700 && r <= 0x2B73F || r >= 0x2B740 && r <= 0x2B81F || r >= 0x2B920 && r <= 0x2CEAF ||
		r >= 0xF900 && r <= 0xFAFF || r >= 0x2F800 && r <= 0x2FA1F
}

// isASCII reports whether s is all ASCII.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

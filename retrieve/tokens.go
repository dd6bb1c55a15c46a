package retrieve

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxTokenBytes is the longest token, in bytes of its original text, that [Tokens] emits.
// Longer identifiers and numbers (base64 blobs, hex dumps, minified code) carry no
// retrieval signal and would only bloat the term dictionary; their sub-tokens of at most
// this length are still emitted.
const MaxTokenBytes = 128

// Tokens returns the terms the code analyzer emits for s, in order: what BM25 indexes
// and searches.
//
// A token is an identifier (a letter or '_' followed by letters, digits, '_' and
// combining marks; letters and digits are Unicode, so "café_total" is one identifier)
// or a number (a digit followed by letters, digits and '_', so "0x1F", "1_000" and
// "42L" stay whole; "3.14" is two numbers). Everything else separates tokens.
//
// Each token is emitted whole and lower-cased. An identifier is then split into
// sub-tokens, also lower-cased and emitted right after it in order, at
//   - underscores (snake_case: "max_len" -> max, len),
//   - lower-to-upper case changes (camelCase: "parseJSON" -> parse, json),
//   - the last capital of an acronym run followed by a lower-case letter
//     ("parseHTTPResponse" -> parse, http, response; "JSONReader" -> json, reader),
//   - letter/digit changes ("base64Encode" -> base, 64, encode).
//
// Letters without case (CJK, for instance) behave like lower-case letters.
// Sub-tokens of a single character ("x" in "getX", "8" in "utf8Len") are dropped: they
// match almost everything and only lengthen documents; a whole token is kept even when it
// is a single character. A sub-token spanning the whole identifier (e.g. "parse", or the
// single part of "HTTP") is not repeated, but "_private" yields "_private" and "private".
// Numbers are not split. Tokens longer than [MaxTokenBytes] bytes are dropped.
//
// Splitting rules follow the usual identifier-splitting heuristics of code search
// (e.g. Lucene's WordDelimiterGraphFilter with preserveOriginal). Examples:
//
//	Tokens("parseHTTPResponse(req)") = [parsehttpresponse parse http response req]
//	Tokens("utf8Len")                = [utf8len utf len]
//	Tokens("café_total")             = [café_total café total]
func Tokens(s string) []string {
	var out []string
	scan(s, func(start, end int) {
		out = append(out, strings.ToLower(s[start:end]))
	})
	return out
}

// countTokens returns len(Tokens(s)) without allocating the tokens.
func countTokens(s string) int {
	n := 0
	scan(s, func(int, int) { n++ })
	return n
}

// needsLower reports whether strings.ToLower(s) differs from s, conservatively: any
// non-ASCII byte or ASCII capital says yes.
func needsLower(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || ('A' <= c && c <= 'Z') {
			return true
		}
	}
	return false
}

// Rune classes used for splitting identifiers.
const (
	clsSep   = iota // '_'
	clsLower        // lower-case letter, or a letter without case
	clsUpper        // upper-case or title-case letter
	clsDigit        // decimal digit
	clsMark         // combining mark: takes the class of the rune before it
)

func isIdentStart(r rune) bool { return r == '_' || unicode.IsLetter(r) }

func isIdentCont(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.In(r, unicode.Mn, unicode.Mc)
}

func class(r rune) int {
	switch {
	case r == '_':
		return clsSep
	case r < utf8.RuneSelf:
		switch {
		case 'a' <= r && r <= 'z':
			return clsLower
		case 'A' <= r && r <= 'Z':
			return clsUpper
		case '0' <= r && r <= '9':
			return clsDigit
		}
		return clsSep
	case unicode.IsUpper(r) || unicode.IsTitle(r):
		return clsUpper
	case unicode.IsDigit(r):
		return clsDigit
	case unicode.In(r, unicode.Mn, unicode.Mc):
		return clsMark
	}
	return clsLower
}

// ASCII character flags for scan's fast path.
const (
	aStart = 1 << iota // may start an identifier
	aCont              // may continue a token
	aDigit             // starts a number
)

var asciiFlags = func() (t [utf8.RuneSelf]uint8) {
	for c := range t {
		switch {
		case c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
			t[c] = aStart | aCont
		case '0' <= c && c <= '9':
			t[c] = aDigit | aCont
		}
	}
	return t
}()

// scan calls emit(start, end) with the byte span of every token of s in emission order
// (see [Tokens]); the caller lower-cases.
func scan(s string, emit func(start, end int)) {
	for i := 0; i < len(s); {
		var ident bool
		size := 1
		if c := s[i]; c < utf8.RuneSelf {
			f := asciiFlags[c]
			if f&(aStart|aDigit) == 0 {
				i++
				continue
			}
			ident = f&aStart != 0
		} else {
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			ident = isIdentStart(r)
			if !ident && !unicode.IsDigit(r) {
				i += size
				continue
			}
		}
		start := i
		i += size
		for i < len(s) {
			if c := s[i]; c < utf8.RuneSelf {
				if asciiFlags[c]&aCont == 0 {
					break
				}
				i++
				continue
			}
			r, size := utf8.DecodeRuneInString(s[i:])
			if !isIdentCont(r) {
				break
			}
			i += size
		}
		if i-start <= MaxTokenBytes {
			emit(start, i)
		}
		if ident {
			split(s, start, i, emit)
		}
	}
}

// split emits the sub-tokens of the identifier s[start:end].
func split(s string, start, end int, emit func(start, end int)) {
	partStart := -1 // start of the current part, or -1 between parts
	prev := clsSep
	flush := func(at int) {
		if partStart < 0 {
			return
		}
		if (partStart != start || at != end) && at-partStart <= MaxTokenBytes &&
			utf8.RuneCountInString(s[partStart:at]) > 1 {
			emit(partStart, at)
		}
		partStart = -1
	}
	for i := start; i < end; {
		r, size := utf8.DecodeRuneInString(s[i:])
		c := class(r)
		if c == clsMark {
			if partStart < 0 { // a mark after '_' starts a part of its own
				partStart = i
				prev = clsLower
			}
			i += size
			continue
		}
		if c == clsSep {
			flush(i)
			prev = clsSep
			i += size
			continue
		}
		boundary := false
		switch {
		case prev == clsSep:
		case c == clsDigit || prev == clsDigit:
			boundary = c != prev
		case prev == clsLower && c == clsUpper:
			boundary = true
		case prev == clsUpper && c == clsUpper:
			// "HTTPResponse": split before 'R' because a lower-case letter follows it.
			if j := i + size; j < end {
				nr, _ := utf8.DecodeRuneInString(s[j:])
				boundary = class(nr) == clsLower
			}
		}
		if boundary {
			flush(i)
		}
		if partStart < 0 {
			partStart = i
		}
		prev = c
		i += size
	}
	flush(end)
}

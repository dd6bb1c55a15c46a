package chunker

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/encoding/ianaindex"

	"github.com/repoctx/repoctx/grammars"
)

// DefaultMaxFileBytes is the default size limit of a source file, in bytes of raw input.
// Larger files (generated code, minified bundles) are skipped with ErrTooLarge.
const DefaultMaxFileBytes = 1 << 20

// Errors Decode returns for files that are skipped, wrapped in a [*SkipError]. Callers
// log them with the path, count them by [SkipError.Reason] and go on with the other files.
var (
	ErrBinary   = errors.New("binary content (NUL byte)")
	ErrTooLarge = errors.New("file over the size limit")
)

// Reasons a [SkipError] gives, for callers that count skipped files by reason.
const (
	SkipBinary   = "binary"    // a NUL byte, and not UTF-16 text (wraps ErrBinary)
	SkipTooLarge = "too-large" // more raw bytes than the limit (wraps ErrTooLarge)
)

// SkipError is the error Decode returns for a file it does not decode: errors.Is
// matches it against ErrBinary or ErrTooLarge, errors.As gives the path and reason.
type SkipError struct {
	// Path is the file's path as given to Decode.
	Path string
	// Reason is SkipBinary or SkipTooLarge.
	Reason string
	// Detail says more, e.g. "1500000 > 1048576 bytes" or "the first at byte 17", or "".
	Detail string
}

// Error implements error: "PATH: TEXT: DETAIL", e.g. "a.py: binary content (NUL byte):
// the first at byte 17", "b.py: file over the size limit: 1500000 > 1048576 bytes".
func (e *SkipError) Error() string {
	s := e.Path + ": " + e.Unwrap().Error()
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Unwrap returns ErrBinary or ErrTooLarge.
func (e *SkipError) Unwrap() error {
	if e.Reason == SkipTooLarge {
		return ErrTooLarge
	}
	return ErrBinary
}

// SkipReason returns the Reason of the [*SkipError] in err's chain, or "" when there is
// none (err is nil or another error).
func SkipReason(err error) string {
	var se *SkipError
	if errors.As(err, &se) {
		return se.Reason
	}
	return ""
}

// File is a source file decoded for chunking.
type File struct {
	// Path is slash-separated and relative to the repository root.
	Path string
	// Lang is the grammar name chosen by extension ("kotlin", "python"), or "".
	Lang string
	// Text is the content as UTF-8 without a byte-order mark, with CRLF and lone CR
	// (classic Mac OS) line breaks normalised to LF.
	Text []byte
	// Encoding is the encoding the raw bytes were decoded from ("utf-8", "utf-16le",
	// "iso-8859-1" from a PEP 263 cookie, ...). UTF-16 found without a byte-order mark
	// is named "utf-16le" or "utf-16be" like UTF-16 with one.
	Encoding string
	// Lossy reports whether some raw bytes were not valid in Encoding and were decoded
	// one by one as Windows-1252 characters instead (identifiers stay readable; the
	// original bytes are not recoverable from Text).
	Lossy bool
}

// Decode turns raw file bytes into a File. maxBytes <= 0 means DefaultMaxFileBytes.
//
// It strips a UTF-8 BOM, decodes UTF-16 with a BOM, and UTF-16 without one when its
// NUL bytes say so (see [sniffUTF16]), honours a Python PEP 263 coding cookie in the
// first two lines, decodes bytes that are not valid UTF-8 as Windows-1252 (setting
// Lossy), and turns CRLF and then lone CR into LF: Python (universal newlines) and
// Kotlin both read a lone CR as a line break, and tree-sitter counts rows on LF only.
// For files to skip it returns a [*SkipError] (wrapping ErrTooLarge or ErrBinary); it
// never fails otherwise.
func Decode(path string, raw []byte, maxBytes int) (*File, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxFileBytes
	}
	if len(raw) > maxBytes {
		return nil, &SkipError{Path: path, Reason: SkipTooLarge, Detail: fmt.Sprintf("%d > %d bytes", len(raw), maxBytes)}
	}
	f := &File{Path: path, Encoding: "utf-8"}
	if s := grammars.ForPath(path); s != nil {
		f.Lang = s.Name
	}
	var text []byte
	switch {
	case bytes.HasPrefix(raw, []byte{0xEF, 0xBB, 0xBF}):
		text = raw[3:]
	case bytes.HasPrefix(raw, []byte{0xFF, 0xFE}), bytes.HasPrefix(raw, []byte{0xFE, 0xFF}):
		text, f.Encoding = decodeUTF16(raw)
	default:
		text = raw
	}
	if f.Encoding == "utf-8" {
		if at := bytes.IndexByte(text, 0); at >= 0 {
			dec, name := sniffUTF16(text)
			if dec == nil {
				return nil, &SkipError{Path: path, Reason: SkipBinary, Detail: fmt.Sprintf("the first at byte %d", at)}
			}
			text, f.Encoding = dec, name
		}
	}
	if f.Encoding == "utf-8" && f.Lang == "python" {
		if enc, name := pep263(text); enc != nil {
			if dec, err := enc.NewDecoder().Bytes(text); err == nil {
				text, f.Encoding = dec, name
			}
		}
	}
	if !utf8.Valid(text) {
		text, f.Lossy = lossyUTF8(text), true
	}
	if bytes.IndexByte(text, '\r') >= 0 {
		text = normaliseBreaks(text)
	}
	if len(text) > 0 && len(raw) > 0 && &text[len(text)-1] == &raw[len(raw)-1] {
		text = append([]byte(nil), text...) // never alias the caller's buffer
	}
	f.Text = text
	return f, nil
}

// normaliseBreaks returns text with every CRLF and every lone CR turned into LF. It
// writes into a new buffer: the caller's may alias the raw file bytes.
func normaliseBreaks(text []byte) []byte {
	out := make([]byte, 0, len(text))
	for {
		i := bytes.IndexByte(text, '\r')
		if i < 0 {
			return append(out, text...)
		}
		out = append(append(out, text[:i]...), '\n')
		text = text[i+1:]
		if len(text) > 0 && text[0] == '\n' {
			text = text[1:]
		}
	}
}

// sniffUTF16 decodes raw as UTF-16 without a byte-order mark when its NUL bytes say it
// is: raw has an even length, at least 4 bytes, and at least a quarter of its 2-byte
// code units have a NUL high byte (ASCII and Latin-1 text: source code is mostly
// ASCII) while at most 1 in 64 have a NUL low byte; the byte order is the one that
// puts the NULs in the high bytes. The decoded text must then look like text: no
// U+0000, no unpaired surrogate, no C0 control character other than tab, LF, VT, FF,
// CR and ESC, and no DEL or C1 control (U+007F-U+009F). Real binaries (executables,
// images, arrays of 16-bit integers) fail these checks at their first small integer
// or control byte. It returns nil when raw is not such UTF-16.
func sniffUTF16(raw []byte) ([]byte, string) {
	if len(raw) < 4 || len(raw)%2 != 0 {
		return nil, ""
	}
	var even, odd int // NUL bytes at even and odd offsets
	for i := 0; i < len(raw); i += 2 {
		if raw[i] == 0 {
			even++
		}
		if raw[i+1] == 0 {
			odd++
		}
	}
	units := len(raw) / 2
	var le bool
	switch {
	case odd*4 >= units && even*64 <= units: // "a\x00": the high byte comes second
		le = true
	case even*4 >= units && odd*64 <= units:
		le = false
	default:
		return nil, ""
	}
	u := make([]uint16, units)
	high := false // the unit before was a high surrogate
	for i := range u {
		lo, hi := raw[2*i], raw[2*i+1]
		if !le {
			lo, hi = hi, lo
		}
		c := uint16(lo) | uint16(hi)<<8
		isLow := c >= 0xDC00 && c <= 0xDFFF
		switch {
		case high != isLow: // a high surrogate without its low one, or a lone low one
			return nil, ""
		case c < 0x20 && c != '\t' && c != '\n' && c != '\v' && c != '\f' && c != '\r' && c != 0x1B,
			c >= 0x7F && c <= 0x9F:
			return nil, ""
		}
		high = c >= 0xD800 && c < 0xDC00
		u[i] = c
	}
	if high {
		return nil, ""
	}
	name := "utf-16be"
	if le {
		name = "utf-16le"
	}
	return []byte(string(utf16.Decode(u))), name
}

func decodeUTF16(raw []byte) ([]byte, string) {
	le := raw[0] == 0xFF
	raw = raw[2:]
	u := make([]uint16, len(raw)/2)
	for i := range u {
		if le {
			u[i] = uint16(raw[2*i]) | uint16(raw[2*i+1])<<8
		} else {
			u[i] = uint16(raw[2*i])<<8 | uint16(raw[2*i+1])
		}
	}
	name := "utf-16be"
	if le {
		name = "utf-16le"
	}
	return []byte(string(utf16.Decode(u))), name
}

// pep263Re is the coding-cookie pattern of PEP 263.
var pep263Re = regexp.MustCompile(`^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)`)

// pep263 returns the encoding named by a coding cookie in the first two lines of a
// Python file, or nil when there is none or it names UTF-8 or an unknown encoding.
func pep263(text []byte) (encoding.Encoding, string) {
	for i, rest := 0, text; i < 2 && len(rest) > 0; i++ {
		line := rest
		if j := bytes.IndexByte(rest, '\n'); j >= 0 {
			line, rest = rest[:j], rest[j+1:]
		} else {
			rest = nil
		}
		m := pep263Re.FindSubmatch(line)
		if m == nil {
			continue
		}
		name := strings.ToLower(strings.ReplaceAll(string(m[1]), "_", "-"))
		switch {
		case name == "utf-8" || name == "utf8" || strings.HasPrefix(name, "utf-8-"):
			return nil, ""
		case name == "latin-1" || name == "latin1" || name == "iso-8859-1" || name == "iso8859-1" || name == "l1":
			return charmap.ISO8859_1, "iso-8859-1"
		}
		if e, err := ianaindex.IANA.Encoding(name); err == nil && e != nil {
			return e, name
		}
		if e, err := htmlindex.Get(name); err == nil {
			return e, name
		}
		return nil, ""
	}
	return nil, ""
}

// lossyUTF8 keeps valid UTF-8 sequences and decodes each invalid byte as Windows-1252.
func lossyUTF8(b []byte) []byte {
	out := make([]byte, 0, len(b)+len(b)/8)
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n <= 1 {
			out = utf8.AppendRune(out, charmap.Windows1252.DecodeByte(b[0]))
			b = b[1:]
			continue
		}
		out = append(out, b[:n]...)
		b = b[n:]
	}
	return out
}

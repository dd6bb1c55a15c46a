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

// Errors Decode returns for files that are skipped. Callers log them with the path and
// go on with the other files.
var (
	ErrBinary   = errors.New("binary content (NUL byte)")
	ErrTooLarge = errors.New("file over the size limit")
)

// File is a source file decoded for chunking.
type File struct {
	// Path is slash-separated and relative to the repository root.
	Path string
	// Lang is the grammar name chosen by extension ("kotlin", "python"), or "".
	Lang string
	// Text is the content as UTF-8 without a byte-order mark, with CRLF normalised to LF.
	Text []byte
	// Encoding is the encoding the raw bytes were decoded from ("utf-8", "utf-16le",
	// "iso-8859-1" from a PEP 263 cookie, ...).
	Encoding string
	// Lossy reports whether some raw bytes were not valid in Encoding and were decoded
	// one by one as Windows-1252 characters instead (identifiers stay readable; the
	// original bytes are not recoverable from Text).
	Lossy bool
}

// Decode turns raw file bytes into a File. maxBytes <= 0 means DefaultMaxFileBytes.
//
// It strips a UTF-8 BOM, decodes UTF-16 with a BOM, honours a Python PEP 263 coding
// cookie in the first two lines, decodes bytes that are not valid UTF-8 as
// Windows-1252 (setting Lossy), and turns CRLF into LF. It returns an error wrapping
// ErrTooLarge or ErrBinary (with the path) for files to skip; it never fails otherwise.
func Decode(path string, raw []byte, maxBytes int) (*File, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxFileBytes
	}
	if len(raw) > maxBytes {
		return nil, fmt.Errorf("%s: %w (%d > %d bytes)", path, ErrTooLarge, len(raw), maxBytes)
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
	if f.Encoding == "utf-8" && bytes.IndexByte(text, 0) >= 0 {
		return nil, fmt.Errorf("%s: %w", path, ErrBinary)
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
		text = bytes.ReplaceAll(text, []byte("\r\n"), []byte("\n"))
	}
	if len(text) > 0 && len(raw) > 0 && &text[len(text)-1] == &raw[len(raw)-1] {
		text = append([]byte(nil), text...) // never alias the caller's buffer
	}
	f.Text = text
	return f, nil
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

package chunker

import (
	"bytes"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
)

// Tests of Decode's share of the shared mechanism: line breaks and
// encodings, with fixtures of our own, then the handed-over case of the same kind
// (../shared/cases/chunker, skipped when absent). chunkString checks Validate.

// sameChunks fails when two chunkings differ in anything but Path and IDs.
func sameChunks(t *testing.T, what string, a, b []Chunk) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d chunks, want %d\n%s\nwant\n%s", what, len(b), len(a), dump(b), dump(a))
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Text != y.Text || x.StartLine != y.StartLine || x.EndLine != y.EndLine || x.StartByte != y.StartByte ||
			x.Kind != y.Kind || x.Name != y.Name || !slices.Equal(x.Names, y.Names) || strings.Join(x.Header, "|") != strings.Join(y.Header, "|") ||
			x.Fallback != y.Fallback || x.ParseError != y.ParseError {
			t.Errorf("%s: chunk %d differs:\n%+v\nwant\n%+v", what, i, y, x)
		}
	}
}

const crPython = `"""Geometry helpers."""
import math


def area(r):
    return math.pi * r * r


class Box:
    def __init__(self, w, h):
        self.w, self.h = w, h

    def area(self):
        return self.w * self.h

    def scaled(self, k):
        return Box(self.w * k, self.h * k)


def total(boxes):
    return sum(b.area() for b in boxes)
`

const crKotlin = `package demo.geo

import kotlin.math.PI

fun area(r: Double): Double = PI * r * r

class Box(val w: Double, val h: Double) {
    fun area(): Double = w * h

    fun scaled(k: Double): Box {
        return Box(w * k, h * k)
    }
}
`

// Fault kind 1: classic-Mac CR-only line endings are line breaks, like CRLF.
func TestCROnlyLineBreaks(t *testing.T) {
	for _, tc := range []struct{ path, src string }{
		{"geo.py", crPython}, {"Geo.kt", crKotlin},
		{"big.py", strings.Repeat(crPython, 12)}, // over the cap: line windows, not rune windows of one line
	} {
		_, lf := chunkString(t, tc.path, tc.src, Options{})
		for name, conv := range map[string]string{
			"cr":    strings.ReplaceAll(tc.src, "\n", "\r"),
			"mixed": strings.Replace(strings.ReplaceAll(tc.src, "\n", "\r\n"), "\r\n", "\r", 3), // CRLF with a few lone CRs
		} {
			f, cs := chunkString(t, tc.path, conv, Options{})
			if string(f.Text) != tc.src {
				t.Errorf("%s %s: decoded text differs from the LF copy", tc.path, name)
			}
			sameChunks(t, tc.path+" "+name, lf, cs)
		}
		if len(lf) < 3 {
			t.Errorf("%s: only %d chunks\n%s", tc.path, len(lf), dump(lf))
		}
	}
	f, err := Decode("x.py", []byte("a\rb\r\nc\n\r\rd"), 0)
	if err != nil || string(f.Text) != "a\nb\nc\n\n\nd" {
		t.Errorf("Decode: %q, %v", f.Text, err)
	}
}

// Fault kind 6: UTF-16 without a byte-order mark is detected and decoded; binaries
// are skipped with a typed error that says why.
func TestUTF16WithoutBOM(t *testing.T) {
	src := "# Grüße: naïve café ☕ and 𝄞 (a surrogate pair)\n\ndef café(x):\n    return x + \"€\"\n\n\nclass Résumé:\n    def t(self):\n        return '𝄞'\n"
	_, want := chunkString(t, "u.py", src, Options{})
	u := utf16.Encode([]rune(src))
	le, be := make([]byte, 2*len(u)), make([]byte, 2*len(u))
	for i, c := range u {
		le[2*i], le[2*i+1] = byte(c), byte(c>>8)
		be[2*i], be[2*i+1] = byte(c>>8), byte(c)
	}
	for enc, raw := range map[string][]byte{"utf-16le": le, "utf-16be": be} {
		f, err := Decode("u.py", raw, 0)
		if err != nil {
			t.Fatalf("%s: %v", enc, err)
		}
		if f.Encoding != enc || string(f.Text) != src {
			t.Errorf("%s: encoding %q, text %q", enc, f.Encoding, f.Text)
		}
		s := NewStructural(Options{})
		cs, _ := s.Chunk(f)
		s.Close()
		if err := Validate(f, cs, DefaultMaxChars); err != nil {
			t.Error(err)
		}
		sameChunks(t, enc, want, cs)
	}

	rng := rand.New(rand.NewSource(14))
	randBytes := func(n int) []byte { b := make([]byte, n); rng.Read(b); return b }
	var counters, smallInts []byte
	for i := 0; i < 2000; i++ {
		counters = append(counters, byte(i), byte(i>>8)) // uint16 LE 0..1999
		smallInts = append(smallInts, byte(rng.Intn(256)), 0)
	}
	withNUL := append(append([]byte(nil), le...), 0, 0)
	loneHigh := append(append([]byte(nil), le[:20]...), 0x3D, 0xD8, 'a', 0) // U+D83D then 'a'
	binaries := map[string][]byte{
		"png":          append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), randBytes(4000)...),
		"elf":          append([]byte("\x7fELF\x02\x01\x01\x00"), randBytes(4000)...),
		"uint16 count": counters,
		"small ints":   smallInts,
		"utf-16 NUL":   withNUL,
		"lone high":    loneHigh,
		"odd length":   le[:len(le)-1],
		"utf-8 NUL":    []byte("def f():\n    return '\x00'\n"),
	}
	for name, raw := range binaries {
		_, err := Decode("b.py", raw, 0)
		var se *SkipError
		if !errors.Is(err, ErrBinary) || !errors.As(err, &se) || se.Reason != SkipBinary || SkipReason(err) != SkipBinary ||
			!strings.HasPrefix(err.Error(), "b.py: binary content (NUL byte): the first at byte ") {
			t.Errorf("%s: Decode error %v, want a binary SkipError", name, err)
		}
	}
	// Random UTF-16LE-shaped noise (every other byte NUL) is almost never text.
	decoded := 0
	for i := 0; i < 500; i++ {
		b := make([]byte, 2*(8+rng.Intn(200)))
		for j := 0; j < len(b); j += 2 {
			b[j] = byte(rng.Intn(256))
		}
		if _, err := Decode("n.kt", b, 0); err == nil {
			decoded++
		}
	}
	if decoded > 0 {
		t.Errorf("%d of 500 random NUL-interleaved buffers decoded as text", decoded)
	}
	_, err := Decode("big.py", bytes.Repeat([]byte("x"), 100), 10)
	if !errors.Is(err, ErrTooLarge) || SkipReason(err) != SkipTooLarge || err.Error() != "big.py: file over the size limit: 100 > 10 bytes" {
		t.Errorf("too large: %v", err)
	}
	if SkipReason(nil) != "" || SkipReason(errors.New("other")) != "" {
		t.Error("SkipReason of a non-skip error")
	}
}

// Case 30 (CR-only line endings): the chunks equal those of the LF copy.
func TestSharedCaseCROnly(t *testing.T) {
	path, src := sharedCase(t, "30-py-cr-only-line-endings")
	if strings.Contains(src, "\n") {
		t.Fatal("case 30 should have no LF")
	}
	_, lf := chunkString(t, path, strings.ReplaceAll(src, "\r", "\n"), Options{})
	_, cs := chunkString(t, path, src, Options{})
	sameChunks(t, "case 30", lf, cs)
	check(t, cs, []want{
		{name: "to_celsius", start: 5, header: "-"},
		{name: "to_fahrenheit", start: 9, header: "-"},
		{name: "Angle", start: 13, end: 13, header: "-"},
		{name: "__init__", start: 14, header: "class Angle:"},
		{name: "round_trip", start: 24, end: 25, header: "-"},
	})
	// Four copies are over the cap: line windows or definitions, never rune windows of one line.
	_, big := chunkString(t, path, strings.Repeat(src, 4), Options{})
	for _, c := range big {
		if c.StartLine == 1 && c.EndLine == 1 && c.Kind == KindWindow {
			t.Fatalf("rune window of line 1\n%s", dump(big))
		}
	}
}

// sharedCase returns the input of a handed-over case, or skips.
func sharedCase(t *testing.T, name string) (string, string) {
	t.Helper()
	for _, in := range []string{"input.py", "input.kt"} {
		raw, err := os.ReadFile(filepath.Join("..", "..", "shared", "cases", "chunker", name, in))
		if err == nil {
			return in, string(raw)
		}
	}
	t.Skipf("case %s absent", name)
	return "", ""
}

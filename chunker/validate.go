package chunker

import (
	"fmt"
	"unicode/utf8"
)

// Validate checks the invariants every chunking of f must satisfy, with maxChars the
// size cap in non-white-space runes:
//
//  1. coverage: the chunks start at byte 0, end at len(f.Text), leave no gap, and
//     each ends after the one before (overlap is allowed); dropping each chunk's
//     overlap with its predecessor and concatenating the texts gives f.Text back;
//  2. no chunk is empty or white-space only, none exceeds maxChars;
//  3. Text equals f.Text[StartByte:EndByte], is valid UTF-8, and StartLine/EndLine
//     are the 1-based lines of the first and last byte;
//  4. IDs are unique, Ordinal is the position, Prev/Next form the file-order chain,
//     and a Parent names an earlier chunk of the file whose Header is a proper prefix
//     of the chunk's (the parent's signature is one of the entries after it); the
//     prefix is not checked for headers of the maximum depth (8 entries), which keep
//     only their innermost entries.
//
// A file with no non-white-space text must have no chunks. Validate returns the first
// violation found, naming the chunk, or nil.
func Validate(f *File, cs []Chunk, maxChars int) error {
	li := newLineIndex(f.Text)
	if li.size(0, li.lines()) == 0 {
		if len(cs) != 0 {
			return fmt.Errorf("%s: blank file has %d chunks", f.Path, len(cs))
		}
		return nil
	}
	if len(cs) == 0 {
		return fmt.Errorf("%s: no chunks for a non-blank file", f.Path)
	}
	seen := map[string]int{}
	prevEnd := 0
	var rebuilt []byte
	for i, c := range cs {
		where := fmt.Sprintf("%s: chunk %d (%s, lines %d-%d)", f.Path, i, c.ID, c.StartLine, c.EndLine)
		if c.Ordinal != i || c.ID != ChunkID(f.Path, i) || c.Path != f.Path {
			return fmt.Errorf("%s: ordinal/id/path mismatch", where)
		}
		if _, dup := seen[c.ID]; dup {
			return fmt.Errorf("%s: duplicate id", where)
		}
		seen[c.ID] = i
		if c.StartByte < 0 || c.EndByte > len(f.Text) || c.StartByte >= c.EndByte {
			return fmt.Errorf("%s: bad byte range [%d, %d)", where, c.StartByte, c.EndByte)
		}
		if i == 0 && c.StartByte != 0 {
			return fmt.Errorf("%s: first chunk starts at byte %d", where, c.StartByte)
		}
		if c.StartByte > prevEnd {
			return fmt.Errorf("%s: gap: bytes [%d, %d) in no chunk", where, prevEnd, c.StartByte)
		}
		if c.EndByte <= prevEnd {
			return fmt.Errorf("%s: ends at %d, not after the previous chunk (%d)", where, c.EndByte, prevEnd)
		}
		if c.Text != string(f.Text[c.StartByte:c.EndByte]) {
			return fmt.Errorf("%s: text differs from the file's bytes [%d, %d)", where, c.StartByte, c.EndByte)
		}
		if !utf8.ValidString(c.Text) {
			return fmt.Errorf("%s: invalid UTF-8", where)
		}
		n := countNonSpace([]byte(c.Text))
		if n == 0 {
			return fmt.Errorf("%s: empty or white-space only", where)
		}
		if n > maxChars {
			return fmt.Errorf("%s: %d non-space runes over the cap %d", where, n, maxChars)
		}
		if want := li.lineOf(c.StartByte) + 1; c.StartLine != want {
			return fmt.Errorf("%s: StartLine %d, want %d", where, c.StartLine, want)
		}
		if want := li.lineOf(c.EndByte-1) + 1; c.EndLine != want {
			return fmt.Errorf("%s: EndLine %d, want %d", where, c.EndLine, want)
		}
		rebuilt = append(rebuilt, f.Text[max(c.StartByte, prevEnd):c.EndByte]...)
		prevEnd = c.EndByte
		wantPrev, wantNext := "", ""
		if i > 0 {
			wantPrev = cs[i-1].ID
		}
		if i+1 < len(cs) {
			wantNext = cs[i+1].ID
		}
		if c.Prev != wantPrev || c.Next != wantNext {
			return fmt.Errorf("%s: prev/next %q/%q, want %q/%q", where, c.Prev, c.Next, wantPrev, wantNext)
		}
		if c.Parent != "" {
			j, ok := seen[c.Parent]
			if !ok || j >= i {
				return fmt.Errorf("%s: parent %q is not an earlier chunk", where, c.Parent)
			}
			if ph := cs[j].Header; len(c.Header) < maxHeaderDepth && !isPrefix(ph, c.Header) {
				return fmt.Errorf("%s: header %q does not extend its parent's %q", where, c.Header, ph)
			}
		}
	}
	if prevEnd != len(f.Text) {
		return fmt.Errorf("%s: bytes [%d, %d) in no chunk", f.Path, prevEnd, len(f.Text))
	}
	if string(rebuilt) != string(f.Text) {
		return fmt.Errorf("%s: chunks minus overlaps do not give the file back", f.Path)
	}
	return nil
}

// isPrefix reports whether a is a proper prefix of b.
func isPrefix(a, b []string) bool {
	if len(a) >= len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

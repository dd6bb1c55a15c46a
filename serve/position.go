package serve

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// PositionError is a cursor position that does not fit its text. Field names the
// request field at fault ("line", "column" or "offset"); the message names it too.
type PositionError struct {
	Field string
	Msg   string
}

func (e *PositionError) Error() string { return e.Msg }

// Offset returns the UTF-8 byte offset in text of the cursor at the 1-based line and
// column. Lines end at "\n"; column counts Unicode code points from the line's start
// (an invalid UTF-8 byte counts as one): column 1 is before the line's first
// character and column n+1 after its n-th, the line's end (before a "\r\n" or "\n",
// so a column never falls between "\r" and "\n"). The line after a final "\n" exists
// and is empty. It returns a *PositionError naming "line" or "column" when the
// position is not in text.
func Offset(text string, line, column int) (int, error) {
	if line < 1 {
		return 0, &PositionError{"line", fmt.Sprintf("line must be 1 or more (lines are 1-based), not %d", line)}
	}
	if column < 1 {
		return 0, &PositionError{"column", fmt.Sprintf("column must be 1 or more (columns are 1-based, in Unicode code points), not %d", column)}
	}
	start := 0
	for l := 1; l < line; l++ {
		i := strings.IndexByte(text[start:], '\n')
		if i < 0 {
			return 0, &PositionError{"line", fmt.Sprintf("line %d is past the end of the text (it has %d lines)", line, l)}
		}
		start += i + 1
	}
	end := len(text)
	if i := strings.IndexByte(text[start:], '\n'); i >= 0 {
		end = start + i
	}
	content := strings.TrimSuffix(text[start:end], "\r")
	off := start
	for c := 1; c < column; c++ {
		if off >= start+len(content) {
			n := utf8.RuneCountInString(content)
			return 0, &PositionError{"column", fmt.Sprintf("column %d is past the end of line %d (it has %d code points: columns 1 to %d)", column, line, n, n+1)}
		}
		_, size := utf8.DecodeRuneInString(text[off:])
		off += size
	}
	return off, nil
}

// CheckOffset returns a *PositionError naming "offset" unless off is a cursor in text:
// a UTF-8 byte offset in [0, len(text)] that does not fall inside a character's
// encoding.
func CheckOffset(text string, off int) error {
	if off < 0 || off > len(text) {
		return &PositionError{"offset", fmt.Sprintf("offset %d is outside the text (0 to %d bytes of UTF-8)", off, len(text))}
	}
	if off < len(text) && !utf8.RuneStart(text[off]) {
		return &PositionError{"offset", fmt.Sprintf("offset %d falls inside a UTF-8 character (offsets count bytes)", off)}
	}
	return nil
}

// RelPath returns p as a slash path relative to the folder root: p may be relative to
// root (slashes or the system's separators, cleaned) or absolute inside root (symlinks
// in either resolved when p's plain form is outside). It returns an error when p
// leaves root or names root itself. The file need not exist (a new file).
func RelPath(root, p string) (string, error) {
	if p == "" {
		return "", fmt.Errorf("empty path")
	}
	if !filepath.IsAbs(p) {
		rel := path.Clean(filepath.ToSlash(p))
		if rel == "." || rel == ".." || strings.HasPrefix(rel, "../") || strings.HasPrefix(rel, "/") {
			return "", fmt.Errorf("path %s is not a file inside the workspace %s", p, root)
		}
		return rel, nil
	}
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	if rel, ok := within(absRoot, filepath.Clean(p)); ok {
		return rel, nil
	}
	// /tmp/x may be /private/tmp/x: compare the resolved forms (of p's folder, when p
	// is a file not created yet).
	rr, err1 := filepath.EvalSymlinks(absRoot)
	rp, err2 := filepath.EvalSymlinks(p)
	if err2 != nil {
		if d, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
			rp, err2 = filepath.Join(d, filepath.Base(p)), nil
		}
	}
	if err1 == nil && err2 == nil {
		if rel, ok := within(rr, rp); ok {
			return rel, nil
		}
	}
	return "", fmt.Errorf("path %s is outside the workspace %s", p, absRoot)
}

// within returns p relative to root (both absolute and clean) when it is below root.
func within(root, p string) (string, bool) {
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

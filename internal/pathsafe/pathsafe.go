// Package pathsafe checks paths and names that come from untrusted input (datapoint
// files, zip entries, snapshot folders) so that they cannot leave a repository root.
package pathsafe

import (
	"path"
	"strings"
)

// Clean checks a slash-separated path that must stay inside a repository
// and returns its clean form (no "." or empty elements, no trailing slash).
// When the path is refused it returns a reason instead: empty, NUL byte,
// absolute (leading "/" or "\"), drive letter ("C:"), or a ".." element, where
// both "/" and "\" count as separators so that "a\..\..\x" is refused too.
func Clean(p string) (clean, reason string) {
	if p == "" {
		return "", "empty path"
	}
	if strings.IndexByte(p, 0) >= 0 {
		return "", "NUL byte in path"
	}
	if p[0] == '/' || p[0] == '\\' {
		return "", "absolute path"
	}
	if len(p) >= 2 && p[1] == ':' && IsASCIILetter(p[0]) {
		return "", "path with a drive letter"
	}
	if hasDotDot(p) {
		return "", "path with a .. element leaves the repository"
	}
	c := path.Clean(p)
	if c == "." {
		return "", "empty path"
	}
	return c, ""
}

// hasDotDot reports whether p has a ".." element, "/" and "\\" both separating
// elements (a scan without allocation: Clean runs on every entry of every zip).
func hasDotDot(p string) bool {
	for i := 0; i+1 < len(p); i++ {
		if p[i] == '.' && p[i+1] == '.' && (i == 0 || p[i-1] == '/' || p[i-1] == '\\') &&
			(i+2 == len(p) || p[i+2] == '/' || p[i+2] == '\\') {
			return true
		}
	}
	return false
}

// IsASCIILetter reports whether c is an ASCII letter.
func IsASCIILetter(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// SafeComponent reports whether s is a non-empty file name made only of ASCII
// letters, digits, '.', '_' and '-', and is not "." or "..".
func SafeComponent(s string) bool {
	if s == "" || s == "." || s == ".." {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(IsASCIILetter(c) || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// ValidRepo reports whether s is "owner/name" with two safe components.
func ValidRepo(s string) bool {
	owner, name, ok := strings.Cut(s, "/")
	return ok && SafeComponent(owner) && SafeComponent(name)
}

// SnapshotNameOK reports whether name can name a snapshot: one path element
// with no separator, NUL byte or drive letter, and not "." or "..".
func SnapshotNameOK(name string) bool {
	if name == "" || name == "." || name == ".." {
		return false
	}
	if strings.ContainsAny(name, "/\\\x00") {
		return false
	}
	return !(len(name) >= 2 && name[1] == ':' && IsASCIILetter(name[0]))
}

// HasGitElement reports whether the clean path p has an element named ".git"
// and returns the path up to and including it.
func HasGitElement(p string) (string, bool) {
	i := 0
	for {
		j := strings.IndexByte(p[i:], '/')
		elem := p[i:]
		if j >= 0 {
			elem = p[i : i+j]
		}
		if elem == ".git" {
			return p[:i+len(elem)], true
		}
		if j < 0 {
			return "", false
		}
		i += j + 1
	}
}

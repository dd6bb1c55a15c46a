package pathsafe

import (
	"strings"
	"testing"
)

// TestHasDotDot checks hasDotDot against its definition: some element between "/"
// and "\" separators is "..".
func TestHasDotDot(t *testing.T) {
	want := func(p string) bool {
		for _, elem := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }) {
			if elem == ".." {
				return true
			}
		}
		return false
	}
	for _, p := range []string{"", ".", "..", "...", "../x", "x/..", "x/../y", `x\..\y`, "a..b", "..a", "a..",
		"x/...", "x//..//y", `..\`, "x/.../y", "x/.a./y", "./.", "./..", "a/b/c.py", ".../x"} {
		if got := hasDotDot(p); got != want(p) {
			t.Errorf("hasDotDot(%q) = %v, want %v", p, got, want(p))
		}
	}
}

// TestCleanRefuses checks the reasons Clean gives for paths it refuses.
func TestCleanRefuses(t *testing.T) {
	for p, reason := range map[string]string{"": "empty path", "a/../../x": "path with a .. element leaves the repository",
		`a\..\x`: "path with a .. element leaves the repository", "/etc/x": "absolute path", "C:x": "path with a drive letter", "./": "empty path"} {
		if _, got := Clean(p); got != reason {
			t.Errorf("Clean(%q) reason %q, want %q", p, got, reason)
		}
	}
	if c, r := Clean("a/./b//c.py"); c != "a/b/c.py" || r != "" {
		t.Errorf("Clean = %q, %q", c, r)
	}
}

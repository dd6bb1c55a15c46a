package snapshot

import (
	"io/fs"
	"testing"
)

// TestRootFSReadDirRaw: on Linux a folder reached through folders only is listed
// with getdents64 (entries stat'ed when asked for), and a path that is no symlink
// through folders only is stat'ed relative to its folder; through a symlink, os.Root
// lists and stats.
func TestRootFSReadDirRaw(t *testing.T) {
	dir := rootFSTree(t)
	_, rfs := openRootFS(t, dir)
	for p, raw := range map[string]bool{".": true, "pkg": true, "pkg/sub/deep": true, "linkdir": false, "pkg/sublink": false} {
		entries, err := fs.ReadDir(rfs, p)
		if err != nil || len(entries) == 0 {
			t.Fatalf("%s: %v, %v", p, entries, err)
		}
		e, ok := entries[0].(*rawDirEntry)
		if ok != raw {
			t.Errorf("%s: listed raw = %v, want %v", p, ok, raw)
		}
		if ok && e.info != nil {
			t.Errorf("%s: %s stat'ed before its Info was asked for", p, e.name)
		}
	}
	for p, raw := range map[string]bool{"a.kt": true, "pkg": true, "pkg/sub/d.py": true, "link.kt": false, "linkdir/c.kt": false} {
		fi, err := fs.Stat(rfs, p)
		if err != nil {
			t.Fatalf("Stat(%s): %v", p, err)
		}
		if _, ok := fi.(*rawFileInfo); ok != raw {
			t.Errorf("Stat(%s): raw = %v, want %v", p, ok, raw)
		}
	}
}

package dataset

import (
	"bytes"
	"strings"
	"testing"

	"github.com/repoctx/repoctx/internal/pathsafe"
)

func FuzzReadDatapoints(f *testing.F) {
	f.Add([]byte(`{"id":"a","repo":"o/n","revision":"r","path":"a.py","modified":["a.py"],"prefix":"p","suffix":"s"}` + "\n"))
	f.Add([]byte(`{"repo":"o/n","revision":"r","path":"./x//y.py","prefix":"","suffix":""}` + "\r\n\n" + `{"id":1}`))
	f.Add([]byte("\xef\xbb\xbf" + `{"id":"b","repo":"o/n","revision":"r","path":"a\\..\\..\\x","prefix":"p"}` + "\nnot json\n"))
	f.Add([]byte(`{"id":"c","repo":"../x","revision":"r/../..","path":"/etc/passwd","suffix":"\u0000"}`))
	f.Add([]byte("\n\n   \n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dps, errs, err := ReadDatapoints(bytes.NewReader(data), "fuzz.jsonl")
		if err != nil {
			t.Fatalf("I/O error from a bytes.Reader: %v", err)
		}
		if len(dps) != len(errs) {
			t.Fatalf("%d datapoints, %d errors", len(dps), len(errs))
		}
		if len(dps) > bytes.Count(data, []byte("\n"))+1 {
			t.Fatalf("%d datapoints from %d lines", len(dps), bytes.Count(data, []byte("\n"))+1)
		}
		prev := 0
		for i, d := range dps {
			if d.Line <= prev {
				t.Fatalf("line numbers not increasing: %d after %d", d.Line, prev)
			}
			prev = d.Line
			if errs[i] != nil {
				if !strings.HasPrefix(errs[i].Error(), "dataset: fuzz.jsonl:") {
					t.Fatalf("error message %q", errs[i])
				}
				continue
			}
			name := d.SnapshotName()
			if !pathsafe.SnapshotNameOK(name) || strings.ContainsAny(name, "/\\") {
				t.Fatalf("unsafe snapshot name %q", name)
			}
			if c, reason := pathsafe.Clean(d.Path); reason != "" || c != d.Path || !staysInside(d.Path) {
				t.Fatalf("accepted path %q (%s)", d.Path, reason)
			}
		}
	})
}

// staysInside reports whether p, read with "/" or "\\" as separator, is a
// relative path with no ".." element, no drive letter and no NUL byte.
// A backslash inside a name is allowed: on Unix it is an ordinary byte.
func staysInside(p string) bool {
	if p == "" || p[0] == '/' || p[0] == '\\' || strings.ContainsRune(p, 0) || len(p) > 1 && p[1] == ':' && pathsafe.IsASCIILetter(p[0]) {
		return false
	}
	for _, e := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }) {
		if e == ".." {
			return false
		}
	}
	// Like fs.ValidPath, but names need not be UTF-8: zip names and Unix
	// file names are bytes.
	for _, e := range strings.Split(p, "/") {
		if e == "" || e == "." {
			return false
		}
	}
	return true
}

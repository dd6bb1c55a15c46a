package snapshot

import (
	"archive/zip"
	"bytes"
	"io/fs"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/repoctx/repoctx/internal/pathsafe"
)

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

// fuzzLimits keeps each fuzz run's memory small.
var fuzzLimits = Limits{MaxFileBytes: 64 << 10, MaxSnapshotBytes: 1 << 20, MaxFiles: 1000, MaxRatio: 200}

// exerciseSource opens every snapshot of src and reads every file, checking
// the invariants that hold whatever the input.
func exerciseSource(t *testing.T, src Source) {
	names := src.Names()
	if !slices.IsSorted(names) {
		t.Fatalf("Names not sorted: %q", names)
	}
	for _, name := range names {
		s, err := src.Open(name)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "snapshot: ") {
				t.Fatalf("error message %q", err)
			}
			continue
		}
		paths := s.Paths()
		if !slices.IsSorted(paths) || len(slices.Compact(slices.Clone(paths))) != len(paths) {
			t.Fatalf("Paths not sorted and unique: %q", paths)
		}
		for _, p := range paths {
			if c, reason := pathsafe.Clean(p); reason != "" || c != p || path.IsAbs(p) || !staysInside(p) {
				t.Fatalf("listed unsafe path %q", p)
			}
			if _, ok := pathsafe.HasGitElement(p); ok {
				t.Fatalf("listed %q", p)
			}
			b, err := s.ReadFile(p)
			if err == nil && int64(len(b)) > fuzzLimits.MaxFileBytes {
				t.Fatalf("ReadFile(%q) returned %d bytes, over the limit", p, len(b))
			}
			if n, ok := s.Size(p); err == nil && (!ok || n != int64(len(b))) {
				t.Fatalf("Size(%q) = %d, read %d bytes", p, n, len(b))
			}
		}
	}
	_, err := src.Open("no__such-snapshot")
	if err == nil {
		t.Fatal("opened a missing snapshot")
	}
	src.Close()
}

func FuzzOpenZip(f *testing.F) {
	innerZip := func(ents ...[2]string) []byte {
		var buf bytes.Buffer
		w := zip.NewWriter(&buf)
		for _, e := range ents {
			fw, _ := w.Create(e[0])
			fw.Write([]byte(e[1]))
		}
		w.Close()
		return buf.Bytes()
	}
	outerZip := func(name string, inner []byte) []byte {
		var buf bytes.Buffer
		w := zip.NewWriter(&buf)
		fw, _ := w.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
		fw.Write(inner)
		w.Close()
		return buf.Bytes()
	}
	in := innerZip([2]string{"a.py", "print(1)\n"}, [2]string{"d/b.kt", "fun b() = 2"}, [2]string{"../x", "slip"}, [2]string{"a.py", "dup"})
	f.Add(outerZip("o__r-1.zip", in))
	f.Add(in)
	f.Add(outerZip("o__r-1.zip", innerZip([2]string{".git/HEAD", "x"}, [2]string{"z", strings.Repeat("0", 5000)})))
	f.Add([]byte("PK\x05\x06" + strings.Repeat("\x00", 18)))
	hostile := func() []byte {
		var buf bytes.Buffer
		w := zip.NewWriter(&buf)
		for _, h := range []*zip.FileHeader{
			{Name: "/abs", Method: zip.Store}, {Name: "C:\\x", Method: zip.Deflate},
			{Name: "d/", Method: zip.Store}, {Name: "d/./e//f", Method: zip.Deflate},
		} {
			fw, _ := w.CreateHeader(h)
			fw.Write([]byte(h.Name))
		}
		link := &zip.FileHeader{Name: "link", Method: zip.Store}
		link.SetMode(fs.ModeSymlink | 0o777)
		fw, _ := w.CreateHeader(link)
		fw.Write([]byte("../../etc/passwd"))
		w.Close()
		return buf.Bytes()
	}()
	f.Add(hostile)
	f.Add(outerZip("a__b-c.zip", hostile))
	f.Fuzz(func(t *testing.T, data []byte) {
		// data as an outer zip.
		if src, err := newZipSource(bytes.NewReader(data), int64(len(data)), "fuzz.zip", fuzzLimits, nil); err == nil {
			exerciseSource(t, src)
		} else if !strings.Contains(err.Error(), "fuzz.zip") {
			t.Fatalf("error %q does not name the file", err)
		}
		// data as the inner zip of a valid outer zip.
		outer := outerZip("o__r-1.zip", data)
		src, err := newZipSource(bytes.NewReader(outer), int64(len(outer)), "outer.zip", fuzzLimits, nil)
		if err != nil {
			t.Fatalf("valid outer zip refused: %v", err)
		}
		if got := src.Names(); len(got) != 1 {
			t.Fatalf("Names = %q", got)
		}
		exerciseSource(t, src)
	})
}

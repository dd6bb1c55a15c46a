package snapshot

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// openZipData writes outer as dir/python-test.zip and opens it.
func openZipData(t *testing.T, outer []byte, lim Limits) (Source, string) {
	t.Helper()
	dir := t.TempDir()
	p := writeDataZip(t, dir, "python-test", outer)
	src, err := OpenSource(dir, "python", "test", lim)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src, p
}

func TestZipSourceBasic(t *testing.T) {
	in1 := buildZip(t,
		zent{name: "src/"},
		zent{name: "src/a.py", body: []byte("print('a')\n")},
		zent{name: "README.md", body: []byte("# hi\n"), store: true},
		zent{name: "./docs//b.md", body: []byte("b")},
		zent{name: "empty.txt"},
	)
	in2 := buildZip(t, zent{name: "x.kt", body: []byte("fun x() = 1")})
	outer := buildZip(t,
		zent{name: "owner__repo-abc.zip", body: in1, store: true},
		zent{name: "notes.txt", body: []byte("not a snapshot")},
		zent{name: "nested/owner__other-1.zip", body: in2, store: true},
		zent{name: "square__okio-def.zip", body: in2}, // deflated in the outer zip
	)
	src, _ := openZipData(t, outer, Limits{})
	if got, want := src.Names(), []string{"owner__repo-abc", "square__okio-def"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Names = %q, want %q", got, want)
	}
	s, err := src.Open("owner__repo-abc")
	if err != nil {
		t.Fatal(err)
	}
	if s.Name() != "owner__repo-abc" {
		t.Errorf("Name = %q", s.Name())
	}
	if got, want := s.Paths(), []string{"README.md", "docs/b.md", "empty.txt", "src/a.py"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Paths = %q, want %q", got, want)
	}
	if len(s.Skipped()) != 0 {
		t.Errorf("Skipped = %v, want none", s.Skipped())
	}
	for path, want := range map[string]string{"src/a.py": "print('a')\n", "README.md": "# hi\n", "docs/b.md": "b", "empty.txt": ""} {
		got, err := s.ReadFile(path)
		if err != nil || string(got) != want {
			t.Errorf("ReadFile(%q) = %q, %v; want %q", path, got, err, want)
		}
	}
	if n, ok := s.Size("src/a.py"); !ok || n != 11 {
		t.Errorf("Size = %d, %v", n, ok)
	}
	if _, ok := s.Size("src"); ok {
		t.Error("a folder entry is listed")
	}
	if _, err := s.ReadFile("./docs/b.md"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile of an unclean path: %v, want fs.ErrNotExist (io/fs names are clean)", err)
	}
	_, err = s.ReadFile("missing.py")
	mustContain(t, err, "owner__repo-abc", "missing.py")
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("error %v does not wrap fs.ErrNotExist", err)
	}
	s2, err := src.Open("square__okio-def")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := s2.ReadFile("x.kt"); err != nil || string(b) != "fun x() = 1" {
		t.Errorf("ReadFile = %q, %v", b, err)
	}
}

func TestZipSlip(t *testing.T) {
	in := buildZip(t,
		zent{name: "../evil.py", body: []byte("x")},
		zent{name: "a/../../evil.py", body: []byte("x")},
		zent{name: "../../../../tmp/evil.py", body: []byte("x")},
		zent{name: "/etc/passwd", body: []byte("x")},
		zent{name: "\\windows\\evil.py", body: []byte("x")},
		zent{name: "C:/evil.py", body: []byte("x")},
		zent{name: "c:evil.py", body: []byte("x")},
		zent{name: "..\\evil.py", body: []byte("x")},
		zent{name: "a\\..\\..\\evil.py", body: []byte("x")},
		zent{name: "nul\x00.py", body: []byte("x")},
		zent{name: "../"},
		zent{name: "ok.py", body: []byte("ok")},
		zent{name: "a/..b/c..d.py", body: []byte("dots in names are fine")},
	)
	src, _ := openZipData(t, buildOuter(t, inner{"o__r-1", in}), Limits{})
	s, err := src.Open("o__r-1")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.Paths(), []string{"a/..b/c..d.py", "ok.py"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Paths = %q, want %q", got, want)
	}
	want := map[string]string{
		"../evil.py":              ".. element",
		"a/../../evil.py":         ".. element",
		"../../../../tmp/evil.py": ".. element",
		"/etc/passwd":             "absolute path",
		"\\windows\\evil.py":      "absolute path",
		"C:/evil.py":              "drive letter",
		"c:evil.py":               "drive letter",
		"..\\evil.py":             ".. element",
		"a\\..\\..\\evil.py":      ".. element",
		"nul\x00.py":              "NUL byte",
		"../":                     ".. element",
	}
	got := skipReasons(s)
	for path, reason := range want {
		if !strings.Contains(got[path], reason) {
			t.Errorf("skip of %q: reason %q, want one containing %q", path, got[path], reason)
		}
	}
	if len(got) != len(want) {
		t.Errorf("Skipped = %v, want %d entries", s.Skipped(), len(want))
	}
	for _, p := range []string{"../evil.py", "/etc/passwd", "evil.py", "tmp/evil.py"} {
		if _, err := s.ReadFile(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("ReadFile(%q) = %v, want not-exist", p, err)
		}
	}
}

func TestZipDuplicates(t *testing.T) {
	in := buildZip(t,
		zent{name: "a.py", body: []byte("first")},
		zent{name: "a.py", body: []byte("second")},
		zent{name: "./a.py", body: []byte("third")},
		zent{name: "d//b.py", body: []byte("b1")},
		zent{name: "d/b.py", body: []byte("b2")},
	)
	src, _ := openZipData(t, buildOuter(t, inner{"o__r-1", in}), Limits{})
	s, err := src.Open("o__r-1")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.Paths(), []string{"a.py", "d/b.py"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Paths = %q, want %q", got, want)
	}
	if b, _ := s.ReadFile("a.py"); string(b) != "first" {
		t.Errorf("a.py = %q, want the first entry", b)
	}
	if b, _ := s.ReadFile("d/b.py"); string(b) != "b1" {
		t.Errorf("d/b.py = %q, want the first entry", b)
	}
	want := []Skip{
		{"a.py", "duplicate entry: the first one is kept"},
		{"./a.py", "duplicate entry: the first one is kept"},
		{"d/b.py", "duplicate entry: the first one is kept"},
	}
	if got := s.Skipped(); !reflect.DeepEqual(got, want) {
		t.Errorf("Skipped = %v, want %v", got, want)
	}
	// Duplicate snapshots in the outer zip: the first is used.
	other := buildZip(t, zent{name: "other.py", body: []byte("x")})
	src2, _ := openZipData(t, buildOuter(t, inner{"o__r-1", in}, inner{"o__r-1", other}), Limits{})
	if got := src2.Names(); !reflect.DeepEqual(got, []string{"o__r-1"}) {
		t.Errorf("Names = %q", got)
	}
	s2, err := src2.Open("o__r-1")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s2.Size("a.py"); !ok {
		t.Error("the second snapshot of the same name was used")
	}
}

func TestZipSkipsSymlinksGitAndOddEntries(t *testing.T) {
	in := buildZip(t,
		zent{name: "link.py", body: []byte("/etc/passwd"), mode: fs.ModeSymlink | 0o777},
		zent{name: ".git/", mode: fs.ModeDir | 0o755},
		zent{name: ".git/config", body: []byte("[core]")},
		zent{name: ".git/HEAD", body: []byte("ref")},
		zent{name: "sub/.git", body: []byte("gitdir: ../.git/modules/sub")},
		zent{name: ".gitignore", body: []byte("*.pyc")},
		zent{name: "pipe", mode: fs.ModeNamedPipe | 0o644},
		zent{name: "secret.py", body: []byte("x"), flags: 0x1},
		zent{name: "bz.py", body: []byte("xx"), raw: true, method: 12, declared: 2},
		zent{name: "ok.py", body: []byte("ok")},
	)
	src, _ := openZipData(t, buildOuter(t, inner{"o__r-1", in}), Limits{})
	s, err := src.Open("o__r-1")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.Paths(), []string{".gitignore", "ok.py"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Paths = %q, want %q", got, want)
	}
	want := map[string]string{
		"link.py":   "symlink entry",
		".git":      "git metadata",
		"sub/.git":  "git metadata",
		"pipe":      "not a regular file",
		"secret.py": "encrypted entry",
		"bz.py":     "unsupported compression method 12",
	}
	got := skipReasons(s)
	for path, reason := range want {
		if !strings.Contains(got[path], reason) {
			t.Errorf("skip of %q: reason %q, want one containing %q", path, got[path], reason)
		}
	}
	if len(s.Skipped()) != len(want) {
		t.Errorf("Skipped = %v, want %d entries (.git recorded once)", s.Skipped(), len(want))
	}
}

func TestZipBombs(t *testing.T) {
	zeros := make([]byte, 1<<20)
	lim := Limits{MaxFileBytes: 4096, MaxSnapshotBytes: 64 << 20, MaxRatio: 200}
	for _, tc := range []struct {
		name     string
		snap     []byte // inner zip; nil to use outerRaw
		outer    []byte // whole outer zip, when set
		lim      Limits
		openErr  string // part of the Open error, "" for success
		readPath string
		readErr  string // part of the ReadFile error
		tooLarge bool
	}{
		{
			name:     "declared size over MaxFileBytes stays listed",
			snap:     buildZip(t, zent{name: "big.bin", body: zeros[:5000], store: true}),
			lim:      lim,
			readPath: "big.bin", readErr: "5000 bytes, over the limit of 4096 bytes", tooLarge: true,
		},
		{
			name:     "entry lies about its size",
			snap:     buildZip(t, zent{name: "liar.txt", body: deflate(t, zeros), raw: true, method: zip.Deflate, declared: 10}),
			lim:      lim,
			readPath: "liar.txt", readErr: "liar.txt",
		},
		{
			name:    "ratio of the files over MaxRatio",
			snap:    buildZip(t, zent{name: "a.py", body: zeros}, zent{name: "b.kt", body: zeros}, zent{name: "c.py", body: zeros}),
			lim:     Limits{MaxFileBytes: 2 << 20, MaxRatio: 200},
			openErr: "compression ratio",
		},
		{
			name:    "ratio of the ignore files over MaxRatio",
			snap:    buildZip(t, zent{name: ".gitignore", body: zeros}, zent{name: "x/.ignore", body: zeros}, zent{name: "y/.gitignore", body: zeros}),
			lim:     Limits{MaxFileBytes: 2 << 20, MaxRatio: 200},
			openErr: "compression ratio",
		},
		{
			name:    "declared total over MaxSnapshotBytes",
			snap:    buildZip(t, zent{name: "a.py", body: zeros[:3000]}, zent{name: "b.py", body: zeros[:3000]}),
			lim:     Limits{MaxSnapshotBytes: 5000, MaxRatio: 1000},
			openErr: "declare 6000 bytes uncompressed, over the limit of 5000",
		},
		{
			name:    "inner zip over MaxSnapshotBytes",
			snap:    buildZip(t, zent{name: "a", body: zeros[:3000], store: true}),
			lim:     Limits{MaxSnapshotBytes: 2000},
			openErr: "inner zip is",
		},
		{
			name: "inner zip compressed in the outer zip with a huge ratio",
			outer: buildZip(t, zent{name: "o__r-1.zip",
				body: buildZip(t, zent{name: "z", body: zeros, store: true})}),
			lim:     Limits{MaxFileBytes: 2 << 20},
			openErr: "ratio over the limit of 200",
		},
		{
			name: "inner zip lies about its size in the outer zip",
			outer: buildZip(t, zent{name: "o__r-1.zip", raw: true, method: zip.Deflate, declared: 100,
				body: deflate(t, buildZip(t, zent{name: "z", body: []byte("hello")}))}),
			lim:     lim,
			openErr: "o__r-1",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			outer := tc.outer
			if outer == nil {
				outer = buildOuter(t, inner{"o__r-1", tc.snap})
			}
			src, _ := openZipData(t, outer, tc.lim)
			s, err := src.Open("o__r-1")
			if tc.openErr != "" {
				mustContain(t, err, "snapshot o__r-1", tc.openErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := s.Size(tc.readPath); !ok {
				t.Fatalf("%s is not listed: %q", tc.readPath, s.Paths())
			}
			b, err := s.ReadFile(tc.readPath)
			mustContain(t, err, "snapshot o__r-1", tc.readErr)
			if b != nil {
				t.Errorf("ReadFile returned %d bytes with its error", len(b))
			}
			if tc.tooLarge != errors.Is(err, ErrTooLarge) {
				t.Errorf("errors.Is(%v, ErrTooLarge) = %v, want %v", err, !tc.tooLarge, tc.tooLarge)
			}
		})
	}
}

// TestZipRatioCountsReadableFiles: the compression ratio and total size checks of an
// inner zip count only the files the walker reads (one large, very compressible
// file that is skipped anyway must not fail its whole snapshot). A file
// over MaxFileBytes is never read; a file that is not source is charged when first
// read, so that reading every file still decompresses no more than the limits.
func TestZipRatioCountsReadableFiles(t *testing.T) {
	zeros := make([]byte, 1<<20)
	src := []byte("def f():\n    return 1\n")
	lim := Limits{MaxFileBytes: 64 << 10, MaxRatio: 200}
	open := func(t *testing.T, ents ...zent) Snapshot {
		t.Helper()
		zs, _ := openZipData(t, buildOuter(t, inner{"o__r-1", buildZip(t, ents...)}), lim)
		s, err := zs.Open("o__r-1")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	read := func(t *testing.T, s Snapshot, path string, tooLarge bool) {
		t.Helper()
		b, err := s.ReadFile(path)
		if tooLarge {
			if !errors.Is(err, ErrTooLarge) {
				t.Fatalf("ReadFile(%s) = %d bytes, %v; want an error wrapping ErrTooLarge", path, len(b), err)
			}
			return
		}
		if err != nil {
			t.Fatalf("ReadFile(%s): %v", path, err)
		}
	}

	t.Run("source file over MaxFileBytes", func(t *testing.T) {
		s := open(t, zent{name: "a.py", body: src}, zent{name: "fixture.py", body: zeros})
		read(t, s, "a.py", false)
		read(t, s, "fixture.py", true) // over MaxFileBytes, as before
	})
	t.Run("data file over MaxFileBytes", func(t *testing.T) {
		s := open(t, zent{name: "a.py", body: src}, zent{name: "zeros.bin", body: zeros})
		read(t, s, "a.py", false)
	})
	t.Run("data files under MaxFileBytes are charged when read", func(t *testing.T) {
		// 20 files of 64 KiB zeros: 1.3 MB from a zip of about 3 KB, over the ratio,
		// but not read by the walker. Reading them stops once 200 times the zip's size
		// is used up; the source file stays readable, and a file read once reads again.
		ents := []zent{{name: "a.py", body: src}}
		for i := range 20 {
			ents = append(ents, zent{name: fmt.Sprintf("data/%02d.bin", i), body: zeros[:64<<10]})
		}
		s := open(t, ents...)
		read(t, s, "a.py", false)
		read(t, s, "data/00.bin", false)
		read(t, s, "data/00.bin", false)
		refused := 0
		for i := range 20 {
			if _, err := s.ReadFile(fmt.Sprintf("data/%02d.bin", i)); errors.Is(err, ErrTooLarge) {
				refused++
			} else if err != nil {
				t.Fatal(err)
			}
		}
		if refused == 0 || refused == 20 {
			t.Errorf("%d of 20 data files refused, want some but not all", refused)
		}
		read(t, s, "data/00.bin", false)
		read(t, s, "a.py", false)
	})
	t.Run("source files under MaxFileBytes still fail the snapshot", func(t *testing.T) {
		// 40 source files of 60 KiB zeros (each about 150 bytes zipped, headers
		// included: a ratio near 400), beside a file over MaxFileBytes.
		ents := []zent{{name: "big.py", body: zeros}}
		for i := range 40 {
			ents = append(ents, zent{name: fmt.Sprintf("s%02d.kt", i), body: zeros[:60<<10]})
		}
		zs, _ := openZipData(t, buildOuter(t, inner{"o__r-1", buildZip(t, ents...)}), lim)
		_, err := zs.Open("o__r-1")
		mustContain(t, err, "snapshot o__r-1", "compression ratio")
	})
}

func TestZipMaxFiles(t *testing.T) {
	var ents []zent
	for i := range 5 {
		ents = append(ents, zent{name: fmt.Sprintf("f%d.py", i), body: []byte("x")})
	}
	src, _ := openZipData(t, buildOuter(t, inner{"o__r-1", buildZip(t, ents...)}), Limits{MaxFiles: 3})
	s, err := src.Open("o__r-1")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.Paths(), []string{"f0.py", "f1.py", "f2.py"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Paths = %q, want %q", got, want)
	}
	if got, want := s.Skipped(), []Skip{{"f3.py", "over the limit of 3 files: 2 files left out from here on"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("Skipped = %v, want %v", got, want)
	}
}

func TestCorruptOuterZip(t *testing.T) {
	good := buildOuter(t, inner{"o__r-1", buildZip(t, zent{name: "a.py", body: []byte("x")})})
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"truncated", good[:len(good)/2]},
		{"truncated end", good[:len(good)-5]},
		{"garbage", []byte("this is not a zip file at all, not even close")},
		{"empty", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := writeDataZip(t, dir, "kotlin-dev", tc.data)
			src, err := OpenSource(dir, "kotlin", "dev", Limits{})
			if src != nil {
				t.Error("got a source with the error")
			}
			mustContain(t, err, p)
		})
	}
}

func TestCorruptInnerZip(t *testing.T) {
	good := buildZip(t, zent{name: "a.py", body: []byte("hello world, this is a python file"), store: true})
	flipped := bytes.Clone(good)
	i := bytes.Index(flipped, []byte("hello"))
	flipped[i] = 'j' // breaks the CRC of a.py
	for _, tc := range []struct {
		name    string
		data    []byte
		openErr string
		readErr string
	}{
		{name: "garbage", data: []byte("garbage garbage garbage garbage"), openErr: "corrupt inner zip"},
		{name: "truncated", data: good[:len(good)-10], openErr: "corrupt inner zip"},
		{name: "empty", data: []byte{}, openErr: "corrupt inner zip"},
		{name: "bad checksum", data: flipped, readErr: "checksum"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, p := openZipData(t, buildOuter(t, inner{"o__r-1", tc.data}), Limits{})
			s, err := src.Open("o__r-1")
			if tc.openErr != "" {
				mustContain(t, err, "snapshot o__r-1", p, tc.openErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.ReadFile("a.py")
			mustContain(t, err, "snapshot o__r-1", "a.py", tc.readErr)
		})
	}
}

func TestOpenSourceErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := OpenSource(dir, "python", "dev", Limits{})
	mustContain(t, err, "python-dev", "repositories-python-dev", "python-dev.zip")
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("error %v does not wrap fs.ErrNotExist", err)
	}
	_, err = OpenSource(dir, "../python", "dev", Limits{})
	mustContain(t, err, "plain names")

	src, _ := openZipData(t, buildOuter(t, inner{"o__r-1", buildZip(t, zent{name: "a", body: []byte("x")})}), Limits{})
	for _, name := range []string{"o__r-2", "../o__r-1", "", "o__r-1.zip"} {
		_, err := src.Open(name)
		if !errors.Is(err, ErrNoSnapshot) {
			t.Errorf("Open(%q) = %v, want ErrNoSnapshot", name, err)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "snapshot: ") {
			t.Errorf("error %q lacks the prefix", err)
		}
	}
}

func TestOpenSourcePrefersFolder(t *testing.T) {
	dir := t.TempDir()
	writeDataZip(t, dir, "python-dev", buildOuter(t, inner{"o__zip-1", buildZip(t, zent{name: "z.py", body: []byte("z")})}))
	writeFiles(t, filepath.Join(dir, "repositories-python-dev"), map[string]string{
		"o__dir-1/d.py":     "d",
		"o__dir-2/e/f.py":   "f",
		"stray-file.txt":    "not a snapshot",
		"o__dir-2/.git/HEA": "x",
	})
	src, err := OpenSource(dir, "python", "dev", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if got, want := src.Names(), []string{"o__dir-1", "o__dir-2"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Names = %q, want %q", got, want)
	}
	s, err := src.Open("o__dir-2")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Paths(); !reflect.DeepEqual(got, []string{"e/f.py"}) {
		t.Errorf("Paths = %q", got)
	}
	for _, name := range []string{"o__zip-1", "stray-file.txt", "..", "../repositories-python-dev", "o__dir-1/.."} {
		if _, err := src.Open(name); !errors.Is(err, ErrNoSnapshot) {
			t.Errorf("Open(%q) = %v, want ErrNoSnapshot", name, err)
		}
	}
	src.Close()
	if _, err := src.Open("o__dir-1"); err == nil {
		t.Error("Open after Close succeeded")
	}
}

func TestZipSourceConcurrent(t *testing.T) {
	var snaps []inner
	for i := range 6 {
		var ents []zent
		for j := range 20 {
			ents = append(ents, zent{name: fmt.Sprintf("d%d/f%d.py", j%3, j), body: []byte(fmt.Sprintf("snap %d file %d\n", i, j))})
		}
		snaps = append(snaps, inner{fmt.Sprintf("o__r-%d", i), buildZip(t, ents...)})
	}
	src, _ := openZipData(t, buildOuter(t, snaps...), Limits{})
	var wg sync.WaitGroup
	errc := make(chan error, 64)
	var keep Snapshot
	var once sync.Once
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 12 {
				i := (w + k) % 6
				s, err := src.Open(fmt.Sprintf("o__r-%d", i))
				if err != nil {
					errc <- err
					return
				}
				once.Do(func() { keep = s })
				for j := range 20 {
					b, err := s.ReadFile(fmt.Sprintf("d%d/f%d.py", j%3, j))
					if want := fmt.Sprintf("snap %d file %d\n", i, j); err != nil || string(b) != want {
						errc <- fmt.Errorf("snapshot %d file %d: %q, %v", i, j, b, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Open("o__r-0"); err == nil {
		t.Error("Open after Close succeeded")
	}
	if _, err := keep.ReadFile(keep.Paths()[0]); err != nil {
		t.Errorf("a snapshot opened before Close no longer reads: %v", err)
	}
	if err := src.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestZipSourceReadsCentralDirectoryOnce checks that Open does not reread the
// outer zip's central directory: Open must touch only the inner zip's bytes.
func TestZipSourceReadsCentralDirectoryOnce(t *testing.T) {
	var snaps []inner
	for i := range 50 {
		snaps = append(snaps, inner{fmt.Sprintf("o__r-%02d", i), buildZip(t, zent{name: "a.py", body: bytes.Repeat([]byte{'a' + byte(i%26)}, 100)})})
	}
	outer := buildOuter(t, snaps...)
	ra := &countingReaderAt{r: bytes.NewReader(outer)}
	src, err := newZipSource(ra, int64(len(outer)), "mem.zip", Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ra.mu.Lock()
	ra.n = 0
	ra.mu.Unlock()
	if _, err := src.Open("o__r-07"); err != nil {
		t.Fatal(err)
	}
	ra.mu.Lock()
	n := ra.n
	ra.mu.Unlock()
	innerSize := int64(len(snaps[7].data))
	if n > innerSize+1024 {
		t.Errorf("Open read %d bytes of the outer zip for a %d-byte inner zip", n, innerSize)
	}
}

type countingReaderAt struct {
	r  *bytes.Reader
	mu sync.Mutex
	n  int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.mu.Lock()
	c.n += int64(n)
	c.mu.Unlock()
	return n, err
}

func TestOpenSourceNotRegular(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "python-dev.zip"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := OpenSource(dir, "python", "dev", Limits{})
	mustContain(t, err, "python-dev.zip")
}

// TestSnapshotSharedAcrossGoroutines reads one Snapshot, zipped or folder,
// from several goroutines at once.
func TestSnapshotSharedAcrossGoroutines(t *testing.T) {
	files := map[string]string{}
	var ents []zent
	for j := range 30 {
		name := fmt.Sprintf("p%d/f%d.py", j%4, j)
		files[name] = strings.Repeat(fmt.Sprintf("line %d\n", j), 50)
		ents = append(ents, zent{name: name, body: []byte(files[name])})
	}
	src, _ := openZipData(t, buildOuter(t, inner{"o__r-1", buildZip(t, ents...)}), Limits{})
	zs, err := src.Open("o__r-1")
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(t.TempDir(), "o__r-1")
	writeFiles(t, root, files)
	ds, err := OpenDir(root, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []Snapshot{zs, ds} {
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for _, p := range s.Paths() {
					b, err := s.ReadFile(p)
					if err != nil || string(b) != files[p] {
						t.Errorf("ReadFile(%q) = %d bytes, %v", p, len(b), err)
					}
				}
			}()
		}
		wg.Wait()
	}
}

// TestZipSourceStoredInPlace checks that an inner zip stored uncompressed is listed
// from its central directory alone, that its files are read (and checked) when asked
// for, and that its digest follows its files' contents.
func TestZipSourceStoredInPlace(t *testing.T) {
	big := bytes.Repeat([]byte("x = 1\n"), 20000)
	for i := range big {
		big[i] ^= byte(i*7919%251) & 0x1f // little to compress
	}
	edited := bytes.Clone(big)
	edited[len(edited)-2] = '2' // same size, other content
	outer := buildOuter(t,
		inner{"o__r-1", buildZip(t, zent{name: "a.py", body: big}, zent{name: "b.py", body: []byte("b")})},
		inner{"o__r-2", buildZip(t, zent{name: "a.py", body: edited}, zent{name: "b.py", body: []byte("b")})},
		inner{"o__r-3", buildZip(t, zent{name: "a.py", body: big}, zent{name: "b.py", body: []byte("b")})})
	ra := &countingReaderAt{r: bytes.NewReader(outer)}
	src, err := newZipSource(ra, int64(len(outer)), "mem.zip", Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ra.n = 0
	digests := map[string][32]byte{}
	for _, name := range []string{"o__r-1", "o__r-2", "o__r-3"} {
		s, err := src.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		d, ok := s.(Digester).ContentDigest()
		if !ok {
			t.Fatalf("%s: no digest", name)
		}
		digests[name] = d
	}
	if ra.n > 3*(64<<10+1024) {
		t.Errorf("Open read %d bytes for three inner zips' directories", ra.n)
	}
	if digests["o__r-1"] != digests["o__r-3"] || digests["o__r-1"] == digests["o__r-2"] {
		t.Errorf("digests: equal files %x %x, edited file %x", digests["o__r-1"], digests["o__r-3"], digests["o__r-2"])
	}
	s, _ := src.Open("o__r-2")
	if b, err := s.ReadFile("a.py"); err != nil || !bytes.Equal(b, edited) {
		t.Errorf("ReadFile = %d bytes, %v", len(b), err)
	}
}

// TestZipLongComment: an inner zip whose comment is longer than the first tail read
// (1 KiB) still opens; cut short, it is refused.
func TestZipLongComment(t *testing.T) {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	fw, _ := w.Create("a.py")
	fw.Write([]byte("x = 1\n"))
	w.SetComment(strings.Repeat("c", 3000))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		data []byte
		ok   bool
	}{{buf.Bytes(), true}, {buf.Bytes()[:buf.Len()-1], false}} {
		src, _ := openZipData(t, buildOuter(t, inner{"o__r-1", tc.data}), Limits{})
		s, err := src.Open("o__r-1")
		if tc.ok {
			if err != nil {
				t.Fatal(err)
			}
			if b, err := s.ReadFile("a.py"); err != nil || string(b) != "x = 1\n" {
				t.Errorf("ReadFile = %q, %v", b, err)
			}
		} else {
			mustContain(t, err, "corrupt inner zip")
		}
	}
}

// TestRawDigest: an inner zip's file stored as the same bytes in two snapshots has
// the same raw digest, other content another; a stored (uncompressed) entry has one
// too; a file over MaxFileBytes, a path not listed and a folder's file have none.
func TestRawDigest(t *testing.T) {
	big := bytes.Repeat([]byte("x = 1\n"), 100)
	in1 := buildZip(t,
		zent{name: "a.py", body: []byte("def a():\n    return 1\n")},
		zent{name: "b.py", body: []byte("def b():\n    return 2\n")},
		zent{name: "s.py", body: []byte("s = 1\n"), store: true},
		zent{name: "big.py", body: big},
	)
	in2 := buildZip(t,
		zent{name: "a.py", body: []byte("def a():\n    return 1\n")},
		zent{name: "b.py", body: []byte("def b():\n    return 3\n")},
	)
	outer := buildZip(t, zent{name: "o__r-1.zip", body: in1, store: true}, zent{name: "o__r-2.zip", body: in2, store: true})
	src, _ := openZipData(t, outer, Limits{MaxFileBytes: int64(len(big)) - 1})
	digest := func(name, path string) ([32]byte, bool) {
		t.Helper()
		s, err := src.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		rd, ok := s.(RawDigester)
		if !ok {
			t.Fatalf("%s is not a RawDigester", name)
		}
		return rd.RawDigest(path)
	}
	a1, ok1 := digest("o__r-1", "a.py")
	a2, ok2 := digest("o__r-2", "a.py")
	b1, _ := digest("o__r-1", "b.py")
	b2, ok3 := digest("o__r-2", "b.py")
	if !ok1 || !ok2 || !ok3 || a1 != a2 {
		t.Errorf("the same file in two snapshots: digests %x (%v), %x (%v)", a1, ok1, a2, ok2)
	}
	if b1 == b2 || a1 == b1 {
		t.Error("different content, same digest")
	}
	if _, ok := digest("o__r-1", "s.py"); !ok {
		t.Error("a stored entry has no raw digest")
	}
	if _, ok := digest("o__r-1", "big.py"); ok {
		t.Error("a file over MaxFileBytes has a raw digest")
	}
	if _, ok := digest("o__r-1", "missing.py"); ok {
		t.Error("a path not listed has a raw digest")
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.py": "x = 1\n"})
	folder, err := OpenDir(dir, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if rd, ok := folder.(RawDigester); ok {
		if _, ok := rd.RawDigest("a.py"); ok {
			t.Error("a folder's file has a raw digest")
		}
	}
}

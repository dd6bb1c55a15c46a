package snapshot

import (
	"crypto/sha256"
	"testing"
	"testing/fstest"
)

// TestSnapshotFS: the three kinds of snapshot (a folder, an inner zip, memory) are
// file systems that fstest accepts, holding exactly the listed files with their
// contents.
func TestSnapshotFS(t *testing.T) {
	files := map[string]string{"a.py": "print(1)\n", "pkg/b.kt": "fun b() = 2\n", "pkg/sub/c.py": "c = 3\n", "pkg.txt": "x"}
	dir := t.TempDir()
	writeFiles(t, dir, files)
	var ents []zent
	for p, body := range files {
		ents = append(ents, zent{name: p, body: []byte(body)})
	}
	zsrc, _ := openZipData(t, buildOuter(t, inner{"o__r-1", buildZip(t, ents...)}), Limits{})
	zs, err := zsrc.Open("o__r-1")
	if err != nil {
		t.Fatal(err)
	}
	ds, err := OpenDir(dir, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	mem := map[string]*MemFile{}
	for p, body := range files {
		mem[p] = &MemFile{Data: []byte(body), Sum: sha256.Sum256([]byte(body))}
	}
	ms := NewMem("o__r-1", mem)
	if sum, ok := ms.(Hasher).SHA256("a.py"); !ok || sum != mem["a.py"].Sum {
		t.Errorf("a memory snapshot's SHA256 = %x, %v", sum, ok)
	}
	for _, s := range []Snapshot{zs, ds, ms} {
		if err := fstest.TestFS(s, "a.py", "pkg/b.kt", "pkg/sub/c.py", "pkg.txt"); err != nil {
			t.Errorf("%s: %v", s.Name(), err)
		}
		b, err := s.ReadFile("pkg/sub/c.py")
		if err != nil || string(b) != files["pkg/sub/c.py"] {
			t.Errorf("%s: ReadFile = %q, %v", s.Name(), b, err)
		}
	}
}

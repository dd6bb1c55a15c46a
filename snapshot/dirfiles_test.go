//go:build unix

package snapshot

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestOpenDirFiles(t *testing.T) {
	base := t.TempDir()
	writeFiles(t, base, map[string]string{"outside/secret.py": "secret"})
	root := filepath.Join(base, "o__r-1")
	writeFiles(t, root, map[string]string{"a.py": "a", "pkg/b.py": "bb", "pkg/c.py": "c", "ignored.py": "i"})
	symlink(t, filepath.Join(base, "outside", "secret.py"), filepath.Join(root, "escape.py"))
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Mkdir(filepath.Join(root, "dir.py"), 0o755))
	s, err := OpenDirFiles(root, []string{"pkg/b.py", "a.py", "../outside/secret.py", "escape.py", "missing.py", "dir.py", "a.py"}, Limits{})
	must(err)
	if got, want := s.Paths(), []string{"a.py", "pkg/b.py"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Paths() = %q, want %q", got, want)
	}
	if n, ok := s.Size("pkg/b.py"); !ok || n != 2 {
		t.Errorf("Size(pkg/b.py) = %d, %v", n, ok)
	}
	if b, err := s.ReadFile("a.py"); err != nil || string(b) != "a" {
		t.Errorf("ReadFile(a.py) = %q, %v", b, err)
	}
	if _, err := s.ReadFile("ignored.py"); err == nil {
		t.Error("ReadFile of a file not listed: no error")
	}
	if got := len(s.Skipped()); got != 5 {
		t.Errorf("%d skipped, want 5: %v", got, s.Skipped())
	}
	if s.Name() != "o__r-1" {
		t.Errorf("Name() = %q", s.Name())
	}
	if _, err := OpenDirFiles(filepath.Join(base, "nope"), nil, Limits{}); err == nil {
		t.Error("missing folder: no error")
	}
}

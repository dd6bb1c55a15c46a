//go:build unix

package snapshot

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func TestOpenDir(t *testing.T) {
	base := t.TempDir()
	writeFiles(t, base, map[string]string{"outside/secret.txt": "secret"})
	root := filepath.Join(base, "o__r-1")
	writeFiles(t, root, map[string]string{
		"a.py":                "a",
		"pkg/b.py":            "b",
		"pkg.txt":             "sorts before pkg/b.py",
		"pkg/deep/c.py":       "c",
		".git/HEAD":           "ref: refs/heads/main",
		".git/objects/x":      "blob",
		"vendor/mod/.git":     "gitdir: ../../.git/modules/mod",
		"vendor/mod/m.go":     "package mod",
		".github/workflow.ym": "on: push",
	})
	symlink(t, "a.py", filepath.Join(root, "link-to-a.py"))                    // inside: kept
	symlink(t, "../b.py", filepath.Join(root, "pkg/deep/up-b.py"))             // inside, via ..: kept
	symlink(t, "../outside/secret.txt", filepath.Join(root, "escape.txt"))     // leaves the root
	symlink(t, filepath.Join(root, "a.py"), filepath.Join(root, "abs-in.txt")) // absolute
	symlink(t, "/etc/passwd", filepath.Join(root, "passwd"))                   // absolute, outside
	symlink(t, "loop2", filepath.Join(root, "loop1"))
	symlink(t, "loop1", filepath.Join(root, "loop2"))
	symlink(t, "..", filepath.Join(root, "pkg/parent")) // folder loop
	symlink(t, "pkg", filepath.Join(root, "pkg-alias")) // folder
	symlink(t, "nothing-here", filepath.Join(root, "broken"))
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}

	s, err := OpenDir(root, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Name() != "o__r-1" {
		t.Errorf("Name = %q", s.Name())
	}
	wantPaths := []string{".github/workflow.ym", "a.py", "link-to-a.py", "pkg.txt", "pkg/b.py", "pkg/deep/c.py", "pkg/deep/up-b.py", "vendor/mod/m.go"}
	if got := s.Paths(); !reflect.DeepEqual(got, wantPaths) {
		t.Errorf("Paths =\n %q\nwant\n %q", got, wantPaths)
	}
	wantSkips := map[string]string{
		".git":            "git metadata",
		"vendor/mod/.git": "git metadata",
		"escape.txt":      "leaves the snapshot",
		"abs-in.txt":      "leaves the snapshot or is absolute",
		"passwd":          "leaves the snapshot",
		"loop1":           "symlink loop",
		"loop2":           "symlink loop",
		"pkg/parent":      "symlink to a folder",
		"pkg-alias":       "symlink to a folder",
		"broken":          "broken symlink",
		"fifo":            "not a regular file",
	}
	got := skipReasons(s)
	for p, reason := range wantSkips {
		if !strings.Contains(got[p], reason) {
			t.Errorf("skip of %q: reason %q, want one containing %q", p, got[p], reason)
		}
	}
	if len(got) != len(wantSkips) {
		t.Errorf("Skipped = %v, want %d entries", s.Skipped(), len(wantSkips))
	}
	for p, want := range map[string]string{"a.py": "a", "link-to-a.py": "a", "pkg/deep/up-b.py": "b", "pkg/deep/c.py": "c"} {
		if b, err := s.ReadFile(p); err != nil || string(b) != want {
			t.Errorf("ReadFile(%q) = %q, %v; want %q", p, b, err, want)
		}
	}
	if n, ok := s.Size("pkg/b.py"); !ok || n != 1 {
		t.Errorf("Size = %d, %v", n, ok)
	}
	for _, p := range []string{"escape.txt", "../outside/secret.txt", "passwd", ".git/HEAD", "fifo", "pkg/parent/a.py"} {
		if _, err := s.ReadFile(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("ReadFile(%q) = %v, want not-exist", p, err)
		}
	}
}

func TestOpenDirReadFileErrors(t *testing.T) {
	root := filepath.Join(t.TempDir(), "snap")
	writeFiles(t, root, map[string]string{
		"big.txt":     strings.Repeat("x", 5000),
		"grows.txt":   "small",
		"vanishes.py": "v",
		"locked.py":   "l",
	})
	s, err := OpenDir(root, Limits{MaxFileBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := s.Size("big.txt"); !ok || n != 5000 {
		t.Errorf("an oversize file is not listed: %d, %v", n, ok)
	}
	_, err = s.ReadFile("big.txt")
	mustContain(t, err, "snapshot snap", "big.txt", "5000 bytes, over the limit of 4096 bytes")
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("%v does not wrap ErrTooLarge", err)
	}

	if err := os.WriteFile(filepath.Join(root, "grows.txt"), []byte(strings.Repeat("y", 9000)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = s.ReadFile("grows.txt")
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("a file that grew over the limit: %v", err)
	}

	os.Remove(filepath.Join(root, "vanishes.py"))
	_, err = s.ReadFile("vanishes.py")
	mustContain(t, err, "snapshot snap", "vanishes.py")

	// A listed file replaced by a symlink leaving the root is not followed.
	os.Remove(filepath.Join(root, "locked.py"))
	symlink(t, "/etc/hostname", filepath.Join(root, "locked.py"))
	_, err = s.ReadFile("locked.py")
	mustContain(t, err, "locked.py")
}

func TestOpenDirPermissionDenied(t *testing.T) {
	if os.Geteuid() == 0 {
		runAsNobody(t, "TestOpenDirPermissionDenied")
		return
	}
	root := filepath.Join(t.TempDir(), "snap")
	writeFiles(t, root, map[string]string{"secret.py": "s", "closed/x.py": "x", "open.py": "o"})
	if err := os.Chmod(filepath.Join(root, "secret.py"), 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(root, "closed"), 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(root, "closed"), 0o755) })
	s, err := OpenDir(root, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Paths(); !reflect.DeepEqual(got, []string{"open.py", "secret.py"}) {
		t.Errorf("Paths = %q", got)
	}
	if r := skipReasons(s)["closed"]; !strings.Contains(r, "permission denied") {
		t.Errorf("unreadable folder: skip reason %q", r)
	}
	_, err = s.ReadFile("secret.py")
	mustContain(t, err, "secret.py", "permission denied")
}

func TestOpenDirMaxFiles(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{}
	for i := range 10 {
		files[fmt.Sprintf("f%02d.py", i)] = "x"
	}
	writeFiles(t, root, files)
	s, err := OpenDir(root, Limits{MaxFiles: 4})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Paths(); !reflect.DeepEqual(got, []string{"f00.py", "f01.py", "f02.py", "f03.py"}) {
		t.Errorf("Paths = %q", got)
	}
	if got := s.Skipped(); len(got) != 1 || got[0].Path != "f04.py" || !strings.Contains(got[0].Reason, "limit of 4 files") {
		t.Errorf("Skipped = %v", got)
	}
}

func TestOpenDirErrors(t *testing.T) {
	_, err := OpenDir(filepath.Join(t.TempDir(), "missing"), Limits{})
	mustContain(t, err, "missing")
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, []byte("x"), 0o644)
	_, err = OpenDir(f, Limits{})
	mustContain(t, err, f)
}

func TestDirSourceSymlinkedSnapshot(t *testing.T) {
	dir := t.TempDir()
	repos := filepath.Join(dir, "repositories-kotlin-dev")
	writeFiles(t, repos, map[string]string{"o__a-1/A.kt": "a"})
	writeFiles(t, dir, map[string]string{"elsewhere/o__b-2/B.kt": "b"})
	symlink(t, filepath.Join(dir, "elsewhere/o__b-2"), filepath.Join(repos, "o__b-2"))
	src, err := OpenSource(dir, "kotlin", "dev", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if got := src.Names(); !reflect.DeepEqual(got, []string{"o__a-1", "o__b-2"}) {
		t.Errorf("Names = %q", got)
	}
	s, err := src.Open("o__b-2")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := s.ReadFile("B.kt"); err != nil || string(b) != "b" {
		t.Errorf("ReadFile = %q, %v", b, err)
	}
}

// runAsNobody runs the test named name again, in a copy of the test binary,
// as user 65534, since permissions do not stop root. It skips when that is
// not possible here.
func runAsNobody(t *testing.T, name string) {
	t.Helper()
	if os.Getenv("DATASET_TEST_AS_NOBODY") != "" {
		t.Skip("still root after switching user")
	}
	self, err := os.Executable()
	if err != nil {
		t.Skipf("running as root, and cannot find the test binary: %v", err)
	}
	dir, err := os.MkdirTemp("", "dataset-nobody-")
	if err != nil {
		t.Skip(err)
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "dataset.test")
	if err := copyExecutable(self, bin); err != nil {
		t.Skipf("running as root, and cannot copy the test binary: %v", err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Skip(err)
	}
	cmd := exec.Command(bin, "-test.run=^"+name+"$", "-test.v")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DATASET_TEST_AS_NOBODY=1", "TMPDIR="+os.TempDir())
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s as user 65534: %v\n%s", name, err, out)
	}
	if !strings.Contains(string(out), "--- PASS: "+name) {
		t.Skipf("%s as user 65534 did not run:\n%s", name, out)
	}
}

func copyExecutable(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

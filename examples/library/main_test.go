package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain runs main instead of the tests when the test binary is re-executed by
// TestReadmeLibraryExample, so that the example runs as the command it is.
func TestMain(m *testing.M) {
	if os.Getenv("REPOCTX_LIBRARY_EXAMPLE") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// readmeBlock returns the first ```go block after the README's "## Go library" heading.
func readmeBlock(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "\n## Go library\n")
	if i < 0 {
		t.Fatal(`README.md has no "## Go library" heading`)
	}
	s = s[i:]
	j := strings.Index(s, "\n```go\n")
	if j < 0 {
		t.Fatal("README.md has no ```go block under its Go library heading")
	}
	s = s[j+len("\n```go\n"):]
	k := strings.Index(s, "\n```\n")
	if k < 0 {
		t.Fatal("README.md's Go library block is not closed")
	}
	return s[:k+1]
}

// TestReadmeLibraryExample checks that the README's Go library example is this
// command's code (from "package main" on) and that it prints a non-empty context for
// the Kotlin repository of testdata/sample.
func TestReadmeLibraryExample(t *testing.T) {
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	code := string(src)
	i := strings.Index(code, "\npackage main\n")
	if i < 0 {
		t.Fatal("main.go has no package clause")
	}
	code = code[i+1:]
	if got := readmeBlock(t); got != code {
		t.Fatalf("README.md's Go library example differs from examples/library/main.go (from \"package main\" on); copy the file's code into the README\nREADME:\n%s", got)
	}

	if testing.Short() {
		t.Skip("runs the example on a repository")
	}
	repos, err := filepath.Glob(filepath.Join("..", "..", "testdata", "sample", "repositories-kotlin-sample", "*"))
	if err != nil || len(repos) == 0 {
		t.Fatalf("no Kotlin sample repository under testdata/sample: %v", err)
	}
	cmd := exec.Command(os.Args[0], repos[0])
	cache := t.TempDir()
	cmd.Env = append(os.Environ(), "REPOCTX_LIBRARY_EXAMPLE=1", "XDG_CACHE_HOME="+cache, "HOME="+cache)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("example on %s: %v\n%s", repos[0], err, stderr.String())
	}
	out := stdout.String()
	if !strings.Contains(out, "<|file_sep|>") || !strings.Contains(out, ".kt") {
		t.Fatalf("example on %s printed no Kotlin context:\n%s", repos[0], out)
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIndexVerboseNamesParseErrors: `index -v` names the files with parse errors.
func TestIndexVerboseNamesParseErrors(t *testing.T) {
	repo := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(repo, "src"), 0o755))
	must(t, os.WriteFile(filepath.Join(repo, "src", "Good.kt"), []byte("class Good {\n    fun a() = 1\n}\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(repo, "src", "Bad.kt"), []byte("class Bad {\n    val x = listOf(1,\n    fun b() = 2\n}\n"), 0o644))
	code, out, errOut := run(t, "index", "-v", "--cache-dir", t.TempDir(), repo)
	if code != 0 {
		t.Fatalf("index: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "with parse errors 1;") {
		t.Errorf("stdout: %s", out)
	}
	if !strings.Contains(errOut, "parse errors: src/Bad.kt") || strings.Contains(errOut, "Good.kt") {
		t.Errorf("stderr does not name just the broken file:\n%s", errOut)
	}
}

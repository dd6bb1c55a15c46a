package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const tinyBert = "../../testdata/models/tiny-bert/tokenizer.json"

func TestTokensCmd(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.py")
	must(t, os.WriteFile(a, []byte("def get(self, key): return self.cache[key]"), 0o644))
	b := filepath.Join(dir, "b.txt")
	must(t, os.WriteFile(b, []byte("Café"), 0o644))

	code, stdout, stderr := run(t, "tokens", "--tokenizer", tinyBert, a, b)
	// 15 word pieces (expected.json's ids less [CLS] and [SEP]); "cafe" is one.
	want := "15\t42\t" + a + "\n1\t4\t" + b + "\n"
	if code != exitOK || stdout != want {
		t.Errorf("tokens a b: exit %d, stdout %q, stderr %q; want %q", code, stdout, stderr, want)
	}

	missing := filepath.Join(dir, "missing.kt")
	code, stdout, stderr = run(t, "tokens", "--tokenizer", tinyBert, a, missing)
	if code != exitError || !strings.Contains(stderr, missing) || !strings.HasPrefix(stdout, "15\t42\t") {
		t.Errorf("tokens with a missing file: exit %d, stdout %q, stderr %q; want exit 1 naming the file", code, stdout, stderr)
	}

	code, _, stderr = run(t, "tokens", a)
	if code != exitUsage || !strings.Contains(stderr, "tokenizer") {
		t.Errorf("tokens without --tokenizer: exit %d, stderr %q; want a usage error", code, stderr)
	}
	code, _, stderr = run(t, "tokens", "--tokenizer", a, a)
	if code != exitUsage || !strings.Contains(stderr, a) {
		t.Errorf("tokens --tokenizer NOT-JSON: exit %d, stderr %q; want a usage error naming the file", code, stderr)
	}
}

func TestTokensCmdStdin(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "tokens", "--tokenizer", tinyBert)
	cmd.Env = append(os.Environ(), "REPOCTX_RUN_MAIN=1")
	cmd.Stdin = strings.NewReader("print(user.name)")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(out), "6\t16\t-\n"; got != want {
		t.Errorf("tokens < stdin: got %q, want %q", got, want)
	}
}

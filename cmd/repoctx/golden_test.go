package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/internal/racetest"
)

var update = flag.Bool("update", false, "rewrite this build's golden files (testdata/golden's digests, testdata/ranking's listings) with its outputs")

// goldenFile holds the sha256 of `repoctx predict`'s output on ../shared/data/dev and
// devb, both languages, with --plan-window 0 and 8000 (characters/4), one line
// "DIGEST  SET-LANG-WINDOW.jsonl" each. There is one file per Kotlin grammar
// ([grammars.KotlinGrammar]: the build tag kotlin2 links another one), since Kotlin
// outputs differ between them. A change that alters outputs on purpose updates both in
// the same commit (go test [-tags kotlin2] ./cmd/repoctx -run TestGoldenDigests -update)
// and reports `repoctx eval --baselines --visible` on dev and devb before and after.
var goldenFile = filepath.Join("..", "..", "testdata", "golden", "predict-"+grammars.KotlinGrammar+".sha256")

// TestGoldenDigests runs predict as the command line does, with a fresh cache, and
// compares the outputs' digests with goldenFile. It needs ../shared (skipped without
// it) and runs without the race detector only (make test runs it apart): under -race
// the 8 runs take many minutes.
func TestGoldenDigests(t *testing.T) {
	racetest.Skip(t, "predicts and digests every output over the shared data")
	data := filepath.Join("..", "..", "..", "shared", "data")
	if _, err := os.Stat(filepath.Join(data, "dev")); err != nil {
		t.Skip("no shared data")
	}
	cache, out := t.TempDir(), t.TempDir()
	got := map[string]string{}
	for _, set := range []string{"dev", "devb"} {
		for _, lang := range []string{"kotlin", "python"} {
			for _, window := range []string{"0", "8000"} {
				name := fmt.Sprintf("%s-%s-%s.jsonl", set, lang, window)
				p := filepath.Join(out, name)
				var stderr bytes.Buffer
				code := Main([]string{"repoctx", "predict", "-q", "--data", filepath.Join(data, set), "--lang", lang, "--stage", set,
					"--plan-window", window, "--cache-dir", cache, "-o", p}, &bytes.Buffer{}, &stderr)
				if code != 0 {
					t.Fatalf("%s: exit %d: %s", name, code, stderr.String())
				}
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				sum := sha256.Sum256(b)
				got[name] = hex.EncodeToString(sum[:])
			}
		}
	}
	if *update {
		names := make([]string, 0, len(got))
		for n := range got {
			names = append(names, n)
		}
		sort.Strings(names)
		var sb strings.Builder
		for _, n := range names {
			fmt.Fprintf(&sb, "%s  %s\n", got[n], n)
		}
		if err := os.WriteFile(goldenFile, []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	raw, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		if f := strings.Fields(l); len(f) == 2 {
			want[f[1]] = f[0]
		}
	}
	for name, sum := range got {
		if want[name] != sum {
			t.Errorf("%s: digest %s, golden %s: the output changed (if on purpose: -update, and report eval before and after)", name, sum, want[name])
		}
	}
}

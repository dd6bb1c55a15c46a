package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/repoctx/repoctx/eval"
)

// compareRepo writes a small repository with a Python and a Kotlin file.
func compareRepo(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "demo")
	files := map[string]string{
		"pkg/mod.py": "import os\ndef alpha(x):\n    y = x + 1\n    z = y * 2\n    return z\ndef beta():\n    return 1\n",
		"src/Foo.kt": "package demo\nclass Foo {\n    fun a() = 1\n    fun b() = 2\n}\nfun top(): Int {\n    return 3\n}\n",
	}
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestCompareCommand(t *testing.T) {
	repo := compareRepo(t)
	out := filepath.Join(t.TempDir(), "docs", "compare-demo")
	for _, tc := range []struct {
		name  string
		args  []string
		check func(t *testing.T, stdout string)
	}{
		{"json, flags after the folder", []string{"compare", repo, "--json", "--window-lines", "4", "--overlap-lines", "0", "-q"},
			func(t *testing.T, stdout string) {
				var cmp eval.Comparison
				if err := json.Unmarshal([]byte(stdout), &cmp); err != nil {
					t.Fatalf("--json output does not parse: %v\n%s", err, stdout)
				}
				if cmp.Files != 2 || len(cmp.Strategies) != 2 || cmp.Strategies[1].Strategy != "fixed" || cmp.Strategies[1].Chunks != 4 ||
					cmp.Strategies[1].Config != "fixed/c800/w4/o0" {
					t.Errorf("comparison %+v", cmp)
				}
			}},
		{"language filter", []string{"compare", "--lang", "kotlin", "--json", "-q", repo},
			func(t *testing.T, stdout string) {
				var cmp eval.Comparison
				if err := json.Unmarshal([]byte(stdout), &cmp); err != nil {
					t.Fatal(err)
				}
				if cmp.Files != 1 || cmp.Lang != "kotlin" {
					t.Errorf("files %d lang %q, want 1 kotlin", cmp.Files, cmp.Lang)
				}
			}},
		{"markdown and --out svg", []string{"compare", repo, "--out", out, "-q"},
			func(t *testing.T, stdout string) {
				if !strings.Contains(stdout, "| measure | structural") || !strings.Contains(stdout, "| chunks |") {
					t.Errorf("no Markdown table:\n%s", stdout)
				}
				md, err := os.ReadFile(out + ".md")
				if err != nil {
					t.Fatal(err)
				}
				for _, want := range []string{"# Fixed vs structural chunking: demo", "`repoctx compare " + repo + " --out " + out, stdout, "](compare-demo.svg)"} {
					if !strings.Contains(string(md), want) {
						t.Errorf("%s.md lacks %q:\n%s", out, want, md)
					}
				}
				if fi, err := os.Stat(out + ".svg"); err != nil || fi.Size() == 0 {
					t.Errorf("chart: %v", err)
				}
			}},
		{"--data scores both strategies", []string{"compare", filepath.Join("..", "..", "testdata", "sample", "repositories-python-sample", sampleSnapshot(t, "python")),
			"--data", filepath.Join("..", "..", "testdata", "sample"), "--lang", "python", "--stage", "sample", "--cache-dir", t.TempDir(), "--json", "-q"},
			func(t *testing.T, stdout string) {
				var cmp eval.Comparison
				if err := json.Unmarshal([]byte(stdout), &cmp); err != nil {
					t.Fatalf("--json output does not parse: %v\n%s", err, stdout)
				}
				if len(cmp.Strategies) != 2 || cmp.Stage != "sample" || len(cmp.Settings) == 0 {
					t.Errorf("no eval scores of both strategies: %s", stdout)
				}
			}},
		{"--chart png", []string{"compare", repo, "--out", out + "-png", "--chart", "png", "-q"},
			func(t *testing.T, stdout string) {
				if fi, err := os.Stat(out + "-png.png"); err != nil || fi.Size() == 0 {
					t.Errorf("chart: %v", err)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := run(t, tc.args...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			tc.check(t, stdout)
		})
	}
}

// sampleSnapshot names one snapshot folder of the bundled sample's lang datapoints.
func sampleSnapshot(t *testing.T, lang string) string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join("..", "..", "testdata", "sample", "repositories-"+lang+"-sample"))
	if err != nil || len(ents) == 0 {
		t.Fatalf("sample snapshots: %v", err)
	}
	return ents[0].Name()
}

func TestCompareCommandErrors(t *testing.T) {
	repo := compareRepo(t)
	missing := filepath.Join(repo, "nope")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"compare"}, exitUsage, "give one or more repository folders"},
		{[]string{"compare", repo, "--data", "x"}, exitUsage, "--data needs --lang and --stage"},
		{[]string{"compare", repo, "--stage", "dev"}, exitUsage, "--stage without --data"},
		{[]string{"compare", repo, "--lang", "cobol"}, exitUsage, "--lang must be one of"},
		{[]string{"compare", repo, "--langs", "cobol"}, exitUsage, "--langs: unknown language"}, // also without --data
		{[]string{"compare", repo, "--chart", "gif"}, exitUsage, "--chart must be svg or png"},
		// compare runs both strategies, so it has no --strategy (an unknown flag:
		// urfave/cli reports it before the app's usage handler sees it; any failure).
		{[]string{"compare", repo, "--strategy", "fixed"}, -1, "-strategy"},
		// Nor --shard: its table is of the whole dataset.
		{[]string{"compare", repo, "--shard", "1/2"}, -1, "-shard"},
		{[]string{"compare", missing, "-q"}, exitError, missing},
	} {
		code, _, stderr := run(t, tc.args...)
		if (tc.code >= 0 && code != tc.code) || code == exitOK || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
}

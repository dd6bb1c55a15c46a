package snapshot

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/internal/racetest"
)

// writeTree creates the files of tree (slash path -> content) under a new temp folder.
func writeTree(t *testing.T, tree map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, content := range tree {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// walkAll walks root and returns the yielded paths, the stats and the skips by path.
func walkAll(t *testing.T, root string, opts WalkOptions) ([]string, WalkStats, map[string]SkipReason) {
	t.Helper()
	skips := map[string]SkipReason{}
	opts.OnSkip = func(p string, r SkipReason) { skips[p] = r }
	var got []string
	st, err := Walk(context.Background(), root, opts, func(f File) error {
		got = append(got, f.Path)
		return nil
	})
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	return got, st, skips
}

func TestWalkIgnoreRules(t *testing.T) {
	root := writeTree(t, map[string]string{
		".gitignore":          "# comment\n\n*.log\nbuild/\n/top_only.py\n*.pyc\ngen_*.py\n!gen_keep.py\ndist/*\n!dist/keep.py\n",
		"app.py":              "print(1)\n",
		"top_only.py":         "x = 1\n",
		"gen_a.py":            "a = 1\n",
		"gen_keep.py":         "k = 1\n",
		"build/out.py":        "o = 1\n",
		"dist/drop.py":        "d = 1\n",
		"dist/keep.py":        "k = 2\n",
		"pkg/top_only.py":     "y = 1\n", // "/top_only.py" is anchored at the root
		"pkg/.gitignore":      "local.py\n!keep.py\nsub/\n",
		"pkg/local.py":        "l = 1\n",
		"pkg/keep.py":         "k = 3\n",
		"pkg/sub/x.py":        "s = 1\n",
		"pkg/deep/local.py":   "l = 2\n", // nested .gitignore applies below its folder too
		"other/local.py":      "l = 3\n", // but not beside it
		"other/build":         "a file named build, not a folder\n",
		"other/build.py":      "b = 1\n",
		"excl/.ignore":        "*.py\n!wanted.py\n",
		"excl/no.py":          "n = 1\n",
		"excl/wanted.py":      "w = 1\n",
		"info.py":             "i = 1\n",
		".git/info/exclude":   "info.py\n",
		".git/config":         "[core]\n",
		"notes.txt":           "plain text\n",
		"sub/.gitignore":      "!*.log\n", // re-includes below sub only; not a language file anyway
		"reinc/.gitignore":    "!x.py\n",
		"build2/.gitignore":   "*\n",
		"build2/inside.py":    "z = 1\n",
		"crlf/.gitignore":     "a.py\r\nb.py\r\n",
		"crlf/a.py":           "a = 1\n",
		"crlf/b.py":           "b = 1\n",
		"crlf/c.py":           "c = 1\n",
		"space/.gitignore":    "trail.py   \n",
		"space/trail.py":      "t = 1\n",
		"glob/.gitignore":     "**/tmp/*.py\n",
		"glob/a/tmp/x.py":     "x = 1\n",
		"glob/a/b/tmp/y.py":   "y = 1\n",
		"glob/a/tmpx/z.py":    "z = 1\n",
		"glob/a/b/c/d/tmp.py": "t = 1\n",
	})
	got, st, skips := walkAll(t, root, WalkOptions{})
	want := []string{
		"app.py", "crlf/c.py", "dist/keep.py", "excl/wanted.py", "gen_keep.py",
		"glob/a/b/c/d/tmp.py", "glob/a/tmpx/z.py", "other/build.py", "other/local.py",
		"pkg/keep.py", "pkg/top_only.py",
	}
	if !slices.Equal(got, want) {
		t.Errorf("yielded\n  %q\nwant\n  %q", got, want)
	}
	wantSkips := map[string]SkipReason{
		".git/":             SkipVCS,
		"top_only.py":       SkipIgnored,
		"gen_a.py":          SkipIgnored,
		"build/":            SkipIgnored,
		"dist/drop.py":      SkipIgnored,
		"pkg/local.py":      SkipIgnored,
		"pkg/sub/":          SkipIgnored,
		"pkg/deep/local.py": SkipIgnored,
		"excl/no.py":        SkipIgnored,
		"info.py":           SkipIgnored,
		"build2/inside.py":  SkipIgnored,
		"build2/.gitignore": SkipIgnored,
		"crlf/a.py":         SkipIgnored,
		"crlf/b.py":         SkipIgnored,
		"space/trail.py":    SkipIgnored,
		"glob/a/tmp/x.py":   SkipIgnored,
		"glob/a/b/tmp/y.py": SkipIgnored,
	}
	for p, r := range wantSkips {
		if skips[p] != r {
			t.Errorf("skip %s: got %v, want %v", p, skips[p], r)
		}
	}
	if st.Files != len(want) {
		t.Errorf("Files = %d, want %d", st.Files, len(want))
	}
	if st.Skipped[SkipIgnored] != 16 {
		t.Errorf("Skipped[SkipIgnored] = %d, want 16 (%v)", st.Skipped[SkipIgnored], skips)
	}
	if !sort.StringsAreSorted(got) {
		t.Errorf("not in sorted order: %q", got)
	}

	// With the ignore files off, only VCS metadata and non-language files go.
	got, _, _ = walkAll(t, root, WalkOptions{NoIgnoreFiles: true})
	if !slices.Contains(got, "info.py") || !slices.Contains(got, "build/out.py") || !slices.Contains(got, "pkg/sub/x.py") {
		t.Errorf("NoIgnoreFiles: ignored files still left out: %q", got)
	}
	if slices.ContainsFunc(got, func(p string) bool { return strings.HasPrefix(p, ".git/") }) {
		t.Errorf("NoIgnoreFiles: .git listed: %q", got)
	}
}

func TestWalkExclude(t *testing.T) {
	root := writeTree(t, map[string]string{
		"a.py":             "a = 1\n",
		"tests/test_a.py":  "t = 1\n",
		"src/tests/t.py":   "t = 2\n",
		"src/main.py":      "m = 1\n",
		"src/main_test.py": "m = 2\n",
		"docs/conf.py":     "c = 1\n",
		"lib/docs/conf.py": "c = 2\n",
		"deep/x/y/gen.py":  "g = 1\n",
		"keep/.gitignore":  "!*.py\n",
		"keep/excluded.py": "e = 1\n",
	})
	opts := WalkOptions{Exclude: []string{"tests/", "*_test.py", "/docs", "deep/**/gen.py", "keep/excluded.py"}}
	got, st, skips := walkAll(t, root, opts)
	want := []string{"a.py", "lib/docs/conf.py", "src/main.py"}
	if !slices.Equal(got, want) {
		t.Errorf("yielded %q, want %q (skips %v)", got, want, skips)
	}
	if n := st.Skipped[SkipExcluded]; n != 6 {
		t.Errorf("Skipped[SkipExcluded] = %d, want 6: %v", n, skips)
	}
	if skips["tests/"] != SkipExcluded || skips["src/tests/"] != SkipExcluded || skips["docs/"] != SkipExcluded {
		t.Errorf("folder excludes: %v", skips)
	}
	// Exclude applies with the ignore files off as well.
	got, _, _ = walkAll(t, root, WalkOptions{Exclude: opts.Exclude, NoIgnoreFiles: true})
	if !slices.Equal(got, want) {
		t.Errorf("NoIgnoreFiles: yielded %q, want %q", got, want)
	}
	for _, bad := range []string{"!x.py", "", "  ", "# comment"} {
		if _, err := Walk(context.Background(), root, WalkOptions{Exclude: []string{bad}}, func(File) error { return nil }); err == nil {
			t.Errorf("Exclude %q: no error", bad)
		}
	}
}

func TestWalkContentSkips(t *testing.T) {
	big := strings.Repeat("x = 1\n", 200) // 1200 bytes
	minLine := "var a=" + strings.Repeat("b+", 300) + "c;\n"
	root := writeTree(t, map[string]string{
		"ok.py":                   "print('ok')\n",
		"big.py":                  big,
		"bin.py":                  "abc\x00def\x01\n",
		"utf16le.py":              "\xff\xfex\x00 \x00=\x00 \x001\x00\n\x00",
		"utf16le_nobom.py":        "x\x00 \x00=\x00 \x001\x00\n\x00",
		"utf16be_nobom.py":        "\x00x\x00 \x00=\x00 \x001\x00\n",
		"odd_nul.py":              "x\x00 \x00=\x00 \x001\x00\n", // odd length: not UTF-16
		"gen_go_style.py":         "# Code generated by protoc-gen-x. DO NOT EDIT.\nx = 1\n",
		"gen_pb2.py":              "# -*- coding: utf-8 -*-\n# Generated by the protocol buffer compiler.  DO NOT EDIT!\nx = 1\n",
		"gen_meta.kt":             "// @generated by a tool\nval x = 1\n",
		"gen_auto.kt":             "/*\n * This file is auto-generated.\n */\nval x = 1\n",
		"gen_django.py":           "# Generated by Django 4.2 on 2023-01-01 10:00\nfrom django.db import migrations\n",
		"gen_docstring.py":        "\"\"\"Autogenerated by tool 1.2.\"\"\"\nx = 1\n",
		"settings.gradle.kts":     "/*\n * This file was generated by the Gradle 'init' task.\n */\nrootProject.name = \"x\"\n",
		"sphinx_conf.py":          "# -*- coding: utf-8 -*-\n#\n# Note that not all possible configuration values are present in this\n# autogenerated file.\nproject = 'x'\n",
		"not_gen.py":              "def autogenerated_ids():\n    return 'Code generated here. DO NOT EDIT'\n",
		"late_marker.py":          strings.Repeat("x = 1\n", 12) + "# Code generated by x. DO NOT EDIT.\n",
		"vendor/lib.py":           "v = 1\n",
		"src/vendor/lib.py":       "v = 2\n",
		"node_modules/m/index.py": "n = 1\n",
		"pip/_vendor/requests.py": "r = 1\n",
		"orm/jpa/vendor/HibernateJpaVendorAdapter.java": "package orm.jpa.vendor;\nclass HibernateJpaVendorAdapter {}\n",
		"orm/jpa/vendor/Database.kt":                    "package orm.jpa.vendor\nclass Database\n",
		"tools/vendor/modules.txt":                      "# github.com/x/y v1.0.0\n",
		"tools/vendor/github.com/x/y/Y.java":            "class Y {}\n",
		".venv/pyvenv.cfg":                              "home = /usr/bin\n",
		".venv/lib/site.py":                             "s = 1\n",
		"myenv/pyvenv.cfg":                              "home = /usr/bin\n",
		"myenv/lib/x.py":                                "x = 1\n",
		"lib/site-packages/p.py":                        "p = 1\n",
		"README.md":                                     "# readme\n",
		"Main.kt":                                       "fun main() {}\n",
	})
	got, st, skips := walkAll(t, root, WalkOptions{MaxFileBytes: 1000})
	// A folder named vendor that directly holds Java or Kotlin files is a package
	// (Spring's orm/jpa/vendor); one holding modules in subfolders is vendored.
	want := []string{"Main.kt", "late_marker.py", "not_gen.py", "ok.py", "orm/jpa/vendor/Database.kt", "orm/jpa/vendor/HibernateJpaVendorAdapter.java", "settings.gradle.kts", "sphinx_conf.py", "utf16be_nobom.py", "utf16le.py", "utf16le_nobom.py"}
	if !slices.Equal(got, want) {
		t.Errorf("yielded %q\nwant %q\nskips %v", got, want, skips)
	}
	wantSkips := map[string]SkipReason{
		"big.py": SkipTooLarge, "bin.py": SkipBinary, "odd_nul.py": SkipBinary,
		"gen_go_style.py": SkipGenerated, "gen_pb2.py": SkipGenerated, "gen_meta.kt": SkipGenerated,
		"gen_auto.kt": SkipGenerated, "gen_django.py": SkipGenerated, "gen_docstring.py": SkipGenerated,
		"vendor/": SkipVendored, "src/vendor/": SkipVendored, "node_modules/": SkipVendored,
		"pip/_vendor/": SkipVendored, ".venv/": SkipVendored, "myenv/": SkipVendored,
		"lib/site-packages/": SkipVendored, "tools/vendor/": SkipVendored, "README.md": SkipLanguage,
	}
	if !maps.Equal(skips, wantSkips) {
		t.Errorf("skips\n  %v\nwant\n  %v", skips, wantSkips)
	}
	wantCounts := map[SkipReason]int{SkipTooLarge: 1, SkipBinary: 2, SkipGenerated: 6, SkipVendored: 8, SkipLanguage: 1}
	if !maps.Equal(st.Skipped, wantCounts) {
		t.Errorf("Skipped = %v, want %v", st.Skipped, wantCounts)
	}
	if s := st.SkipSummary(); !strings.Contains(s, "8 vendored folder") || !strings.Contains(s, "2 binary") {
		t.Errorf("SkipSummary() = %q", s)
	}

	// Minified JavaScript and CSS, with other files allowed.
	root2 := writeTree(t, map[string]string{
		"app.js":        "function f() {\n  return 1;\n}\n",
		"bundle.js":     "/* license */\n" + minLine,
		"lib.min.js":    "function f() {}\n",
		"style.css":     "a { color: red; }\n",
		"style.min.css": "a{}\n",
		"notes.txt":     strings.Repeat("a very long line of prose ", 20) + "\n",
	})
	got, st, skips = walkAll(t, root2, WalkOptions{OtherFiles: true})
	want = []string{"app.js", "notes.txt", "style.css"}
	if !slices.Equal(got, want) || st.Skipped[SkipMinified] != 3 {
		t.Errorf("minified: yielded %q (skips %v), want %q and 3 minified", got, skips, want)
	}
	// KeepGenerated and KeepVendored turn those rules off.
	got, _, _ = walkAll(t, root, WalkOptions{KeepGenerated: true, KeepVendored: true})
	for _, p := range []string{"gen_pb2.py", "vendor/lib.py", ".venv/lib/site.py", "pip/_vendor/requests.py"} {
		if !slices.Contains(got, p) {
			t.Errorf("Keep*: %s not yielded", p)
		}
	}
}

func TestWalkLanguages(t *testing.T) {
	root := writeTree(t, map[string]string{"a.py": "a\n", "b.kt": "b\n", "c.md": "c\n", "d.KT": "d\n"})
	for _, tc := range []struct {
		opts WalkOptions
		want []string
	}{
		{WalkOptions{}, []string{"a.py", "b.kt", "d.KT"}},
		{WalkOptions{Languages: []string{"kotlin"}}, []string{"b.kt", "d.KT"}},
		{WalkOptions{Languages: []string{"python"}, OtherFiles: true}, []string{"a.py", "c.md"}},
		{WalkOptions{OtherFiles: true}, []string{"a.py", "b.kt", "c.md", "d.KT"}},
	} {
		got, _, _ := walkAll(t, root, tc.opts)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%+v: got %q, want %q", tc.opts, got, tc.want)
		}
	}
	_, err := Walk(context.Background(), root, WalkOptions{Languages: []string{"cobol"}}, func(File) error { return nil })
	if err == nil || !strings.Contains(err.Error(), `"cobol"`) {
		t.Errorf("unknown language: err = %v", err)
	}
}

func TestWalkSymlinks(t *testing.T) {
	outside := writeTree(t, map[string]string{"secret.py": "s = 1\n"})
	root := writeTree(t, map[string]string{"a.py": "a = 1\n", "dir/b.py": "b = 1\n"})
	links := map[string]string{
		"link_in.py":      "a.py",                              // inside: yielded under its own name
		"link_out.py":     filepath.Join(outside, "secret.py"), // absolute, out of the root
		"link_rel_out.py": "../" + filepath.Base(outside) + "/secret.py",
		"broken.py":       "missing.py",
		"loop.py":         "loop.py",
		"dir/loop_dir":    "..", // a folder: never followed, so no recursion
		"dirlink":         "dir",
		"dir/self":        ".",
		"dir/up.py":       "../a.py", // inside the root, out of its folder: yielded
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(name))); err != nil {
			t.Skipf("symlinks not supported: %v", err)
		}
	}
	got, st, skips := walkAll(t, root, WalkOptions{})
	want := []string{"a.py", "dir/b.py", "dir/up.py", "link_in.py"}
	if !slices.Equal(got, want) {
		t.Errorf("yielded %q, want %q (skips %v)", got, want, skips)
	}
	if n := st.Skipped[SkipSymlink]; n != 7 {
		t.Errorf("Skipped[SkipSymlink] = %d, want 7: %v", n, skips)
	}
}

// TestWalkManyFolders: a tree deeper and wider than the folder roots the walk keeps
// open yields every file once, with its content.
func TestWalkManyFolders(t *testing.T) {
	files := map[string]string{}
	for i := range 60 {
		files[fmt.Sprintf("p%d/q%d/r/m%d.py", i%7, i, i)] = fmt.Sprintf("x = %d\n", i)
	}
	root := writeTree(t, files)
	n := 0
	_, err := Walk(context.Background(), root, WalkOptions{}, func(f File) error {
		if string(f.Data) != files[f.Path] {
			t.Errorf("%s: %q, want %q", f.Path, f.Data, files[f.Path])
		}
		n++
		return nil
	})
	if err != nil || n != len(files) {
		t.Fatalf("walk: %v, %d files, want %d", err, n, len(files))
	}
}

func TestWalkFnErrorAndCancel(t *testing.T) {
	root := writeTree(t, map[string]string{"a.py": "a\n", "b.py": "b\n", "c.py": "c\n"})
	stop := errors.New("stop")
	n := 0
	st, err := Walk(context.Background(), root, WalkOptions{}, func(File) error {
		n++
		if n == 2 {
			return stop
		}
		return nil
	})
	if err != stop || n != 2 || st.Files != 2 {
		t.Errorf("fn error: err = %v, calls %d, Files %d; want stop, 2, 2", err, n, st.Files)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Walk(ctx, root, WalkOptions{}, func(File) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: err = %v", err)
	}
	if _, err := Walk(context.Background(), filepath.Join(root, "nope"), WalkOptions{}, func(File) error { return nil }); err == nil {
		t.Error("missing root: no error")
	}
}

// TestWalkFSOrder checks the full-path order on an in-memory file system: "a.py"
// and "a/..." interleave as sort.Strings sorts them.
func TestWalkFSOrder(t *testing.T) {
	fsys := fstest.MapFS{
		"a/x.py": {Data: []byte("x\n")}, "a.py": {Data: []byte("a\n")}, "a-b.py": {Data: []byte("ab\n")},
		"a0.py": {Data: []byte("a0\n")}, "b/c/d.py": {Data: []byte("d\n")}, "B.py": {Data: []byte("B\n")},
	}
	var got []string
	if _, err := WalkFS(context.Background(), fsys, WalkOptions{}, func(f File) error {
		got = append(got, f.Path)
		if string(f.Data) == "" {
			t.Errorf("%s: no data", f.Path)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := slices.Sorted(maps.Keys(fsys))
	if !slices.Equal(got, want) {
		t.Errorf("order %q, want %q", got, want)
	}
}

// TestWalkChunkInvariants chunks every file the walker yields from the bundled
// sample repositories and checks chunker.Validate.
func TestWalkChunkInvariants(t *testing.T) {
	roots, _ := filepath.Glob("../testdata/sample/repositories-*/*")
	if len(roots) == 0 {
		t.Skip("no sample repositories")
	}
	s := chunker.NewStructural(chunker.Options{})
	defer s.Close()
	files := 0
	for _, root := range roots {
		if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
			continue
		}
		_, err := Walk(context.Background(), root, WalkOptions{}, func(f File) error {
			cf, err := chunker.Decode(f.Path, f.Data, 0)
			if err != nil {
				return nil // e.g. UTF-16 without a BOM, which the chunker does not decode yet
			}
			cs, err := s.Chunk(cf)
			if err != nil {
				t.Errorf("%s: %v", f.Path, err)
				return nil
			}
			if err := chunker.Validate(cf, cs, chunker.DefaultMaxChars); err != nil {
				t.Error(err)
			}
			files++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if files == 0 {
		t.Error("no files chunked")
	}
	t.Logf("%d files from %d roots", files, len(roots))
}

// TestWalkMatchesGit compares the walker's ignore rules with git's on a real
// checkout named by REPOCTX_WALK_GIT_REPO (skipped when unset): with every other
// rule off, the files Walk yields or skips for their content (binary, symlinks) must
// be those `git ls-files --cached --others --exclude-standard` lists, except tracked
// files that match an ignore pattern (git keeps listing them; the walker drops them).
func TestWalkMatchesGit(t *testing.T) {
	repo := os.Getenv("REPOCTX_WALK_GIT_REPO")
	if repo == "" {
		t.Skip("REPOCTX_WALK_GIT_REPO not set")
	}
	out, err := exec.Command("git", "-C", repo, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	gitFiles := map[string]bool{}
	for p := range strings.SplitSeq(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		gitFiles[p] = true
	}
	seen := map[string]bool{}
	opts := WalkOptions{KeepVendored: true, KeepGenerated: true, OtherFiles: true, MaxFileBytes: 1 << 40,
		OnSkip: func(p string, r SkipReason) {
			if r == SkipBinary || r == SkipSymlink || r == SkipNotRegular {
				seen[p] = true
			}
		}}
	if _, err := Walk(context.Background(), repo, opts, func(f File) error {
		seen[f.Path] = true
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var walkerOnly, gitOnly, trackedIgnored []string
	for p := range seen {
		if !gitFiles[p] {
			walkerOnly = append(walkerOnly, p)
		}
	}
	for p := range gitFiles {
		if seen[p] {
			continue
		}
		if exec.Command("git", "-C", repo, "check-ignore", "-q", "--no-index", p).Run() == nil {
			trackedIgnored = append(trackedIgnored, p)
		} else {
			gitOnly = append(gitOnly, p)
		}
	}
	sort.Strings(walkerOnly)
	sort.Strings(gitOnly)
	sort.Strings(trackedIgnored)
	t.Logf("%d files: %d in both, %d tracked but ignored (dropped by the walker): %q", len(gitFiles), len(seen)-len(walkerOnly), len(trackedIgnored), trackedIgnored)
	if len(walkerOnly) > 0 {
		t.Errorf("%d files the walker yields but git ignores: %q", len(walkerOnly), walkerOnly[:min(20, len(walkerOnly))])
	}
	if len(gitOnly) > 0 {
		t.Errorf("%d files git lists but the walker drops: %q", len(gitOnly), gitOnly[:min(20, len(gitOnly))])
	}
}

// TestWalkFSZipInvariants walks snapshots of the dev data (zips of zipped snapshots
// in ../shared/data/dev; skipped when absent) through WalkFS over archive/zip and
// checks chunker.Validate on every file it yields.
func TestWalkFSZipInvariants(t *testing.T) {
	racetest.Skip(t, "walks and chunks the dev snapshots as folders and zips on one goroutine")
	if testing.Short() {
		t.Skip("short")
	}
	for _, lang := range []string{"kotlin", "python"} {
		zr, err := zip.OpenReader(filepath.Join("..", "..", "shared", "data", "dev", lang+"-dev.zip"))
		if err != nil {
			t.Skipf("no dev data: %v", err)
		}
		defer zr.Close()
		s := chunker.NewStructural(chunker.Options{})
		defer s.Close()
		snaps, files := 0, 0
		for _, zf := range zr.File {
			if snaps == 2 || !strings.HasSuffix(zf.Name, ".zip") {
				continue
			}
			rc, err := zf.Open()
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				t.Fatal(err)
			}
			inner, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
			if err != nil {
				t.Fatalf("%s: %v", zf.Name, err)
			}
			snaps++
			st, err := WalkFS(context.Background(), inner, WalkOptions{}, func(f File) error {
				cf, err := chunker.Decode(f.Path, f.Data, 0)
				if err != nil {
					return nil
				}
				cs, err := s.Chunk(cf)
				if err != nil {
					t.Errorf("%s/%s: %v", zf.Name, f.Path, err)
					return nil
				}
				if err := chunker.Validate(cf, cs, chunker.DefaultMaxChars); err != nil {
					t.Errorf("%s: %v", zf.Name, err)
				}
				files++
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s %s: %d files, skipped %s", lang, zf.Name, st.Files, st.SkipSummary())
		}
		if files == 0 {
			t.Errorf("%s: no files chunked", lang)
		}
	}
}

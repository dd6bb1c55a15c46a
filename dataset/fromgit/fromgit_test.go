package fromgit

import (
	"bytes"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/repoctx/repoctx/dataset"
	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/snapshot"
)

// needGit skips the test when git is not on PATH.
func needGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not on PATH")
	}
}

// testRepo is a git repository built commit by commit for a test.
type testRepo struct {
	t   *testing.T
	dir string
	n   int // commits made, for dates
}

func newTestRepo(t *testing.T, dir string) *testRepo {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	r := &testRepo{t: t, dir: dir}
	r.git("init", "-q", "-b", "main")
	return r
}

// git runs git in the repository, isolated from the user's configuration,
// with fixed names and dates, and returns its trimmed output.
func (r *testRepo) git(args ...string) string {
	r.t.Helper()
	date := fmt.Sprintf("@%d +0000", 1700000000+r.n*60)
	full := append([]string{"-C", r.dir, "-c", "user.name=Test", "-c", "user.email=test@example.com",
		"-c", "commit.gpgsign=false", "-c", "core.autocrlf=false"}, args...)
	cmd := exec.Command("git", full...)
	// An empty file of our own rather than /dev/null, which need not be a device.
	empty := filepath.Join(r.t.TempDir(), "gitconfig")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		r.t.Fatal(err)
	}
	cmd.Env = append(gitEnv(), "GIT_CONFIG_GLOBAL="+empty, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// commit writes files (a nil body deletes the file) and commits them all.
func (r *testRepo) commit(msg string, files map[string]*string) string {
	r.t.Helper()
	for _, name := range slices.Sorted(maps.Keys(files)) {
		p := filepath.Join(r.dir, filepath.FromSlash(name))
		if files[name] == nil {
			if err := os.Remove(p); err != nil {
				r.t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(*files[name]), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
	r.n++
	r.git("add", "-A")
	r.git("commit", "-q", "-m", msg)
	return r.git("rev-parse", "HEAD")
}

func str(s string) *string { return &s }

// show returns the file p at rev.
func (r *testRepo) show(rev, p string) string {
	r.t.Helper()
	cmd := exec.Command("git", "-C", r.dir, "show", rev+":"+p)
	cmd.Env = gitEnv()
	out, err := cmd.Output()
	if err != nil {
		r.t.Fatalf("git show %s:%s: %v", rev, p, err)
	}
	return string(out)
}

const appV0 = `import os


def compute_total(items):
    total = 0
    for item in items:
        total += item.price
    return total


def main(items):
    """Run the app.

    It prints the total.
    """
    print(len(items))
`

const utilV0 = `package lib

import kotlin.math.max

class Util {
    fun clamp(value: Int, low: Int): Int {
        return max(value, low)
    }
}
`

// history is the test repository and what its commits are.
type history struct {
	r       *testRepo
	commits map[string]string // label -> sha
	merge   string            // the merge commit
}

// Middles the history's commits add.
const (
	midInsert  = "    result = compute_total(items)\n"
	midFeat    = "    average = result / max(count, 1)\n"
	midDelete  = "    print(\"total\", result)\n"
	midTwoA    = "    total = max(total, 0)\n"
	midTwoB    = "    logger_name = \"app.\" + str(count)\n"
	midKotlin  = "        val bounded = max(value, low)\n        return bounded.coerceAtLeast(0)\n"
	testMaxCF  = 5     // MaxCommitFiles used with the history
	testMaxFB  = 20000 // MaxFileBytes used with the history
	nonMerges  = 15    // non-merge commits of the history
	pyUsable   = 4     // commits that give a Python datapoint
	testRepoNm = "acme/widgets"
)

// buildHistory makes a repository whose commits must be used (real code
// added: py-insert, kt-replace, feat, py-delete, py-two) or skipped: the
// root commit, comments/imports/blank lines only, a 6-line hunk, a commit
// touching 8 files, a merge, trivial lines (pass, return None), a file over
// testMaxFB, text inside a docstring, a binary file, Kotlin imports and KDoc.
func buildHistory(t *testing.T, dir string) *history {
	t.Helper()
	r := newTestRepo(t, dir)
	h := &history{r: r, commits: map[string]string{}}
	app := appV0
	util := utilV0
	// ed applies old->new replacements to *text and returns it for a commit.
	ed := func(text *string, pairs ...string) *string {
		t.Helper()
		for i := 0; i < len(pairs); i += 2 {
			if !strings.Contains(*text, pairs[i]) {
				t.Fatalf("no %q in %q", pairs[i], *text)
			}
			*text = strings.Replace(*text, pairs[i], pairs[i+1], 1)
		}
		return str(*text)
	}
	var big strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&big, "x_%d = %d\n", i, i)
	}
	c := h.commits
	c["root"] = r.commit("root", map[string]*string{
		"app.py": str(app), "lib/Util.kt": str(util), "README.md": str("# demo\n"),
		"old.py": str("def old():\n    return 1\n"), "big.py": str(big.String()),
		"data.py": str("x = 1\x00\n"),
	})
	c["py-insert"] = r.commit("real python line", map[string]*string{
		"app.py":    ed(&app, "    print(len(items))\n", "    print(len(items))\n"+midInsert),
		"README.md": str("# demo\n\nNow with totals.\n"),
	})
	c["py-comments"] = r.commit("comments, imports, blank lines", map[string]*string{
		"app.py": ed(&app,
			"import os\n", "import os\nimport sys\n",
			"        total += item.price\n", "        # add the price\n        total += item.price\n",
			"    return total\n", "\n    return total\n"),
	})
	c["kt-replace"] = r.commit("kotlin replace", map[string]*string{
		"lib/Util.kt": ed(&util, "        return max(value, low)\n", midKotlin),
	})
	c["py-long"] = r.commit("six lines", map[string]*string{
		"app.py": str(app + "\n\ndef helper(x):\n    y = x * 2\n    z = y + 1\n    return z + 3\n"),
	})
	app += "\n\ndef helper(x):\n    y = x * 2\n    z = y + 1\n    return z + 3\n"
	huge := map[string]*string{"app.py": ed(&app, midInsert, midInsert+"    count = len(items)\n")}
	for i := range 7 {
		huge[fmt.Sprintf("gen/f%d.txt", i)] = str(fmt.Sprintf("generated %d\n", i))
	}
	c["huge"] = r.commit("huge", huge)
	r.git("checkout", "-q", "-b", "feature")
	c["feat"] = r.commit("feature line", map[string]*string{
		"app.py": ed(&app, "    count = len(items)\n", "    count = len(items)\n"+midFeat),
	})
	r.git("checkout", "-q", "main")
	c["readme"] = r.commit("readme only", map[string]*string{"README.md": str("# demo\n\nTotals and averages.\n")})
	r.n++
	r.git("merge", "-q", "--no-ff", "-m", "merge feature", "feature")
	h.merge = r.git("rev-parse", "HEAD")
	c["py-delete"] = r.commit("delete old.py, add new.py", map[string]*string{
		"old.py": nil, "new.py": str("def new():\n    return compute_something(2)\n"),
		"app.py": ed(&app, midFeat, midFeat+midDelete),
	})
	c["py-trivial"] = r.commit("trivial lines", map[string]*string{
		"app.py": ed(&app,
			"        total += item.price\n", "        total += item.price\n        pass\n",
			"    return total\n", "    return total\n    return None\n"),
	})
	c["py-big"] = r.commit("large file", map[string]*string{"big.py": str(big.String() + "y_total = x_1 + x_2\n")})
	c["py-docstring"] = r.commit("docstring text", map[string]*string{
		"app.py": ed(&app, "    It prints the total.\n", "    It prints the total.\n    It also logs the average value.\n"),
	})
	c["py-binary"] = r.commit("binary", map[string]*string{"data.py": str("x = 1\x00\nresult_value = compute_total([])\n")})
	c["kt-trivial"] = r.commit("kotlin import and kdoc", map[string]*string{
		"lib/Util.kt": ed(&util,
			"import kotlin.math.max\n", "import kotlin.math.max\nimport kotlin.math.min\n",
			"class Util {\n", "/** Utilities for numbers. */\nclass Util {\n"),
	})
	c["py-two"] = r.commit("two real lines", map[string]*string{
		"app.py": ed(&app,
			"\n    return total\n", "\n"+midTwoA+"    return total\n",
			midDelete, midDelete+midTwoB),
	})
	return h
}

// testOpts are the options used with a history.
func testOpts(h *history, lang, out string) Options {
	return Options{Repos: []string{h.r.dir}, Name: testRepoNm, Lang: lang, Stage: "git", OutDir: out,
		MaxCommitFiles: testMaxCF, MaxFileBytes: testMaxFB, Seed: 7}
}

// readSet reads and checks the datapoints and truth FromGit wrote.
func readSet(t *testing.T, out, lang string) ([]dataset.Datapoint, map[string]dataset.Truth) {
	t.Helper()
	dps, errs, err := dataset.ReadDatapointsFile(filepath.Join(out, lang+"-git.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range errs {
		if e != nil {
			t.Fatalf("bad datapoint: %v", e)
		}
	}
	truth, err := dataset.ReadTruth(filepath.Join(out, lang+"-git.truth.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(truth) != len(dps) {
		t.Fatalf("%d truth lines for %d datapoints", len(truth), len(dps))
	}
	return dps, truth
}

// checkAgainstGit checks every datapoint against the repository: the file
// at the commit is prefix+middle+suffix, the id names the commit and line,
// the snapshot (read back through OpenSource) holds exactly the parent's
// regular files, the parent's version of the completion file, and every
// modified file.
func checkAgainstGit(t *testing.T, h *history, out, lang string, dps []dataset.Datapoint, truth map[string]dataset.Truth) {
	t.Helper()
	src, err := dataset.OpenSource(out, lang, "git", snapshot.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	for _, d := range dps {
		tr, ok := truth[d.ID]
		if !ok {
			t.Fatalf("no truth for %s", d.ID)
		}
		if tr.Commit == h.merge {
			t.Errorf("%s comes from the merge commit", d.ID)
		}
		if got := h.r.git("rev-parse", tr.Commit+"^"); got != d.Revision {
			t.Errorf("%s: revision %s, want the parent %s", d.ID, d.Revision, got)
		}
		after := h.r.show(tr.Commit, d.Path)
		if d.Prefix+tr.Middle+d.Suffix != after {
			t.Errorf("%s: prefix+middle+suffix is not the file at %s", d.ID, tr.Commit)
		}
		line := strings.Count(d.Prefix, "\n") + 1
		if want := fmt.Sprintf("acme__widgets-%s-L%d", tr.Commit[:10], line); d.ID != want {
			t.Errorf("id %s, want %s", d.ID, want)
		}
		if len(d.Modified) == 0 || d.Modified[0] != d.Path {
			t.Errorf("%s: modified %q does not start with %s", d.ID, d.Modified, d.Path)
		}
		snap, err := src.Open(d.SnapshotName())
		if err != nil {
			t.Fatal(err)
		}
		got, err := snap.ReadFile(d.Path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != h.r.show(d.Revision, d.Path) {
			t.Errorf("%s: snapshot's %s is not the parent's", d.ID, d.Path)
		}
		for _, m := range d.Modified {
			if _, ok := snap.Size(m); !ok {
				t.Errorf("%s: modified file %s not in the snapshot", d.ID, m)
			}
		}
		want := strings.Split(h.r.git("ls-tree", "-r", "--name-only", d.Revision), "\n")
		if !slices.Equal(snap.Paths(), want) {
			t.Errorf("%s: snapshot lists %q, want %q", d.ID, snap.Paths(), want)
		}
		if len(snap.Skipped()) != 0 {
			t.Errorf("%s: snapshot skipped %v", d.ID, snap.Skipped())
		}
	}
}

// TestFromGit builds one history and runs the FromGit tests on it.
func TestFromGit(t *testing.T) {
	needGit(t)
	h := buildHistory(t, filepath.Join(t.TempDir(), "myproj"))
	for _, c := range []struct {
		name string
		f    func(*testing.T, *history)
	}{
		{"python", testFromGitPython},
		{"kotlin-folders", testFromGitKotlinFolders},
		{"deterministic", testFromGitDeterministic},
		{"seed", testFromGitSeed},
		{"caps-and-range", testFromGitCapsAndRange},
		{"bare-and-git-dir", testFromGitBareAndGitDir},
		{"errors", testFromGitErrors},
	} {
		t.Run(c.name, func(t *testing.T) { c.f(t, h) })
	}
}

func testFromGitPython(t *testing.T, h *history) {
	t.Parallel()
	out := t.TempDir()
	sum, err := Run(testOpts(h, "python", out))
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Repos) != 1 {
		t.Fatalf("summary has %d repos", len(sum.Repos))
	}
	rs := sum.Repos[0]
	if rs.Repo != testRepoNm || rs.Commits != nonMerges || rs.Scanned != nonMerges || rs.Datapoints != pyUsable || sum.Datapoints != pyUsable {
		t.Errorf("summary %+v, want %d commits listed and scanned, %d datapoints", rs, nonMerges, pyUsable)
	}
	wantCommits := map[string]int{"root commit": 1, "too many files": 1, "no file of the language": 3, "no real-code hunk": 6}
	if !maps.Equal(rs.SkippedCommits, wantCommits) {
		t.Errorf("skipped commits %v, want %v", rs.SkippedCommits, wantCommits)
	}
	wantFiles := map[string]int{"added": 1, "deleted": 1, "too large": 1, "binary": 1}
	if !maps.Equal(rs.SkippedFiles, wantFiles) {
		t.Errorf("skipped files %v, want %v", rs.SkippedFiles, wantFiles)
	}
	if sum.Snapshots != pyUsable || sum.Written != pyUsable || rs.Snapshots != pyUsable {
		t.Errorf("snapshots %d (written %d, repo %d), want %d", sum.Snapshots, sum.Written, rs.Snapshots, pyUsable)
	}
	if wantFiles := []string{filepath.Join(out, "python-git.jsonl"), filepath.Join(out, "python-git.truth.jsonl"), filepath.Join(out, "python-git.zip")}; !slices.Equal(sum.Files, wantFiles) {
		t.Errorf("files %q, want %q", sum.Files, wantFiles)
	}
	var total int64
	for _, f := range sum.Files {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		total += fi.Size()
	}
	if sum.Bytes != total {
		t.Errorf("summary says %d bytes, files hold %d", sum.Bytes, total)
	}
	leftovers, _ := filepath.Glob(filepath.Join(out, ".*"))
	if len(leftovers) != 0 {
		t.Errorf("temporary files left: %q", leftovers)
	}

	dps, truth := readSet(t, out, "python")
	checkAgainstGit(t, h, out, "python", dps, truth)
	// Newest first; one datapoint per usable commit.
	want := []struct {
		label    string
		middles  []string
		modified []string
	}{
		{"py-two", []string{midTwoA, midTwoB}, []string{"app.py"}},
		{"py-delete", []string{midDelete}, []string{"app.py", "old.py"}},
		{"feat", []string{midFeat}, []string{"app.py"}},
		{"py-insert", []string{midInsert}, []string{"app.py", "README.md"}},
	}
	if len(dps) != len(want) {
		t.Fatalf("%d datapoints, want %d", len(dps), len(want))
	}
	for i, w := range want {
		d, tr := dps[i], truth[dps[i].ID]
		if tr.Commit != h.commits[w.label] {
			t.Errorf("datapoint %d is from %s, want %s (%s)", i, tr.Commit, h.commits[w.label], w.label)
		}
		if !slices.Contains(w.middles, tr.Middle) {
			t.Errorf("%s: middle %q, want one of %q", w.label, tr.Middle, w.middles)
		}
		if tr.Kind != "insert" {
			t.Errorf("%s: kind %q, want insert", w.label, tr.Kind)
		}
		if !slices.Equal(d.Modified, w.modified) {
			t.Errorf("%s: modified %q, want %q", w.label, d.Modified, w.modified)
		}
		if d.Repo != testRepoNm || d.Path != "app.py" {
			t.Errorf("%s: repo %s path %s", w.label, d.Repo, d.Path)
		}
	}
	// The raw file carries the competition's keys in its order.
	raw, _ := os.ReadFile(filepath.Join(out, "python-git.jsonl"))
	if !bytes.HasPrefix(raw, []byte(`{"id":"acme__widgets-`)) || !bytes.Contains(raw, []byte(`"archived":false}`)) {
		t.Errorf("unexpected datapoint line: %.200s", raw)
	}
}

func testFromGitKotlinFolders(t *testing.T, h *history) {
	t.Parallel()
	out := t.TempDir()
	opts := testOpts(h, "kotlin", out)
	opts.Layout = LayoutFolders
	sum, err := Run(opts)
	if err != nil {
		t.Fatal(err)
	}
	rs := sum.Repos[0]
	wantCommits := map[string]int{"root commit": 1, "too many files": 1, "no real-code hunk": 1, "no file of the language": nonMerges - 4}
	if !maps.Equal(rs.SkippedCommits, wantCommits) {
		t.Errorf("skipped commits %v, want %v", rs.SkippedCommits, wantCommits)
	}
	if _, err := os.Stat(filepath.Join(out, "kotlin-git.zip")); err == nil {
		t.Error("folders layout wrote a zip")
	}
	dps, truth := readSet(t, out, "kotlin")
	if len(dps) != 1 {
		t.Fatalf("%d datapoints, want 1", len(dps))
	}
	checkAgainstGit(t, h, out, "kotlin", dps, truth)
	d, tr := dps[0], truth[dps[0].ID]
	if tr.Commit != h.commits["kt-replace"] || tr.Middle != midKotlin || tr.Kind != "replace" {
		t.Errorf("truth %+v, want the kt-replace commit's two lines as a replace", tr)
	}
	if d.Path != "lib/Util.kt" || !slices.Equal(d.Modified, []string{"lib/Util.kt"}) {
		t.Errorf("path %s modified %q", d.Path, d.Modified)
	}
	if !strings.HasSuffix(d.ID, "-L7") {
		t.Errorf("id %s, want line 7", d.ID)
	}
	folder := filepath.Join(out, "repositories-kotlin-git", d.SnapshotName())
	if b, err := os.ReadFile(filepath.Join(folder, "lib", "Util.kt")); err != nil || string(b) != utilV0 {
		t.Errorf("snapshot folder's Util.kt = %q, %v; want the parent's", b, err)
	}
	// The zip layout would be hidden by the folder: refused.
	opts.Layout = LayoutZip
	_, err = Run(opts)
	mustContain(t, err, "repositories-kotlin-git", "folders")
}

// tree returns every file under dir with its contents.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		m[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func testFromGitDeterministic(t *testing.T, h *history) {
	t.Parallel()
	var outs []string
	for range 2 {
		out := t.TempDir()
		if _, err := Run(testOpts(h, "python", out)); err != nil {
			t.Fatal(err)
		}
		outs = append(outs, out)
	}
	for _, f := range []string{"python-git.jsonl", "python-git.truth.jsonl", "python-git.zip"} {
		a, _ := os.ReadFile(filepath.Join(outs[0], f))
		b, _ := os.ReadFile(filepath.Join(outs[1], f))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s differs between two runs (%d and %d bytes)", f, len(a), len(b))
		}
	}
	// The folders layout gives the same datapoints and the same files.
	fo := t.TempDir()
	opts := testOpts(h, "python", fo)
	opts.Layout = LayoutFolders
	if _, err := Run(opts); err != nil {
		t.Fatal(err)
	}
	first := tree(t, fo)
	for _, f := range []string{"python-git.jsonl", "python-git.truth.jsonl"} {
		a, _ := os.ReadFile(filepath.Join(outs[0], f))
		if first[f] != string(a) {
			t.Errorf("%s differs between the zip and folders layouts", f)
		}
	}
	// A second run into the same folder keeps the snapshots and writes the
	// same bytes.
	sum, err := Run(opts)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Reused != pyUsable || sum.Written != 0 {
		t.Errorf("second run: %d reused, %d written; want %d reused", sum.Reused, sum.Written, pyUsable)
	}
	if second := tree(t, fo); !maps.Equal(first, second) {
		t.Error("second folders run changed the output")
	}
}

func testFromGitSeed(t *testing.T, h *history) {
	t.Parallel()
	seen := map[string]bool{}
	for seed := int64(0); seed < 12 && len(seen) < 2; seed++ {
		out := t.TempDir()
		opts := testOpts(h, "python", out)
		opts.Seed = seed
		if _, err := Run(opts); err != nil {
			t.Fatal(err)
		}
		_, truth := readSet(t, out, "python")
		for _, tr := range truth {
			if tr.Commit == h.commits["py-two"] {
				seen[tr.Middle] = true
			}
		}
	}
	if !seen[midTwoA] || !seen[midTwoB] || len(seen) != 2 {
		t.Errorf("over 12 seeds the two-hunk commit gave %q, want both hunks", slices.Collect(maps.Keys(seen)))
	}
}

func testFromGitCapsAndRange(t *testing.T, h *history) {
	t.Parallel()
	out := t.TempDir()
	opts := testOpts(h, "python", out)
	opts.PerRepo = 1
	sum, err := Run(opts)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Datapoints != 1 || sum.Repos[0].Scanned > nonMerges {
		t.Errorf("per-repo 1: %d datapoints, %d scanned", sum.Datapoints, sum.Repos[0].Scanned)
	}
	// Since..Until: only the commits after py-delete, up to py-two's parent
	// and then up to HEAD.
	opts = testOpts(h, "python", t.TempDir())
	opts.Since = h.commits["py-delete"]
	sum, err = Run(opts)
	if err != nil {
		t.Fatal(err)
	}
	if rs := sum.Repos[0]; rs.Commits != 6 || rs.Datapoints != 1 {
		t.Errorf("since py-delete: %d commits, %d datapoints; want 6 and 1", rs.Commits, rs.Datapoints)
	}
	opts = testOpts(h, "python", t.TempDir())
	opts.Until = h.commits["py-delete"]
	opts.MaxCommits = 3 // py-delete, readme, feat (the merge is left out)
	sum, err = Run(opts)
	if err != nil {
		t.Fatal(err)
	}
	if rs := sum.Repos[0]; rs.Commits != 3 || rs.Datapoints != 2 {
		t.Errorf("until py-delete, 3 commits: %d commits, %d datapoints; want 3 and 2", rs.Commits, rs.Datapoints)
	}
}

func testFromGitBareAndGitDir(t *testing.T, h *history) {
	t.Parallel()
	mirror := filepath.Join(t.TempDir(), "acme+widgets", "repo")
	h.r.git("clone", "-q", "--bare", h.r.dir, mirror)
	ref := t.TempDir()
	if _, err := Run(testOpts(h, "python", ref)); err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(filepath.Join(ref, "python-git.jsonl"))
	for _, c := range []struct{ path, name string }{
		{mirror, "acme/widgets"},
		{filepath.Join(h.r.dir, ".git"), "local/myproj"},
		{h.r.dir, "local/myproj"},
		{filepath.Join(h.r.dir, "lib"), "local/myproj"},
	} {
		out := t.TempDir()
		opts := testOpts(h, "python", out)
		opts.Repos, opts.Name = []string{c.path}, ""
		sum, err := Run(opts)
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		if sum.Repos[0].Repo != c.name || sum.Datapoints != pyUsable {
			t.Errorf("%s: named %s with %d datapoints, want %s and %d", c.path, sum.Repos[0].Repo, sum.Datapoints, c.name, pyUsable)
		}
		if c.name == testRepoNm {
			got, _ := os.ReadFile(filepath.Join(out, "python-git.jsonl"))
			if !bytes.Equal(got, want) {
				t.Errorf("%s: the bare mirror gives other datapoints than the work tree", c.path)
			}
		}
	}
	// Two repositories with the same name are refused.
	opts := testOpts(h, "python", t.TempDir())
	opts.Repos, opts.Name = []string{h.r.dir, filepath.Join(h.r.dir, ".git")}, ""
	_, err := Run(opts)
	mustContain(t, err, "local/myproj")
}

func testFromGitErrors(t *testing.T, h *history) {
	t.Parallel()
	notRepo := t.TempDir()
	for _, c := range []struct {
		name  string
		edit  func(o *Options)
		parts []string
	}{
		{"not a repository", func(o *Options) { o.Repos = []string{notRepo} }, []string{notRepo, "not a git repository"}},
		{"missing folder", func(o *Options) { o.Repos = []string{notRepo + "/nope"} }, []string{"nope"}},
		{"no repository", func(o *Options) { o.Repos = nil }, []string{"no repository"}},
		{"language", func(o *Options) { o.Lang = "cobol" }, []string{`"cobol"`}},
		{"stage", func(o *Options) { o.Stage = "a/b" }, []string{`"a/b"`}},
		{"layout", func(o *Options) { o.Layout = "tar" }, []string{`"tar"`}},
		{"name", func(o *Options) { o.Name = "no-slash" }, []string{`"no-slash"`}},
		{"name for two", func(o *Options) { o.Repos = append(o.Repos, o.Repos[0]) }, []string{"acme/widgets", "2 repositories"}},
		{"option revision", func(o *Options) { o.Until = "--output=/tmp/x" }, []string{"--output"}},
		{"unknown revision", func(o *Options) { o.Until = "no-such-branch" }, []string{"acme/widgets", "rev-list"}},
		{"no output", func(o *Options) { o.OutDir = "" }, []string{"output folder"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := t.TempDir()
			opts := testOpts(h, "python", out)
			if c.edit != nil {
				c.edit(&opts)
			}
			_, err := Run(opts)
			mustContain(t, err, c.parts...)
			if ents, _ := os.ReadDir(out); len(ents) != 0 {
				t.Errorf("a failed run left %d entries in the output folder", len(ents))
			}
		})
	}
}

func TestRealCodeLine(t *testing.T) {
	py, kt := grammars.Lookup("python"), grammars.Lookup("kotlin")
	for _, c := range []struct {
		lang, line string
		want       bool
	}{
		{"python", "    result = compute_total(items)\n", true},
		{"python", "    return total_price\n", true},
		{"python", "@property\n", true},
		{"python", "    raise ValueError(\"bad\")\n", true},
		{"python", "\n", false},
		{"python", "    # a comment here\n", false},
		{"python", "import os.path\n", false},
		{"python", "from typing import Any\n", false},
		{"python", "from . import views\n", false},
		{"python", "    \"\"\"Docstring of the function.\"\"\"\n", false},
		{"python", "    r'''raw docstring'''\n", false},
		{"python", "    pass\n", false},
		{"python", "    else:\n", false},
		{"python", "    finally:\n", false},
		{"python", "    return None\n", false},
		{"python", "    ),\n", false},
		{"python", "    x = 1\n", false}, // 5 non-space characters
		{"python", "    x = " + strings.Repeat("1", 400) + "\n", false},
		{"kotlin", "        val bounded = max(value, low)\n", true},
		{"kotlin", "@Suppress(\"UNCHECKED_CAST\")\n", true},
		{"kotlin", "    // comment line\n", false},
		{"kotlin", "    /** KDoc start */\n", false},
		{"kotlin", "     * KDoc body text\n", false},
		{"kotlin", "import kotlin.math.max\n", false},
		{"kotlin", "package com.example.lib\n", false},
		{"kotlin", "    } else {\n", false},
		{"kotlin", "    } finally {\n", false},
		{"kotlin", "        })\n", false},
		{"kotlin", "        return this\n", false},
		{"kotlin", "        return 0\n", true},
	} {
		spec := py
		if c.lang == "kotlin" {
			spec = kt
		}
		if got := realCodeLine(c.lang, spec, c.line); got != c.want {
			t.Errorf("%s %q: %v, want %v", c.lang, c.line, got, c.want)
		}
	}
}

func TestCodeLines(t *testing.T) {
	for _, c := range []struct {
		lang, text string
		want       string // one character per line start and the end: c code, x not
	}{
		{"python", "def f():\n    \"\"\"Doc.\n\n    More.\n    \"\"\"\n    return 1\n", "ccxxxcc"},
		{"python", "x = '''a''' + \"#\"\ny = 2 # '''\nz = 3\n", "cccc"},
		{"python", "from a import (\n    b,\n    c,\n)\nd = 1\n", "cxxxcc"},
		{"python", "from a import b, \\\n    c\nd = 1\n", "cxcc"},
		{"python", "s = \"\"\"\nopen\n", "cxx"},
		{"kotlin", "/* a\n /* nested */\n b */\nval x = 1\n", "cxxcc"},
		{"kotlin", "val s = \"\"\"\n  raw \"\n\"\"\"\"\nval c = '\"'\nval d = 1\n", "cxxccc"},
		{"kotlin", "val u = \"http://x\" // c\nval v = 2\n", "ccc"},
	} {
		code := codeLines(c.lang, splitLines(c.text))
		var got strings.Builder
		for _, ok := range code {
			if ok {
				got.WriteByte('c')
			} else {
				got.WriteByte('x')
			}
		}
		if got.String() != c.want {
			t.Errorf("%s %q: %s, want %s", c.lang, c.text, got.String(), c.want)
		}
	}
}

func TestRepoNameFromPath(t *testing.T) {
	for _, c := range []struct {
		dir  string
		bare bool
		want string
	}{
		{"/srv/mirror/square+moshi/repo", true, "square/moshi"},
		{"/srv/mirror/square+moshi", true, "square/moshi"},
		{"/x/square+okio.git", true, "square/okio"},
		{"/x/owner+name/repo", false, "local/repo"},
		{"/home/me/proj", false, "local/proj"},
		{"/home/me/proj/.git", false, "local/proj"},
		{"/srv/git/widgets.git", true, "local/widgets"},
		{"/home/me/my proj", false, "local/my-proj"},
		{"/", false, "local/repo"},
	} {
		if got := RepoNameFromPath(c.dir, c.bare); got != c.want {
			t.Errorf("RepoNameFromPath(%q, %v) = %q, want %q", c.dir, c.bare, got, c.want)
		}
	}
}

func mustContain(t testing.TB, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one mentioning %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not mention %q", err, p)
		}
	}
}

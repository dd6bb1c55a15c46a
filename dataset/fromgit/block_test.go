package fromgit

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/repoctx/repoctx/grammars"
)

// Block-style history: the app.py and Util.kt the root commit writes, and
// what later commits add.
const (
	blockAppV0 = `def total(items):
    return sum(item.price for item in items)
`
	// blockPy is appended to app.py by the py-block commit. Its non-blank
	// lines are def, names, prices, text, two lines inside the string,
	// cheapest and return.
	blockPy = `

def summarize(items):

    names = [item.name for item in items]
    prices = [item.price for item in items]
    text = """
    summary
    """
    cheapest = min(prices)
    return names, cheapest
`
	blockSmall = "    count_of_items = len(items)\n"
	// blockFive adds five non-blank lines: too few for a block.
	blockFive = "\n\ndef five(x):\n    a_value = x + 1\n\n    b_value = a_value * 2\n    c_value = b_value - 3\n    return c_value\n"
	// blockComments adds six comment lines: no middle.
	blockComments = "# one comment line\n# two comment line\n# three comment line\n# four comment line\n# five comment line\n# six comment line\n"
	blockUtilV0   = `package lib

import kotlin.math.max

class Util {
    fun clamp(value: Int, low: Int): Int {
        return max(value, low)
    }
}
`
	blockKtOld = "        return max(value, low)\n"
	blockKtNew = `        require(low >= 0) { "low must not be negative" }
        val bounded = max(value, low)
        if (bounded > 1000) {
            log("clamp", value, bounded)
        }
        check(bounded >= low)
        return bounded
`
)

// buildBlockHistory makes a repository with one Python block commit, one
// Kotlin block commit (a replace), a 1-line Python commit (small style
// only) and two Python hunks that are no blocks (five non-blank lines; six
// comment lines).
func buildBlockHistory(t *testing.T, dir string) *history {
	t.Helper()
	r := newTestRepo(t, dir)
	h := &history{r: r, commits: map[string]string{}}
	app, util := blockAppV0, blockUtilV0
	c := h.commits
	c["root"] = r.commit("root", map[string]*string{"app.py": str(app), "lib/Util.kt": str(util)})
	app += blockPy
	c["py-block"] = r.commit("summarize", map[string]*string{"app.py": str(app)})
	app = strings.Replace(app, "def total(items):\n", "def total(items):\n"+blockSmall, 1)
	c["py-small"] = r.commit("one line", map[string]*string{"app.py": str(app)})
	app += blockFive
	c["py-five"] = r.commit("five lines", map[string]*string{"app.py": str(app)})
	app = blockComments + app
	c["py-comments"] = r.commit("comments", map[string]*string{"app.py": str(app)})
	util = strings.Replace(util, blockKtOld, blockKtNew, 1)
	c["kt-block"] = r.commit("clamp", map[string]*string{"lib/Util.kt": str(util)})
	return h
}

// lineOf returns the 0-based line of text that equals line (without "\n").
func lineOf(t *testing.T, text, line string) int {
	t.Helper()
	for i, l := range splitLines(text) {
		if strings.TrimSuffix(l, "\n") == line {
			return i
		}
	}
	t.Fatalf("no line %q", line)
	return -1
}

// TestFromGitBlock checks --style block on a repository the test makes:
// which commits give a datapoint, that every middle is one the rules allow
// (and over many seeds, more than one of them), that the prefix holds new
// lines the snapshot lacks, and that the small style is unchanged by the
// explicit name.
func TestFromGitBlock(t *testing.T) {
	needGit(t)
	h := buildBlockHistory(t, filepath.Join(t.TempDir(), "blocks"))
	opts := func(lang, style, out string, seed int64) Options {
		return Options{Repos: []string{h.r.dir}, Name: testRepoNm, Lang: lang, Stage: "git", OutDir: out,
			Style: style, Seed: seed}
	}
	pyNew := h.r.show(h.commits["py-block"], "app.py")
	ktNew := h.r.show(h.commits["kt-block"], "lib/Util.kt")
	// The middles the rules allow: (first line, line count), 0-based.
	pyWant := map[[2]int]bool{
		{lineOf(t, pyNew, "    prices = [item.price for item in items]"), 1}: true, // the string's first line ends the run
		{lineOf(t, pyNew, "    cheapest = min(prices)"), 2}:                  true,
		{lineOf(t, pyNew, "    return names, cheapest"), 1}:                  true,
	}
	ktWant := map[[2]int]bool{
		{lineOf(t, ktNew, "        if (bounded > 1000) {"), 3}:            true, // "}" may end a middle
		{lineOf(t, ktNew, `            log("clamp", value, bounded)`), 3}: true, // and sit inside one
		{lineOf(t, ktNew, "        check(bounded >= low)"), 2}:            true,
		{lineOf(t, ktNew, "        return bounded"), 1}:                   true,
	}

	t.Run("python", func(t *testing.T) {
		out := t.TempDir()
		sum, err := Run(opts("python", StyleBlock, out, 1))
		if err != nil {
			t.Fatal(err)
		}
		rs := sum.Repos[0]
		wantCommits := map[string]int{"root commit": 1, "no real-code hunk": 3, "no file of the language": 1}
		if !maps.Equal(rs.SkippedCommits, wantCommits) || rs.Datapoints != 1 {
			t.Errorf("skipped commits %v, %d datapoints; want %v, 1", rs.SkippedCommits, rs.Datapoints, wantCommits)
		}
		dps, truth := readSet(t, out, "python")
		checkAgainstGit(t, h, out, "python", dps, truth)
		d, tr := dps[0], truth[dps[0].ID]
		if tr.Commit != h.commits["py-block"] || tr.Kind != "insert" {
			t.Errorf("truth %+v, want an insert from py-block", tr)
		}
		start, count := strings.Count(d.Prefix, "\n"), strings.Count(tr.Middle, "\n")
		if !pyWant[[2]int{start, count}] {
			t.Errorf("middle at line %d, %d lines (%q): not one the rules allow", start, count, tr.Middle)
		}
		// Like the competition's example, the snapshot's file is a prefix of
		// the prefix, which goes on with code the snapshot has never had.
		old := h.r.show(d.Revision, "app.py")
		if !strings.HasPrefix(d.Prefix, old) || len(d.Prefix) <= len(old) {
			t.Errorf("prefix %q should start with the old file %q and go on with new lines", d.Prefix, old)
		}
		if !strings.Contains(d.Prefix, "def summarize(items):\n") {
			t.Errorf("prefix lacks the block's first line: %q", d.Prefix)
		}
	})

	t.Run("kotlin", func(t *testing.T) {
		out := t.TempDir()
		if _, err := Run(opts("kotlin", StyleBlock, out, 1)); err != nil {
			t.Fatal(err)
		}
		dps, truth := readSet(t, out, "kotlin")
		if len(dps) != 1 {
			t.Fatalf("%d datapoints, want 1", len(dps))
		}
		checkAgainstGit(t, h, out, "kotlin", dps, truth)
		d, tr := dps[0], truth[dps[0].ID]
		if tr.Commit != h.commits["kt-block"] || tr.Kind != "replace" {
			t.Errorf("truth %+v, want a replace from kt-block", tr)
		}
		if !ktWant[[2]int{strings.Count(d.Prefix, "\n"), strings.Count(tr.Middle, "\n")}] {
			t.Errorf("middle %q after %q: not one the rules allow", tr.Middle, d.Prefix)
		}
	})

	t.Run("seeds", func(t *testing.T) {
		// Over seeds, every middle is allowed and more than one is drawn.
		seen := map[[2]int]bool{}
		for seed := range int64(12) {
			out := t.TempDir()
			if _, err := Run(opts("kotlin", StyleBlock, out, seed)); err != nil {
				t.Fatal(err)
			}
			dps, truth := readSet(t, out, "kotlin")
			k := [2]int{strings.Count(dps[0].Prefix, "\n"), strings.Count(truth[dps[0].ID].Middle, "\n")}
			if !ktWant[k] {
				t.Errorf("seed %d: middle at %v not allowed", seed, k)
			}
			seen[k] = true
		}
		if len(seen) < 2 {
			t.Errorf("12 seeds drew only %v", seen)
		}
	})

	t.Run("small", func(t *testing.T) {
		// The small style takes only the one-line commit, and naming it
		// changes no byte.
		var files [2]map[string]string
		for i, style := range []string{"", StyleSmall} {
			out := filepath.Join(t.TempDir(), "out")
			sum, err := Run(opts("python", style, out, 1))
			if err != nil {
				t.Fatal(err)
			}
			if sum.Datapoints != 1 {
				t.Fatalf("style %q: %d datapoints, want 1", style, sum.Datapoints)
			}
			_, truth := readSet(t, out, "python")
			for _, tr := range truth {
				if tr.Middle != blockSmall || tr.Commit != h.commits["py-small"] {
					t.Errorf("style %q: truth %+v, want py-small's line", style, tr)
				}
			}
			files[i] = tree(t, out)
		}
		if !maps.Equal(files[0], files[1]) {
			t.Error(`style "small" writes other bytes than the default`)
		}
	})

	t.Run("bad-style", func(t *testing.T) {
		_, err := Run(opts("python", "large", t.TempDir(), 1))
		mustContain(t, err, "fromgit: style", "large", "small", "block")
	})
}

// TestBlockCandidate checks the middles of hunks directly: blank lines do
// not count as lines before, a comment ends a middle and a bracket line
// does not start one, and a hunk shorter than BlockMinLines non-blank lines
// gives none.
func TestBlockCandidate(t *testing.T) {
	spec := grammars.Lookup("python")
	text := "x = 1\ndef f(a):\n\n    alpha = a + 1\n    beta = alpha * 2\n    # scale it\n    gamma = beta - 3\n" +
		"    delta = (\n        gamma / 4\n    )\n    return delta\n"
	lines := splitLines(text)
	added := make([]string, 0, len(lines)-1)
	for _, l := range lines[1:] {
		added = append(added, strings.TrimSuffix(l, "\n"))
	}
	code := func() []bool { return codeLines("python", lines) }
	c, ok := blockCandidate("python", spec, "a.py", text, lines, hunk{newStart: 2, newCount: len(added), added: added}, code)
	if !ok || c == nil {
		t.Fatalf("candidate %v, ok %v", c, ok)
	}
	// def is the only non-blank line before alpha: the first start is beta,
	// whose middle the comment ends.
	want := []middleSpan{{4, 1}, {6, 3}, {7, 3}, {8, 3}, {10, 1}}
	if !slices.Equal(c.starts, want) || c.replace {
		t.Errorf("starts %v (replace %v), want %v", c.starts, c.replace, want)
	}
	// The first five lines hold four non-blank ones: no block.
	c, ok = blockCandidate("python", spec, "a.py", text, lines, hunk{newStart: 2, newCount: 5, added: added[:5]}, code)
	if !ok || c != nil {
		t.Errorf("four non-blank lines: candidate %v, ok %v", c, ok)
	}
	// A hunk that disagrees with the file.
	bad := slices.Clone(added)
	bad[2] = "    other = 0"
	if _, ok := blockCandidate("python", spec, "a.py", text, lines, hunk{newStart: 2, newCount: len(bad), added: bad}, code); ok {
		t.Error("a hunk that disagrees with the file was accepted")
	}
}

// TestBlockStyleTreeCodeLines checks that the block style, like the small one, finds
// the multi-line strings of a language without a lexical scanner in its syntax tree:
// the lines of a Go raw string that a hunk adds give no middle, the code after it does.
func TestBlockStyleTreeCodeLines(t *testing.T) {
	spec := grammars.Lookup("go")
	ps := grammars.NewParsers(0)
	defer ps.Close()
	body := []string{
		"\tscript := `",
		"set -e",
		"echo one",
		"echo two",
		"echo three",
		"echo four",
		"`",
		"\tfirst := len(script)",
		"\tsecond := first * 2",
		"\tthird := second + first",
		"\treturn third",
	}
	text := "package a\n\nfunc f() int {\n" + strings.Join(body, "\n") + "\n}\n"
	cs, ok := fileCandidates("go", StyleBlock, spec, ps, "a.go", text, []hunk{{newStart: 4, newCount: len(body), added: body}})
	if !ok || len(cs) != 1 {
		t.Fatalf("candidates %v, ok %v", cs, ok)
	}
	for _, st := range cs[0].starts {
		if st.start < 10 { // 0-based: lines 4-9 are inside the raw string or close it
			t.Errorf("a middle starts at line %d, inside the raw string (starts %v)", st.start+1, cs[0].starts)
		}
	}
	if len(cs[0].starts) == 0 {
		t.Error("no middle in the code after the raw string")
	}
}

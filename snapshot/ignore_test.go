package snapshot

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// ignoreWords are the path components and pattern pieces the randomized checks draw
// from: names that equal, end with, or only resemble one another.
var ignoreWords = []string{"build", "out", "a", "b.kt", "x.iml", ".iml", "iml", "node_modules", "build.gradle", "gen", "Build", "b", "a b", "a\\ "}

// randomPattern returns a gitignore line of any shape: literal, "*"-suffix, literal
// prefix, other wildcards, anchored, nested, "**", negated, folder-only, trailing
// spaces.
func randomPattern(r *rand.Rand) string {
	w := func() string { return ignoreWords[r.IntN(len(ignoreWords))] }
	var s string
	switch r.IntN(10) {
	case 0, 1:
		s = w()
	case 2, 3:
		s = "*" + w()
	case 4:
		s = w() + "*"
	case 5:
		s = "/" + w()
	case 6:
		s = w() + "/" + w()
	case 7:
		s = "**/" + w()
	case 8:
		s = []string{"", "/"}[r.IntN(2)] + w() + "*/" + w()
	default:
		s = []string{"*", "?ut", "[ab]", "b?kt", "*.*", "\\*", "[", "*[", "**"}[r.IntN(9)]
	}
	if r.IntN(4) == 0 {
		s = "!" + s
	}
	if r.IntN(4) == 0 {
		s += "/"
	}
	if r.IntN(6) == 0 {
		s += "  "
	}
	return s
}

// TestDirMatcherEqualsGoGit checks the folder matcher against go-git's NewMatcher on
// random pattern lists (from the root and from nested ignore files) and paths.
func TestDirMatcherEqualsGoGit(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		depth := r.IntN(4)
		elems := make([]string, depth)
		for i := range elems {
			elems[i] = ignoreWords[r.IntN(len(ignoreWords))]
		}
		var lines []string
		var ps []ignorePattern
		var gps []gitignore.Pattern
		for range 1 + r.IntN(6) {
			line := randomPattern(r)
			domain := elems[:r.IntN(depth+1)]
			lines = append(lines, line)
			ps = append(ps, newIgnorePattern(line, domain))
			gps = append(gps, gitignore.ParsePattern(line, domain))
		}
		m := newDirMatcher(ps, elems)
		want := gitignore.NewMatcher(gps)
		for _, name := range ignoreWords {
			path := append(elems[:len(elems):len(elems)], name)
			for _, isDir := range []bool{false, true} {
				if got, exp := m.Match(path, isDir), want.Match(path, isDir); got != exp {
					t.Fatalf("patterns %q, path %q (dir %v): got %v, go-git %v", lines, strings.Join(path, "/"), isDir, got, exp)
				}
			}
		}
	}
}

// FuzzDirMatcher compares one pattern in a nested folder with go-git's matcher.
func FuzzDirMatcher(f *testing.F) {
	f.Add("*.iml", "a/b", "x.iml", false)
	f.Add("build/", "build/a", "b", true)
	f.Add("!out", "out", "out", true)
	f.Add("a\\ ", "a ", "a ", false)
	f.Add("/hs_err*/x", "hs_err_1", "x", false)
	f.Fuzz(func(t *testing.T, line, dir, name string, isDir bool) {
		if name == "" || strings.Contains(name, "/") {
			return
		}
		var elems []string
		if dir != "" {
			elems = strings.Split(dir, "/")
		}
		for _, d := range []int{0, len(elems) / 2} {
			ps := []ignorePattern{newIgnorePattern(line, elems[:d])}
			gps := []gitignore.Pattern{gitignore.ParsePattern(line, elems[:d])}
			m := newDirMatcher(ps, elems)
			path := append(elems[:len(elems):len(elems)], name)
			if got, want := m.Match(path, isDir), gitignore.NewMatcher(gps).Match(path, isDir); got != want {
				t.Fatalf("pattern %q (domain %q), path %q (dir %v): got %v, go-git %v", line, elems[:d], path, isDir, got, want)
			}
		}
	})
}

// BenchmarkIgnoreMatch matches the entries of a folder 8 deep against the root
// .gitignore of a Gradle project (ktor's, 39 patterns): go-git's matcher against the
// walker's. Per entry.
func BenchmarkIgnoreMatch(b *testing.B) {
	lines := strings.Fields(`build .gradle .gradletasknamecache .idea/* !.idea/externalDependencies.xml
		!.idea/runConfigurations !.idea/runConfigurations/* !.idea/vcs.xml !.idea/dictionaries
		!.idea/dictionaries/* !.idea/copyright !.idea/copyright/* !.idea/icon.svg out *.iml .vscode
		*.versionsBackup *.releaseBackup release.properties local.properties *.swp .video .attach_pid*
		apidoc bin/ .settings .project .classpath .konan .DS_Store hs_err_pid*.log gradle-user-home
		.fleet .kotlin scan-journal.log **/.claude/settings.local.json a/b/docs *.actual.json`)
	elems := strings.Split("ktor-server/ktor-server-core/jvm/src/io/ktor/server/engine", "/")
	names := []string{"ApplicationEngine.kt", "BaseApplicationEngine.kt", "internal", "EngineConfig.kt", "ShutdownHook.kt"}
	var ps []ignorePattern
	var gps []gitignore.Pattern
	for _, l := range lines {
		ps = append(ps, newIgnorePattern(l, nil))
		gps = append(gps, gitignore.ParsePattern(l, nil))
	}
	paths := make([][]string, len(names))
	for i, n := range names {
		paths[i] = append(elems[:len(elems):len(elems)], n)
	}
	b.Run("go-git", func(b *testing.B) {
		m := gitignore.NewMatcher(gps)
		for i := 0; b.Loop(); i++ {
			m.Match(paths[i%len(paths)], false)
		}
	})
	b.Run("walker", func(b *testing.B) {
		m := newDirMatcher(ps, elems)
		for i := 0; b.Loop(); i++ {
			m.Match(paths[i%len(paths)], false)
		}
	})
}

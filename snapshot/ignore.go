package snapshot

import (
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// ignorePattern is a gitignore pattern (go-git's, which decides every match) with
// what a cheap test needs to rule out, without calling it, paths it cannot match.
//
// go-git matches a pattern without "/" (a "simple name") against every component of
// the path below its folder, calling path/filepath.Match for each: a walk paid
// patterns × depth calls per entry. A component test is a necessary condition of
// filepath.Match for three shapes of pattern: a literal name ("build") matches a
// component only when equal to it; "*" followed by a literal ("*.iml") only one that
// ends with the literal (filepath.Match's "*" spans any bytes but the separator, which
// a component has none of); any other pattern that starts with a literal
// ("hs_err_pid*.log") only one that starts with it. A pattern with "/" (a glob) is
// matched component by component from its folder: when its first part (after a
// leading "/") is of one of those shapes, only the first component below its folder
// can satisfy it.
type ignorePattern struct {
	p        gitignore.Pattern
	kind     int    // patternOther, patternLiteral, patternSuffix or patternPrefix
	lit      string // the name, the suffix after "*" or the literal prefix
	anchored bool   // a glob: the test applies to the first component below the domain
	dom      int    // len of the pattern's domain (the folder of its ignore file)
}

// Shapes of ignorePattern.kind.
const (
	patternOther   = iota // tested by go-git's Match alone
	patternLiteral        // no wildcard: equality
	patternSuffix         // "*" + no wildcard: suffix
	patternPrefix         // a literal, then a wildcard: prefix
)

// newIgnorePattern parses line as gitignore.ParsePattern does (a leading "!", trailing
// spaces unless escaped, a trailing "/") to classify it; the Pattern itself is
// go-git's.
func newIgnorePattern(line string, domain []string) ignorePattern {
	ip := ignorePattern{p: gitignore.ParsePattern(line, domain), dom: len(domain)}
	s := strings.TrimPrefix(line, "!")
	if !strings.HasSuffix(s, "\\ ") {
		s = strings.TrimRight(s, " ")
	}
	s = strings.TrimSuffix(s, "/")
	if strings.Contains(s, "/") {
		// go-git's globMatch skips empty parts (a leading "/") and matches the first
		// other part against the first component, unless it is "**" (any depth).
		ip.anchored = true
		s = strings.TrimLeft(s, "/")
		s, _, _ = strings.Cut(s, "/")
		if strings.Contains(s, "**") {
			return ip
		}
	}
	if s == "" {
		return ip
	}
	const meta = `*?[\`
	switch i := strings.IndexAny(s, meta); {
	case i < 0:
		ip.kind, ip.lit = patternLiteral, s
	case i == 0 && len(s) > 1 && s[0] == '*' && !strings.ContainsAny(s[1:], meta):
		ip.kind, ip.lit = patternSuffix, s[1:]
	case i > 0:
		ip.kind, ip.lit = patternPrefix, s[:i]
	}
	return ip
}

// hits reports whether the component name can match ip (always true for a pattern
// of another shape).
func (ip *ignorePattern) hits(name string) bool {
	switch ip.kind {
	case patternLiteral:
		return name == ip.lit
	case patternSuffix:
		return strings.HasSuffix(name, ip.lit)
	case patternPrefix:
		return strings.HasPrefix(name, ip.lit)
	}
	return true
}

// What dirMatcher does with a pattern for the entries of its folder.
const (
	testSkip = iota // cannot match any entry
	testName        // can match only if the entry's name hits it
	testAll         // go-git decides for every entry
)

// dirMatcher answers gitignore.Matcher's question, with the same answers, for the
// entries of one folder: what the folder's own path components already settle is
// worked out once, so an entry costs at most a component test per pattern, and
// go-git's Match only for the patterns that can match it.
type dirMatcher struct {
	ps   []ignorePattern
	test []uint8 // testSkip, testName or testAll, by pattern
}

// newDirMatcher returns the matcher of the folder whose path components are elems,
// for patterns ps (lowest priority first).
func newDirMatcher(ps []ignorePattern, elems []string) dirMatcher {
	m := dirMatcher{ps: ps, test: make([]uint8, len(ps))}
	for i := range ps {
		ip := &ps[i]
		switch {
		case ip.kind == patternOther || ip.dom > len(elems):
			m.test[i] = testAll // not ruled out by components: go-git decides
		case ip.anchored && ip.dom < len(elems):
			if ip.hits(elems[ip.dom]) {
				m.test[i] = testAll
			} else {
				m.test[i] = testSkip
			}
		case ip.anchored:
			m.test[i] = testName // the entry is the first component below the domain
		default:
			m.test[i] = testName
			for _, e := range elems[ip.dom:] {
				if ip.hits(e) {
					m.test[i] = testAll
					break
				}
			}
		}
	}
	return m
}

// Match reports whether path (the folder's components and then the entry's name) is
// ignored: the last pattern that matches decides (gitignore.Matcher.Match).
func (m *dirMatcher) Match(path []string, isDir bool) bool {
	name := path[len(path)-1]
	for i := len(m.ps) - 1; i >= 0; i-- {
		ip := &m.ps[i]
		switch m.test[i] {
		case testSkip:
			continue
		case testName:
			if !ip.hits(name) {
				continue
			}
		}
		if r := ip.p.Match(path, isDir); r > gitignore.NoMatch {
			return r == gitignore.Exclude
		}
	}
	return false
}

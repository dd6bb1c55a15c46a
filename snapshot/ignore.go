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
// patterns × depth calls per entry. For the two commonest shapes a component test
// is exact and cheap: a literal name ("build", "node_modules") matches a component
// only when equal to it, and "*" followed by a literal ("*.iml") only when the
// component ends with that literal (filepath.Match's "*" spans any bytes but the
// separator, which a component has none of).
type ignorePattern struct {
	p    gitignore.Pattern
	kind int    // patternOther, patternLiteral or patternSuffix
	lit  string // the name (patternLiteral) or the suffix after "*" (patternSuffix)
	dom  int    // len of the pattern's domain (the folder of its ignore file)
}

// Shapes of ignorePattern.kind.
const (
	patternOther   = iota // tested by go-git's Match alone
	patternLiteral        // a simple name without wildcards: equality
	patternSuffix         // "*" + a simple name without wildcards: suffix
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
	if s == "" || strings.Contains(s, "/") {
		return ip // a glob: matched by go-git alone
	}
	const meta = `*?[\`
	switch {
	case !strings.ContainsAny(s, meta):
		ip.kind, ip.lit = patternLiteral, s
	case len(s) > 1 && s[0] == '*' && !strings.ContainsAny(s[1:], meta):
		ip.kind, ip.lit = patternSuffix, s[1:]
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
	}
	return true
}

// dirMatcher answers gitignore.Matcher's question, with the same answers, for the
// entries of one folder: which patterns already hit a component of the folder's own
// path is worked out once, so an entry costs a component test per pattern, and
// go-git's Match only for the patterns that can match it.
type dirMatcher struct {
	ps       []ignorePattern
	ancestor []bool // ps[i] hits a component of the folder's path below its domain
}

// newDirMatcher returns the matcher of the folder whose path components are elems,
// for patterns ps (lowest priority first).
func newDirMatcher(ps []ignorePattern, elems []string) dirMatcher {
	m := dirMatcher{ps: ps, ancestor: make([]bool, len(ps))}
	for i := range ps {
		ip := &ps[i]
		if ip.kind == patternOther || ip.dom > len(elems) {
			m.ancestor[i] = true // not ruled out by components: go-git decides
			continue
		}
		for _, e := range elems[ip.dom:] {
			if ip.hits(e) {
				m.ancestor[i] = true
				break
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
		if !m.ancestor[i] && !ip.hits(name) {
			continue
		}
		if r := ip.p.Match(path, isDir); r > gitignore.NoMatch {
			return r == gitignore.Exclude
		}
	}
	return false
}

package grammars

import (
	"regexp"
	"sync"
)

// Regexp is a regular expression (Go's RE2 syntax, package regexp) compiled when it
// is first used rather than when the program starts: the specs of every registered
// language hold about seventy, and a run uses those of one or two languages
// (compiling them all took about 5 ms of every process's start). Its methods are
// regexp.Regexp's; they panic, as regexp.MustCompile would have, when the
// expression does not compile (TestRegexpsCompile compiles every one of this
// package's). It is safe for concurrent use.
type Regexp struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
}

// allRegexps lists the expressions made by LazyRegexp, for TestRegexpsCompile.
var (
	allMu      sync.Mutex
	allRegexps []*Regexp
)

// LazyRegexp returns the expression expr, to be compiled on its first use.
func LazyRegexp(expr string) *Regexp {
	r := &Regexp{expr: expr}
	allMu.Lock()
	allRegexps = append(allRegexps, r)
	allMu.Unlock()
	return r
}

// Regexp returns the compiled expression (compiling it on the first call).
func (r *Regexp) Regexp() *regexp.Regexp {
	r.once.Do(func() { r.re = regexp.MustCompile(r.expr) })
	return r.re
}

// String returns the expression's source text.
func (r *Regexp) String() string { return r.expr }

// Match reports whether b contains a match (regexp.Regexp.Match).
func (r *Regexp) Match(b []byte) bool { return r.Regexp().Match(b) }

// MatchString reports whether s contains a match (regexp.Regexp.MatchString).
func (r *Regexp) MatchString(s string) bool { return r.Regexp().MatchString(s) }

// FindSubmatch returns the leftmost match in b and its submatches, nil for none
// (regexp.Regexp.FindSubmatch).
func (r *Regexp) FindSubmatch(b []byte) [][]byte { return r.Regexp().FindSubmatch(b) }

// FindStringSubmatch returns the leftmost match in s and its submatches, nil for
// none (regexp.Regexp.FindStringSubmatch).
func (r *Regexp) FindStringSubmatch(s string) []string { return r.Regexp().FindStringSubmatch(s) }

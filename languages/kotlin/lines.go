package kotlin

import (
	"bytes"

	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/languages/internal/lex"
)

var (
	// `fun interface X` -> `    interface X` (fwcd issue 87). funInterfaces finds the
	// same matches by byte scanning; this is its specification, used by the tests.
	ktFunInterface = grammars.LazyRegexp(`\bfun(\s+interface\b)`)
	// A class header line without a body or parameter list, followed by a line starting
	// with optional modifiers (visibility, actual, expect) and annotations and
	// `constructor` (fwcd issue 75; tree-sitter-grammars 1.1.0 has the same fault).
	ktClassLine = grammars.LazyRegexp(`\bclass\s+[\p{L}_][\p{L}\p{N}_]*[^{(=\n]*$`)
	ktCtorLine  = grammars.LazyRegexp(`^[ \t]*(?:(?:public|private|protected|internal|actual|expect)[ \t]+|@[\w.]+(?:\([^)\n]*\))?[ \t]+)*constructor\b`)
	// Lines that may stand between the class header and the constructor line: an
	// annotation alone; and a line that may end a header: `>` alone, closing a type
	// parameter list spread over lines.
	ktAnnotationLine = grammars.LazyRegexp(`^[ \t]*@[\w.]+(?:\([^)\n]*\))?[ \t]*$`)
	ktTypeParamsEnd  = grammars.LazyRegexp(`^[ \t]*>[ \t]*$`)
)

// Rewrite returns src with the mis-parsed constructs replaced by same-length
// equivalents, or src itself when there is nothing to rewrite: the line rewrites
// (kotlinLineRewrite), then the token rewrites of the compiled-in grammar
// (kotlinGrammarRules, see kotlinRules).
func Rewrite(src []byte) []byte {
	return rewriteKotlinTokens(kotlinLineRewrite(src), kotlinGrammarRules)
}

// kotlinLineRewrite rewrites the constructor on the line after its class header
// (possibly after annotation lines; the header may end with a `>` line closing its type
// parameters) and `fun interface` (both grammars mis-parse the first; fwcd the second).
func kotlinLineRewrite(src []byte) []byte {
	out, copied := src, false // out is copied before the first change
	funIfaces := funInterfaces(src)
	if len(funIfaces) > 0 {
		out, copied = append([]byte(nil), src...), true
		for _, at := range funIfaces {
			copy(out[at:at+3], "   ")
		}
	}
	// Join a class header line to the next line when that one holds a constructor.
	// Only lines holding "constructor" are looked at; line breaks are found in src,
	// since out loses the ones it joins (its text between them is unchanged).
	ctor := []byte("constructor")
	for i := 0; ; {
		j := bytes.Index(src[i:], ctor)
		if j < 0 {
			break
		}
		j += i
		nextEnd := len(src)
		if k := bytes.IndexByte(src[j:], '\n'); k >= 0 {
			nextEnd = j + k
		}
		i = nextEnd // one look per line
		brk := bytes.LastIndexByte(src[:j], '\n')
		if brk < 0 {
			continue // the first line follows no line
		}
		next := out[brk+1 : nextEnd]
		if !ktCtorLine.Match(next) {
			continue
		}
		brks := []int{brk}
		prevStart := bytes.LastIndexByte(src[:brk], '\n') + 1
		prev := out[prevStart:brk]
		for prevStart > 0 && len(brks) < 8 && bytes.IndexByte(prev, '@') >= 0 && ktAnnotationLine.Match(prev) {
			brk = prevStart - 1
			brks = append(brks, brk)
			prevStart = bytes.LastIndexByte(src[:brk], '\n') + 1
			prev = out[prevStart:brk]
		}
		if bytes.Contains(prev, []byte("class")) && ktClassLine.Match(prev) || ktTypeParamsEnd.Match(prev) {
			if !copied {
				out, copied = append([]byte(nil), src...), true
			}
			for _, b := range brks {
				out[b] = ' '
			}
		}
	}
	return out
}

// funInterfaces returns the offsets of the `fun` of each `fun interface` in src: the
// start of every match of ktFunInterface (\bfun\s+interface\b, ASCII word boundaries
// and white space as in package regexp), found by byte scanning, which is several
// times faster than the regexp on files that have no match.
func funInterfaces(src []byte) []int {
	var out []int
	for i := 0; ; {
		j := bytes.Index(src[i:], []byte("interface"))
		if j < 0 {
			return out
		}
		j += i
		i = j + len("interface")
		if i < len(src) && lex.IsWordByte(src[i]) {
			continue
		}
		k := j
		for k > 0 && lex.IsRegexpSpace(src[k-1]) {
			k--
		}
		if k == j || k < 3 || string(src[k-3:k]) != "fun" || (k > 3 && lex.IsWordByte(src[k-4])) {
			continue
		}
		out = append(out, k-3)
	}
}

package assemble

import (
	"sort"
	"strings"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/grammars"
)

// Line classes of prefixOutline, in the order it takes them.
var (
	// importLine matches the lines that bring names into a file: imports, packages,
	// includes.
	importLine = grammars.LazyRegexp(`^\s*(import|from|package|use|using|require|#include)\b`)
	// declLine matches declaration headers: a definition keyword after optional
	// annotations and modifiers (Kotlin, Python, Java, Go, TypeScript, Rust, ...).
	declLine = grammars.LazyRegexp(`^\s*(@[\w.]+(\([^)]*\))?\s+)*((public|private|protected|internal|open|abstract|override|sealed|data|inline|suspend|static|final|async|export|default|const|lateinit|enum|annotation|companion|value|inner|operator|infix|tailrec|external|actual|expect|pub|readonly)\s+)*(def|class|fun|val|var|object|interface|typealias|struct|func|type|fn|let|function|trait|impl|record)\b`)
)

// maxOutlineLine is the longest line, in bytes, an outline takes: longer lines are
// mostly data, not declarations.
const maxOutlineLine = 240

// prefixOutline returns the outline of the far prefix the planner trimmed (the hole's
// prefix before split.PrefixCut): whole lines of it, in file order, of at most budget
// tokens counted line by line by tc, with the header of the completion file. Lines are
// taken in this order, each only when it holds an identifier (see eachIdent, two bytes
// or longer, not a keyword of the completion file's language) that the given prefix and suffix and the lines taken so far lack: import
// lines from the top, declaration headers nearest the cut first, then the other lines
// nearest the cut first. A left-truncated prompt loses the trimmed lines; the outline
// keeps the names they introduced in sight for a fraction of their tokens. ok is false
// when no line qualifies.
func prefixOutline(h repoctx.Hole, split Split, budget int, tc repoctx.TokenCounter) (repoctx.Part, bool) {
	far := h.Prefix[:split.PrefixCut]
	if far == "" {
		return repoctx.Part{}, false
	}
	spec := grammars.ForPath(h.Path)
	counts := func(id string) bool { return len(id) >= 2 && (spec == nil || !spec.IsKeyword(id)) }
	known := map[string]bool{}
	note := func(s string) {
		eachIdent(s, func(id string) {
			if counts(id) {
				known[id] = true
			}
		})
	}
	note(split.Prefix)
	note(split.Suffix)
	lines := strings.SplitAfter(strings.TrimSuffix(far, "\n"), "\n")
	var imports, decls, rest []int
	for i, l := range lines {
		switch t := strings.TrimSpace(l); {
		case t == "" || len(l) > maxOutlineLine:
		case importLine.MatchString(l):
			imports = append(imports, i)
		case declLine.MatchString(l):
			decls = append(decls, i)
		default:
			rest = append(rest, i)
		}
	}
	reverse := func(s []int) []int {
		for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
			s[i], s[j] = s[j], s[i]
		}
		return s
	}
	lc := newLineCounter(tc)
	left := float64(budget) - lc.text(header(repoctx.Part{Path: h.Path}))
	var taken []int
	for _, i := range append(append(imports, reverse(decls)...), reverse(rest)...) {
		l := strings.TrimSuffix(lines[i], "\n") + "\n"
		fresh := false
		eachIdent(l, func(id string) { fresh = fresh || !known[id] && counts(id) })
		if !fresh {
			continue
		}
		n := lc.line(l)
		if n > left {
			continue
		}
		left -= n
		note(l)
		taken = append(taken, i)
	}
	if len(taken) == 0 {
		return repoctx.Part{}, false
	}
	sort.Ints(taken)
	var sb strings.Builder
	for _, i := range taken {
		sb.WriteString(strings.TrimSuffix(lines[i], "\n") + "\n")
	}
	return repoctx.Part{Path: h.Path, StartLine: taken[0] + 1, EndLine: taken[len(taken)-1] + 1,
		Text: sb.String(), Why: []string{"prefix-outline"}}, true
}

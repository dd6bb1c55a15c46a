package symbols

import (
	"regexp"
	"sort"
	"strings"
	"unicode"

	"github.com/repoctx/repoctx/grammars"
)

// Use is one identifier used near the cursor and how the text uses it: bare
// (`name(...)`, `name`) or after a receiver (`x.name`, `Foo.name`, `self.name`,
// `Foo::name`). [Table.ResolveUse] resolves it.
type Use struct {
	// Name is the identifier.
	Name string
	// Bare reports a use without a receiver.
	Bare bool
	// Qualifiers are the distinct receivers written before the name, nearest the
	// cursor first: a dotted chain of identifiers whose parts may be calls, their
	// arguments dropped (`a.b` in `a.b.name`, `self`, `Foo`, `Foo()`, `repo.find()`),
	// "super" for Kotlin's `super.name` and Python's `super().name`, or ExprReceiver
	// when the receiver is some other expression (an index, a literal, parentheses);
	// calls on such an expression follow it (`"s".f()` gives "().f()").
	Qualifiers []string
	// Dist is the distance in lines from the cursor line to the nearest use.
	Dist int
}

// ExprReceiver is the Use.Qualifiers entry of a receiver that is not a chain of
// identifiers (`f(x).name`, `xs[0].name`): a member use whose receiver type is unknown.
const ExprReceiver = "()"

var identRe = grammars.LazyRegexp(`[\p{L}_][\p{L}\p{N}_]*`)

// importLine matches the lines whose identifiers are module paths (imports, Kotlin's
// package header), in both languages.
var importLine = grammars.LazyRegexp(`^\s*(import\s|from\s+\S+\s+import\b|package\s)`)

// Uses returns the identifiers of before (the text right before the cursor, ending
// at it) and after (the text right after it) with how each is used, nearest the
// cursor first (then by name), leaving out identifiers shorter than 2 runes, the
// language's keywords (spec may be nil: none; a soft keyword that may name a
// definition only where the text uses it as a keyword, see IsReserved), identifiers
// inside string literals and comments on a line of their own, module path components
// on import lines and keyword-argument names (`f(name = x)`). Distances are in lines: the last line of
// before is 0, the first line of after is 0.
func Uses(before, after string, spec *grammars.Spec) []Use {
	byName := map[string]*Use{}
	var order []string
	note := func(line string, dist int) {
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "//") || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "*") || strings.HasPrefix(t, "/*") {
			return
		}
		imports := importLine.Regexp().MatchString(line)
		strs := stringSpans(line)
		for _, loc := range identRe.Regexp().FindAllStringIndex(line, -1) {
			name := line[loc[0]:loc[1]]
			if len(name) < 2 || IsReserved(spec, name) || inSpans(strs, loc[0]) {
				continue
			}
			if spec != nil && spec.IsKeyword(name) && !isNameUse(line, loc[0], loc[1]) {
				continue // a soft keyword used as one (`data class`)
			}
			if loc[0] > 0 && unicode.IsDigit(rune(line[loc[0]-1])) {
				continue // 0x1F, 1e5, 10L
			}
			if imports && loc[1] < len(line) && line[loc[1]] == '.' {
				continue // a module path component
			}
			if keywordArgument(line, loc[0], loc[1]) {
				continue
			}
			q := ""
			if !imports {
				q = qualifier(line[:loc[0]])
			}
			u := byName[name]
			if u == nil {
				u = &Use{Name: name, Dist: dist}
				byName[name] = u
				order = append(order, name)
			}
			u.Dist = min(u.Dist, dist)
			if q == "" {
				u.Bare = true
			} else if !containsString(u.Qualifiers, q) {
				u.Qualifiers = append(u.Qualifiers, q)
			}
		}
	}
	bl := strings.Split(before, "\n")
	// Nearest first: walk before from its end so that the nearest qualifier comes first.
	for i := len(bl) - 1; i >= 0; i-- {
		note(bl[i], len(bl)-1-i)
	}
	for i, l := range strings.Split(after, "\n") {
		note(l, i)
	}
	out := make([]Use, 0, len(order))
	for _, n := range order {
		out = append(out, *byName[n])
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Dist != out[j].Dist {
			return out[i].Dist < out[j].Dist
		}
		return out[i].Name < out[j].Name
	})
	return out
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// stringSpans returns the byte ranges of the string literals of one line (quotes
// included; an unterminated literal runs to the line's end). Escapes are honoured;
// Kotlin templates and Python f-strings count as string text.
func stringSpans(line string) [][2]int {
	var out [][2]int
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c != '"' && c != '\'' {
			continue
		}
		j := i + 1
		for j < len(line) && line[j] != c {
			if line[j] == '\\' {
				j++
			}
			j++
		}
		out = append(out, [2]int{i, min(j+1, len(line))})
		i = j
	}
	return out
}

func inSpans(spans [][2]int, at int) bool {
	for _, s := range spans {
		if at >= s[0] && at < s[1] {
			return true
		}
	}
	return false
}

// keywordArgument reports whether the identifier at line[start:end] names an
// argument (`f(name = x)`, `f(a, name=x)`): followed by one '=' and preceded by '('
// or ','.
func keywordArgument(line string, start, end int) bool {
	rest := strings.TrimLeft(line[end:], " \t")
	if !strings.HasPrefix(rest, "=") || strings.HasPrefix(rest, "==") {
		return false
	}
	head := strings.TrimRight(line[:start], " \t")
	return strings.HasSuffix(head, "(") || strings.HasSuffix(head, ",")
}

// qualifier returns the receiver written right before an identifier whose line text
// before it is head: "" for none, a dotted chain whose parts may be calls
// (`a.b`, `Foo()`, `repo.find()`, `Moshi.Builder().add()`: a call's arguments are
// dropped), "super" or ExprReceiver (see Use).
func qualifier(head string) string {
	h := strings.TrimRight(head, " \t")
	switch {
	case strings.HasSuffix(h, "?."), strings.HasSuffix(h, "!!."):
		h = strings.TrimSuffix(strings.TrimSuffix(h, "?."), "!!.")
	case strings.HasSuffix(h, "::"):
		h = strings.TrimSuffix(h, "::")
		if h == "" || !IsIdentByte(h[len(h)-1]) {
			return "" // ::name, a reference to a top-level or member function
		}
	case strings.HasSuffix(h, "."):
		h = strings.TrimSuffix(h, ".")
	default:
		return ""
	}
	var parts []string
	for {
		h = strings.TrimRight(h, " \t")
		call := false
		if strings.HasSuffix(h, ")") {
			open := openingParen(h)
			if open < 0 {
				return ExprReceiver
			}
			h, call = h[:open], true
		}
		i := len(h)
		for i > 0 && IsIdentByte(h[i-1]) {
			i--
		}
		if i == len(h) || h[i] >= '0' && h[i] <= '9' {
			if len(parts) > 0 && strings.HasSuffix(parts[0], "()") {
				// `"s".f().name`: a call on an expression, typed by f's return type.
				return ExprReceiver + "." + strings.Join(parts, ".")
			}
			return ExprReceiver // `(a + b).name`, `"s".name`, `xs[0].name`, `1.name`
		}
		p := h[i:]
		if call {
			p += "()"
		}
		parts = append([]string{p}, parts...)
		h = h[:i]
		switch {
		case strings.HasSuffix(h, "?."), strings.HasSuffix(h, "!!."):
			h = strings.TrimSuffix(strings.TrimSuffix(h, "?."), "!!.")
		case strings.HasSuffix(h, ".") && !strings.HasSuffix(h, ".."):
			h = strings.TrimSuffix(h, ".")
		case strings.HasSuffix(h, "\\") && len(h) > 1 && IsIdentByte(h[len(h)-2]):
			h = strings.TrimSuffix(h, "\\") // PHP's `App\Util\Money::`: a namespace path
		default:
			if parts[0] == "super()" || parts[0] == "super" {
				parts[0] = "super"
			}
			return strings.Join(parts, ".")
		}
	}
}

// openingParen returns the index of the '(' that matches the ')' ending h, or -1.
func openingParen(h string) int {
	depth := 0
	for i := len(h) - 1; i >= 0; i-- {
		switch h[i] {
		case ')':
			depth++
		case '(':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// IsIdentByte reports whether b may be part of an identifier: an ASCII letter or digit,
// '_', or any byte of a non-ASCII character.
func IsIdentByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b >= 0x80
}

// Scope is what the current text of a file being edited declares around a cursor,
// read from the text with per-language patterns rather than a parse (the text
// around a hole is often not valid code): the declared types of variables,
// parameters and attributes (`val x: Foo`, `x = Foo(...)`, a parameter `x: Foo`,
// `self.x = Foo(...)`, `x is Foo`, `isinstance(x, Foo)`), the names the functions
// around the cursor declare (parameters, locals), and the class around the cursor.
// The functions and the class around the cursor are found by indentation; types are
// read from the whole text (the declaration nearest before the cursor wins), which
// can mistake one function's variable for another's of the same name.
type Scope struct {
	lang   string
	text   string
	cursor int
	types  map[string][]declared
	memo   map[string]string // TypeOf's answers
	lines  map[int]bool      // offsets of the lines read for declarations
	locals map[string]bool
	params map[string]bool
	class  string
}

type declared struct {
	at  int // byte offset in the text
	typ string
}

var (
	ktTyped     = grammars.LazyRegexp(`([\p{L}_][\p{L}\p{N}_]*)\s*:\s*([\p{L}_][\p{L}\p{N}_.]*)`)
	ktInit      = grammars.LazyRegexp(`\b(?:val|var)\s+([\p{L}_][\p{L}\p{N}_]*)[ \t]*=[ \t]*`)
	ktAssign    = grammars.LazyRegexp(`(?m)^[ \t]*((?:this\.)?[\p{L}_][\p{L}\p{N}_]*)[ \t]*=[ \t]*`)
	ktIs        = grammars.LazyRegexp(`([\p{L}_][\p{L}\p{N}_]*)\s+is\s+([\p{L}_][\p{L}\p{N}_.]*)`)
	ktLocal     = grammars.LazyRegexp(`\b(?:val|var)\s+([\p{L}_][\p{L}\p{N}_]*)`)
	ktDestruct  = grammars.LazyRegexp(`\b(?:val|var)\s*\(([^)]*)\)`)
	ktLambda    = grammars.LazyRegexp(`\{\s*\(?([\p{L}_][\p{L}\p{N}_ \t,:<>?]*?)\)?\s*->`)
	ktFor       = grammars.LazyRegexp(`\bfor\s*\(\s*\(?([\p{L}_][\p{L}\p{N}_ \t,]*?)\)?\s+in\b`)
	ktFun       = grammars.LazyRegexp(`\bfun\b`)
	ktClass     = grammars.LazyRegexp(`\b(?:class|object|interface)\s+([\p{L}_][\p{L}\p{N}_]*)`)
	ktNotTyped  = grammars.LazyRegexp(`\b(?:class|object|interface|fun)\s+$|\)\s*$`)
	pyTyped     = grammars.LazyRegexp(`(?:^|[(,]|\n)[ \t]*\*{0,2}((?:self\.)?[\p{L}_][\p{L}\p{N}_]*)[ \t]*:[ \t]*([^,=)\n]+)`)
	pyAssign    = grammars.LazyRegexp(`(?m)^[ \t]*((?:self\.)?[\p{L}_][\p{L}\p{N}_]*)[ \t]*=[ \t]*`)
	pyWith      = grammars.LazyRegexp(`\bwith\s+(?:[\p{L}_][\p{L}\p{N}_]*\.)*([A-Z][\p{L}\p{N}_]*)\(.*\)\s+as\s+([\p{L}_][\p{L}\p{N}_]*)`)
	pyIsinst    = grammars.LazyRegexp(`isinstance\(\s*((?:self\.)?[\p{L}_][\p{L}\p{N}_]*)\s*,\s*([\p{L}_][\p{L}\p{N}_.]*)\s*\)`)
	pyLocal     = grammars.LazyRegexp(`(?m)^[ \t]*([\p{L}_][\p{L}\p{N}_]*(?:[ \t]*,[ \t]*[\p{L}_][\p{L}\p{N}_]*)*)[ \t]*(?::[^=\n]*)?=[^=]`)
	pyFor       = grammars.LazyRegexp(`\bfor\s+\(?([\p{L}_][\p{L}\p{N}_ \t,]*?)\)?\s+in\b`)
	pyAs        = grammars.LazyRegexp(`\bas\s+([\p{L}_][\p{L}\p{N}_]*)`)
	pyWalrus    = grammars.LazyRegexp(`([\p{L}_][\p{L}\p{N}_]*)\s*:=`)
	pyLambda    = grammars.LazyRegexp(`\blambda\s+([^:]*):`)
	pyLocalDef  = grammars.LazyRegexp(`(?m)^[ \t]+(?:async[ \t]+)?(?:def|class)[ \t]+([\p{L}_][\p{L}\p{N}_]*)`)
	ktLocalDef  = grammars.LazyRegexp(`\b(?:fun|class|object)\s+(?:<[^>]*>\s*)?([\p{L}_][\p{L}\p{N}_]*)`)
	pyDef       = grammars.LazyRegexp(`^\s*(?:async\s+)?def\s+[\p{L}_][\p{L}\p{N}_]*\s*\(`)
	pyClass     = grammars.LazyRegexp(`^\s*class\s+([\p{L}_][\p{L}\p{N}_]*)`)
	pyTypeWraps = map[string]bool{"Optional": true, "Annotated": true, "Final": true, "ClassVar": true, "Union": true}
)

// NewScope reads the scope of the cursor at byte offset cursor of text (the current
// text of a file in language lang, "kotlin" or "python"; other languages get an
// empty scope). Declared types are read lazily, on the lines where a receiver
// [Scope.TypeOf] is asked about occurs; a Scope is not safe for concurrent use.
func NewScope(lang, text string, cursor int) *Scope {
	cursor = max(0, min(cursor, len(text)))
	s := &Scope{lang: lang, text: text, cursor: cursor, types: map[string][]declared{}, memo: map[string]string{},
		lines: map[int]bool{}, locals: map[string]bool{}, params: map[string]bool{}}
	lines := strings.Split(text, "\n")
	starts := make([]int, len(lines))
	for i, off := 1, 0; i < len(lines); i++ {
		off += len(lines[i-1]) + 1
		starts[i] = off
	}
	cur := sort.Search(len(starts), func(i int) bool { return starts[i] > cursor }) - 1
	fns, class := enclosing(lang, lines, cur)
	s.class = class
	switch lang {
	case "kotlin":
		s.kotlin(text, lines, starts, fns)
	case "python":
		s.python(text, lines, starts, fns)
	}
	return s
}

// indentOf returns the width of line's leading white space (a tab counts 4).
func indentOf(line string) int {
	n := 0
	for _, r := range line {
		switch r {
		case ' ':
			n++
		case '\t':
			n += 4
		default:
			return n
		}
	}
	return n
}

// fnSpan is a function's lines: [start, end).
type fnSpan struct{ start, end int }

// enclosing finds, by indentation, the functions around line cur, innermost first
// (nested functions see their outer functions' names), up to the class around them,
// and the name of that class ("" when none).
func enclosing(lang string, lines []string, cur int) (fns []fnSpan, class string) {
	if cur < 0 || cur >= len(lines) || lang != "kotlin" && lang != "python" {
		return nil, ""
	}
	// The cursor's indentation: that of the nearest non-blank line at or above it,
	// one more when that line opens a block.
	ref := cur
	for ref > 0 && strings.TrimSpace(lines[ref]) == "" {
		ref--
	}
	level := indentOf(lines[ref])
	if t := strings.TrimSpace(lines[ref]); strings.HasSuffix(t, ":") || strings.HasSuffix(t, "{") || strings.HasSuffix(t, "->") || strings.HasSuffix(t, "=") {
		level++
	}
	if ref == cur && strings.TrimSpace(lines[cur]) != "" {
		level = max(level, indentOf(lines[cur]))
	}
	isDef := func(l string) bool {
		if lang == "python" {
			return pyDef.Regexp().MatchString(l)
		}
		return ktFun.Regexp().MatchString(l) && !strings.HasPrefix(strings.TrimSpace(l), "//")
	}
	className := func(l string) string {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "//") || strings.HasPrefix(t, "*") || strings.HasPrefix(t, "#") {
			return ""
		}
		var m []string
		if lang == "python" {
			m = pyClass.Regexp().FindStringSubmatch(l)
		} else {
			m = ktClass.Regexp().FindStringSubmatch(l)
		}
		if m == nil {
			return ""
		}
		return m[1]
	}
	var indents []int
	for i := ref; i >= 0 && level > 0; i-- {
		l := lines[i]
		if strings.TrimSpace(l) == "" {
			continue
		}
		ind := indentOf(l)
		if ind >= level || closesBracket(l) {
			continue // inside the block, or the end of a multi-line header: `) -> None:`
		}
		level = ind
		if isDef(l) {
			fns, indents = append(fns, fnSpan{i, len(lines)}), append(indents, ind)
			continue
		}
		if c := className(l); c != "" {
			class = c
			break
		}
	}
	for k := range fns {
		for i := max(cur, fns[k].start) + 1; i < len(lines); i++ {
			if t := strings.TrimSpace(lines[i]); t != "" && indentOf(lines[i]) <= indents[k] && t != "}" && !closesBracket(t) {
				fns[k].end = i
				break
			}
		}
	}
	return fns, class
}

// closesBracket reports whether a line starts with a closing parenthesis or bracket:
// the end of a multi-line header or call (`) -> None:`), not a statement.
func closesBracket(l string) bool {
	t := strings.TrimSpace(l)
	return strings.HasPrefix(t, ")") || strings.HasPrefix(t, "]")
}

// window returns the text of lines [from, to) and its byte offset.
func window(text string, starts []int, from, to int) (string, int) {
	a := starts[from]
	b := len(text)
	if to < len(starts) {
		b = starts[to]
	}
	return text[a:b], a
}

// scanLine notes the type declarations of the text line starting at byte offset at.
func (s *Scope) scanLine(line string, at int) {
	switch s.lang {
	case "kotlin":
		for _, m := range ktTyped.Regexp().FindAllStringSubmatchIndex(line, -1) {
			if head := line[:m[0]]; ktNotTyped.Regexp().MatchString(head) || strings.HasSuffix(strings.TrimSpace(head), "@") {
				continue // `class A : B` (a supertype), `fun f(): T` (a return type), annotations
			}
			s.declare(line[m[2]:m[3]], line[m[4]:m[5]], at+m[0])
		}
		for _, m := range ktIs.Regexp().FindAllStringSubmatchIndex(line, -1) {
			s.declare(line[m[2]:m[3]], line[m[4]:m[5]], at+m[0])
		}
		for _, re := range []*regexp.Regexp{ktInit.Regexp(), ktAssign.Regexp()} {
			for _, m := range re.FindAllStringSubmatchIndex(line, -1) {
				s.declareExpr(strings.TrimPrefix(line[m[2]:m[3]], "this."), line[m[1]:], at+m[0])
			}
		}
	case "python":
		for _, m := range pyTyped.Regexp().FindAllStringSubmatchIndex(line, -1) {
			if !strings.Contains(line[max(0, m[0]-8):m[2]], "lambda") {
				s.declare(line[m[2]:m[3]], line[m[4]:m[5]], at+m[2])
			}
		}
		for _, m := range pyAssign.Regexp().FindAllStringSubmatchIndex(line, -1) {
			s.declareExpr(line[m[2]:m[3]], line[m[1]:], at+m[2])
		}
		for _, m := range pyWith.Regexp().FindAllStringSubmatchIndex(line, -1) {
			s.declare(line[m[4]:m[5]], line[m[2]:m[3]], at+m[4])
		}
		for _, m := range pyIsinst.Regexp().FindAllStringSubmatchIndex(line, -1) {
			s.declare(line[m[2]:m[3]], line[m[4]:m[5]], at+m[2])
		}
	}
}

// maxScanLines bounds the lines read for the declarations of one receiver.
const maxScanLines = 512

// lineAt returns the bounds of the line holding byte offset i of the text.
func (s *Scope) lineAt(i int) (int, int) {
	ls := strings.LastIndexByte(s.text[:i], '\n') + 1
	le := strings.IndexByte(s.text[i:], '\n')
	if le < 0 {
		return ls, len(s.text)
	}
	return ls, i + le
}

// isWord reports whether the occurrence of a name of n bytes at byte offset i of the
// text is a whole identifier.
func (s *Scope) isWord(i, n int) bool {
	return (i == 0 || !IsIdentByte(s.text[i-1])) && (i+n == len(s.text) || !IsIdentByte(s.text[i+n]))
}

// typeOf finds the declaration of chain nearest before the cursor, else the first
// after it, reading (lazily, nearest first, at most maxScanLines lines each way) the
// lines where the chain's last identifier occurs: reading every line of a large file
// would cost more than the rest of a composition.
func (s *Scope) typeOf(chain string) string {
	name := chain
	if i := strings.LastIndexByte(chain, '.'); i >= 0 {
		name = chain[i+1:]
	}
	if name == "" {
		return ""
	}
	scan := func(i int) (int, int) {
		ls, le := s.lineAt(i)
		if !s.lines[ls] {
			s.lines[ls] = true
			s.scanLine(s.text[ls:le], ls)
		}
		return ls, le
	}
	found := func(before bool) string {
		best, bestAt := "", -1
		for _, d := range s.types[chain] {
			switch {
			case before && d.at < s.cursor && d.at > bestAt:
				best, bestAt = d.typ, d.at
			case !before && d.at >= s.cursor && (bestAt < 0 || d.at < bestAt):
				best, bestAt = d.typ, d.at
			}
		}
		return best
	}
	cursor := min(s.cursor, len(s.text))
	for pos, n := cursor, 0; pos > 0 && n < maxScanLines; {
		i := strings.LastIndex(s.text[:pos], name)
		if i < 0 {
			break
		}
		pos = i
		if !s.isWord(i, len(name)) {
			continue
		}
		n++
		pos, _ = scan(i)
		if t := found(true); t != "" {
			return t
		}
	}
	for pos, n := cursor, 0; pos < len(s.text) && n < maxScanLines; {
		i := strings.Index(s.text[pos:], name)
		if i < 0 {
			break
		}
		i += pos
		pos = i + len(name)
		if !s.isWord(i, len(name)) {
			continue
		}
		n++
		_, pos = scan(i)
		if t := found(false); t != "" {
			return t
		}
	}
	return found(true) // a declaration before the cursor on a line read going forward
}

func (s *Scope) declare(chain, typ string, at int) {
	typ = typeChain(s.lang, typ)
	if chain == "" || typ == "" {
		return
	}
	s.types[chain] = append(s.types[chain], declared{at, typ})
}

// declareExpr notes that chain is assigned the expression at the start of rhs (the
// text after the '='), when that expression is a receiver chain ending its line
// (`repo.find(id)`, `Foo()`, `a.b`), or a Kotlin cast (`x as Foo`).
func (s *Scope) declareExpr(chain, rhs string, at int) {
	line := rhs
	if i := strings.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	expr, n := leadingChain(line)
	if expr == "" || chain == "" {
		return
	}
	rest := strings.TrimSpace(line[n:])
	switch {
	case s.lang == "kotlin" && strings.HasPrefix(rest, "as "):
		s.declare(chain, strings.TrimPrefix(strings.TrimPrefix(rest, "as "), "?"), at)
	case rest == "", strings.HasPrefix(rest, "//"), strings.HasPrefix(rest, "#"):
		s.types[chain] = append(s.types[chain], declared{at, "=" + expr})
	}
}

// leadingChain reads the receiver chain that line starts with (identifiers joined by
// '.', '?.' or '!!.', each optionally called: `a.b(x).c` gives "a.b().c"; a Kotlin
// trailing lambda counts as a call; a call left open at the line's end too) and
// returns it with the bytes it spans.
func leadingChain(line string) (string, int) {
	i := len(line) - len(strings.TrimLeft(line, " \t"))
	var parts []string
	for {
		loc := identRe.Regexp().FindStringIndex(line[i:])
		if loc == nil || loc[0] != 0 {
			break
		}
		p := line[i : i+loc[1]]
		i += loc[1]
		if i < len(line) && line[i] == '<' { // Kotlin type arguments of a call: listOf<T>()
			if j := closingAngle(line[i:]); j > 0 && i+j+1 < len(line) && line[i+j+1] == '(' {
				i += j + 1
			}
		}
		if i < len(line) && line[i] == '(' {
			j := closing(line[i+1:])
			p += "()"
			if j < 0 {
				parts = append(parts, p)
				return strings.Join(parts, "."), len(line)
			}
			i += j + 2
		}
		if t := strings.TrimLeft(line[i:], " "); strings.HasPrefix(t, "{") && !strings.HasSuffix(p, "()") {
			p += "()" // a trailing lambda: the rest is its body
			parts = append(parts, p)
			return strings.Join(parts, "."), len(line)
		}
		parts = append(parts, p)
		switch {
		case strings.HasPrefix(line[i:], "?."):
			i += 2
		case strings.HasPrefix(line[i:], "!!."):
			i += 3
		case i < len(line) && line[i] == '.':
			i++
		default:
			if strings.HasPrefix(line[i:], "!!") {
				i += 2
			}
			return strings.Join(parts, "."), i
		}
	}
	return strings.Join(parts, "."), i
}

func (s *Scope) kotlin(text string, lines []string, starts []int, fns []fnSpan) {
	// Class or file level declarations are definitions the parse finds; those of the
	// functions around the cursor are not.
	for _, fn := range fns {
		s.kotlinLocals(text, lines, starts, fn)
	}
}

// kotlinLocals notes the parameters and local declarations of one function.
func (s *Scope) kotlinLocals(text string, lines []string, starts []int, fn fnSpan) {
	w, _ := window(text, starts, fn.start, fn.end)
	for _, re := range []*regexp.Regexp{ktLocal.Regexp(), ktLocalDef.Regexp()} {
		for _, m := range re.FindAllStringSubmatch(w, -1) {
			s.locals[m[1]] = true
		}
	}
	for _, re := range []*regexp.Regexp{ktDestruct.Regexp(), ktLambda.Regexp(), ktFor.Regexp()} {
		for _, m := range re.FindAllStringSubmatch(w, -1) {
			for _, p := range strings.Split(m[1], ",") {
				if f := strings.Fields(strings.SplitN(p, ":", 2)[0]); len(f) == 1 {
					s.locals[f[0]] = true
				}
			}
		}
	}
	// Parameters: the `name:` entries of the function's header, up to its body.
	hdr := lines[fn.start]
	for i := fn.start + 1; i < len(lines) && i < fn.start+30 && !strings.ContainsAny(hdr, "{="); i++ {
		hdr += "\n" + lines[i]
	}
	if i := strings.IndexByte(hdr, '('); i >= 0 {
		for _, m := range ktTyped.Regexp().FindAllStringSubmatch(hdr[i:], -1) {
			s.params[m[1]] = true
			s.locals[m[1]] = true
		}
	}
	for _, m := range ktTyped.Regexp().FindAllStringSubmatchIndex(w, -1) {
		head := w[strings.LastIndexByte(w[:m[0]], '\n')+1 : m[0]]
		if !ktNotTyped.Regexp().MatchString(head) {
			s.locals[w[m[2]:m[3]]] = true
		}
	}
}

func (s *Scope) python(text string, lines []string, starts []int, fns []fnSpan) {
	var ws []string
	for _, fn := range fns {
		w, _ := window(text, starts, fn.start, fn.end)
		ws = append(ws, w)
		// Parameters: the function header's names, up to the closing parenthesis.
		hdr, _ := window(text, starts, fn.start, min(len(lines), fn.start+40))
		if i := strings.IndexByte(hdr, '('); i >= 0 {
			depth, from := 0, i+1
			for j := i; j < len(hdr); j++ {
				switch hdr[j] {
				case '(', '[', '{':
					depth++
				case ')', ']', '}':
					depth--
				}
				if depth == 1 && hdr[j] == ',' || depth == 0 {
					p := strings.TrimLeft(strings.TrimSpace(hdr[from:j]), "*")
					if m := identRe.Regexp().FindString(p); m != "" && strings.HasPrefix(p, m) {
						s.params[m] = true
						s.locals[m] = true
					}
					from = j + 1
				}
				if depth == 0 {
					break
				}
			}
		}
	}
	// The file's module-level assignments are its globals: declared here too.
	var top strings.Builder
	for _, l := range lines {
		if l != "" && indentOf(l) == 0 {
			top.WriteString(l)
			top.WriteByte('\n')
		}
	}
	w := strings.Join(ws, "\n")
	for _, t := range []string{w, top.String()} {
		for _, m := range pyLocal.Regexp().FindAllStringSubmatch(t, -1) {
			for _, p := range strings.Split(m[1], ",") {
				s.locals[strings.TrimSpace(p)] = true
			}
		}
	}
	for _, re := range []*regexp.Regexp{pyFor.Regexp(), pyLambda.Regexp()} {
		for _, m := range re.FindAllStringSubmatch(w, -1) {
			for _, p := range strings.Split(m[1], ",") {
				if n := identRe.Regexp().FindString(p); n != "" {
					s.locals[n] = true
				}
			}
		}
	}
	for _, re := range []*regexp.Regexp{pyAs.Regexp(), pyWalrus.Regexp(), pyLocalDef.Regexp()} {
		for _, m := range re.FindAllStringSubmatch(w, -1) {
			s.locals[m[1]] = true
		}
	}
}

// typeName reduces a written type to the class name to look members up in: the last
// component of a qualified name, without type arguments, nullability or quotes;
// Python's Optional[X], Annotated[X, ...], X | None give X. "" when there is none.
func typeName(lang, t string) string {
	c := typeChain(lang, t)
	if i := strings.LastIndexByte(c, '.'); i >= 0 {
		return c[i+1:]
	}
	return c
}

// typeChain is typeName keeping the qualification (`httpx.Response`).
func typeChain(lang, t string) string {
	t = strings.TrimSpace(t)
	for {
		t = strings.Trim(t, `"' `)
		m := identChain(t)
		if m == "" {
			return ""
		}
		last := m
		if i := strings.LastIndexByte(m, '.'); i >= 0 {
			last = m[i+1:]
		}
		rest := strings.TrimSpace(t[len(m):])
		if lang == "python" && pyTypeWraps[last] && strings.HasPrefix(rest, "[") {
			t = rest[1:]
			continue
		}
		if lang == "python" && last == "None" && strings.HasPrefix(rest, "|") {
			t = rest[1:]
			continue
		}
		return m
	}
}

// identChain returns the dotted identifier chain t starts with.
func identChain(t string) string {
	end := 0
	for {
		loc := identRe.Regexp().FindStringIndex(t[end:])
		if loc == nil || loc[0] != 0 {
			break
		}
		end += loc[1]
		if end < len(t) && t[end] == '.' && end+1 < len(t) && IsIdentByte(t[end+1]) {
			end++
			continue
		}
		break
	}
	return t[:end]
}

// TypeOf returns the declared type of a receiver chain (`x`, `self.x`, `this.x`): a
// class name, possibly qualified (`httpx.Response`), or "=" followed by the receiver
// chain of the expression assigned to it (`=repo.find()`: see Use.Qualifiers), which
// [Table.ResolveUse] types. The declaration nearest before the cursor wins, else the
// first after it; "" when the text declares none. `self` and `this` themselves are
// the class around the cursor.
func (s *Scope) TypeOf(chain string) string {
	if s == nil {
		return ""
	}
	if chain == "self" || chain == "cls" || chain == "this" {
		return s.class
	}
	if s.lang == "kotlin" {
		chain = strings.TrimPrefix(chain, "this.")
	}
	if t, ok := s.memo[chain]; ok {
		return t
	}
	t := s.typeOf(chain)
	if t == "" && s.lang == "python" && strings.HasPrefix(chain, "self.") {
		t = s.typeOf(strings.TrimPrefix(chain, "self.")) // a class-level annotation
	}
	s.memo[chain] = t
	return t
}

// Local reports whether one of the functions around the cursor declares name (a
// parameter, a local variable, a loop or lambda variable, a nested function or
// class) or a Python file assigns it at module level: a bare use then refers to that
// declaration, not to a definition elsewhere.
func (s *Scope) Local(name string) bool { return s != nil && s.locals[name] }

// Param reports whether name is a parameter of one of the functions around the cursor.
func (s *Scope) Param(name string) bool { return s != nil && s.params[name] }

// Class returns the name of the innermost class around the cursor, or "".
func (s *Scope) Class() string {
	if s == nil {
		return ""
	}
	return s.class
}

package kotlin

// Token rewrites for Kotlin: one pass of a small lexer over the source (strings with
// templates, nested block comments, character literals, brackets, `when` bodies) that
// replaces constructs a grammar mis-parses by constructs of the same length that it
// parses. The rewritten text is only parsed: names, signatures and chunk text are read
// from the original, so a rewrite only has to keep the structure (which node spans
// which bytes), not the meaning. Measured on three Kotlin 2.x repositories (docs/languages.md,
// "Kotlin grammars"); TestKotlinRuleSurvey attributes error files to the rules.
//
// This file has the scanner and the rules both grammars need. The rules only one
// grammar needs are beside it, in fwcd.go (fwcd 0.3.8, a build without the tag
// kotlin2) and kotlin2.go (tree-sitter-grammars 1.1.0, with the tag): each defines
// grammarRules (the flags of its rules, embedded in kotlinRules), grammarState
// (what its rules track, embedded in ktRewriter) and the hooks the scanner calls at
// fixed points (initGrammar, grammarNumber, grammarLineBreak, grammarWhenIn,
// grammarToken, grammarOp, grammarIdent, grammarAnnotation), empty where that
// grammar has no rule.

// kotlinRules selects the rewrites of rewriteKotlinTokens.
type kotlinRules struct {
	// WhenGuard: a guard in a `when` branch with a subject (Kotlin 2.1,
	// `is T if cond ->`) becomes a second condition: the `if` becomes ", "; for
	// `else if cond ->` the `else` also becomes `true`. Neither grammar has guards.
	WhenGuard bool
	// Context: a context-parameter or context-receiver clause before a declaration
	// (`context(log: Log) fun f()`) becomes an annotation with no arguments:
	// `@ontext(        )`. Neither grammar has the clause.
	Context bool
	// MultiDollar: a multi-dollar string (Kotlin 2.2, `$$"{"a": $$x}"`) becomes a
	// plain one: the prefix becomes spaces, a literal `$` becomes `_`, and the n `$` of
	// an interpolation become n-1 `_` and one `$`. Neither grammar has them.
	MultiDollar bool
	// SoftNames: a soft or modifier keyword used as a name gets an upper-case first
	// letter, in positions where it can only be a name: after `.`, `?.`, `::`, `fun`,
	// `val`, `var`; before `.`, `?.`, `?:`, `!!`, `[`, `=`; a modifier keyword called
	// (`open()`, `suspend { }`); `get`/`set` called (`get("/") { }`, `get(i)`) or infix
	// (`insert { } get T.id`). Both grammars end a class or a statement early there.
	SoftNames bool
	// NullableRef (both grammars): the `?` of a callable reference on a nullable type
	// (`String?::plus`) becomes a space.
	NullableRef bool
	// grammarRules are the rules only the compiled-in grammar needs: fwcd.go's (a
	// build without the tag kotlin2) or kotlin2.go's.
	grammarRules
}

type ktFrameKind uint8

const (
	ktBrace    ktFrameKind = iota // { } of a block, body or lambda
	ktParen                       // ( )
	ktBracket                     // [ ]
	ktWhen                        // { } of a when with a subject
	ktTemplate                    // ${ } inside a string
	ktString                      // a string literal's content
)

type ktFrame struct {
	kind ktFrameKind
	// ktString: the number of `$` that start an interpolation (1, or the prefix
	// length of a multi-dollar string), raw for """ strings, and whether to rewrite
	// its dollars (MultiDollar).
	dollars     int
	raw, redo   bool
	whenSubject bool // ktParen: the subject of a when
	// ktWhen: in a branch's conditions (before its ->), tokens of the branch so far,
	// the offset of a leading `else` (-1 if none), a line break seen since the last token.
	cond      bool
	entryToks int
	elseAt    int
	newline   bool
	entries   int // branches started so far
}

type ktTokKind uint8

const (
	ktNone   ktTokKind = iota
	ktIdent            // identifier or keyword
	ktNumber           // number literal
	ktStrEnd           // closing quote of a string
	ktOp               // punctuation; op holds it
)

type ktRewriter struct {
	src, out []byte
	copied   bool
	r        kotlinRules
	stack    []ktFrame
	// The last significant token: kind, span, its operator byte(s), and whether a
	// line break came after it.
	prev       ktTokKind
	prevS      int
	prevE      int
	prevOp     string
	prevNL     bool
	expectWhen bool // a when's subject just closed: a `{` opens its body
	//lint:ignore U1000 used by the fwcd build's rules (fwcd.go); empty with kotlin2
	grammarState // the state of the compiled-in grammar's rules
}

// rewriteKotlinTokens returns src with the constructs r selects rewritten, or src
// itself when there is nothing to rewrite. The result has src's length.
func rewriteKotlinTokens(src []byte, r kotlinRules) []byte {
	w := &ktRewriter{src: src, out: src, r: r}
	w.initGrammar()
	w.run()
	return w.out
}

func (w *ktRewriter) set(i int, b byte) {
	if w.out[i] == b {
		return
	}
	if !w.copied {
		w.out = append([]byte(nil), w.src...)
		w.copied = true
	}
	w.out[i] = b
}

// blank replaces [s, e) by spaces, keeping line breaks.
func (w *ktRewriter) blank(s, e int) {
	for i := s; i < e; i++ {
		if c := w.src[i]; c != '\n' && c != '\r' {
			w.set(i, ' ')
		}
	}
}

func (w *ktRewriter) top() *ktFrame {
	if len(w.stack) == 0 {
		return nil
	}
	return &w.stack[len(w.stack)-1]
}

func (w *ktRewriter) push(f ktFrame) { w.stack = append(w.stack, f) }

func (w *ktRewriter) pop() { w.stack = w.stack[:len(w.stack)-1] }

func isKtIdentStart(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c >= 0x80
}

func isKtIdentByte(c byte) bool { return isKtIdentStart(c) || '0' <= c && c <= '9' }

func (w *ktRewriter) run() {
	src := w.src
	for i := 0; i < len(src); {
		if f := w.top(); f != nil && f.kind == ktString {
			i = w.stringContent(i, f)
			continue
		}
		c := src[i]
		switch {
		case c == '\n':
			w.lineBreak()
			i++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f':
			i++
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			i = skipKtBlockComment(src, i)
		case c == '"':
			w.token(ktOp, i, i+1, "\"") // a string starts: counts as one token
			if i+2 < len(src) && src[i+1] == '"' && src[i+2] == '"' {
				w.push(ktFrame{kind: ktString, dollars: 1, raw: true})
				i += 3
			} else {
				w.push(ktFrame{kind: ktString, dollars: 1})
				i++
			}
		case c == '$':
			j := i
			for j < len(src) && src[j] == '$' {
				j++
			}
			if j < len(src) && src[j] == '"' && j-i >= 2 {
				f := ktFrame{kind: ktString, dollars: j - i, redo: w.r.MultiDollar}
				if f.redo {
					w.blank(i, j)
				}
				w.token(ktOp, j, j+1, "\"")
				if j+2 < len(src) && src[j+1] == '"' && src[j+2] == '"' {
					f.raw = true
					j += 2
				}
				w.push(f)
				i = j + 1
			} else {
				w.token(ktOp, i, j, "$")
				i = j
			}
		case c == '\'':
			i = skipKtChar(src, i)
			w.token(ktNumber, i-1, i, "")
		case '0' <= c && c <= '9':
			w.grammarNumber(i)
			j := i + 1
			for j < len(src) && (isKtIdentByte(src[j]) || src[j] == '.' && j+1 < len(src) && '0' <= src[j+1] && src[j+1] <= '9') {
				j++
			}
			w.token(ktNumber, i, j, "")
			i = j
		case isKtIdentStart(c):
			j := i + 1
			for j < len(src) && isKtIdentByte(src[j]) {
				j++
			}
			i = w.ident(i, j)
		case c == '`':
			j := i + 1
			for j < len(src) && src[j] != '`' && src[j] != '\n' {
				j++
			}
			if j < len(src) && src[j] == '`' {
				j++
			}
			w.token(ktNumber, i, j, "") // a quoted name: never a keyword
			i = j
		case c == '@':
			i = w.annotation(i)
		default:
			i = w.punct(i)
		}
	}
}

// lineBreak notes a line break for the innermost frame and the previous token.
func (w *ktRewriter) lineBreak() {
	w.prevNL = true
	w.grammarLineBreak()
	if f := w.top(); f != nil && f.kind == ktWhen {
		f.newline = true
	}
}

// token records a significant token and runs the `when` branch bookkeeping.
func (w *ktRewriter) token(kind ktTokKind, s, e int, op string) {
	if f := w.top(); f != nil && f.kind == ktWhen {
		if f.newline {
			f.newline = false
			if !f.cond && !w.continues(kind, s, e, op) {
				f.cond, f.entryToks, f.elseAt = true, 0, -1
			}
		}
		if f.cond {
			if kind == ktIdent && f.entryToks == 0 {
				switch string(w.src[s:e]) {
				case "else":
					f.elseAt = s
				case "in":
					w.grammarWhenIn(f, s)
				}
			}
			if f.entryToks == 0 {
				f.entries++
			}
			f.entryToks++
		}
	}
	if op != "{" {
		w.expectWhen = false
	}
	w.grammarToken(kind, s, e, op)
	w.prev, w.prevS, w.prevE, w.prevOp, w.prevNL = kind, s, e, op, false
}

// continues reports whether the token at [s, e), first on its line inside a `when`
// body after a branch's ->, continues that branch's expression rather than starting
// a new branch.
func (w *ktRewriter) continues(kind ktTokKind, s, e int, op string) bool {
	if !w.endsExpression() {
		return true
	}
	switch kind {
	case ktOp:
		switch op {
		case ".", "?.", "?:", "&&", "||", "*", "/", "%", "=", "==", "!=", ":", "::", "..", "<", ">", "<=", ">=":
			return true
		}
	case ktIdent:
		switch string(w.src[s:e]) {
		case "as":
			return true
		case "else": // `else ->` and a guard `else if c ->` start branches
			return !nextKtNonSpace(w.src, e, "->") && !(nextKtNonSpace(w.src, e, "if") && ktArrowOnLine(w.src, e))
		}
	}
	return false
}

// endsExpression reports whether the previous token can end an expression.
func (w *ktRewriter) endsExpression() bool {
	switch w.prev {
	case ktIdent:
		switch string(w.src[w.prevS:w.prevE]) {
		case "if", "else", "when", "is", "in", "as", "return", "throw", "val", "var", "fun", "try", "catch", "finally":
			return false
		}
		return true
	case ktNumber, ktStrEnd:
		return true
	case ktOp:
		switch w.prevOp {
		case ")", "]", "}", "!!", "++", "--":
			return true
		}
	}
	return false
}

// ktArrowOnLine reports whether `->` follows i on its line outside brackets.
func ktArrowOnLine(src []byte, i int) bool {
	depth := 0
	for k := i; k < len(src) && src[k] != '\n'; k++ {
		switch src[k] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		case '-':
			if depth == 0 && k+1 < len(src) && src[k+1] == '>' {
				return true
			}
		}
	}
	return false
}

// nextKtNonSpace reports whether src at i, after spaces and tabs, starts with s.
func nextKtNonSpace(src []byte, i int, s string) bool {
	for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
		i++
	}
	return len(src)-i >= len(s) && string(src[i:i+len(s)]) == s
}

// skipKtBlockComment returns the offset after the (nested) block comment at i.
func skipKtBlockComment(src []byte, i int) int {
	depth := 0
	for i < len(src) {
		switch {
		case src[i] == '/' && i+1 < len(src) && src[i+1] == '*':
			depth++
			i += 2
		case src[i] == '*' && i+1 < len(src) && src[i+1] == '/':
			depth--
			i += 2
			if depth == 0 {
				return i
			}
		default:
			i++
		}
	}
	return i
}

// skipKtChar returns the offset after the character literal at i ('a', '\n',
// '\u0041'), or i+1 when no literal closes within a few bytes.
func skipKtChar(src []byte, i int) int {
	for j := i + 1; j < len(src) && j < i+12; j++ {
		switch src[j] {
		case '\\':
			j++
		case '\'':
			return j + 1
		case '\n':
			return i + 1
		}
	}
	return i + 1
}

// stringContent scans string content from i up to the closing quote or an
// interpolation's start, rewriting dollars of a multi-dollar string.
func (w *ktRewriter) stringContent(i int, f *ktFrame) int {
	src := w.src
	for i < len(src) {
		c := src[i]
		switch {
		case c == '\\' && !f.raw:
			i += 2
			continue
		case c == '\n' && !f.raw:
			w.pop() // an unclosed string ends at the line break
			return i
		case c == '"':
			if !f.raw {
				w.pop()
				w.token(ktStrEnd, i, i+1, "")
				return i + 1
			}
			if i+2 < len(src) && src[i+1] == '"' && src[i+2] == '"' {
				j := i + 3
				for j < len(src) && src[j] == '"' { // """a"""" ends at the last three
					j++
				}
				w.pop()
				w.token(ktStrEnd, j-1, j, "")
				return j
			}
		case c == '$':
			j := i
			for j < len(src) && src[j] == '$' {
				j++
			}
			n := j - i
			interp := n >= f.dollars && j < len(src) && (src[j] == '{' || isKtIdentStart(src[j]))
			if f.redo {
				lit := n
				if interp {
					lit = n - 1
				}
				for k := i; k < i+lit; k++ {
					w.set(k, '_')
				}
			}
			if interp && src[j] == '{' {
				w.push(ktFrame{kind: ktTemplate})
				w.prev, w.prevOp = ktOp, "{"
				return j + 1
			}
			i = j
			continue
		}
		i++
	}
	return i
}

// punct handles the operator or bracket at i and returns the offset after it.
func (w *ktRewriter) punct(i int) int {
	src := w.src
	c := src[i]
	two := ""
	if i+1 < len(src) {
		two = ktTwoByteOp(c, src[i+1])
	}
	switch c {
	case '{':
		kind := ktBrace
		if w.expectWhen {
			kind = ktWhen
		}
		w.token(ktOp, i, i+1, "{")
		w.expectWhen = false
		w.push(ktFrame{kind: kind, cond: true, elseAt: -1})
		return i + 1
	case '}':
		for len(w.stack) > 0 {
			k := w.top().kind
			w.pop()
			if k == ktTemplate {
				w.prev, w.prevOp = ktOp, "}"
				return i + 1 // back in the string
			}
			if k == ktBrace || k == ktWhen {
				break
			}
		}
		w.token(ktOp, i, i+1, "}")
		return i + 1
	case '(':
		w.token(ktOp, i, i+1, "(")
		subject := w.prev == ktOp && w.prevS == i && w.whenBefore(i)
		w.push(ktFrame{kind: ktParen, whenSubject: subject})
		return i + 1
	case ')', ']':
		want := ktParen
		if c == ']' {
			want = ktBracket
		}
		subject := false
		if f := w.top(); f != nil && f.kind == want {
			subject = f.whenSubject
			w.pop()
		}
		w.token(ktOp, i, i+1, ktOneByteOp[c])
		w.expectWhen = subject
		return i + 1
	case '[':
		w.token(ktOp, i, i+1, "[")
		w.push(ktFrame{kind: ktBracket})
		return i + 1
	case ';':
		w.token(ktOp, i, i+1, ";")
		if f := w.top(); f != nil && f.kind == ktWhen {
			f.cond, f.entryToks, f.elseAt = true, 0, -1
		}
		return i + 1
	}
	w.grammarOp(i, two)
	switch two {
	case "->":
		w.token(ktOp, i, i+2, "->")
		if f := w.top(); f != nil && f.kind == ktWhen {
			f.cond = false
		}
		return i + 2
	case "?:":
		if w.r.NullableRef && i+2 < len(src) && src[i+2] == ':' {
			w.set(i, ' ') // String?::plus -> String ::plus
			w.token(ktOp, i+1, i+3, "::")
			return i + 3
		}
		w.token(ktOp, i, i+2, two)
		return i + 2
	case "?.", "::", "&&", "||", "==", "!=", "!!", "++", "--", "<=", ">=", "+=", "-=", "*=", "/=", "%=":
		w.token(ktOp, i, i+2, two)
		return i + 2
	case "..":
		w.token(ktOp, i, i+2, "..")
		return i + 2
	}
	w.token(ktOp, i, i+1, ktOneByteOp[c])
	return i + 1
}

// ktOneByteOp holds the one-byte strings, so that punct does not allocate.
var ktOneByteOp = func() (t [256]string) {
	for i := range t {
		t[i] = string([]byte{byte(i)})
	}
	return t
}()

// ktTwoByteOp returns the two-byte operator a b, or "".
func ktTwoByteOp(a, b byte) string {
	switch string([]byte{a, b}) {
	case "->":
		return "->"
	case "?.":
		return "?."
	case "?:":
		return "?:"
	case "&&":
		return "&&"
	case "||":
		return "||"
	case "==":
		return "=="
	case "!=":
		return "!="
	case "::":
		return "::"
	case "!!":
		return "!!"
	case "++":
		return "++"
	case "--":
		return "--"
	case "<=":
		return "<="
	case ">=":
		return ">="
	case "+=":
		return "+="
	case "-=":
		return "-="
	case "*=":
		return "*="
	case "/=":
		return "/="
	case "%=":
		return "%="
	case ".(":
		return ".("
	case "..":
		return ".."
	}
	return ""
}

// whenBefore reports whether the token before the `(` at i is the keyword when.
func (w *ktRewriter) whenBefore(i int) bool {
	j := i
	for j > 0 && (w.src[j-1] == ' ' || w.src[j-1] == '\t') {
		j--
	}
	return j >= 4 && string(w.src[j-4:j]) == "when" && (j == 4 || !isKtIdentByte(w.src[j-5]))
}

// ktModifier reports whether s is a Kotlin modifier keyword.
func ktModifier(s string) bool {
	switch s {
	case "abstract", "actual", "annotation", "companion", "const", "crossinline", "data", "enum",
		"expect", "external", "final", "infix", "inline", "inner", "internal", "lateinit",
		"noinline", "open", "operator", "out", "override", "private", "protected", "public",
		"reified", "sealed", "suspend", "tailrec", "value", "vararg":
		return true
	}
	return false
}

// ktSoft reports whether s is a soft keyword or a modifier keyword (a word that is a
// keyword only in some positions and may otherwise be a name).
func ktSoft(s string) bool {
	switch s {
	case "by", "constructor", "delegate", "dynamic", "field", "file", "get", "import", "init",
		"param", "property", "receiver", "set", "setparam", "where", "context":
		return true
	}
	return ktModifier(s)
}

// ktHard reports whether s is a hard keyword of Kotlin.
func ktHard(s string) bool {
	switch s {
	case "as", "break", "class", "continue", "do", "else", "false", "for", "fun", "if", "in",
		"interface", "is", "null", "object", "package", "return", "super", "this", "throw",
		"true", "try", "typealias", "typeof", "val", "var", "when", "while":
		return true
	}
	return false
}

// ktDeclStart reports whether s starts a declaration (after a context clause).
func ktDeclStart(s string) bool {
	switch s {
	case "fun", "val", "var", "class", "interface", "object", "typealias", "constructor", "context":
		return true
	}
	return ktModifier(s)
}

// ident handles the identifier or keyword at [s, e) and returns the offset to go on from.
func (w *ktRewriter) ident(s, e int) int {
	src := w.src
	word := string(src[s:e])
	prevDot := w.prev == ktOp && w.prevE == s && (w.prevOp == "." || w.prevOp == "?." || w.prevOp == "::")
	if word == "context" && w.r.Context && e < len(src) && src[e] == '(' && !prevDot &&
		!(w.prev == ktIdent && string(src[w.prevS:w.prevE]) == "fun") {
		inType := w.prev == ktOp && (w.prevOp == ":" || w.prevOp == "->" || w.prevOp == "<")
		if end := w.contextClause(e, inType); end > 0 {
			w.set(s, '@')
			w.blank(e+1, end-1)
			w.token(ktIdent, s, end, "")
			return end
		}
	}
	w.grammarIdent(s, word)
	if w.r.SoftNames && ktSoft(word) && w.softName(word, s, e, prevDot) {
		w.set(s, src[s]-'a'+'A')
	}
	w.token(ktIdent, s, e, "")
	if word == "if" {
		w.guard(s)
	}
	return e
}

// guard rewrites the `if` at s when it is a `when` branch's guard.
func (w *ktRewriter) guard(s int) {
	f := w.top()
	if !w.r.WhenGuard || f == nil || f.kind != ktWhen || !f.cond || f.entryToks < 2 {
		return // entryToks counts the if itself
	}
	if f.elseAt >= 0 && f.entryToks == 2 {
		copyRewrite(w, f.elseAt, "true")
	}
	w.set(s, ',')
	w.set(s+1, ' ')
}

func copyRewrite(w *ktRewriter, at int, s string) {
	for k := 0; k < len(s); k++ {
		w.set(at+k, s[k])
	}
}

// softName reports whether the soft keyword word at [s, e) is used as a name.
func (w *ktRewriter) softName(word string, s, e int, prevDot bool) bool {
	src := w.src
	if prevDot {
		return true
	}
	if w.prev == ktIdent {
		switch string(src[w.prevS:w.prevE]) {
		case "fun", "val", "var":
			return true
		}
	}
	j := e
	for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
		j++
	}
	next := byte(0)
	if j < len(src) {
		next = src[j]
	}
	next2 := byte(0)
	if j+1 < len(src) {
		next2 = src[j+1]
	}
	switch {
	case next == '.' && next2 != '.', next == '?' && (next2 == '.' || next2 == ':'), next == '!' && next2 == '!', next == '[':
		return true
	case next == '=' && next2 != '=' && next2 != '>':
		return true
	case next == ')' || next == ',' || next == '+' && next2 == '+' || next == '-' && next2 == '-':
		return true // no keyword is followed by these
	case (next == '}' || next == ';') && word != "get" && word != "set":
		return true // an accessor may end a line or a one-line body
	case next == ':' && next2 != ':' && w.prev == ktOp && (w.prevOp == "(" || w.prevOp == ","):
		return true // a parameter
	}
	switch word {
	case "get", "set":
		if next == '{' {
			return true
		}
		if j == e && next == '(' {
			return !w.accessorParams(word, e)
		}
		// infix: `insert { } get T.id`
		return j > e && w.prev != ktNone && !w.prevNL && w.prevS < s && w.endsExpression() &&
			!(w.prev == ktIdent && (ktSoft(string(src[w.prevS:w.prevE])) || ktHard(string(src[w.prevS:w.prevE])))) &&
			(isKtIdentStart(next) || next == '(' || next == '"' || '0' <= next && next <= '9')
	case "constructor", "init", "context", "where", "by", "import", "file", "field", "param",
		"property", "receiver", "setparam", "delegate", "dynamic":
		return false
	}
	// A modifier keyword called: `open()`, `suspend { }`, `suspend(w)` (but not the
	// function type `suspend() -> T`).
	if j == e && next == '(' && word == "suspend" {
		return !ktArrowAfterParens(src, j)
	}
	return j == e && next == '(' || next == '{'
}

// ktArrowAfterParens reports whether the parenthesised list at open (src[open] ==
// '(') is followed by `->` on the same line.
func ktArrowAfterParens(src []byte, open int) bool {
	depth := 0
	for k := open; k < len(src) && src[k] != '\n'; k++ {
		switch src[k] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return nextKtNonSpace(src, k+1, "->")
			}
		}
	}
	return false
}

// accessorParams reports whether the parameter list at e (src[e] == '(') is an
// accessor's: `get()` or `set(value)` / `set(value: T)`.
func (w *ktRewriter) accessorParams(word string, e int) bool {
	src := w.src
	j := e + 1
	for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
		j++
	}
	if j < len(src) && src[j] == ')' {
		return true // get() or set()
	}
	if word == "get" {
		return false
	}
	if j >= len(src) || !isKtIdentStart(src[j]) {
		return false
	}
	depth := 0
	for k := j; k < len(src) && k < e+200; k++ {
		switch src[k] {
		case '(', '<', '[':
			depth++
		case ']', '>':
			depth--
		case ')':
			if depth == 0 {
				return true
			}
			depth--
		case ',':
			if depth == 0 {
				return false
			}
		case '"', '\'', '\n', '{', '=':
			return false
		}
	}
	return false
}

// contextClause returns the offset after the `)` of the context clause whose `(` is
// at open, when a declaration follows it (or, inType, a function type: a name or
// `(`); else 0.
func (w *ktRewriter) contextClause(open int, inType bool) int {
	src := w.src
	depth := 0
	k := open
	for ; k < len(src); k++ {
		c := src[k]
		if c == '(' {
			depth++
		} else if c == ')' {
			depth--
			if depth == 0 {
				break
			}
		} else if c == '"' || c == '{' || c == '}' || c == ';' || c == '=' && (k+1 >= len(src) || src[k+1] != '>') {
			return 0 // not a list of types
		}
	}
	if k >= len(src) {
		return 0
	}
	end := k + 1
	j := skipKtSpaceComments(src, end)
	if j < len(src) && src[j] == '@' {
		return end
	}
	m := j
	for m < len(src) && isKtIdentByte(src[m]) {
		m++
	}
	if m > j && ktDeclStart(string(src[j:m])) {
		return end
	}
	if inType && j < len(src) && (m > j || src[j] == '(') {
		return end
	}
	return 0
}

// skipKtSpaceComments returns the offset of the first byte at or after i that is not
// white space or inside a comment.
func skipKtSpaceComments(src []byte, i int) int {
	for i < len(src) {
		switch {
		case src[i] == ' ' || src[i] == '\t' || src[i] == '\n' || src[i] == '\r' || src[i] == '\f':
			i++
		case src[i] == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case src[i] == '/' && i+1 < len(src) && src[i+1] == '*':
			i = skipKtBlockComment(src, i)
		default:
			return i
		}
	}
	return i
}

// annotation handles the annotation at i (src[i] == '@') and returns the offset to go
// on from: the compiled-in grammar's rules first (grammarAnnotation), else the `@` is
// a token.
func (w *ktRewriter) annotation(i int) int {
	if end, ok := w.grammarAnnotation(i); ok {
		return end
	}
	w.token(ktOp, i, i+1, "@")
	return i + 1
}

// skipKtAnnotation returns the offset after the annotation at i (src[i] == '@'):
// `@Name`, `@a.b.Name`, `@get:Name`, with an optional argument list; or i+1.
func skipKtAnnotation(src []byte, i int) int {
	j := i + 1
	for {
		s := j
		for j < len(src) && isKtIdentByte(src[j]) {
			j++
		}
		if j == s {
			return i + 1
		}
		if j < len(src) && (src[j] == '.' || src[j] == ':' && (j+1 >= len(src) || src[j+1] != ':')) {
			j++
			continue
		}
		break
	}
	if j < len(src) && src[j] == '(' {
		depth := 0
		for k := j; k < len(src); k++ {
			switch src[k] {
			case '(':
				depth++
			case ')':
				depth--
				if depth == 0 {
					return k + 1
				}
			case '"':
				for k++; k < len(src) && src[k] != '"' && src[k] != '\n'; k++ {
					if src[k] == '\\' {
						k++
					}
				}
			case '\n':
				if depth > 8 {
					return i + 1
				}
			}
		}
		return i + 1
	}
	return j
}

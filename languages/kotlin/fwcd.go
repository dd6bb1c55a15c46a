//go:build !kotlin2

package kotlin

import "strings"

// The token rules only fwcd tree-sitter-kotlin 0.3.8 needs (a build without the tag
// kotlin2), and the hooks through which the shared scanner of tokens.go calls them.
// kotlin2.go has the same hooks for the other grammar.

// kotlinGrammarRules are the token rewrites fwcd 0.3.8 needs (see kotlinRules).
var kotlinGrammarRules = kotlinRules{
	WhenGuard: true, Context: true, MultiDollar: true, SoftNames: true, NullableRef: true,
	grammarRules: grammarRules{EInfix: true, RangeUntil: true, WhenIn: true, FwcdTypes: true, CallAssign: true, ObjectBy: true},
}

// grammarRules selects the fwcd-only rewrites (the embedded part of kotlinRules).
type grammarRules struct {
	// EInfix (fwcd 0.3.8): a name starting with `e` after a space or tab (`a eq b`,
	// `in ecRange ->`) gets an upper-case `E`. fwcd's scanner, where a statement may
	// end, inserts a semicolon before any word starting with `e` on the same line
	// unless it is `else` (the keywords enum, expect and external are kept).
	EInfix bool
	// RangeUntil (fwcd 0.3.8): the open-ended range operator `..<` becomes `.. `.
	RangeUntil bool
	// WhenIn (fwcd 0.3.8): a `when` branch after the first that starts its line with
	// `in` (`in 0..9 -> x`) gets a `;` in the space before it: fwcd's scanner inserts no
	// semicolon before `in`, so the branch would continue the previous one's body.
	WhenIn bool
	// FwcdTypes (fwcd 0.3.8): in a function type with a qualified or nullable
	// receiver (`A.B.() -> Unit`, `Op?.() -> T`) the receiver's inner dots become `_`
	// and its `?` a space; type arguments before `::` (`Pair<*, Int>::second`) become
	// spaces; a binary literal's `0b` becomes `0x`.
	FwcdTypes bool
	// CallAssign (fwcd 0.3.8): an assignment whose target follows a call
	// (`a.b().c = x`, `f()[i] += 1`) becomes an addition (`=` -> `+`, `+=` -> `+ `).
	CallAssign bool
	// ObjectBy (fwcd 0.3.8): delegation in an object's supertype list
	// (`object : Logger by base {`) becomes spaces from `by` to the `{` or `,`.
	ObjectBy bool
}

// grammarState is what the fwcd-only rules track across tokens (embedded in
// ktRewriter).
type grammarState struct {
	// CallAssign: the depth (len(stack)) of the statement whose first tokens form an
	// assignment target so far (-1: none), and whether a call or index closed in it.
	chainDepth int
	chainCall  bool
	// ObjectBy: an `object` keyword was just seen; the depth of its supertype list
	// (-1: none) and the offset of a `by` in it (-1: none).
	objPending bool
	objDepth   int
	byStart    int
}

// initGrammar sets the state's "none" values before a pass.
func (w *ktRewriter) initGrammar() { w.chainDepth, w.objDepth, w.byStart = -1, -1, -1 }

// grammarNumber runs at a number literal starting at i: a binary literal's `0b`
// becomes `0x` (FwcdTypes).
func (w *ktRewriter) grammarNumber(i int) {
	src := w.src
	if w.r.FwcdTypes && src[i] == '0' && i+2 < len(src) && (src[i+1] == 'b' || src[i+1] == 'B') && (src[i+2] == '0' || src[i+2] == '1') {
		w.set(i+1, 'x')
	}
}

// grammarLineBreak runs at a line break: an object's supertype list ends with its
// line unless the line ends in "," or ":" (ObjectBy).
func (w *ktRewriter) grammarLineBreak() {
	if w.objDepth >= 0 && !(w.prev == ktOp && (w.prevOp == "," || w.prevOp == ":")) {
		w.objDepth, w.byStart = -1, -1
	}
}

// grammarWhenIn runs at an `in` at s that starts a `when` branch's conditions (f
// is the when's frame, before the branch is counted): fwcd reads `in` on a new line
// as continuing the previous branch's body, so a space before it becomes ";"
// (WhenIn).
func (w *ktRewriter) grammarWhenIn(f *ktFrame, s int) {
	if w.r.WhenIn && f.entries > 0 && s > 0 && (w.src[s-1] == ' ' || w.src[s-1] == '\t') {
		w.set(s-1, ';')
	}
}

// grammarToken runs for every significant token, after the `when` bookkeeping and
// before the token becomes the previous one (CallAssign, ObjectBy).
func (w *ktRewriter) grammarToken(kind ktTokKind, s, e int, op string) {
	if w.r.CallAssign {
		w.assignChain(kind, s, e, op)
	}
	if w.r.ObjectBy {
		w.objectBy(kind, s, e, op)
	}
}

// grammarOp runs at an operator at i, two its two-byte form or "", before its token
// (FwcdTypes, RangeUntil).
func (w *ktRewriter) grammarOp(i int, two string) {
	src := w.src
	switch two {
	case "?.":
		if w.r.FwcdTypes && i+2 < len(src) && src[i+2] == '(' {
			w.set(i, ' ') // Op?.() -> T: a nullable receiver type
		}
	case "::":
		if w.r.FwcdTypes && i > 0 && src[i-1] == '>' {
			w.blankTypeArgs(i) // Pair<*, Int>::second -> Pair        ::second
		}
	case ".(":
		if w.r.FwcdTypes { // A.B.() -> Unit: the receiver's inner dots become _
			for k := i - 1; k >= 0 && (isKtIdentByte(src[k]) || src[k] == '.'); k-- {
				if src[k] == '.' {
					w.set(k, '_')
				}
			}
		}
	case "..":
		if w.r.RangeUntil && i+2 < len(src) && src[i+2] == '<' {
			w.set(i+2, ' ')
		}
	}
}

// grammarIdent runs at the identifier or keyword word starting at s, before its
// soft-name rewrite and its token (EInfix).
func (w *ktRewriter) grammarIdent(s int, word string) {
	src := w.src
	if w.r.EInfix && src[s] == 'e' && s > 0 && (src[s-1] == ' ' || src[s-1] == '\t') {
		switch word {
		case "else", "enum", "expect", "external":
		default:
			w.set(s, 'E')
		}
	}
}

// grammarAnnotation runs at an annotation at i; fwcd has no rule there.
func (w *ktRewriter) grammarAnnotation(i int) (int, bool) { return 0, false }

// assignChain follows a statement's leading chain of names, calls and indexes
// (`a.b().c`) and turns the assignment after it into an addition (CallAssign).
func (w *ktRewriter) assignChain(kind ktTokKind, s, e int, op string) {
	d := len(w.stack)
	start := w.prev == ktNone || w.prev == ktOp && (w.prevOp == "{" || w.prevOp == ";" || w.prevOp == "->") ||
		w.prevNL && w.endsExpression()
	if start && kind == ktIdent {
		switch word := string(w.src[s:e]); {
		case word == "get" || word == "set": // get() = x is an accessor
			w.chainDepth = -1
		case word == "this" || !ktHard(word):
			w.chainDepth, w.chainCall = d, false
			return
		}
	}
	if w.chainDepth != d {
		if d < w.chainDepth {
			w.chainDepth = -1
		}
		return
	}
	switch {
	case kind == ktOp && (op == "." || op == "?." || op == "!!" || op == "(" || op == "["):
	case kind == ktIdent && w.prev == ktOp && (w.prevOp == "." || w.prevOp == "?."):
	case kind == ktOp && op == ")":
		w.chainCall = true // fwcd takes `a[i] = x` and `a.b = x`, not `f().b = x`
	case kind == ktOp && op == "]":
	case kind == ktOp && op == "=" && w.chainCall:
		w.set(s, '+')
		w.chainDepth = -1
	case kind == ktOp && len(op) == 2 && op[1] == '=' && strings.IndexByte("+-*/%", op[0]) >= 0 && w.chainCall:
		w.set(s+1, ' ')
		w.chainDepth = -1
	default:
		w.chainDepth = -1
	}
}

// objectBy blanks delegation in an object expression's supertype list (ObjectBy).
func (w *ktRewriter) objectBy(kind ktTokKind, s, e int, op string) {
	d := len(w.stack)
	switch {
	case kind == ktIdent && string(w.src[s:e]) == "object":
		w.objPending, w.objDepth, w.byStart = true, -1, -1
		return
	case w.objPending && kind == ktOp && op == ":":
		w.objDepth = d
	case w.objDepth >= 0 && d < w.objDepth:
		w.objDepth, w.byStart = -1, -1
	case w.objDepth == d && kind == ktIdent && string(w.src[s:e]) == "by":
		w.byStart = s
	case w.objDepth == d && kind == ktOp && (op == "{" || op == ","):
		if w.byStart >= 0 {
			w.blank(w.byStart, s)
		}
		w.byStart = -1
		if op == "{" {
			w.objDepth = -1
		}
	}
	w.objPending = false
}

// blankTypeArgs blanks the type arguments that end just before the `::` at i.
func (w *ktRewriter) blankTypeArgs(i int) {
	src := w.src
	depth := 0
	for k := i - 1; k >= 0 && k >= i-200; k-- {
		switch c := src[k]; {
		case c == '>':
			depth++
		case c == '<':
			depth--
			if depth == 0 {
				if k > 0 && isKtIdentByte(src[k-1]) {
					w.blank(k, i)
				}
				return
			}
		case isKtIdentByte(c) || c == ',' || c == ' ' || c == '*' || c == '?' || c == '.':
		default:
			return
		}
	}
}

//go:build kotlin2

package kotlin

// The token rules only tree-sitter-grammars/tree-sitter-kotlin 1.1.0 needs (a build
// with the tag kotlin2), and the hooks through which the shared scanner of tokens.go
// calls them. fwcd.go has the same hooks for the other grammar.

// kotlinGrammarRules are the token rewrites tree-sitter-grammars 1.1.0 needs (see
// kotlinRules).
var kotlinGrammarRules = kotlinRules{
	WhenGuard: true, Context: true, MultiDollar: true, SoftNames: true, NullableRef: true,
	grammarRules: grammarRules{AccessorAnnotations: true},
}

// grammarRules selects the kotlin2-only rewrites (the embedded part of kotlinRules).
type grammarRules struct {
	// AccessorAnnotations (tree-sitter-grammars 1.1.0): annotations before a property
	// accessor (`@Inject set`, `@OptIn(X::class) get() = …`) become spaces.
	AccessorAnnotations bool
}

// grammarState is what the kotlin2-only rules track across tokens: nothing.
//
//lint:ignore U1000 the fwcd build's twin (fwcd.go) holds state; this build's is empty
type grammarState struct{}

// The hooks of fwcd.go that this grammar does not need.
func (w *ktRewriter) initGrammar()                                     {}
func (w *ktRewriter) grammarNumber(i int)                              {}
func (w *ktRewriter) grammarLineBreak()                                {}
func (w *ktRewriter) grammarWhenIn(f *ktFrame, s int)                  {}
func (w *ktRewriter) grammarToken(kind ktTokKind, s, e int, op string) {}
func (w *ktRewriter) grammarOp(i int, two string)                      {}
func (w *ktRewriter) grammarIdent(s int, word string)                  {}

// grammarAnnotation runs at the annotation at i (src[i] == '@'): with
// AccessorAnnotations, a run of annotations (and modifiers) before a property
// accessor becomes spaces, and it returns the offset after the run and true. Else it
// returns false (the `@` is then a token).
func (w *ktRewriter) grammarAnnotation(i int) (int, bool) {
	src := w.src
	if !w.r.AccessorAnnotations {
		return 0, false
	}
	var spans [][2]int
	j := i
	for j < len(src) && src[j] == '@' {
		e := skipKtAnnotation(src, j)
		if e <= j+1 {
			break
		}
		spans = append(spans, [2]int{j, e})
		j = skipKtSpaceComments(src, e)
	}
	k := j
	for { // modifiers between the annotations and the accessor
		m := k
		for m < len(src) && isKtIdentByte(src[m]) {
			m++
		}
		word := string(src[k:m])
		if m > k && ktModifier(word) {
			k = skipKtSpaceComments(src, m)
			continue
		}
		if len(spans) > 0 && (word == "get" || word == "set") && w.accessorAt(word, m) {
			for _, sp := range spans {
				w.blank(sp[0], sp[1])
			}
			return spans[len(spans)-1][1], true
		}
		break
	}
	return 0, false
}

// accessorAt reports whether the get or set keyword ending at e starts an accessor:
// followed by an accessor's parameter list, `=`, or the end of the line.
func (w *ktRewriter) accessorAt(word string, e int) bool {
	src := w.src
	j := e
	for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
		j++
	}
	if j >= len(src) {
		return true
	}
	switch src[j] {
	case '\n', '\r', ';', '}', '=':
		return true
	case '(':
		return j == e && w.accessorParams(word, j)
	case '/':
		return j+1 < len(src) && (src[j+1] == '/' || src[j+1] == '*')
	}
	return false
}

//go:build !kotlin2

package kotlin

// allGrammarRules turns every fwcd-only token rewrite on.
var allGrammarRules = grammarRules{EInfix: true, RangeUntil: true, WhenIn: true, FwcdTypes: true, CallAssign: true, ObjectBy: true}

// grammarTokenCases are TestKotlinTokenRewrites' cases of the fwcd-only rules.
var grammarTokenCases = []tokenCase{
	{kotlinRules{grammarRules: grammarRules{EInfix: true}}, "a eq b && c exists d\n} else {\nenum class E\nexpect fun f()", "a Eq b && c Exists d\n} else {\nenum class E\nexpect fun f()"},
	{kotlinRules{grammarRules: grammarRules{RangeUntil: true}}, "for (i in 0..<n) {}", "for (i in 0.. n) {}"},
	{kotlinRules{grammarRules: grammarRules{WhenIn: true}}, "when (x) {\n    in 0..9 -> 1\n    in r -> 2\n    !in s -> 3\n}\nfor (i in r) {}",
		"when (x) {\n    in 0..9 -> 1\n   ;in r -> 2\n    !in s -> 3\n}\nfor (i in r) {}"},
	{kotlinRules{grammarRules: grammarRules{FwcdTypes: true}}, "fun f(c: A.B.() -> Unit, d: Op?.() -> T) = 0b1010", "fun f(c: A_B.() -> Unit, d: Op .() -> T) = 0x1010"},
	{kotlinRules{grammarRules: grammarRules{FwcdTypes: true}}, "val r = C<*>::reg as R\nx.maxBy(Pair<*, Int>::second)\nval b = a > b::c", "val r = C   ::reg as R\nx.maxBy(Pair        ::second)\nval b = a > b::c"},
	{kotlinRules{grammarRules: grammarRules{CallAssign: true}}, "fun f() {\n  a.b().c = 1\n  g()[i] += 2\n  a[i] = 3\n  x.y = 4\n  get() = 5\n}", "fun f() {\n  a.b().c + 1\n  g()[i] +  2\n  a[i] = 3\n  x.y = 4\n  get() = 5\n}"},
	{kotlinRules{grammarRules: grammarRules{ObjectBy: true}}, "val l = object : Logger by base {\n}\ncompanion object : F<T>(x)\nvar t by T.t", "val l = object : Logger         {\n}\ncompanion object : F<T>(x)\nvar t by T.t"},
}

// grammarSurveyRules are TestKotlinRuleSurvey's fwcd-only rules, tried after the
// first four shared ones; grammarSurveyRulesLast, tried last, are none.
var grammarSurveyRules = []surveyRule{
	{"fwcd: e-word after space (a eq b)", func(r *kotlinRules) { r.EInfix = true }},
	{"fwcd: ..<", func(r *kotlinRules) { r.RangeUntil = true }},
	{"fwcd: when branch starting with in", func(r *kotlinRules) { r.WhenIn = true }},
	{"fwcd: receiver types, T<*>::f, 0b", func(r *kotlinRules) { r.FwcdTypes = true }},
	{"fwcd: assignment after a call", func(r *kotlinRules) { r.CallAssign = true }},
	{"fwcd: object : T by x", func(r *kotlinRules) { r.ObjectBy = true }},
}

var grammarSurveyRulesLast []surveyRule

//go:build !kotlin2

package kotlin

// kotlinGrammarRules are the token rewrites fwcd 0.3.8 needs (see kotlinRules).
var kotlinGrammarRules = kotlinRules{
	WhenGuard: true, Context: true, MultiDollar: true, SoftNames: true,
	EInfix: true, RangeUntil: true, WhenIn: true, FwcdTypes: true, CallAssign: true, ObjectBy: true, NullableRef: true,
}

//go:build kotlin2

package kotlin

// kotlinGrammarRules are the token rewrites tree-sitter-grammars 1.1.0 needs (see
// kotlinRules).
var kotlinGrammarRules = kotlinRules{
	WhenGuard: true, Context: true, MultiDollar: true, SoftNames: true,
	NullableRef: true, AccessorAnnotations: true,
}

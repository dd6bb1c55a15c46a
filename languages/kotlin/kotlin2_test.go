//go:build kotlin2

package kotlin

import "strings"

// allGrammarRules turns every kotlin2-only token rewrite on.
var allGrammarRules = grammarRules{AccessorAnnotations: true}

// grammarTokenCases are TestKotlinTokenRewrites' cases of the kotlin2-only rules.
var grammarTokenCases = []tokenCase{
	{kotlinRules{grammarRules: grammarRules{AccessorAnnotations: true}}, "val x\n  @OptIn(X::class)\n  get() = 1\nvar y = 1\n  @Inject set\n@A fun f() = 1",
		"val x\n  " + strings.Repeat(" ", 16) + "\n  get() = 1\nvar y = 1\n          set\n@A fun f() = 1"},
}

// grammarSurveyRules are TestKotlinRuleSurvey's kotlin2-only rules tried after the
// first four shared ones (none), grammarSurveyRulesLast those tried last.
var (
	grammarSurveyRules     []surveyRule
	grammarSurveyRulesLast = []surveyRule{
		{"tsg: accessor annotations", func(r *kotlinRules) { r.AccessorAnnotations = true }},
	}
)

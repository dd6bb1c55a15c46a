package kotlin

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/repoctx/repoctx/grammars"
)

// surveyRule is a token rule of TestKotlinRuleSurvey: its name and how to turn it on.
type surveyRule struct {
	name string
	on   func(*kotlinRules)
}

// sharedSurveyRules are the rules both grammars use.
var sharedSurveyRules = []surveyRule{
	{"when guard", func(r *kotlinRules) { r.WhenGuard = true }},
	{"context clause", func(r *kotlinRules) { r.Context = true }},
	{"multi-dollar string", func(r *kotlinRules) { r.MultiDollar = true }},
	{"soft keyword as name", func(r *kotlinRules) { r.SoftNames = true }},
	{"Type?::ref", func(r *kotlinRules) { r.NullableRef = true }},
}

// TestKotlinRuleSurvey attributes the Kotlin files of each checkout in
// REPOCTX_KT_RULES (a path list) whose parse has errors with the line rewrites alone
// (the first rewrites) to the token rewrite rules of the compiled-in
// grammar that make them parse cleanly: one rule alone, else the smallest set found
// greedily, else "not fixed". A file counts when its tree has an error (chunker's
// parse_error flag, before its recovery). Skipped unless REPOCTX_KT_RULES is set.
func TestKotlinRuleSurvey(t *testing.T) {
	dirs := os.Getenv("REPOCTX_KT_RULES")
	if dirs == "" {
		t.Skip("set REPOCTX_KT_RULES=<checkout>[:<checkout>...] to attribute parse errors to rewrite rules")
	}
	// The rules in the order they are tried: the shared ones, with the compiled-in
	// grammar's own (fwcd_test.go or kotlin2_test.go) in their place in the list.
	var rules []surveyRule
	rules = append(rules, sharedSurveyRules[:4]...)
	rules = append(rules, grammarSurveyRules...)
	rules = append(rules, sharedSurveyRules[4:]...)
	rules = append(rules, grammarSurveyRulesLast...)
	ps := grammars.NewParsers(0)
	defer ps.Close()
	bare := &grammars.Spec{Name: "kotlin-survey", Language: grammars.Kotlin.Language}
	hasErr := func(src []byte, use []bool) bool {
		var r kotlinRules
		for i, u := range use {
			if u {
				rules[i].on(&r)
			}
		}
		tree, _, err := ps.Parse(bare, rewriteKotlinTokens(kotlinLineRewrite(src), r))
		if err != nil {
			return true
		}
		defer tree.Close()
		return tree.RootNode().HasError()
	}
	fmt.Printf("grammar %s\n", grammars.KotlinGrammar)
	for _, dir := range filepath.SplitList(dirs) {
		files, before, after := 0, 0, 0
		by := map[string]int{}
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".kt") {
				return nil
			}
			src, err := os.ReadFile(p)
			if err != nil {
				return nil
			}
			files++
			none := make([]bool, len(rules))
			if !hasErr(src, none) {
				return nil
			}
			before++
			use := make([]bool, len(rules))
			for i := range use {
				use[i] = true
			}
			if hasErr(src, use) {
				after++
				by["not fixed by the rewrites"]++
				return nil
			}
			for i := range rules {
				one := make([]bool, len(rules))
				one[i] = true
				if !hasErr(src, one) {
					by[rules[i].name]++
					return nil
				}
			}
			for i := range use { // greedy: drop rules not needed
				use[i] = false
				if hasErr(src, use) {
					use[i] = true
				}
			}
			var names []string
			for i, u := range use {
				if u {
					names = append(names, rules[i].name)
				}
			}
			by[strings.Join(names, " + ")]++
			return nil
		})
		fmt.Printf("\n%s: %d .kt files; trees with errors: %d (%.1f%%) with the line rewrites, %d (%.1f%%) with all rewrites\n",
			dir, files, before, 100*float64(before)/float64(max(files, 1)), after, 100*float64(after)/float64(max(files, 1)))
		keys := make([]string, 0, len(by))
		for k := range by {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			return by[keys[i]] > by[keys[j]] || by[keys[i]] == by[keys[j]] && keys[i] < keys[j]
		})
		for _, k := range keys {
			fmt.Printf("  %4d  %5.1f%%  %s\n", by[k], 100*float64(by[k])/float64(max(files, 1)), k)
		}
	}
}

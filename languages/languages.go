// Package languages attaches the text-level rules of the languages that have them
// (the packages below it: c for C and C++, csharp, kotlin, ruby, rust, swift) to their specs in
// package grammars (see grammars.Rules). Its init does it, in the order of [rules];
// the chunker imports this package, so the rules are in place before any package
// that chunks (and so parses) initialises. A new language's rules package is added
// to that list.
package languages

import (
	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/languages/c"
	"github.com/repoctx/repoctx/languages/csharp"
	"github.com/repoctx/repoctx/languages/kotlin"
	"github.com/repoctx/repoctx/languages/ruby"
	"github.com/repoctx/repoctx/languages/rust"
	"github.com/repoctx/repoctx/languages/swift"
)

// rules lists, per registered language name, the rules its package provides.
var rules = []struct {
	name  string
	rules grammars.Rules
}{
	{"c", grammars.Rules{Rewrite: c.Rewrite}},
	{"cpp", grammars.Rules{Rewrite: c.RewriteCPP}},
	{"csharp", grammars.Rules{Rewrite: csharp.Rewrite}},
	{"kotlin", grammars.Rules{Rewrite: kotlin.Rewrite, Recover: kotlin.Recovery}},
	{"ruby", grammars.Rules{Rewrite: ruby.Rewrite}},
	{"rust", grammars.Rules{Rewrite: rust.Rewrite}},
	{"swift", grammars.Rules{Rewrite: swift.Rewrite}},
}

func init() {
	for _, r := range rules {
		if err := grammars.Attach(r.name, r.rules); err != nil {
			panic(err) // a wiring mistake: a name not registered or listed twice
		}
	}
}

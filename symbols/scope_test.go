package symbols

import (
	"testing"

	"github.com/repoctx/repoctx/grammars"
)

// TestScopeRegexpsCompile: the scope rules' expressions compile (they do on first use).
func TestScopeRegexpsCompile(t *testing.T) {
	for _, r := range []*grammars.Regexp{identRe, importLine, ktTyped, ktInit, ktAssign, ktIs, ktLocal, ktDestruct, ktLambda, ktFor, ktFun, ktClass, ktNotTyped, pyTyped, pyAssign, pyWith, pyIsinst, pyLocal, pyFor, pyAs, pyWalrus, pyLambda, pyLocalDef, ktLocalDef, pyDef, pyClass} {
		if r.Regexp() == nil {
			t.Errorf("%q", r)
		}
	}
}

package languages

import (
	"testing"

	"github.com/repoctx/repoctx/grammars"
)

// TestAttached: every language of the list has its rules on its registered spec,
// and the languages without rules have none.
func TestAttached(t *testing.T) {
	listed := map[string]bool{}
	for _, r := range rules {
		listed[r.name] = true
		s := grammars.Lookup(r.name)
		if s == nil {
			t.Fatalf("%s: not registered", r.name)
		}
		if r.rules.Rewrite != nil && s.Rewrite == nil || r.rules.Recover != s.Recover {
			t.Errorf("%s: rules not attached", r.name)
		}
	}
	for _, name := range grammars.Names() {
		if s := grammars.Lookup(name); !listed[name] && (s.Rewrite != nil || s.Recover != nil) {
			t.Errorf("%s: has rules that package languages did not attach", name)
		}
	}
	if err := grammars.Attach("kotlin", grammars.Rules{}); err == nil {
		t.Error("rules attached twice")
	}
	if err := grammars.Attach("nosuch", grammars.Rules{}); err == nil {
		t.Error("rules attached to an unregistered language")
	}
}

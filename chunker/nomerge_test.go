package chunker

import (
	"strings"
	"testing"
)

// TestNoMerge checks Options.NoMerge: small adjacent siblings (top-level one-line properties)
// that the default merges into one chunk stay chunks of their own, and the option
// changes the structural Key only when set.
func TestNoMerge(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 6; i++ {
		b.WriteString("val p" + string(rune('a'+i)) + " = " + string(rune('0'+i)) + "\n")
	}
	f := &File{Path: "Config.kt", Lang: "kotlin", Text: []byte(b.String())}
	count := func(o Options) int {
		s := NewStructural(o)
		defer s.Close()
		cs, err := s.Chunk(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := Validate(f, cs, DefaultMaxChars); err != nil {
			t.Fatal(err)
		}
		return len(cs)
	}
	merged, apart := count(Options{}), count(Options{NoMerge: true})
	if apart <= merged {
		t.Errorf("chunks: %d with merging, %d without; want more without", merged, apart)
	}
	if k := (Options{}).Key(StrategyStructural); k != "structural/c800/w20/o5" {
		t.Errorf("default key %q changed", k)
	}
	if k := (Options{NoMerge: true}).Key(StrategyStructural); k != "structural/c800/w20/o5/nomerge" {
		t.Errorf("no-merge key %q", k)
	}
	if k := (Options{NoMerge: true}).Key(StrategyFixed); k != "fixed/c800/w20/o10" {
		t.Errorf("fixed key %q names no-merge", k)
	}
}

package preprocess

import (
	"strings"
	"testing"

	"github.com/repoctx/repoctx/chunker"
)

// TestStatsUnnamed: definition chunks without a name are counted per language and
// in the total, and the table prints the count; named definitions and chunks of
// other kinds without a name are not counted.
func TestStatsUnnamed(t *testing.T) {
	cs := []chunker.Chunk{
		{Kind: chunker.KindFunction, Name: "load"},
		{Kind: chunker.KindFunction},
		{Kind: chunker.KindClass},
		{Kind: chunker.KindProperty, Name: "x"},
		{Kind: chunker.KindCode},
		{Kind: chunker.KindWindow, Fallback: true},
	}
	st := Stats{Langs: map[string]*LangStats{"go": {}, "rust": {}}, Workers: 1}
	st.Langs["go"].add(result{path: "a.go", chunks: cs})
	st.Langs["rust"].add(result{path: "b.rs", chunks: cs[:2]})
	if got := st.Langs["go"].Unnamed; got != 2 {
		t.Errorf("go: %d unnamed, want 2", got)
	}
	if got := st.Total().Unnamed; got != 3 {
		t.Errorf("total: %d unnamed, want 3", got)
	}
	var sb strings.Builder
	st.PrintTable(&sb, false)
	lines := strings.Split(sb.String(), "\n")
	if !strings.Contains(lines[0], "unnamed defs") {
		t.Fatalf("no unnamed column:\n%s", sb.String())
	}
	col := strings.Index(lines[0], "unnamed defs") + len("unnamed defs") // right-aligned
	for i, want := range map[int]string{1: "2", 2: "1", 3: "3"} {
		if got := strings.TrimSpace(lines[i][:col]); !strings.HasSuffix(got, " "+want) {
			t.Errorf("line %d: %q does not end in %s\n%s", i, got, want, sb.String())
		}
	}
}

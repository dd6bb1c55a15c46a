package assemble

import (
	"strings"
	"testing"
)

// TestPartsNoSpanMerge checks that candidates.parts merges overlapping and touching
// spans of a file by default and, with noMerge (Options.NoSpanMerge), keeps
// overlapping spans apart, their shared lines repeated, while still joining touching
// ones.
func TestPartsNoSpanMerge(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 30; i++ {
		b.WriteString("line" + strings.Repeat("x", i%3) + "\n")
	}
	text := b.String()
	off := func(line int) int { // byte offset of the start of 1-based line
		return len(strings.Join(strings.SplitAfter(text, "\n")[:line-1], ""))
	}
	build := func(noMerge bool) []int {
		ft := &fileTexts{cache: map[string]string{"a.kt": text}}
		cs := newCandidates()
		cs.noMerge = noMerge
		cs.add("a.kt", off(1), off(11), 1, "q1")  // lines 1-10
		cs.add("a.kt", off(6), off(16), 2, "q2")  // lines 6-15, overlapping
		cs.add("a.kt", off(16), off(21), 1, "q3") // lines 16-20, touching
		var lines []int
		for _, p := range cs.parts(ft) {
			lines = append(lines, p.StartLine, p.EndLine)
		}
		return lines
	}
	if got := build(false); len(got) != 2 || got[0] != 1 || got[1] != 20 {
		t.Errorf("merged: parts (start, end) %v, want [1 20]", got)
	}
	got := build(true)
	want := map[[2]int]bool{{1, 10}: true, {6, 20}: true}
	if len(got) != 4 || !want[[2]int{got[0], got[1]}] || !want[[2]int{got[2], got[3]}] {
		t.Errorf("no span merge: parts (start, end) %v, want 1-10 and 6-20", got)
	}
}

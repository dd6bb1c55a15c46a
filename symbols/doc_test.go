package symbols

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/repoctx/repoctx/internal/racetest"
)

// commentAboveSplit is commentAbove as it was written first: every line of the text
// before start, then the comment lines at its end.
func commentAboveSplit(src []byte, start int) string {
	lines := strings.Split(string(src[:lineStart(src, start)]), "\n")
	var doc []string
	for i := len(lines) - 2; i >= 0 && len(doc) < 30; i-- {
		t := strings.TrimSpace(lines[i])
		if t == "" || !(strings.HasPrefix(t, "#") || strings.HasPrefix(t, "//") || strings.HasPrefix(t, "/*") || strings.HasPrefix(t, "*")) {
			break
		}
		doc = append([]string{lines[i]}, doc...)
	}
	return strings.Join(doc, "\n")
}

// TestCommentAbove checks commentAbove against the split-everything reading on random
// texts of comment, code and blank lines (more than 30 comment lines in a row too),
// at every byte offset.
func TestCommentAbove(t *testing.T) {
	racetest.Skip(t, "compares the comment finder with its reference at every offset on one goroutine")
	rng := rand.New(rand.NewPCG(17, 19))
	kinds := []string{"// c", "  # h", " * s", "/* b */", "code()", "", "   ", "\tx = 1", "*/", "\r"}
	for trial := range 40 {
		var sb strings.Builder
		for range rng.IntN(50) {
			if rng.IntN(4) == 0 {
				for range 31 {
					sb.WriteString("// run\n")
				}
			}
			sb.WriteString(kinds[rng.IntN(len(kinds))])
			sb.WriteByte('\n')
		}
		src := []byte(sb.String())
		for start := 0; start <= len(src); start++ {
			if got, want := commentAbove(src, start), commentAboveSplit(src, start); got != want {
				t.Fatalf("trial %d, start %d: %q, want %q", trial, start, got, want)
			}
		}
	}
}

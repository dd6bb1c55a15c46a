package assemble

import (
	"math/rand/v2"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/internal/racetest"
)

// identRe is the identifier pattern eachIdent implements.
var identRe = regexp.MustCompile(`[\p{L}_][\p{L}\p{N}_]*`)

// editRegion returns the lines of the new text (prefix + suffix, the hole closed)
// that differ from old, found by trimming the lines both share at the start and at
// the end, with each line's distance in lines to the cursor.
func editRegion(old, prefix, suffix string) ([]string, []int) {
	newLines, a, end, cursor := editSpan(old, prefix, suffix)
	var lines []string
	var dist []int
	for i := a; i < end; i++ {
		if i == cursor {
			continue // the line being written is in the prefix query already
		}
		lines = append(lines, newLines[i])
		d := i - cursor
		if d < 0 {
			d = -d
		}
		dist = append(dist, d)
	}
	return lines, dist
}

// editIdentifiersAll is editIdentifiers without its early stop: every identifier of
// the edit region, nearest first, the first maxIDs kept.
func editIdentifiersAll(old, prefix, suffix string, spec *grammars.Spec, maxIDs int) string {
	lines, dist := editRegion(old, prefix, suffix)
	best := map[string]int{}
	for i, l := range lines {
		for _, id := range identRe.FindAllString(l, -1) {
			if len(id) < 2 || spec != nil && spec.IsKeyword(id) {
				continue
			}
			if d, ok := best[id]; !ok || dist[i] < d {
				best[id] = dist[i]
			}
		}
	}
	names := make([]string, 0, len(best))
	for n := range best {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if best[names[i]] != best[names[j]] {
			return best[names[i]] < best[names[j]]
		}
		return names[i] < names[j]
	})
	return strings.Join(names[:min(maxIDs, len(names))], " ")
}

// TestEditIdentifiersEarlyStop checks on random edits that reading outward from the
// cursor and stopping early picks the same identifiers as reading the whole region.
func TestEditIdentifiersEarlyStop(t *testing.T) {
	racetest.Skip(t, "compares 2000 random edits with the full diff on one goroutine")
	rng := rand.New(rand.NewPCG(3, 5))
	words := []string{"alpha", "beta", "gamma", "if", "return", "x", "delta", "eps", "zeta", "eta", "theta"}
	line := func() string {
		var sb strings.Builder
		for range 1 + rng.IntN(4) {
			sb.WriteString(words[rng.IntN(len(words))])
			sb.WriteString(" = ")
		}
		return sb.String()
	}
	spec := grammars.Lookup("python")
	for trial := range 2000 {
		var old []string
		for range rng.IntN(30) {
			old = append(old, line())
		}
		cur := append([]string(nil), old...)
		for range rng.IntN(10) { // insert, delete or change lines
			i := rng.IntN(len(cur) + 1)
			switch rng.IntN(3) {
			case 0:
				cur = append(cur[:i], append([]string{line()}, cur[i:]...)...)
			case 1:
				if i < len(cur) {
					cur = append(cur[:i], cur[i+1:]...)
				}
			default:
				if i < len(cur) {
					cur[i] = line()
				}
			}
		}
		text := strings.Join(cur, "\n")
		at := rng.IntN(len(text) + 1)
		prefix, suffix := text[:at], text[at:]
		n := 1 + rng.IntN(8)
		got := editIdentifiers(strings.Join(old, "\n"), prefix, suffix, spec, n)
		want := editIdentifiersAll(strings.Join(old, "\n"), prefix, suffix, spec, n)
		if got != want {
			t.Fatalf("trial %d: editIdentifiers = %q, want %q\nold %q\nprefix %q\nsuffix %q", trial, got, want, old, prefix, suffix)
		}
	}
}

// TestEachIdent checks eachIdent against identRe on random strings of ASCII, letters
// and digits of other scripts, and invalid UTF-8.
func TestEachIdent(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 13))
	alphabet := []string{"a", "Z", "_", "0", "9", " ", ".", "(", "é", "ж", "٣", "²", "中", "\xff", "\xc3", "-", "\n", "Ⅻ"}
	for trial := range 5000 {
		var sb strings.Builder
		for range rng.IntN(20) {
			sb.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		s := sb.String()
		var got []string
		eachIdent(s, func(id string) { got = append(got, id) })
		want := identRe.FindAllString(s, -1)
		if strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
			t.Fatalf("trial %d: %q: eachIdent %q, identRe %q", trial, s, got, want)
		}
	}
}

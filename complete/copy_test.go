package complete

import (
	"math/rand/v2"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/repoctx/repoctx"
)

func TestCopyPredict(t *testing.T) {
	prefix := "fun f() {\n    val a = load(x)\n\n    val b = parse(a)\n    "
	// Query: "fun f() {", "val a = load(x)", "val b = parse(a)" and the unfinished "    "
	// -> tokens {fun f val a load x b parse}.
	for _, tc := range []struct {
		name, prefix, context, want string
	}{
		{
			name:   "the line after the best window",
			prefix: prefix,
			context: "<|file_sep|>other.kt\nclass Z\nfun g() {\n    val a = load(x)\n\n    val b = parse(a)\n    return check(b)\n}\n" +
				"<|file_sep|>more.kt\nunrelated\ntext\nhere\nnothing\n",
			want: "return check(b)",
		},
		{
			name:   "path lines are not context lines",
			prefix: "a\nb\nc\n",
			// Without the path line, the part has a b c (window) + d: predict d. Were
			// "<|file_sep|>a" a line, it could not form a better window.
			context: "<|file_sep|>a\nb\nc\nd\n",
			want:    "",
		},
		{
			name:    "text before the first separator is a part without a path line",
			prefix:  "a\nb\nc\n",
			context: "a\nb\nc\nd\n<|file_sep|>x.kt\ne\n",
			want:    "d",
		},
		{
			name:    "windows do not cross parts",
			prefix:  "a\nb\nc\n",
			context: "<|file_sep|>p\na\nb\n<|file_sep|>q\nc\nd\n",
			want:    "",
		},
		{
			name:    "ties go to the later window",
			prefix:  "a\nb\nc\n",
			context: "<|file_sep|>p\na\nb\nc\nfirst\n<|file_sep|>q\na\nb\nc\nsecond\n",
			want:    "second",
		},
		{
			name:    "no shared token: no prediction",
			prefix:  "a\nb\nc\n",
			context: "<|file_sep|>p\nx\ny\nz\nw\n",
			want:    "",
		},
		{
			name:    "only the last 3 non-blank prefix lines count",
			prefix:  "old\n\nb\n\nc\nd\n\n",
			context: "<|file_sep|>p\nold\nq\nr\nX\nb\nc\nd\nY\n",
			want:    "Y",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := CopyPredict(tc.prefix, tc.context); got != tc.want {
				t.Errorf("CopyPredict = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCopyQuery(t *testing.T) {
	if got := copyQuery("l1\nl2\n\nl3\nl4\ncur"); !reflect.DeepEqual(got, []string{"l4", "l3", "l2", "cur"}) {
		t.Errorf("copyQuery = %q", got)
	}
	if got := copyQuery("l1\nl2\n"); !reflect.DeepEqual(got, []string{"l2", "l1"}) {
		t.Errorf("copyQuery = %q", got)
	}
}

func TestCopyLines(t *testing.T) {
	prefix := "a\nb\nc\n"
	ctx := "<|file_sep|>p\na\nb\nc\n  d1\n\n  d2\n<|file_sep|>q\nx\n"
	for _, tc := range []struct {
		n    int
		want []string
	}{
		{0, nil},
		{1, []string{"  d1"}},
		{2, []string{"  d1", "  d2"}}, // blank lines skipped, indentation kept
		{5, []string{"  d1", "  d2"}}, // never past the part's end
	} {
		if got := CopyLines(prefix, ctx, tc.n); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("CopyLines(n=%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
	if got := CopyLines("", ctx, 3); got != nil {
		t.Errorf("CopyLines with an empty prefix = %q, want nil", got)
	}
}

// naiveContextParts cuts a context into parts at repoctx.FileSep and returns each
// part's lines without their "\n", leaving out the path line of every part that
// follows a separator: the definition eachContextPart and CopyLines follow.
func naiveContextParts(context string) [][]string {
	chunks := strings.Split(context, repoctx.FileSep)
	var parts [][]string
	for i, c := range chunks {
		if i > 0 {
			j := strings.IndexByte(c, '\n')
			if j < 0 {
				continue // a path line only
			}
			c = c[j+1:]
		}
		if c == "" {
			continue
		}
		parts = append(parts, strings.Split(c, "\n"))
	}
	return parts
}

// naiveCopyQuery returns the query lines of CopyLines, by their definition.
func naiveCopyQuery(prefix string) []string {
	lines := strings.Split(prefix, "\n")
	cur := lines[len(lines)-1] // unfinished line; "" when prefix ends in "\n"
	lines = lines[:len(lines)-1]
	var q []string
	for i := len(lines) - 1; i >= 0 && len(q) < CopyQueryLines; i-- {
		if strings.TrimSpace(lines[i]) != "" {
			q = append(q, lines[i])
		}
	}
	if cur != "" {
		q = append(q, cur)
	}
	return q
}

// naiveCopyLines is the direct definition of CopyLines: every window scored, the
// last best one taken.
func naiveCopyLines(prefix, context string, n int) []string {
	if n < 1 {
		return nil
	}
	query := TokenSet(naiveCopyQuery(prefix)...)
	var best []string
	bestScore := 0.0
	for _, part := range naiveContextParts(context) {
		var lines []string
		for _, l := range part {
			if strings.TrimSpace(l) != "" {
				lines = append(lines, l)
			}
		}
		for i := 0; i+CopyWindowLines < len(lines); i++ {
			s := jaccardSets(query, TokenSet(lines[i:i+CopyWindowLines]...))
			if s > 0 && s >= bestScore {
				best, bestScore = lines[i+CopyWindowLines:min(len(lines), i+CopyWindowLines+n)], s
			}
		}
	}
	return best
}

// TestCopyPredictMatchesNaive compares the sliding-window CopyLines (1 and 3 lines)
// with a direct implementation of its definition on random contexts.
func TestCopyPredictMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	vocab := []string{"a", "b", "c", "d", "e", "x y", "a b", "", " ", "\u00a0", "a_1.b(c)", "<|file_sep|>p", "<|file_sep|>", "<|file_sep|>q\na"}
	text := func(n int) string {
		var sb strings.Builder
		for ; n > 0; n-- {
			sb.WriteString(vocab[rng.IntN(len(vocab))])
			sb.WriteString("\n")
		}
		return sb.String()
	}
	for i := 0; i < 3000; i++ {
		prefix, ctx := text(rng.IntN(6)), text(rng.IntN(25))
		if rng.IntN(2) == 0 {
			prefix += vocab[rng.IntN(len(vocab))] // an unfinished line
		}
		if got, want := naiveCopyQuery(prefix), copyQuery(prefix); !reflect.DeepEqual(got, want) {
			t.Fatalf("copyQuery(%q) = %q, naive %q", prefix, got, want)
		}
		for _, n := range []int{1, 3} {
			if got, want := CopyLines(prefix, ctx, n), naiveCopyLines(prefix, ctx, n); !reflect.DeepEqual(got, want) {
				t.Fatalf("CopyLines(%q, %q, %d) = %q, naive %q", prefix, ctx, n, got, want)
			}
		}
	}
}

// jaccardSets returns |a ∩ b| / |a ∪ b|, or 0 when both are empty.
func jaccardSets(a, b map[string]struct{}) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 0
	}
	inter := 0
	for w := range a {
		if _, ok := b[w]; ok {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

// TestTokenSetMatchesRegexp checks the hand-written scanner against [A-Za-z0-9_]+.
func TestTokenSetMatchesRegexp(t *testing.T) {
	wordRe := regexp.MustCompile(`[A-Za-z0-9_]+`)
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []rune("aZ_09 .(é\n")
	for i := 0; i < 3000; i++ {
		var sb strings.Builder
		for n := rng.IntN(20); n > 0; n-- {
			sb.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		s := sb.String()
		want := map[string]struct{}{}
		for _, w := range wordRe.FindAllString(s, -1) {
			want[w] = struct{}{}
		}
		if got := TokenSet(s); !reflect.DeepEqual(got, want) {
			t.Fatalf("TokenSet(%q) = %v, regexp gives %v", s, got, want)
		}
	}
}

// TestEachContextPartTwice: the parts are naiveContextParts', and a second range over
// the same sequence yields them again.
func TestEachContextPartTwice(t *testing.T) {
	ctx := "head\n<|file_sep|>a.kt\nx\ny\n<|file_sep|>b.kt<|file_sep|>c.kt\nz\n"
	var want []string
	for _, p := range naiveContextParts(ctx) {
		want = append(want, strings.Join(p, "\n"))
	}
	seq := eachContextPart(ctx)
	for round := range 2 {
		var got []string
		for p := range seq {
			got = append(got, p)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("round %d: %q, want %q", round, got, want)
		}
	}
}

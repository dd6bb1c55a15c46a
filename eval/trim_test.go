package eval

import (
	"strings"
	"testing"

	"github.com/repoctx/repoctx"
)

// byteCounter counts one token per byte, to make trimming easy to follow.
type byteCounter struct{}

func (byteCounter) Name() string           { return "bytes" }
func (byteCounter) Count(s string) float64 { return float64(len(s)) }

func TestTrimToWindow(t *testing.T) {
	// Lines cost 5, 3 and 7 tokens; prefix and suffix 2 + 1; the room for lines
	// is W - 384 - 3.
	ctx := "aaaa\nbb\ncccccc\n"
	for _, tc := range []struct {
		window int
		want   string
	}{
		{394, "cccccc\n"},     // room 7: the last line exactly
		{396, "cccccc\n"},     // room 9: 7 + 3 = 10 does not fit
		{397, "bb\ncccccc\n"}, // room 10
		{401, "bb\ncccccc\n"}, // room 14: 15 does not fit
		{402, ctx},            // room 15: everything
		{390, ""},             // room 3: the last line does not fit, so nothing is kept
		{100, ""},             // prefix, suffix and the completion alone overflow
		{1 << 20, ctx},        // plenty of room
	} {
		if got := TrimToWindow(ctx, "pp", "s", tc.window, byteCounter{}); got != tc.want {
			t.Errorf("window %d: got %q, want %q", tc.window, got, tc.want)
		}
	}
	// A last line without "\n" is a line.
	if got := TrimToWindow("x\nyy", "", "", 384+2, byteCounter{}); got != "yy" {
		t.Errorf("got %q, want %q", got, "yy")
	}
	// characters/4: prefix 7 runes = 1.75 tokens; lines "abcdef\n" 1.75 tokens
	// and "é\n" 2 runes = 0.5 token.
	ce := repoctx.CharEstimate{}
	for _, tc := range []struct {
		window int
		want   string
	}{{386, ""}, {387, "é\n"}, {388, "abcdef\né\n"}, {389, "abcdef\né\n"}} {
		if got := TrimToWindow("abcdef\né\n", "abcdefg", "", tc.window, ce); got != tc.want {
			t.Errorf("estimate, window %d: got %q, want %q", tc.window, got, tc.want)
		}
	}
	if got := ce.Count("日本語"); !near(got, 3/repoctx.CharsPerToken) {
		t.Errorf("CharEstimate counts %v for 3 runes, want 3/%g", got, repoctx.CharsPerToken)
	}
}

func TestTrimToChars(t *testing.T) {
	ctx := "aaaa\nbb\ncccccc\n"
	for _, tc := range []struct {
		n    int
		want string
	}{{10, "bb\ncccccc\n"}, {9, "cccccc\n"}, {7, "cccccc\n"}, {6, ""}, {0, ""}, {-1, ""}, {15, ctx}, {100, ctx}} {
		if got := TrimToChars(ctx, tc.n); got != tc.want {
			t.Errorf("TrimToChars(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
	// Bytes, not runes: "é\n" is 3 bytes.
	if got := TrimToChars("a\né\n", 3); got != "é\n" {
		t.Errorf("got %q", got)
	}
	if got := TrimToChars("a\né\n", 2); got != "" {
		t.Errorf("got %q", got)
	}
}

func TestPercentile(t *testing.T) {
	var one2twenty []float64
	for i := 1; i <= 20; i++ {
		one2twenty = append(one2twenty, float64(i))
	}
	for _, tc := range []struct {
		v    []float64
		p    float64
		want float64
	}{
		{one2twenty, 95, 19}, // rank ceil(0.95·20) = 19
		{[]float64{3, 1, 2}, 95, 3},
		{[]float64{4, 1, 3, 2}, 50, 2},
		{[]float64{5}, 95, 5},
		{nil, 95, 0},
	} {
		if got := Percentile(tc.v, tc.p); got != tc.want {
			t.Errorf("Percentile(%v, %v) = %v, want %v", tc.v, tc.p, got, tc.want)
		}
	}
}

func TestSplitLines(t *testing.T) {
	for _, s := range []string{"", "a", "a\n", "a\n\nb", "\n\n"} {
		if got := strings.Join(splitLines(s), ""); got != s {
			t.Errorf("splitLines(%q) joins to %q", s, got)
		}
	}
	if n := len(splitLines("a\n\nb")); n != 3 {
		t.Errorf("splitLines(a\\n\\nb) has %d lines, want 3", n)
	}
}

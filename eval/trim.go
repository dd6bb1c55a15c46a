package eval

import (
	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/complete"
)

// DefaultWindows returns the default model windows, in tokens: Mellum-4B's 8K and
// the 16K of Codestral-2501 and Qwen2.5-Coder-7B.
func DefaultWindows() []int { return []int{8000, 16000} }

// TrimToWindow trims context the way the competition's scorer did for a model
// with a window of window tokens: it keeps whole lines from the end of the
// context while repoctx.MaxNewTokens + tokens(prefix) + tokens(suffix) + tokens(kept
// lines) <= window, and drops the first line that does not fit and everything
// before it. Lines are cut after each "\n" and counted with their "\n", one
// line at a time, by tc. prefix and suffix are what the model is given (a
// prediction's overrides when present); they are never cut, so when they
// alone fill the window the result is "". The result is a suffix of context.
// It is [complete.TrimToWindow].
func TrimToWindow(context, prefix, suffix string, window int, tc repoctx.TokenCounter) string {
	return complete.TrimToWindow(context, prefix, suffix, window, tc) // the rule lives below eval, shared with model prompts
}

// TrimToChars keeps the longest run of whole lines at the end of context that
// is at most n bytes long (lines cut after each "\n"). The result is a suffix
// of context; n <= 0 gives "".
func TrimToChars(context string, n int) string {
	lines := splitLines(context)
	size := make([]float64, len(lines))
	for i, l := range lines {
		size[i] = float64(len(l))
	}
	return joinFrom(lines, keepFrom(size, float64(n)))
}

// keepFrom returns the index of the first line kept when lines are kept from
// the end while the sum of their costs stays <= room.
func keepFrom(cost []float64, room float64) int {
	total := 0.0
	i := len(cost)
	for i > 0 && total+cost[i-1] <= room {
		total += cost[i-1]
		i--
	}
	return i
}

func joinFrom(lines []string, from int) string {
	n := 0
	for _, l := range lines[from:] {
		n += len(l)
	}
	b := make([]byte, 0, n)
	for _, l := range lines[from:] {
		b = append(b, l...)
	}
	return string(b)
}

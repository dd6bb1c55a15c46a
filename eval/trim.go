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

// TrimPromptToWindow returns the prefix and suffix that a prompt for a model
// with a window of window tokens can hold, for the metric allrec: prefix and
// suffix unchanged when tokens(prefix) + tokens(suffix) <= window −
// repoctx.MaxNewTokens (the context, trimmed by [TrimToWindow], then gets the
// rest); otherwise whole lines of the far prefix are cut first, as a
// left-truncated prompt loses them: the prefix keeps the longest run of whole
// lines at its end whose tokens add up to at most window − MaxNewTokens −
// tokens(suffix); when the suffix alone exceeds window − MaxNewTokens the
// prefix is "" and the suffix keeps the longest run of whole lines at its start
// that fits. Lines are cut after each "\n" (the prefix's last, unfinished line
// and the suffix's last line are lines too) and each is counted on its own by
// tc, as [TrimToWindow] counts the context's lines. The results are a suffix of
// prefix and a prefix of suffix. In that case [TrimToWindow] keeps no context.
func TrimPromptToWindow(prefix, suffix string, window int, tc repoctx.TokenCounter) (keptPrefix, keptSuffix string) {
	return trimPrompt(prefix, suffix, float64(window)-repoctx.MaxNewTokens, tc.Count(prefix), tc.Count(suffix), tc.Count)
}

// trimPrompt is [TrimPromptToWindow] for a room of room tokens, with the
// prefix's and suffix's tokens tp and ts counted already and count counting a
// line's.
func trimPrompt(prefix, suffix string, room, tp, ts float64, count func(string) float64) (string, string) {
	if tp+ts <= room {
		return prefix, suffix
	}
	if ts <= room {
		lines := splitLines(prefix)
		cost := make([]float64, len(lines))
		for i, l := range lines {
			cost[i] = count(l)
		}
		return joinFrom(lines, keepFrom(cost, room-ts)), suffix
	}
	total, end := 0.0, 0
	for _, l := range splitLines(suffix) {
		c := count(l)
		if total+c > room {
			break
		}
		total += c
		end += len(l)
	}
	return "", suffix[:end]
}

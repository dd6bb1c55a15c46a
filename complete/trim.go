package complete

import (
	"strings"

	"github.com/repoctx/repoctx"
)

// TrimToWindow trims context the way the competition's scorer did for a model
// with a window of window tokens: it keeps whole lines from the end of the
// context while repoctx.MaxNewTokens + tokens(prefix) + tokens(suffix) + tokens(kept
// lines) <= window, and drops the first line that does not fit and everything
// before it. Lines are cut after each "\n" and counted with their "\n", one
// line at a time, by tc. prefix and suffix are what the model is given (a
// prediction's overrides when present); they are never cut, so when they
// alone fill the window the result is "". The result is a suffix of context.
//
// The rule is the scorer's as the competition described it (see the field notes:
// "the scorer keeps lines from the END of the context while 384 +
// tokens(prefix) + tokens(suffix) + tokens(kept lines) fits the window");
// [Template.Build] applies it to a model's prompt, counting the template's own
// markers with the prefix and suffix.
func TrimToWindow(context, prefix, suffix string, window int, tc repoctx.TokenCounter) string {
	room := float64(window) - repoctx.MaxNewTokens - tc.Count(prefix) - tc.Count(suffix)
	return keepLines(context, room, tc.Count)
}

// keepLines returns the longest run of whole lines at the end of context whose
// costs add up to at most room (lines cut after each "\n", each costed with its
// "\n" by cost). The result is a suffix of context; it is "" when the last line
// alone does not fit.
func keepLines(context string, room float64, cost func(string) float64) string {
	lines := splitLines(context)
	total := 0.0
	i := len(lines)
	for i > 0 {
		c := cost(lines[i-1])
		if total+c > room {
			break
		}
		total += c
		i--
	}
	n := 0
	for _, l := range lines[:i] {
		n += len(l)
	}
	return context[n:]
}

// splitLines cuts s after every "\n"; the last line has no "\n" when s does
// not end in one. "" has no lines.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// Built is a prompt built for one model window.
type Built struct {
	// Text is the prompt to send, in the template's format.
	Text string
	// Context is the part of the prompt's context that was kept: whole lines from
	// its end (a suffix of Prompt.Context, still with repoctx.FileSep separators).
	Context string
	// Tokens are the prompt's token counts.
	Tokens Tokens
}

// Tokens are the token counts of a built prompt, by the counter Counter names;
// counts are fractional for estimates. Prefix, Suffix and Context are counted
// apart, Prompt over the whole prompt text; Markup is the rest of Prompt (the
// template's markers and headers, and whatever merging across the seams changes).
type Tokens struct {
	Counter    string  `json:"counter"`    // the repoctx.TokenCounter's name
	Window     int     `json:"window"`     // the model window
	Completion int     `json:"completion"` // kept for the completion: repoctx.MaxNewTokens
	Prefix     float64 `json:"prefix"`
	Suffix     float64 `json:"suffix"`
	Context    float64 `json:"context"` // the kept context lines as the model sees them
	Markup     float64 `json:"markup"`
	Prompt     float64 `json:"prompt"`
	// ContextLines and KeptLines count the lines of the prompt's context and of the
	// part kept; the difference was dropped from the left.
	ContextLines int `json:"context_lines"`
	KeptLines    int `json:"kept_lines"`
	// Overflow reports whether the prefix, the suffix, the markup and the room for
	// the completion alone exceed the window: no context fits and the prompt is
	// longer than the window allows (a server may refuse it).
	Overflow bool `json:"overflow"`
}

// Build returns the prompt of p for a model with a window of window tokens (0
// means t.Window), trimmed as the competition's scorer trimmed contexts
// ([TrimToWindow]): prefix and suffix are counted first and never cut,
// [repoctx.MaxNewTokens] tokens are kept for the completion, and whole lines are
// dropped from the left of the context until the rest fits. Unlike the scorer's
// count, the template's own markers and headers are counted with the prefix and
// suffix (they are in the prompt the model gets: a dozen tokens or so), and each
// context line is counted as the model sees it (its file separator replaced).
// tc nil means [repoctx.CharEstimate].
func (t *Template) Build(p Prompt, window int, tc repoctx.TokenCounter) Built {
	if tc == nil {
		tc = repoctx.CharEstimate{}
	}
	if window <= 0 {
		window = t.Window
	}
	tk := Tokens{Counter: tc.Name(), Window: window, Completion: repoctx.MaxNewTokens,
		Prefix: tc.Count(p.Prefix), Suffix: tc.Count(p.Suffix), ContextLines: len(splitLines(p.Context))}
	// The markers and headers of the repository-level format, without the context.
	markup := max(0, tc.Count(t.render(p, "", true))-tk.Prefix-tk.Suffix)
	room := float64(window) - repoctx.MaxNewTokens - tk.Prefix - tk.Suffix - markup
	tk.Overflow = room < 0
	kept := keepLines(p.Context, room, func(l string) float64 { return tc.Count(t.context(l)) })
	q := p
	q.Context = kept
	b := Built{Text: t.Render(q), Context: kept}
	tk.KeptLines = len(splitLines(kept))
	tk.Context = tc.Count(t.context(kept))
	tk.Prompt = tc.Count(b.Text)
	tk.Markup = max(0, tk.Prompt-tk.Prefix-tk.Suffix-tk.Context)
	b.Tokens = tk
	return b
}

// KeptParts returns the parts of c that a trimmed context kept shows: kept must
// be a suffix of c.Text (what [Template.Build] and [TrimToWindow] return). A
// part cut by the trimming comes with StartLine moved to its first kept line.
// ok is false when c.Text is not the rendering of c.Parts ("<|file_sep|>{path}\n
// {text}" each, as assemble.Compose renders them) or kept is not a suffix of it;
// the parts are then not known.
func KeptParts(c repoctx.Context, kept string) (parts []repoctx.Part, ok bool) {
	if !strings.HasSuffix(c.Text, kept) {
		return nil, false
	}
	total := 0
	for _, p := range c.Parts {
		total += len(repoctx.FileSep) + len(p.Path) + 1 + len(p.Text)
	}
	if total != len(c.Text) {
		return nil, false
	}
	cut := len(c.Text) - len(kept) // first kept byte
	at := 0
	for _, p := range c.Parts {
		head := len(repoctx.FileSep) + len(p.Path) + 1
		end := at + head + len(p.Text)
		switch {
		case end <= cut: // dropped
		case at >= cut:
			parts = append(parts, p)
		default: // the cut is inside the part: at a line start of its text (or its header)
			if from := cut - at - head; from > 0 {
				p.StartLine += strings.Count(p.Text[:from], "\n")
				p.Text = p.Text[from:]
			}
			parts = append(parts, p)
		}
		at = end
	}
	return parts, true
}

// Package repoctx holds the vocabulary shared by every package of the project:
// a completion point ([Hole]), the pieces of a context ([Part]) and the context
// itself ([Context]), the token counting interface ([TokenCounter]) with the
// characters-per-token estimate, the competition's constants ([FileSep],
// [MaxNewTokens]) and the error kinds that commands map to exit codes.
//
// It imports nothing of the project; the work is done below it:
//
//	grammars  language specs (one file per language, registered in init)
//	chunker   structural and fixed chunking
//	symbols   definitions and imports
//	retrieve  BM25, dense retrieval (LSA or a sentence encoder), weighted RRF
//	store     the on-disk records of a cache directory (segments, locks, GC)
//	snapshot  repository revisions over io/fs (folders, zips, memory), the walker
//	index     one repository's index and its snapshots' views
//	assemble  the context of one hole (Compose)
//	batch     datapoints in, results out (shared by predict and eval)
//	dataset   competition I/O (datapoint files, truth, prediction files)
//	eval      metrics and baselines
//	cmd/repoctx the command line
//
// A Go program that opens a folder and composes the context of one hole is in
// README.md and in the index package's example.
package repoctx

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// FileSep starts every part of a context: "<|file_sep|>{path}\n{content}", as the
// competition's scorer and Qwen2.5-Coder's repository-level prompt format join
// files.
const FileSep = "<|file_sep|>"

// MaxNewTokens is the room in tokens the competition's scorer kept for the
// completion itself (models generated up to 384 new tokens); it counts against the
// model window before the context does.
const MaxNewTokens = 384

// Hole is one completion point: the completion file's path and the text around
// the cursor.
type Hole struct {
	// Path is the completion file, slash-separated, relative to the repository root.
	Path string
	// Prefix and Suffix are the file's text before and after the cursor (UTF-8).
	Prefix, Suffix string
	// Modified lists files changed together with the completion file (may include
	// it), slash-separated and relative to the repository root.
	Modified []string
	// OldText is the completion file's text in the snapshot (before the edit), if
	// known; "" means: take it from the index.
	OldText string
}

// Part is one span of one file in a context.
type Part struct {
	// Path is the file, slash-separated, relative to the repository root.
	Path string `json:"path"`
	// StartLine and EndLine are 1-based, inclusive lines of the file.
	StartLine int `json:"start_line"`
	EndLine   int `json:"end_line"`
	// Score is the fused relevance; higher is more relevant. A context's parts are
	// in ascending score order (most relevant last).
	Score float64 `json:"score"`
	// Why lists how the part was found, e.g. "prefix#1", "after:prefix#1" (the
	// lines after that match), "suffix#3", "before:suffix#3", "def:name(import)".
	Why []string `json:"why"`
	// Text is the part's content as rendered (whole lines, each ending in "\n"
	// unless it is the file's last line without one).
	Text string `json:"text"`
}

// Context is the result of composing one hole: the rendered context, its parts
// and, when the budget planner trimmed them, the prefix and suffix the model is to
// be given instead of the hole's own.
type Context struct {
	// Text is the rendered context: FileSep + path + "\n" + content per part, in
	// Parts order.
	Text string
	// Parts are the context's parts in output order (least relevant first).
	Parts []Part
	// Prefix and Suffix are the overrides for a prediction line: nil when the model
	// is to be given the hole's own.
	Prefix, Suffix *string
}

// TokenCounter counts the tokens a model would see for a text. Implementations
// must be safe for concurrent use.
type TokenCounter interface {
	// Name describes the counter in reports and cache keys, e.g. "characters/4".
	Name() string
	// Count returns the number of tokens of s (fractional for estimates).
	Count(s string) float64
}

// CharsPerToken is the characters-per-token ratio of [CharEstimate] (characters are
// Unicode code points). It is measured, not guessed: with the exact Qwen2.5 counter
// (package tokens, Qwen2.5's tokenizer.json) on the tuning half of the evaluation
// corpus (scripts/corpus.sh; 800 datapoints, 10 repositories), the text the budget planner
// budgets for an 8000-token window (prefix and suffix as predict gives them plus the
// context) has 4.69 (Kotlin, small middles), 4.75 (Kotlin, block), 4.43 (Python,
// small) and 4.44 (Python, block) characters per token pooled, 3.9-4.1 at the 5th
// percentile of datapoints. The lowest pooled figure, rounded down to a whole number,
// is 4; it also stays below the validation half's prefix+suffix (Python 4.06, Kotlin
// 4.34), so a context planned with it overfills a Qwen window rarely and by little
// (the scorer then drops its least relevant lines, which come first). See
// docs/results.md ("Characters per token").
const CharsPerToken = 4.0

// CharEstimate estimates tokens as characters / [CharsPerToken], characters being
// Unicode code points (each invalid UTF-8 byte counts as one). The estimate is not
// rounded, so the tokens of lines add up to the tokens of their concatenation.
type CharEstimate struct{}

// Name returns "characters/4" (see [CharsPerToken]).
func (CharEstimate) Name() string { return fmt.Sprintf("characters/%g", CharsPerToken) }

// Count returns runes(s) / [CharsPerToken].
func (CharEstimate) Count(s string) float64 {
	return float64(utf8.RuneCountInString(s)) / CharsPerToken
}

// ErrSomeFailed is wrapped by a batch's error when its output was written but some
// datapoints failed (they got empty contexts); commands exit with status 3.
var ErrSomeFailed = errors.New("some datapoints failed")

// OptionError reports an option value that makes no sense (a zero top-k, a
// negative budget, NaN weights). Commands show it as a usage error (exit status 2)
// naming the flag made from Option.
type OptionError struct {
	// Option is the option's name as a flag, without dashes, e.g. "top-k".
	Option string
	// Value is the rejected value, formatted.
	Value string
	// Want says what is accepted, e.g. "a positive number of chunks".
	Want string
}

func (e *OptionError) Error() string {
	return fmt.Sprintf("--%s must be %s, not %s", e.Option, e.Want, e.Value)
}

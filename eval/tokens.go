package eval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/repoctx/repoctx/assemble"
	"github.com/sugarme/tokenizer"
	"github.com/sugarme/tokenizer/pretrained"
)

// TokenCounter counts the tokens a model would see for a text. Count must be
// safe for concurrent use.
type TokenCounter interface {
	// Name describes the counter in reports, e.g. "characters/3.5".
	Name() string
	// Count returns the number of tokens of s (fractional for estimates).
	Count(s string) float64
}

// CharsPerToken is the characters-per-token ratio of [CharEstimate]; it is
// assemble's, so that the budget planner and the scorer estimate alike.
const CharsPerToken = assemble.CharsPerToken

// CharEstimate estimates tokens as characters / [CharsPerToken], characters
// being Unicode code points (invalid UTF-8 bytes count one each). The
// estimate is not rounded, so the tokens of lines add up to the tokens of
// their concatenation.
type CharEstimate struct{}

// Name returns "characters/3.5".
func (CharEstimate) Name() string { return "characters/3.5" }

// Count returns runes(s) / 3.5.
func (CharEstimate) Count(s string) float64 { return float64(runeCount(s)) / CharsPerToken }

// HFTokenizer counts tokens with a Hugging Face tokenizer.json, loaded by the
// pure-Go library github.com/sugarme/tokenizer (the tokenizer of hugot's Go
// backend). Counts are of the model's tokens without special tokens added
// around the text (no BOS/EOS); added tokens such as "<|file_sep|>" count
// one each.
//
// The file's truncation and padding settings are ignored: counts are of the
// whole text.
//
// Added tokens (added_tokens in the file) are cut out of the text before the
// rest is tokenized and count one each, as the Rust library does (the Go
// library drops them after a ByteLevel pre-tokenizer); their lstrip, rstrip
// and single_word options are ignored.
//
// Two departures from the Rust tokenizers are known. Go's regexp has no
// look-ahead, so a Split pre-tokenizer pattern with the GPT-2 alternative
// `\s+(?!\S)` (GPT-2, Qwen2.5 and most byte-level BPE tokenizers) is loaded
// without that alternative: a run of spaces before a word stays whole instead
// of giving its last space to the word, which changes counts by a token now
// and then. And the library's ByteLevel pre-tokenizer always applies its own
// word split, as if use_regex were true. Counts are therefore close to, not
// always equal to, the real model's.
//
// Deprecated: use github.com/repoctx/repoctx/tokens, whose counts are exact
// (tokens.Load); the commands no longer use HFTokenizer.
type HFTokenizer struct {
	name  string
	mu    sync.Mutex
	tk    *tokenizer.Tokenizer
	added *regexp.Regexp // matches any added token; nil when there are none

	failures int
}

// LoadTokenizer reads a Hugging Face tokenizer.json file. It returns an error
// starting with "eval: " and naming the file when the file cannot be read, is
// not JSON, or describes a model, normalizer or pre-tokenizer the library
// cannot build (including a pattern Go's regexp cannot compile).
//
// Deprecated: use tokens.Load (package github.com/repoctx/repoctx/tokens).
func LoadTokenizer(path string) (tk *HFTokenizer, err error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("eval: tokenizer: %w", err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return nil, fmt.Errorf("eval: tokenizer %s: not a tokenizer.json: %w", path, err)
	}
	if _, ok := cfg["model"].(map[string]any); !ok {
		return nil, fmt.Errorf("eval: tokenizer %s: not a tokenizer.json: no \"model\" object", path)
	}
	// Counting must see the whole text: a file saved with truncation (common for
	// embedding models, e.g. max_length 128) or padding would cap or pad counts.
	cfg["truncation"] = nil
	cfg["padding"] = nil
	if err := patchPatterns(cfg); err != nil {
		return nil, fmt.Errorf("eval: tokenizer %s: %w", path, err)
	}
	patched, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("eval: tokenizer %s: %w", path, err)
	}
	defer func() {
		// The library panics on unexpected field types instead of failing.
		if r := recover(); r != nil {
			tk, err = nil, fmt.Errorf("eval: tokenizer %s: unsupported: %v", path, r)
		}
	}()
	t, err := pretrained.FromReader(bytes.NewReader(patched))
	if err != nil {
		return nil, fmt.Errorf("eval: tokenizer %s: %w", path, err)
	}
	h := &HFTokenizer{name: "tokenizer " + path, tk: t}
	if added := addedTokens(cfg); len(added) > 0 {
		h.added = regexp.MustCompile(strings.Join(added, "|"))
	}
	return h, nil
}

// addedTokens returns the quoted contents of a tokenizer.json's added tokens,
// longest first (so that the leftmost-first alternation prefers them).
func addedTokens(cfg map[string]any) []string {
	list, _ := cfg["added_tokens"].([]any)
	var out []string
	for _, e := range list {
		if m, ok := e.(map[string]any); ok {
			if s, ok := m["content"].(string); ok && s != "" {
				out = append(out, s)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	for i, s := range out {
		out[i] = regexp.QuoteMeta(s)
	}
	return out
}

// gpt2Lookahead is the alternative of byte-level BPE split patterns that Go's
// regexp cannot compile; the `\s+` alternative after it covers the same text.
const gpt2Lookahead = `\s+(?!\S)|`

// patchPatterns rewrites, everywhere in a tokenizer.json, the Split and
// Replace patterns for Go: a {"String": s} pattern becomes the regular
// expression matching s literally (the library compiles both kinds as
// regular expressions), and the GPT-2 look-ahead alternative is dropped from
// {"Regex": r} patterns. It returns an error for a pattern that still does not
// compile.
func patchPatterns(v any) error {
	switch x := v.(type) {
	case map[string]any:
		if p, ok := x["pattern"].(map[string]any); ok {
			if s, ok := p["String"].(string); ok {
				delete(p, "String")
				p["Regex"] = regexp.QuoteMeta(s)
			} else if r, ok := p["Regex"].(string); ok {
				r = strings.ReplaceAll(r, gpt2Lookahead, "")
				if _, err := regexp.Compile(r); err != nil {
					return fmt.Errorf("pattern not supported by Go's regexp: %v", err)
				}
				p["Regex"] = r
			}
		}
		for _, e := range x {
			if err := patchPatterns(e); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range x {
			if err := patchPatterns(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// Name returns "tokenizer PATH".
func (t *HFTokenizer) Name() string { return t.name }

// Count returns the number of tokens of s. Should the library fail on s
// (it reports errors by panicking at times), Count returns the
// [CharEstimate] of s instead and counts the failure; see Failures.
func (t *HFTokenizer) Count(s string) (n float64) {
	if s == "" {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	defer func() {
		if r := recover(); r != nil {
			t.failures++
			n = CharEstimate{}.Count(s)
		}
	}()
	segments := []string{s}
	if t.added != nil {
		segments = t.added.Split(s, -1)
		n = float64(len(segments) - 1) // one token per added token
	}
	for _, seg := range segments {
		if seg == "" {
			continue
		}
		enc, err := t.tk.EncodeSingle(seg, false)
		if err != nil {
			t.failures++
			return CharEstimate{}.Count(s)
		}
		n += float64(len(enc.Ids))
	}
	return n
}

// Failures returns how many texts the library failed to tokenize (and were
// estimated instead).
func (t *HFTokenizer) Failures() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.failures
}

package tokens

// A hand-written matcher for the split patterns of the GPT-2 family.
//
// Byte-level BPE tokenizers split text with one of a few well-known regular
// expressions before merging (GPT-2's, the cl100k/Llama 3 one and Qwen2's, which
// is cl100k's with single digits). They are alternations tried left to right
// at each position, as backtracking engines (Oniguruma in the Rust library,
// JavaScript's in transformers.js) do, with a look-ahead in `\s+(?!\S)`. This
// file decides each alternative by hand from the classes of the next runes, which
// is 10-20 times faster than a backtracking engine on code. gptPatterns lists
// the exact pattern strings it stands in for; any other pattern goes to regexp2.
// TestScannerMatchesRegexp2 and FuzzScanner check the two agree.

import (
	"unicode"
	"unicode/utf8"
)

// Rune classes of the patterns: \s, \p{L}, \p{N} and the rest ([^\s\p{L}\p{N}]).
const (
	clsOther = iota
	clsSpace
	clsLetter
	clsNumber
)

var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for r := rune(0); r < utf8.RuneSelf; r++ {
		t[r] = classOf(r)
	}
	return t
}()

// classOf returns the class of r. \s is Unicode White_Space, as in Oniguruma,
// Rust's regex and .NET (unicode.IsSpace is that set); \p{L} and \p{N} are the
// general categories.
func classOf(r rune) uint8 {
	switch {
	case unicode.IsSpace(r):
		return clsSpace
	case unicode.IsLetter(r):
		return clsLetter
	case unicode.IsNumber(r):
		return clsNumber
	}
	return clsOther
}

// runeAt returns the rune at byte offset i of s, its class and its width in
// bytes; width 0 at the end of s.
func runeAt(s string, i int) (rune, uint8, int) {
	if i >= len(s) {
		return 0, clsOther, 0
	}
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), asciiClass[c], 1
	}
	r, w := utf8.DecodeRuneInString(s[i:])
	return r, classOf(r), w
}

// gptScanner matches one of the GPT-2-family split patterns; its fields say
// which variant.
type gptScanner struct {
	// foldContractions: (?i:'s|'t|'re|'ve|'m|'ll|'d) instead of the case-sensitive
	// list.
	foldContractions bool
	// anyLetterPrefix: [^\r\n\p{L}\p{N}]?\p{L}+ instead of ` ?\p{L}+`.
	anyLetterPrefix bool
	// maxDigits: \p{N}{1,maxDigits} without a space; 0 means ` ?\p{N}+`.
	maxDigits int
	// punctNewlines: ` ?[^\s\p{L}\p{N}]+[\r\n]*` instead of ` ?[^\s\p{L}\p{N}]+`,
	// followed by the alternative `\s*[\r\n]+`.
	punctNewlines bool
}

// gptPatterns maps the exact pattern strings the scanner implements to its
// variants.
var gptPatterns = map[string]gptScanner{
	// GPT-2 (openai/gpt-2 encoder.py), also the ByteLevel pre-tokenizer's own.
	gpt2Pattern: {},
	// Qwen2 / Qwen2.5 / Qwen3.
	`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`: {
		foldContractions: true, anyLetterPrefix: true, maxDigits: 1, punctNewlines: true,
	},
	// cl100k_base / Llama 3.
	`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`: {
		foldContractions: true, anyLetterPrefix: true, maxDigits: 3, punctNewlines: true,
	},
}

// gpt2Pattern is the split pattern of GPT-2 and of the ByteLevel pre-tokenizer
// with use_regex.
const gpt2Pattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`

// matches appends the [start, end) byte spans of the pattern's successive
// matches in s to out. The patterns match every rune, so the spans tile s.
func (g *gptScanner) matches(s string, out [][2]int) [][2]int {
	for i := 0; i < len(s); {
		n := g.matchAt(s, i)
		out = append(out, [2]int{i, i + n})
		i += n
	}
	return out
}

// matchAt returns the length in bytes (> 0) of the match starting at byte i < len(s).
func (g *gptScanner) matchAt(s string, i int) int {
	r, c, w := runeAt(s, i)
	// Contractions.
	if r == '\'' {
		if n := g.contraction(s, i+1); n > 0 {
			return 1 + n
		}
	}
	_, c2, w2 := runeAt(s, i+w)
	// Letters.
	if g.anyLetterPrefix {
		if c != clsLetter && c != clsNumber && r != '\r' && r != '\n' && c2 == clsLetter {
			return w + w2 + runLen(s, i+w+w2, clsLetter)
		}
	} else if r == ' ' && c2 == clsLetter {
		return w + w2 + runLen(s, i+w+w2, clsLetter)
	}
	if c == clsLetter {
		return w + runLen(s, i+w, clsLetter)
	}
	// Numbers.
	if g.maxDigits == 0 {
		if r == ' ' && c2 == clsNumber {
			return w + w2 + runLen(s, i+w+w2, clsNumber)
		}
		if c == clsNumber {
			return w + runLen(s, i+w, clsNumber)
		}
	} else if c == clsNumber {
		n := w
		for k := 1; k < g.maxDigits; k++ {
			_, ck, wk := runeAt(s, i+n)
			if ck != clsNumber || wk == 0 {
				break
			}
			n += wk
		}
		return n
	}
	// Punctuation and other symbols.
	start := i
	if r == ' ' && c2 == clsOther && w2 > 0 {
		start = i + w
	} else if c != clsOther {
		start = -1
	}
	if start >= 0 {
		end := start + runLen(s, start, clsOther)
		if g.punctNewlines {
			for end < len(s) && (s[end] == '\r' || s[end] == '\n') {
				end++
			}
		}
		return end - i
	}
	// White space: c == clsSpace here.
	end := i + w + runLen(s, i+w, clsSpace)
	if g.punctNewlines {
		// \s*[\r\n]+: up to the run's last line break.
		for k := end - 1; k >= i; k-- {
			if s[k] == '\r' || s[k] == '\n' {
				return k + 1 - i
			}
		}
	}
	// \s+(?!\S): the run, less its last rune unless the run ends the text.
	if end == len(s) {
		return end - i
	}
	_, last := utf8.DecodeLastRuneInString(s[i:end])
	if end-last > i {
		return end - last - i
	}
	// \s+
	return end - i
}

// contraction returns the length of the contraction's letters ("s", "re", ...)
// at byte j of s, or 0.
func (g *gptScanner) contraction(s string, j int) int {
	r1, _, w1 := runeAt(s, j)
	if w1 == 0 {
		return 0
	}
	if g.foldContractions {
		r1 = foldASCII(r1)
	}
	switch r1 {
	case 's', 't', 'm', 'd':
		return w1
	case 'r', 'v', 'l':
		r2, _, w2 := runeAt(s, j+w1)
		if g.foldContractions {
			r2 = foldASCII(r2)
		}
		if (r1 == 'l' && r2 == 'l') || (r1 != 'l' && r2 == 'e') {
			return w1 + w2
		}
	}
	return 0
}

// foldASCII maps the runes that fold to s, t, r, e, v, m, l or d under Unicode
// simple case folding to that letter: their upper case, and ſ (U+017F) to s.
func foldASCII(r rune) rune {
	switch {
	case r >= 'A' && r <= 'Z':
		return r + 'a' - 'A'
	case r == 'ſ':
		return 's'
	}
	return r
}

// runLen returns the length in bytes of the run of runes of class c starting at
// byte i of s.
func runLen(s string, i int, c uint8) int {
	j := i
	for j < len(s) {
		_, cj, w := runeAt(s, j)
		if cj != c {
			break
		}
		j += w
	}
	return j - i
}

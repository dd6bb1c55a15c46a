package tokens

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/repoctx/repoctx/internal/inputfile"
)

// Load reads a Hugging Face tokenizer.json file and builds its counter.
//
// It returns an error starting with "tokens: " and naming the file when the file
// cannot be read or is not a tokenizer.json, or when the file names a part this
// package does not implement (a Unigram or WordLevel model, a Metaspace or
// UnicodeScripts pre-tokenizer, a Precompiled normalizer, BPE dropout, ...):
// counts are exact or not given. The file's truncation, padding,
// post-processor and decoder are ignored (counts are of the whole text, without
// special tokens around it).
func Load(path string) (*Tokenizer, error) {
	raw, err := inputfile.ReadFile(path, inputfile.MaxBytes)
	if err != nil {
		return nil, fmt.Errorf("tokens: %w", err)
	}
	t, err := parse(raw)
	if err != nil {
		return nil, fmt.Errorf("tokens: tokenizer %s: %w", path, err)
	}
	t.name = "tokenizer " + path
	return t, nil
}

// file is the part of a tokenizer.json that counting reads.
type file struct {
	AddedTokens []struct {
		Content    string `json:"content"`
		SingleWord bool   `json:"single_word"`
		Lstrip     bool   `json:"lstrip"`
		Rstrip     bool   `json:"rstrip"`
		Normalized bool   `json:"normalized"`
		Special    bool   `json:"special"`
	} `json:"added_tokens"`
	Normalizer   json.RawMessage `json:"normalizer"`
	PreTokenizer json.RawMessage `json:"pre_tokenizer"`
	Model        *struct {
		Type                    string          `json:"type"`
		Vocab                   json.RawMessage `json:"vocab"`
		Merges                  json.RawMessage `json:"merges"`
		UnkToken                *string         `json:"unk_token"`
		ContinuingSubwordPrefix *string         `json:"continuing_subword_prefix"`
		EndOfWordSuffix         *string         `json:"end_of_word_suffix"`
		FuseUnk                 bool            `json:"fuse_unk"`
		ByteFallback            bool            `json:"byte_fallback"`
		IgnoreMerges            bool            `json:"ignore_merges"`
		Dropout                 *float64        `json:"dropout"`
		MaxInputCharsPerWord    *int            `json:"max_input_chars_per_word"`
	} `json:"model"`
}

// part is the common shape of a normalizer or pre-tokenizer object.
type part struct {
	Type string `json:"type"`
	// Sequence
	Normalizers   []json.RawMessage `json:"normalizers"`
	PreTokenizers []json.RawMessage `json:"pretokenizers"`
	// Split
	Pattern *struct {
		String *string `json:"String"`
		Regex  *string `json:"Regex"`
	} `json:"pattern"`
	Behavior string `json:"behavior"`
	Invert   bool   `json:"invert"`
	// ByteLevel
	AddPrefixSpace *bool `json:"add_prefix_space"`
	UseRegex       *bool `json:"use_regex"`
	// Digits
	IndividualDigits bool `json:"individual_digits"`
	// BertNormalizer
	CleanText          *bool `json:"clean_text"`
	HandleChineseChars *bool `json:"handle_chinese_chars"`
	StripAccents       *bool `json:"strip_accents"`
	Lowercase          *bool `json:"lowercase"`
	// Strip
	StripLeft  *bool `json:"strip_left"`
	StripRight *bool `json:"strip_right"`
}

func parse(raw []byte) (*Tokenizer, error) {
	var f file
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("not a tokenizer.json: %w", err)
	}
	if f.Model == nil {
		return nil, errors.New(`not a tokenizer.json: no "model" object`)
	}
	t := &Tokenizer{}
	t.cache.seed = maphash.MakeSeed()
	var err error
	if t.norm, err = buildNormalizer(f.Normalizer); err != nil {
		return nil, err
	}
	byteLevel := false
	if t.pre, byteLevel, err = buildPreTokenizer(f.PreTokenizer, true); err != nil {
		return nil, err
	}
	if t.model, err = buildModel(&f, byteLevel); err != nil {
		return nil, err
	}
	var rawToks, normToks []addedToken
	for _, a := range f.AddedTokens {
		tok := addedToken{content: a.Content, singleWord: a.SingleWord, lstrip: a.Lstrip, rstrip: a.Rstrip}
		if a.Normalized && t.norm != nil {
			tok.content = t.norm.normalize(a.Content)
			normToks = append(normToks, tok)
		} else if a.Normalized {
			normToks = append(normToks, tok)
		} else {
			rawToks = append(rawToks, tok)
		}
	}
	t.added, t.addedNorm = newAddedSet(rawToks), newAddedSet(normToks)
	return t, nil
}

func isNull(m json.RawMessage) bool {
	s := strings.TrimSpace(string(m))
	return s == "" || s == "null"
}

func buildNormalizer(m json.RawMessage) (normalizer, error) {
	if isNull(m) {
		return nil, nil
	}
	var p part
	if err := json.Unmarshal(m, &p); err != nil {
		return nil, fmt.Errorf("normalizer: %w", err)
	}
	switch p.Type {
	case "NFC":
		return unicodeNorm{norm.NFC}, nil
	case "NFD":
		return unicodeNorm{norm.NFD}, nil
	case "NFKC":
		return unicodeNorm{norm.NFKC}, nil
	case "NFKD":
		return unicodeNorm{norm.NFKD}, nil
	case "Lowercase":
		return lowercase{}, nil
	case "StripAccents":
		return stripAccents{}, nil
	case "Strip":
		return strip{left: boolOr(p.StripLeft, true), right: boolOr(p.StripRight, true)}, nil
	case "BertNormalizer":
		lower := boolOr(p.Lowercase, true)
		return bertNorm{
			cleanText: boolOr(p.CleanText, true), chinese: boolOr(p.HandleChineseChars, true),
			stripAccents: boolOr(p.StripAccents, lower), lowercase: lower,
		}, nil
	case "Sequence":
		var q sequenceNorm
		for _, e := range p.Normalizers {
			n, err := buildNormalizer(e)
			if err != nil {
				return nil, err
			}
			if n != nil {
				q = append(q, n)
			}
		}
		return q, nil
	case "":
		return nil, errors.New("normalizer without a type")
	}
	return nil, fmt.Errorf("normalizer %s is not supported (supported: NFC, NFD, NFKC, NFKD, Lowercase, Strip, StripAccents, BertNormalizer, Sequence)", p.Type)
}

func boolOr(b *bool, def bool) bool {
	if b == nil {
		return def
	}
	return *b
}

// buildPreTokenizer builds a pre-tokenizer and reports whether it ends with
// ByteLevel. last says whether the pre-tokenizer is the last of the chain (a
// ByteLevel anywhere else is not supported).
func buildPreTokenizer(m json.RawMessage, last bool) (preTokenizer, bool, error) {
	if isNull(m) {
		return nil, false, nil
	}
	var p part
	if err := json.Unmarshal(m, &p); err != nil {
		return nil, false, fmt.Errorf("pre_tokenizer: %w", err)
	}
	switch p.Type {
	case "Split":
		s, err := buildSplit(&p)
		return s, false, err
	case "ByteLevel":
		if !last {
			return nil, false, errors.New("pre_tokenizer ByteLevel before other pre-tokenizers is not supported")
		}
		bl := &byteLevelPre{addPrefixSpace: boolOr(p.AddPrefixSpace, true)}
		if boolOr(p.UseRegex, true) {
			g := gptPatterns[gpt2Pattern]
			bl.split2 = &splitPre{m: &g, behavior: isolated}
		}
		return bl, true, nil
	case "Digits":
		b := contiguous
		if p.IndividualDigits {
			b = isolated
		}
		return &splitPre{m: funcMatcher(isNumeric), behavior: b}, false, nil
	case "BertPreTokenizer":
		return bertPre{}, false, nil
	case "WhitespaceSplit":
		return whitespaceSplitPre{}, false, nil
	case "Whitespace":
		return whitespacePre{}, false, nil
	case "Sequence":
		var q sequencePre
		byteLevel := false
		for i, e := range p.PreTokenizers {
			pt, bl, err := buildPreTokenizer(e, last && i == len(p.PreTokenizers)-1)
			if err != nil {
				return nil, false, err
			}
			if pt != nil {
				q = append(q, pt)
			}
			byteLevel = bl
		}
		return q, byteLevel, nil
	case "":
		return nil, false, errors.New("pre_tokenizer without a type")
	}
	return nil, false, fmt.Errorf("pre_tokenizer %s is not supported (supported: Split, ByteLevel, Digits, BertPreTokenizer, Whitespace, WhitespaceSplit, Sequence)", p.Type)
}

func buildSplit(p *part) (*splitPre, error) {
	b, ok := behaviors[p.Behavior]
	if !ok {
		return nil, fmt.Errorf("pre_tokenizer Split: unknown behavior %q", p.Behavior)
	}
	s := &splitPre{behavior: b, invert: p.Invert}
	switch {
	case p.Pattern == nil:
		return nil, errors.New("pre_tokenizer Split without a pattern")
	case p.Pattern.String != nil:
		s.m = literalMatcher(*p.Pattern.String)
	case p.Pattern.Regex != nil:
		if g, ok := gptPatterns[*p.Pattern.Regex]; ok {
			s.m = &g
			break
		}
		re, err := compileRegex(*p.Pattern.Regex)
		if err != nil {
			return nil, fmt.Errorf("pre_tokenizer Split: pattern %q: %w", *p.Pattern.Regex, err)
		}
		s.m = regexMatcher{re}
	default:
		return nil, errors.New("pre_tokenizer Split: pattern is neither String nor Regex")
	}
	return s, nil
}

// isNumeric is Rust's char::is_numeric: general category N.
func isNumeric(r rune) bool {
	if r < 0x80 {
		return r >= '0' && r <= '9'
	}
	return classOf(r) == clsNumber
}

func buildModel(f *file, byteLevel bool) (model, error) {
	mf := f.Model
	var vocab map[string]int32
	if mf.Type == "BPE" || mf.Type == "WordPiece" {
		if isNull(mf.Vocab) {
			return nil, fmt.Errorf("model %s: no vocab", mf.Type)
		}
		if err := json.Unmarshal(mf.Vocab, &vocab); err != nil {
			return nil, fmt.Errorf("model %s: vocab: %w", mf.Type, err)
		}
		if len(vocab) == 0 { // it would count every text as 0 tokens
			return nil, fmt.Errorf("model %s: the vocabulary is empty", mf.Type)
		}
	}
	switch mf.Type {
	case "BPE":
		if mf.Dropout != nil && *mf.Dropout > 0 {
			return nil, fmt.Errorf("model BPE with dropout %g is random: not supported", *mf.Dropout)
		}
		if isNull(mf.Merges) {
			return nil, errors.New("model BPE: missing vocab or merges")
		}
		m := &bpe{vocab: vocab, unk: -1, fuseUnk: mf.FuseUnk, byteFallback: mf.ByteFallback,
			ignoreMerges: mf.IgnoreMerges, byteLevel: byteLevel}
		if mf.ContinuingSubwordPrefix != nil {
			m.prefix = *mf.ContinuingSubwordPrefix
		}
		if mf.EndOfWordSuffix != nil {
			m.suffix = *mf.EndOfWordSuffix
		}
		if mf.UnkToken != nil {
			id, ok := vocab[*mf.UnkToken]
			if !ok {
				return nil, fmt.Errorf("model BPE: unk_token %q is not in the vocabulary", *mf.UnkToken)
			}
			m.unk = id
		}
		pairs, err := parseMerges(mf.Merges)
		if err != nil {
			return nil, err
		}
		m.merges = make(map[uint64]uint64, len(pairs))
		for rank, pr := range pairs {
			a, ok1 := vocab[pr[0]]
			b, ok2 := vocab[pr[1]]
			merged, ok3 := vocab[pr[0]+pr[1][min(len(m.prefix), len(pr[1])):]]
			if !ok1 || !ok2 || !ok3 {
				return nil, fmt.Errorf("model BPE: merge %d (%q %q): a token is not in the vocabulary", rank+1, pr[0], pr[1])
			}
			m.merges[pairKey(a, b)] = uint64(rank)<<32 | uint64(uint32(merged))
		}
		for b := range m.byteID {
			id, ok := vocab[string(byteChar[b])]
			if !ok {
				id = -1
			}
			m.byteID[b] = id
		}
		if m.ignoreMerges && byteLevel {
			m.rawVocab = make(map[string]int32, len(vocab))
			for tok, id := range vocab {
				if raw, ok := unByteLevel(tok); ok {
					m.rawVocab[raw] = id
				}
			}
		}
		return m, nil
	case "WordPiece":
		m := &wordPiece{vocab: vocab, prefix: "##", maxChars: 100}
		if mf.ContinuingSubwordPrefix != nil {
			m.prefix = *mf.ContinuingSubwordPrefix
		}
		if mf.MaxInputCharsPerWord != nil {
			m.maxChars = *mf.MaxInputCharsPerWord
		}
		unk := "[UNK]"
		if mf.UnkToken != nil {
			unk = *mf.UnkToken
		}
		if _, ok := vocab[unk]; !ok {
			return nil, fmt.Errorf("model WordPiece: unk_token %q is not in the vocabulary", unk)
		}
		return m, nil
	}
	if mf.Type == "" {
		return nil, errors.New("model without a type")
	}
	return nil, fmt.Errorf("model %s is not supported (supported: BPE, WordPiece)", mf.Type)
}

// parseMerges reads BPE merges in either format: "a b" strings (split at the
// single space) or [a, b] pairs.
func parseMerges(m json.RawMessage) ([][2]string, error) {
	var pairs [][2]string
	if err := json.Unmarshal(m, &pairs); err == nil {
		return pairs, nil
	}
	var lines []string
	if err := json.Unmarshal(m, &lines); err != nil {
		return nil, errors.New(`model BPE: merges are neither "a b" strings nor [a, b] pairs`)
	}
	pairs = make([][2]string, len(lines))
	for i, l := range lines {
		a, b, ok := strings.Cut(l, " ")
		if !ok || strings.Contains(b, " ") {
			return nil, fmt.Errorf("model BPE: merge %d %q is not two tokens separated by a space", i+1, l)
		}
		pairs[i] = [2]string{a, b}
	}
	return pairs, nil
}

// unByteLevel returns the bytes a byte-level token stands for, or false if tok
// has a character outside the ByteLevel alphabet.
func unByteLevel(tok string) (string, bool) {
	var b []byte
	for _, r := range tok {
		c, ok := charByte[r]
		if !ok {
			return "", false
		}
		b = append(b, c)
	}
	return string(b), true
}

var charByte = func() map[rune]byte {
	m := make(map[rune]byte, 256)
	for b, r := range byteChar {
		m[r] = byte(b)
	}
	return m
}()

package eval

import (
	"unicode"
	"unicode/utf8"
)

// chrF parameters as the competition used them (sacreBLEU's defaults).
const (
	// CharOrder is the highest character n-gram order of [ChrF].
	CharOrder = 6
	// Beta weighs recall Beta times as much as precision in [ChrF]'s F-score.
	Beta = 2
)

// ChrF returns the sentence-level chrF of hypothesis against reference as a
// fraction in [0, 1] (sacreBLEU reports the same number times 100). It is the
// score the competition computed for every completion:
//
//   - characters are Unicode code points (a Python str's characters), not
//     bytes; invalid UTF-8 bytes each count as one U+FFFD;
//   - all white space is removed first, as Python's "".join(s.split()) does
//     (Unicode white space plus the ASCII separators U+001C..U+001F);
//   - for n = 1..[CharOrder], the n-grams of hypothesis and reference are
//     counted and matched with clipped counts: precision_n = matches /
//     hypothesis n-grams, recall_n = matches / reference n-grams;
//   - precision and recall are averaged over the "effective" orders only,
//     those for which both strings have at least one n-gram (sacreBLEU's
//     effective order, its default since 2.0: eps_smoothing=False), so that a
//     3-character line is not punished for having no 6-grams;
//   - F = (1+β²)·P·R / (β²·P + R) with β = [Beta] = 2; 0 when P + R = 0 or no
//     order is effective (in particular when either string is empty after
//     white space removal).
//
// chrF is Popović, "chrF: character n-gram F-score for automatic MT
// evaluation", WMT 2015; the averaging is that of sacreBLEU's CHRF.sentence_score
// (Post, "A Call for Clarity in Reporting BLEU Scores", WMT 2018) with
// char_order=6, word_order=0, beta=2, whitespace=False, lowercase=False.
func ChrF(hypothesis, reference string) float64 {
	return newChrFRef(reference).score(hypothesis)
}

// chrFRef holds a reference's n-gram counts so that many hypotheses can be
// scored against it. It keeps scratch space: one goroutine at a time.
type chrFRef struct {
	counts [CharOrder]map[string]int
	totals [CharOrder]int

	buf  []byte
	offs []int
	seen map[string]int
}

func newChrFRef(reference string) *chrFRef {
	r := &chrFRef{seen: map[string]int{}}
	s, offs := squeeze(reference, nil, nil)
	for n := 1; n <= CharOrder; n++ {
		m := map[string]int{}
		for i := 0; i+n < len(offs); i++ {
			m[s[offs[i]:offs[i+n]]]++
			r.totals[n-1]++
		}
		r.counts[n-1] = m
	}
	return r
}

// score returns ChrF(hypothesis, reference).
func (r *chrFRef) score(hypothesis string) float64 {
	r.buf, r.offs = squeezeBytes(hypothesis, r.buf[:0], r.offs[:0])
	s, offs := r.buf, r.offs
	var sumP, sumR float64
	effective := 0
	seen := r.seen
	for n := 1; n <= CharOrder; n++ {
		nHyp := len(offs) - n // number of n-grams: runes - n + 1, offs has runes+1 entries
		nRef := r.totals[n-1]
		if nHyp <= 0 || nRef == 0 {
			continue
		}
		clear(seen)
		match := 0
		ref := r.counts[n-1]
		for i := 0; i+n < len(offs); i++ {
			g := s[offs[i]:offs[i+n]]
			if rc := ref[string(g)]; rc > 0 { // only n-grams of the reference can match
				k := string(g)
				seen[k]++
				if seen[k] <= rc {
					match++
				}
			}
		}
		sumP += float64(match) / float64(nHyp)
		sumR += float64(match) / float64(nRef)
		effective++
	}
	return fScore(sumP, sumR, effective)
}

// squeeze returns s without white space and the byte offsets of its runes
// (one more entry than runes: the last is the squeezed length), appending to
// out and offs.
func squeeze(s string, out []byte, offs []int) (string, []int) {
	b, o := squeezeBytes(s, out, offs)
	return string(b), o
}

func squeezeBytes(s string, out []byte, offs []int) ([]byte, []int) {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !isPySpace(r) {
			offs = append(offs, len(out))
			if r == utf8.RuneError && size <= 1 {
				out = utf8.AppendRune(out, r)
			} else {
				out = append(out, s[i:i+size]...)
			}
		}
		i += size
	}
	offs = append(offs, len(out))
	return out, offs
}

// isPySpace reports whether Python's str.isspace holds for r: Unicode white
// space (as unicode.IsSpace) plus the information separators U+001C..U+001F.
func isPySpace(r rune) bool {
	if r < utf8.RuneSelf {
		switch r {
		case ' ', '\t', '\n', '\v', '\f', '\r', 0x1c, 0x1d, 0x1e, 0x1f:
			return true
		}
		return false
	}
	return unicode.IsSpace(r)
}

// fScore is chrF's F-beta (Beta) of the precision and recall sums over effective
// n-gram orders (Popović 2015, §2: averaged over the orders, then combined); 0 when
// no order counted or both are 0.
func fScore(sumP, sumR float64, effective int) float64 {
	if effective == 0 {
		return 0
	}
	p, rec := sumP/float64(effective), sumR/float64(effective)
	if p+rec == 0 {
		return 0
	}
	const b2 = Beta * Beta
	return (1 + b2) * p * rec / (b2*p + rec)
}

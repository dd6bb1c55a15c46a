package eval

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

const tol = 1e-12

func near(a, b float64) bool { return math.Abs(a-b) <= tol }

// TestChrFHandComputed checks ChrF against values computed by hand. With
// equal precision and recall P = R, F = 5PR/(4P+R) = P.
func TestChrFHandComputed(t *testing.T) {
	for _, tc := range []struct {
		hyp, ref string
		want     float64
		why      string
	}{
		{"foo(x)", "foo(x)", 1, "identical"},
		{"foo (x)\n", "\tfoo(x)", 1, "white space is removed before counting"},
		{"a\x1cb", "ab", 1, "U+001C is white space for Python's str.split"},
		{"a\u00a0b\u3000", "ab", 1, "Unicode white space"},
		// o1: a b c / a b d: 2 of 3 -> P=R=2/3; o2: ab bc / ab bd: 1/2; o3: abc/abd: 0;
		// o4..o6: no n-grams, not effective. P = R = (2/3+1/2+0)/3 = 7/18.
		{"abc", "abd", 7.0 / 18, "three effective orders"},
		// o1: P = 2/2, R = 2/3; o2: ab / ab bc: P = 1, R = 1/2; o3: hyp has none.
		// P = 1, R = (2/3+1/2)/2 = 7/12; F = 5·(7/12) / (4 + 7/12) = 35/55 = 7/11.
		{"ab", "abc", 7.0 / 11, "recall weighs more"},
		// Swapped: P = 7/12, R = 1: F = 5·(7/12) / (4·7/12 + 1) = 35/40.
		{"abc", "ab", 35.0 / 40, "precision weighs less"},
		// o1: a:3 vs a:2 -> match 2: P = 2/3, R = 1; o2: aa:2 vs aa:1 -> P = 1/2, R = 1;
		// o3: ref has none. P = 7/12, R = 1 -> 7/8 (clipped counts).
		{"aaa", "aa", 7.0 / 8, "clipped counts"},
		// o1: P = 1, R = 1/6; no other order in hyp. F = 5·(1/6) / (4 + 1/6) = 1/5.
		{"a", "abcdef", 0.2, "only order 1 is effective"},
		// o1 5/6, o2 3/5, o3 2/4, o4 1/3, o5 0/2, o6 0/1; P = R = (68/30)/6 = 17/45.
		{"foo(x)", "foo(y)", 17.0 / 45, "all six orders"},
		// Characters are code points: o1 é a / é b: 1/2; o2: 0. P = R = 1/4.
		// (Counting bytes would give 7/18.)
		{"éa", "éb", 0.25, "code points, not bytes"},
		{"xyz", "abc", 0, "nothing in common"},
		{"", "abc", 0, "empty hypothesis"},
		{"abc", "", 0, "empty reference"},
		{" \n", "\t", 0, "both blank"},
	} {
		if got := ChrF(tc.hyp, tc.ref); !near(got, tc.want) {
			t.Errorf("ChrF(%q, %q) = %.15f, want %.15f (%s)", tc.hyp, tc.ref, got, tc.want, tc.why)
		}
	}
}

// refChrF is a direct transcription of sacreBLEU 2.x's sentence chrF
// (extract_all_char_ngrams, _get_match_statistics, _compute_f_score without
// eps smoothing), on rune slices, as an independent check.
func refChrF(hyp, ref string) float64 {
	strip := func(s string) []rune {
		var out []rune
		for _, r := range s {
			if !isPySpace(r) {
				out = append(out, r)
			}
		}
		return out
	}
	counter := func(rs []rune, n int) map[string]int {
		m := map[string]int{}
		for i := 0; i+n <= len(rs); i++ {
			m[string(rs[i:i+n])]++
		}
		return m
	}
	h, r := strip(hyp), strip(ref)
	var stats []int
	for n := 1; n <= 6; n++ {
		hc, rc := counter(h, n), counter(r, n)
		hypCount, refCount, match := 0, 0, 0
		for _, c := range hc {
			hypCount += c
		}
		for _, c := range rc {
			refCount += c
		}
		for g, c := range hc {
			if rcount, ok := rc[g]; ok {
				match += min(c, rcount)
			}
		}
		if len(rc) == 0 {
			hypCount = 0
		}
		stats = append(stats, hypCount, refCount, match)
	}
	factor := 4.0
	avgP, avgR, eff := 0.0, 0.0, 0
	for i := 0; i < 6; i++ {
		nh, nr, nm := stats[3*i], stats[3*i+1], stats[3*i+2]
		if nh > 0 && nr > 0 {
			avgP += float64(nm) / float64(nh)
			avgR += float64(nm) / float64(nr)
			eff++
		}
	}
	if eff == 0 {
		return 0
	}
	avgP /= float64(eff)
	avgR /= float64(eff)
	if avgP+avgR == 0 {
		return 0
	}
	return (1 + factor) * avgP * avgR / (factor*avgP + avgR)
}

// TestChrFMatchesTranscription compares ChrF with refChrF on random strings
// over a small alphabet (so that n-grams repeat and match).
func TestChrFMatchesTranscription(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune("ab(c) é_\n\t")
	gen := func() string {
		var sb strings.Builder
		for n := rng.IntN(14); n > 0; n-- {
			sb.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		return sb.String()
	}
	for i := 0; i < 3000; i++ {
		h, r := gen(), gen()
		got, want := ChrF(h, r), refChrF(h, r)
		if math.Abs(got-want) > 1e-12 {
			t.Fatalf("ChrF(%q, %q) = %v, transcription gives %v", h, r, got, want)
		}
		if got < 0 || got > 1 {
			t.Fatalf("ChrF(%q, %q) = %v outside [0, 1]", h, r, got)
		}
	}
}

func BenchmarkChrFLine(b *testing.B) {
	ref := newChrFRef(`if (issue.status.isTerminal) return ServiceResult.Rejected("Cannot comment on $id")`)
	for i := 0; i < b.N; i++ {
		ref.score(`        if (issue.status == Status.CLOSED) return ServiceResult.NotFound(id)`)
	}
}

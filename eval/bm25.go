package eval

import (
	"math"
	"strings"
	"unicode"
)

// Okapi BM25 parameters of the starter kit's file baseline (rank_bm25's
// BM25Okapi defaults).
const (
	okapiK1      = 1.5
	okapiB       = 0.75
	okapiEpsilon = 0.25
)

// starterKitTokens tokenizes as the competition starter kit's BM25 baseline:
// lower-case, every character that is not a letter or a number becomes a
// space (so "_" separates), split on white space.
func starterKitTokens(s string) []string {
	s = strings.ToLower(s)
	return strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
}

// okapi is rank_bm25's BM25Okapi over a fixed corpus of token lists.
type okapi struct {
	freqs []map[string]int
	lens  []int
	avgdl float64
	idf   map[string]float64
	nDocs int
}

// newOkapi indexes the documents. idf(t) = ln(N - n(t) + 0.5) - ln(n(t) + 0.5),
// with negative values replaced by epsilon times the mean idf over the
// vocabulary, as rank_bm25 does.
func newOkapi(docs [][]string) *okapi {
	o := &okapi{idf: map[string]float64{}, nDocs: len(docs)}
	nd := map[string]int{}
	total := 0
	for _, d := range docs {
		f := map[string]int{}
		for _, w := range d {
			f[w]++
		}
		for w := range f {
			nd[w]++
		}
		o.freqs = append(o.freqs, f)
		o.lens = append(o.lens, len(d))
		total += len(d)
	}
	if len(docs) == 0 {
		return o
	}
	o.avgdl = float64(total) / float64(len(docs))
	sum := 0.0
	var negative []string
	for w, n := range nd {
		v := math.Log(float64(len(docs)-n)+0.5) - math.Log(float64(n)+0.5)
		o.idf[w] = v
		sum += v
		if v < 0 {
			negative = append(negative, w)
		}
	}
	if len(nd) > 0 {
		eps := okapiEpsilon * sum / float64(len(nd))
		for _, w := range negative {
			o.idf[w] = eps
		}
	}
	return o
}

// scores returns every document's score for the query tokens; repeated
// tokens count each time, as in rank_bm25's get_scores:
// Σ_q idf(q) · tf·(k1+1) / (tf + k1·(1 − b + b·dl/avgdl)).
func (o *okapi) scores(query []string) []float64 {
	scores := make([]float64, o.nDocs)
	for _, q := range query {
		idf, ok := o.idf[q]
		if !ok {
			continue
		}
		for i, f := range o.freqs {
			tf := float64(f[q])
			if tf == 0 {
				continue
			}
			dl := float64(o.lens[i])
			scores[i] += idf * tf * (okapiK1 + 1) / (tf + okapiK1*(1-okapiB+okapiB*dl/o.avgdl))
		}
	}
	return scores
}

// best returns the index of the highest-scoring document for the query
// tokens, the first one on ties (numpy's argmax), or -1 for an empty corpus.
func (o *okapi) best(query []string) int {
	if o.nDocs == 0 {
		return -1
	}
	scores := o.scores(query)
	best := 0
	for i, s := range scores {
		if s > scores[best] {
			best = i
		}
	}
	return best
}

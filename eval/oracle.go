package eval

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/repoctx/repoctx/dataset"
	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/snapshot"
)

// ConfigOracle is the ceiling row: what a perfect selector of single lines
// and of identifiers could reach from the snapshot. It has no context; see
// [OracleLineChrF] and [OracleIDRecall].
const ConfigOracle = "oracle"

// OracleLineChrF returns the oracle's line_chrf for one datapoint: the highest
// [ChrF] of one line (stripped) of the files given or of [OracleVisible](prefix,
// suffix) against [MainLine](middle). It equals [LineChrF](middle, the files and
// OracleVisible's lines joined) and does not depend on any window: the oracle
// row has the same value in every setting. [Run] computes it with a per-snapshot
// line table and an exact bound that skips most lines (see oracleSnap.best).
func OracleLineChrF(middle, prefix, suffix string, files ...string) float64 {
	best := 0.0
	for _, f := range append(files, OracleVisible(prefix, suffix)...) {
		best = max(best, LineChrF(middle, f))
	}
	return best
}

// OracleIDRecall returns the oracle's idrec for one datapoint: the share of
// [NewIdentifiers](middle, prefix, suffix, isKeyword) found among the
// [Identifiers] of the files given, and n, their number (0: undefined, left out
// of the mean), as [IDRecall] with all the files as the context.
func OracleIDRecall(middle, prefix, suffix string, isKeyword func(string) bool, files ...string) (recall float64, n int) {
	return IDRecall(middle, prefix, suffix, strings.Join(files, "\n"), isKeyword)
}

// OracleVisible returns the lines of prefix and suffix the oracle may copy: the
// prefix's complete lines (those ending in "\n") and the suffix's lines after
// its first "\n". The two pieces of the cursor's line are left out: they are
// the middle's own line, not a line a model is shown. It is a superset of
// [VisibleText]'s lines (which also leaves out the copy completer's query).
func OracleVisible(prefix, suffix string) []string {
	var out []string
	if i := strings.LastIndexByte(prefix, '\n'); i >= 0 {
		out = append(out, prefix[:i+1])
	}
	if i := strings.IndexByte(suffix, '\n'); i >= 0 && i+1 < len(suffix) {
		out = append(out, suffix[i+1:])
	}
	return out
}

// oracleSnap holds what the oracle needs from one snapshot, built once and
// shared by the snapshot's datapoints (read-only after newOracleSnap).
type oracleSnap struct {
	lines []oracleLine    // distinct non-blank lines of the language's files, white space removed
	ids   map[string]bool // every Identifiers match of those files
}

// oracleLine is one distinct line without white space.
type oracleLine struct {
	text  string
	runes int                  // code points of text
	ascii bool                 // text is ASCII
	sig   [oracleClasses]uint8 // code points per character class (charClass); all 255 when one saturates
}

// oracleClasses is the number of character classes of oracleLine.sig.
const oracleClasses = 16

// charClass maps an ASCII byte to its class: the ten most frequent characters
// of code (measured on Python's standard library) alone, then groups;
// non-ASCII code points are class 15. Any partition gives a bound (the clipped
// matches of a class are at least the sum of its characters'); finer classes
// give a tighter one.
var charClass = func() (t [utf8.RuneSelf]uint8) {
	for i := range t {
		t[i] = 15
	}
	for k, c := range "etsranild_" {
		t[c] = uint8(k)
	}
	for _, c := range "cpfumgh" {
		t[c] = 10
	}
	for _, c := range "bywvkxjqz" {
		t[c] = 11
	}
	for _, c := range ",.\"')(:=[]{}" {
		t[c] = 12
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = 13
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = 14
	}
	return t
}()

// newOracleLine returns the line text (white space removed) of runes code
// points with its class counts; when a count passes 255 they are all 255 (the
// signature then bounds nothing).
func newOracleLine(text string, runes int) oracleLine {
	l := oracleLine{text: text, runes: runes, ascii: runes == len(text)}
	var n [oracleClasses]int
	for _, c := range text {
		k := uint8(15)
		if c < utf8.RuneSelf {
			k = charClass[c]
		}
		n[k]++
	}
	for k, v := range n {
		if v > 255 {
			for k := range l.sig {
				l.sig[k] = 255
			}
			break
		}
		l.sig[k] = uint8(v)
	}
	return l
}

// newOracleSnap reads the files newSnapData reads (the language's files, valid
// UTF-8, universal newlines) into a table of distinct lines and a set of
// identifiers.
func newOracleSnap(files []srcFile) *oracleSnap {
	o := &oracleSnap{ids: map[string]bool{}}
	seen := map[string]bool{}
	var buf []byte
	var offs []int
	for _, f := range files {
		for _, id := range Identifiers(f.text) {
			o.ids[id] = true
		}
		for _, l := range strings.Split(f.text, "\n") {
			buf, offs = squeezeBytes(l, buf[:0], offs[:0])
			if len(buf) == 0 || seen[string(buf)] {
				continue
			}
			s := string(buf)
			seen[s] = true
			o.lines = append(o.lines, newOracleLine(s, len(offs)-1))
		}
	}
	return o
}

// oracleRef is a main line prepared for bounding and scoring lines against it.
// It keeps scratch space: one goroutine at a time.
type oracleRef struct {
	ref   *chrFRef
	fast  *asciiRef            // nil unless the main line is ASCII
	runes int                  // code points of the main line without white space
	sig   [oracleClasses]int   // its code points per character class
	ascii [utf8.RuneSelf]int32 // counts of its ASCII characters
	other map[rune]int32       // counts of the others
	used  [utf8.RuneSelf]int32 // scratch: ASCII characters matched in the current line
	stamp [utf8.RuneSelf]int32 // scratch: the line (gen) used[c] belongs to
	gen   int32
	left  map[rune]int32 // scratch
	cands []oracleCand   // scratch
	seeds []oracleCand   // scratch
}

func newOracleRef(main string) *oracleRef {
	r := &oracleRef{ref: newChrFRef(main), other: map[rune]int32{}, left: map[rune]int32{}}
	s, offs := squeeze(main, nil, nil)
	r.runes = len(offs) - 1
	if r.runes == len(s) {
		r.fast = newASCIIRef(s)
	}
	for _, c := range s {
		k := 15
		if c < utf8.RuneSelf {
			k = int(charClass[c])
		}
		r.sig[k]++
		if c < utf8.RuneSelf {
			r.ascii[c]++
		} else {
			r.other[c]++
		}
	}
	return r
}

// unigramMatches returns the clipped character matches of text (without white
// space) against the main line: Σ_c min(count_text(c), count_main(c)).
func (r *oracleRef) unigramMatches(text string) int {
	r.gen++
	cleared := false
	m := 0
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			if r.stamp[c] != r.gen {
				r.stamp[c], r.used[c] = r.gen, 0
			}
			if r.used[c] < r.ascii[c] {
				r.used[c]++
				m++
			}
			i++
			continue
		}
		u, size := utf8.DecodeRuneInString(text[i:])
		i += size
		if !cleared {
			clear(r.left)
			for k, v := range r.other {
				r.left[k] = v
			}
			cleared = true
		}
		if r.left[u] > 0 {
			r.left[u]--
			m++
		}
	}
	return m
}

// bound returns an upper bound of ChrF for a hypothesis of hyp code points (no
// white space) with at most m1 clipped character matches against the main
// line. The n-gram matches of every order are at most m1: mapping an n-gram to
// its first character, the clipped matches of the n-grams that start with c
// are at most min(count_hyp(c), count_ref(c)). They are also at most the
// number of n-grams of either side. ChrF grows with both precision and recall,
// so these caps give a bound; it is computed with the operations, in the
// order, of chrFRef.score, so that a line whose caps are its true matches gets
// exactly its score.
func (r *oracleRef) bound(hyp, m1 int) float64 { return r.bound2(hyp, m1, m1) }

// bound2 is bound with a separate cap m2 for the orders from 2 up: the clipped
// bigram matches bound them (map an n-gram to its first bigram).
func (r *oracleRef) bound2(hyp, m1, m2 int) float64 {
	var sumP, sumR float64
	effective := 0
	for n := 1; n <= CharOrder; n++ {
		nHyp, nRef := hyp-n+1, r.runes-n+1
		if nHyp <= 0 || nRef <= 0 {
			continue
		}
		m := min(m1, nHyp, nRef)
		if n > 1 {
			m = min(m2, m)
		}
		sumP += float64(m) / float64(nHyp)
		sumR += float64(m) / float64(nRef)
		effective++
	}
	return fScore(sumP, sumR, effective)
}

// oracleStats counts the work of best calls: lines considered, lines whose
// class bound was computed, lines whose character bound was computed, lines
// scored exactly.
type oracleStats struct{ lines, classed, bounded, scored int }

// best returns the highest ChrF of the lines against the main line, at least
// floor. Every line gets two cheap upper bounds of its score: from its length
// alone, then from the matches of its character classes (sig; at least its
// character matches). The oracleSeeds lines of highest class bound are scored
// first, which makes the best score so far high; then each other line whose
// class bound exceeds it gets a tighter bound from its character and bigram
// matches and, when that still exceeds it, its exact score. Every skipped line's
// bound is at most a score found, so the result is the maximum of ChrF over the
// lines (and floor).
func (r *oracleRef) best(lines []oracleLine, floor float64, st *oracleStats) float64 {
	best := floor
	cands := r.cands[:0]
	seeds := r.seeds[:0]
	low := 0 // index in seeds of the lowest bound, once seeds is full
	for i, l := range lines {
		st.lines++
		if r.bound(l.runes, min(l.runes, r.runes)) <= best {
			continue
		}
		st.classed++
		m := 0
		for k, v := range l.sig {
			m += min(int(v), r.sig[k])
		}
		b := r.bound(l.runes, m)
		if b <= best {
			continue
		}
		c := oracleCand{i: int32(i), b: b}
		cands = append(cands, c)
		switch {
		case len(seeds) < oracleSeeds:
			seeds = append(seeds, c)
			if len(seeds) == oracleSeeds {
				low = lowest(seeds)
			}
		case b > seeds[low].b:
			seeds[low] = c
			low = lowest(seeds)
		}
	}
	score := func(l *oracleLine) float64 {
		st.scored++
		if r.fast != nil && l.ascii {
			return r.fast.score(l.text)
		}
		return r.ref.score(l.text)
	}
	for _, c := range seeds {
		best = max(best, score(&lines[c.i]))
	}
	for _, c := range cands {
		if c.b <= best {
			continue
		}
		l := &lines[c.i]
		st.bounded++
		var b float64
		if r.fast != nil && l.ascii {
			b = r.bound2(l.runes, r.fast.matches(l.text, 1), r.fast.matches(l.text, 2))
		} else {
			b = r.bound(l.runes, r.unigramMatches(l.text))
		}
		if b > best {
			best = max(best, score(l)) // a seed scored twice scores the same
		}
	}
	r.cands, r.seeds = cands[:0], seeds[:0]
	return best
}

// oracleSeeds is the number of lines of highest class bound that best scores
// first.
const oracleSeeds = 32

// lowest returns the index of the candidate of lowest bound.
func lowest(cs []oracleCand) int {
	j := 0
	for i := range cs {
		if cs[i].b < cs[j].b {
			j = i
		}
	}
	return j
}

// oracleCand is a line (by index) with a bound of its score.
type oracleCand struct {
	i int32
	b float64
}

// asciiRef scores ASCII hypotheses (white space removed) against an ASCII
// reference as chrFRef.score does, with n-grams packed into integers (up to
// CharOrder = 6 bytes and the order) and the clipped counts kept in slices: the
// oracle scores thousands of lines per datapoint.
type asciiRef struct {
	short  []int32          // unigram c at c, bigram ab at 128 + 128a + b: 1 + index into count, 0 if absent
	slot   map[uint64]int32 // packed n-gram of 3 bytes or more -> index into count
	count  []int32          // the reference's count of each n-gram
	totals [CharOrder]int   // the reference's n-grams per order
	used   []int32          // scratch: hypothesis n-grams matched, per slot
	stamp  []int32          // scratch: the pass used[i] belongs to
	gen    int32
}

// shortSlots is the size of asciiRef.short: 128 unigrams and 128² bigrams.
const shortSlots = utf8.RuneSelf * (1 + utf8.RuneSelf)

// shortKey returns the index into asciiRef.short of s[i:i+n], n 1 or 2.
func shortKey(s string, i, n int) int {
	if n == 1 {
		return int(s[i])
	}
	return utf8.RuneSelf + utf8.RuneSelf*int(s[i]) + int(s[i+1])
}

// ngramKey packs s[i:i+n] (n <= 7) and n into an integer.
func ngramKey(s string, i, n int) uint64 {
	k := uint64(n) << 56
	for j := 0; j < n; j++ {
		k |= uint64(s[i+j]) << (8 * j)
	}
	return k
}

func newASCIIRef(s string) *asciiRef {
	a := &asciiRef{slot: map[uint64]int32{}, short: make([]int32, shortSlots)}
	for n := 1; n <= CharOrder; n++ {
		for i := 0; i+n <= len(s); i++ {
			var j int32
			if n <= 2 {
				k := shortKey(s, i, n)
				if a.short[k] == 0 {
					a.count = append(a.count, 0)
					a.short[k] = int32(len(a.count))
				}
				j = a.short[k] - 1
			} else {
				k := ngramKey(s, i, n)
				var ok bool
				if j, ok = a.slot[k]; !ok {
					j = int32(len(a.count))
					a.slot[k] = j
					a.count = append(a.count, 0)
				}
			}
			a.count[j]++
			a.totals[n-1]++
		}
	}
	a.used = make([]int32, len(a.count))
	a.stamp = make([]int32, len(a.count))
	return a
}

// matches returns the clipped matches of the n-grams of s against the reference's.
func (a *asciiRef) matches(s string, n int) int {
	a.gen++
	m := 0
	for i := 0; i+n <= len(s); i++ {
		var j int32
		if n <= 2 {
			if j = a.short[shortKey(s, i, n)] - 1; j < 0 {
				continue
			}
		} else {
			var ok bool
			if j, ok = a.slot[ngramKey(s, i, n)]; !ok {
				continue
			}
		}
		if a.stamp[j] != a.gen {
			a.stamp[j], a.used[j] = a.gen, 0
		}
		if a.used[j] < a.count[j] {
			a.used[j]++
			m++
		}
	}
	return m
}

// score returns ChrF(s, reference) for an ASCII s without white space, with the
// operations of chrFRef.score in its order (the same number).
func (a *asciiRef) score(s string) float64 {
	var sumP, sumR float64
	effective := 0
	for n := 1; n <= CharOrder; n++ {
		nHyp, nRef := len(s)-n+1, a.totals[n-1]
		if nHyp <= 0 || nRef == 0 {
			continue
		}
		match := a.matches(s, n)
		sumP += float64(match) / float64(nHyp)
		sumR += float64(match) / float64(nRef)
		effective++
	}
	return fScore(sumP, sumR, effective)
}

// visibleLines returns OracleVisible's lines as oracleLines (distinct, white
// space removed).
func visibleOracleLines(prefix, suffix string) []oracleLine {
	var out []oracleLine
	seen := map[string]bool{}
	for _, t := range OracleVisible(prefix, suffix) {
		for _, l := range strings.Split(t, "\n") {
			s, offs := squeeze(l, nil, nil)
			if s != "" && !seen[s] {
				seen[s] = true
				out = append(out, newOracleLine(s, len(offs)-1))
			}
		}
	}
	return out
}

// scoreOracle returns the oracle's scores of one datapoint in every setting
// (the same values in each).
func (o *oracleSnap) score(middle, prefix, suffix string, settings []Setting, isKeyword func(string) bool, st *oracleStats) DatapointScores {
	var lineChrF float64
	if main := MainLine(middle); main != "" {
		r := newOracleRef(main)
		lineChrF = r.best(o.lines, r.best(visibleOracleLines(prefix, suffix), 0, st), st)
	}
	// prefix and suffix are the datapoint's own: the new identifiers are the
	// novel ones, and idrec is novelrec.
	ids := NewIdentifiers(middle, prefix, suffix, isKeyword)
	ps := PointScores{LineChrF: lineChrF}
	if len(ids) > 0 {
		found := 0
		for _, id := range ids {
			if o.ids[id] {
				found++
			}
		}
		v := float64(found) / float64(len(ids))
		ps.IDRec, ps.NovelRec = &v, &v
	}
	all := NewIdentifiers(middle, "", "", isKeyword)
	if len(all) > 0 {
		shown := map[string]bool{}
		for _, t := range []string{prefix, suffix} {
			for _, id := range Identifiers(t) {
				shown[id] = true
			}
		}
		found := 0
		for _, id := range all {
			if o.ids[id] || shown[id] {
				found++
			}
		}
		v := float64(found) / float64(len(all))
		ps.AllRec = &v
	}
	ds := DatapointScores{NewIDs: len(ids), NovelIDs: len(ids), AllIDs: len(all), Settings: make([]PointScores, len(settings))}
	for k := range settings {
		ds.Settings[k] = ps
	}
	return ds
}

// oracleRun scores the oracle on dps: snapshots are read once each (their
// datapoints are taken together; at most about workers snapshots are held at a
// time), datapoints in parallel. A datapoint whose snapshot cannot be opened
// is logged, marked with its error and scored 0. progress, if not nil, is
// called after each datapoint from one goroutine at a time.
func oracleRun(ctx context.Context, src snapshot.Source, spec *grammars.Spec, dps []dataset.Datapoint, middles []string, settings []Setting, workers int, log io.Writer, progress func()) ([]DatapointScores, error) {
	type entry struct {
		once sync.Once
		sd   *oracleSnap
		err  error
		left int
	}
	entries := map[string]*entry{}
	var names []string
	byName := map[string][]int{}
	for i := range dps {
		n := dps[i].SnapshotName()
		if entries[n] == nil {
			entries[n] = &entry{}
			names = append(names, n)
		}
		entries[n].left++
		byName[n] = append(byName[n], i)
	}
	out := make([]DatapointScores, len(dps))
	var mu sync.Mutex
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < max(1, workers); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				d := &dps[i]
				e := entries[d.SnapshotName()]
				e.once.Do(func() {
					snap, err := src.Open(d.SnapshotName())
					if err != nil {
						e.err = err
						return
					}
					e.sd = newOracleSnap(newSnapData(snap, spec).files)
				})
				var ds DatapointScores
				msg := ""
				if e.err != nil {
					msg = fmt.Sprintf("%s: snapshot %s: %v", d.Name(), d.SnapshotName(), e.err)
					ds = DatapointScores{Settings: make([]PointScores, len(settings)), Error: ConfigOracle + ": " + msg}
					if ids := NewIdentifiers(middles[i], d.Prefix, d.Suffix, spec.IsKeyword); len(ids) > 0 {
						ds.NewIDs, ds.NovelIDs = len(ids), len(ids)
						for k := range ds.Settings {
							zero := 0.0
							ds.Settings[k].IDRec, ds.Settings[k].NovelRec = &zero, &zero
						}
					}
					if all := NewIdentifiers(middles[i], "", "", spec.IsKeyword); len(all) > 0 {
						ds.AllIDs = len(all)
						for k := range ds.Settings {
							zero := 0.0
							ds.Settings[k].AllRec = &zero
						}
					}
				} else {
					ds = e.sd.score(middles[i], d.Prefix, d.Suffix, settings, spec.IsKeyword, &oracleStats{})
				}
				ds.ID = d.ID
				out[i] = ds
				mu.Lock()
				if msg != "" {
					fmt.Fprintf(log, "error: %s\n", strings.ReplaceAll(msg, "\n", "; ")) // as batch.Run logs
				}
				if e.left--; e.left == 0 {
					e.sd = nil // every datapoint of the snapshot is done
				}
				if progress != nil {
					progress()
				}
				mu.Unlock()
			}
		}()
	}
	var err error
feed:
	for _, n := range names {
		for _, i := range byName[n] {
			select {
			case next <- i:
			case <-ctx.Done():
				err = ctx.Err()
				break feed
			}
		}
	}
	close(next)
	wg.Wait()
	return out, err
}

// Command novelsplit splits the metric novelrec (docs/metrics.md) of prediction files
// by where the middle's novel identifiers occur: in its code, or only in its comments
// and string literals (prose: "are", "within", a message's words), as the language's
// syntax tree tells (the grammar's comment and string node types; the interpolations
// of a string count as code). It prints, for the untrimmed context of each
// predictions file, novelrec over all novel identifiers (as `repoctx eval` gives it),
// over the code ones (codenovel) and over the prose-only ones (prosenovel), with the
// share of prose among the novel identifiers, and the paired differences against the
// first file: mean [95% bootstrap interval, 2000 resamples of the datapoints, fixed
// seed].
//
// Usage (from the repository root):
//
//	go run -tags kotlin2 ./scripts/novelsplit -data CELL -lang kotlin -stage valid-small \
//	    fixed=FIXED.jsonl default=DEFAULT.jsonl
//
// It exits 1 naming the file and line of a datapoint or prediction it cannot read.
package main

import (
	"errors"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"

	sitter "github.com/smacker/go-tree-sitter"

	"github.com/repoctx/repoctx/dataset"
	"github.com/repoctx/repoctx/eval"
	"github.com/repoctx/repoctx/grammars"

	_ "github.com/repoctx/repoctx/chunker" // registers the languages' text rules
)

func main() {
	data := flag.String("data", "", "`folder` holding {lang}-{stage}.jsonl and .truth.jsonl")
	lang := flag.String("lang", "", "the datapoints' `language` (a grammar name)")
	stage := flag.String("stage", "", "the stage `name`")
	flag.Parse()
	if err := run(*data, *lang, *stage, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "novelsplit:", err)
		os.Exit(1)
	}
}

// scores are one predictions file's per-datapoint recalls (-1: undefined).
type scores struct{ all, code, prose []float64 }

func run(data, lang, stage string, preds []string) error {
	spec := grammars.Lookup(lang)
	if spec == nil || len(preds) == 0 {
		return fmt.Errorf("need a registered -lang and at least one NAME=FILE predictions file")
	}
	base := filepath.Join(data, lang+"-"+stage)
	dps, bad, err := dataset.ReadDatapointsFile(base + ".jsonl")
	if err != nil {
		return err
	}
	if err := errors.Join(bad...); err != nil {
		return err
	}
	truth, err := dataset.ReadTruth(base + ".truth.jsonl")
	if err != nil {
		return err
	}
	middles := map[string]string{}
	for id, t := range truth {
		middles[id] = t.Middle
	}
	ps := grammars.NewParsers(0)
	defer ps.Close()
	code := make([]string, len(dps)) // each middle with its comments and strings blanked
	prose, nov := 0, 0
	for i, d := range dps {
		m, ok := middles[d.ID]
		if !ok {
			return fmt.Errorf("%s.truth.jsonl: no middle for datapoint %s", base, d.ID)
		}
		code[i] = codeOnly(ps, spec, d.Prefix, m, d.Suffix)
		all := eval.NewIdentifiers(m, d.Prefix, d.Suffix, spec.IsKeyword)
		inCode := eval.NewIdentifiers(code[i], d.Prefix, d.Suffix, spec.IsKeyword)
		nov += len(all)
		prose += len(all) - len(inCode)
	}
	var names []string
	var all []scores
	for _, arg := range preds {
		name, file, ok := strings.Cut(arg, "=")
		if !ok {
			file = arg
			name = strings.TrimSuffix(filepath.Base(arg), ".jsonl")
		}
		pr, err := eval.ReadPredictions(file, len(dps))
		if err != nil {
			return err
		}
		var s scores
		for i, d := range dps {
			m := middles[d.ID]
			// Each share as eval.NovelRecall gives it; the prose identifiers are
			// scored as a middle of their own (they are new identifiers already).
			r := func(middle string) float64 {
				v, n := eval.NovelRecall(middle, d.Prefix, d.Suffix, pr[i].Context, spec.IsKeyword)
				if n == 0 {
					return -1
				}
				return v
			}
			inCode := map[string]bool{}
			for _, id := range eval.NewIdentifiers(code[i], d.Prefix, d.Suffix, spec.IsKeyword) {
				inCode[id] = true
			}
			var proseIDs []string
			for _, id := range eval.NewIdentifiers(m, d.Prefix, d.Suffix, spec.IsKeyword) {
				if !inCode[id] {
					proseIDs = append(proseIDs, id)
				}
			}
			s.all = append(s.all, r(m))
			s.code = append(s.code, r(code[i]))
			s.prose = append(s.prose, r(strings.Join(proseIDs, " ")))
		}
		names, all = append(names, name), append(all, s)
	}
	fmt.Printf("%s: %d datapoints; %d novel identifiers, %d (%.0f%%) only in comments and strings of the middle\n",
		base, len(dps), nov, prose, 100*float64(prose)/float64(max(nov, 1)))
	fmt.Printf("%-12s %14s %14s %14s\n", "config", "novelrec (n)", "codenovel (n)", "prosenovel (n)")
	for i, n := range names {
		fmt.Printf("%-12s %14s %14s %14s\n", n, mean(all[i].all), mean(all[i].code), mean(all[i].prose))
	}
	fmt.Printf("paired differences against %s: mean [95%% bootstrap interval]\n", names[0])
	for i := 1; i < len(names); i++ {
		fmt.Printf("%-12s %26s %26s %26s\n", names[i], paired(all[i].all, all[0].all), paired(all[i].code, all[0].code), paired(all[i].prose, all[0].prose))
	}
	return nil
}

// mean formats the mean of the defined values and their count.
func mean(v []float64) string {
	s, n := 0.0, 0
	for _, x := range v {
		if x >= 0 {
			s, n = s+x, n+1
		}
	}
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f (%d)", s/float64(n), n)
}

// paired formats the mean difference a-b over the datapoints where both are defined,
// with a 95% percentile bootstrap interval (2000 resamples, seed 1).
func paired(a, b []float64) string {
	var d []float64
	for i := range a {
		if a[i] >= 0 && b[i] >= 0 {
			d = append(d, a[i]-b[i])
		}
	}
	if len(d) == 0 {
		return "-"
	}
	avg := func(idx func(int) int) float64 {
		s := 0.0
		for i := range d {
			s += d[idx(i)]
		}
		return s / float64(len(d))
	}
	m := avg(func(i int) int { return i })
	rng := rand.New(rand.NewSource(1))
	bs := make([]float64, 2000)
	for k := range bs {
		bs[k] = avg(func(int) int { return rng.Intn(len(d)) })
	}
	sort.Float64s(bs)
	lo, hi := bs[49], bs[1949]
	mark := ""
	if lo > 0 || hi < 0 {
		mark = "*"
	}
	return fmt.Sprintf("%+.3f [%+.3f, %+.3f]%s", m, lo, hi, mark)
}

// codeOnly returns middle with the bytes of its comments and string literals (but not
// a string's interpolations) blanked, as the syntax tree of prefix+middle+suffix
// places them; middle itself when the file does not parse.
func codeOnly(ps *grammars.Parsers, spec *grammars.Spec, prefix, middle, suffix string) string {
	text := []byte(prefix + middle + suffix)
	tree, _, err := ps.Parse(spec, text)
	if err != nil {
		return middle
	}
	defer tree.Close()
	lo, hi := uint32(len(prefix)), uint32(len(prefix)+len(middle))
	out := []byte(middle)
	blank := func(a, b uint32) {
		a, b = max(a, lo), min(b, hi)
		for i := a; i < b; i++ {
			if out[i-lo] != '\n' {
				out[i-lo] = ' '
			}
		}
	}
	var walk func(n *sitter.Node, inString bool)
	walk = func(n *sitter.Node, inString bool) {
		if n.EndByte() <= lo || n.StartByte() >= hi {
			return
		}
		t := spec.TypeOf(n)
		switch {
		case spec.Comments[t]:
			blank(n.StartByte(), n.EndByte())
			return
		case spec.Strings[t]:
			inString = true
		case inString && strings.Contains(t, "interpolat"):
			inString = false
		}
		if n.ChildCount() == 0 {
			if inString {
				blank(n.StartByte(), n.EndByte())
			}
			return
		}
		// The string's own bytes between its children (a grammar may leave the content
		// outside any child): blank them too.
		prev := n.StartByte()
		for i := 0; i < int(n.ChildCount()); i++ {
			c := n.Child(i)
			if inString {
				blank(prev, c.StartByte())
			}
			walk(c, inString)
			prev = c.EndByte()
		}
		if inString {
			blank(prev, n.EndByte())
		}
	}
	walk(tree.RootNode(), false)
	return string(out)
}

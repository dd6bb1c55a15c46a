package assemble

import (
	"context"

	"fmt"
	"strings"
	"testing"

	"github.com/repoctx/repoctx"
)

// byteTokens is a stub counter: one token per byte.
type byteTokens struct{}

func (byteTokens) Count(s string) float64 { return float64(len(s)) }
func (byteTokens) Name() string           { return "bytes" }

// numbered returns n lines "<tag> NN\n" (each 7 bytes for a 3-letter tag and
// two digits).
func numbered(tag string, from, n int) string {
	var sb strings.Builder
	for i := from; i < from+n; i++ {
		fmt.Fprintf(&sb, "%s %02d\n", tag, i)
	}
	return sb.String()
}

func TestSplitHoleShortUntouched(t *testing.T) {
	p := Plan{Window: 1000, Tokens: byteTokens{}}
	prefix, suffix := numbered("pre", 0, 10)+"    x = ", numbered("suf", 0, 5)
	s := p.SplitHole(prefix, suffix)
	if s.Prefix != prefix || s.Suffix != suffix || s.PrefixTrimmed || s.SuffixTrimmed || s.PrefixCut != 0 || s.SuffixCut != len(suffix) {
		t.Errorf("short hole changed: %+v", s)
	}
	if want := float64(1000 - repoctx.MaxNewTokens - len(prefix) - len(suffix)); s.Room != want {
		t.Errorf("room %v, want %v tokens", s.Room, want)
	}
}

// TestSplitHoleContextWindow: a ContextWindow over Window leaves the prefix and
// suffix as planned for Window and gives the context the room of the larger window.
func TestSplitHoleContextWindow(t *testing.T) {
	p := Plan{Window: repoctx.MaxNewTokens + 400, Tokens: byteTokens{}, Share: 0.5}
	prefix, suffix := numbered("pre", 0, 90)+"    x = ", numbered("suf", 0, 3)
	small := p.SplitHole(prefix, suffix)
	p.ContextWindow = repoctx.MaxNewTokens + 1000
	big := p.SplitHole(prefix, suffix)
	if big.Prefix != small.Prefix || big.Suffix != small.Suffix || big.PrefixCut != small.PrefixCut || big.SuffixCut != small.SuffixCut {
		t.Errorf("the prefix/suffix plan changed with ContextWindow: %+v, want %+v", big, small)
	}
	if want := float64(1000 - len(big.Prefix) - len(big.Suffix)); big.Room != want || big.Room != small.Room+600 {
		t.Errorf("room %v, want %v (600 more than for Window)", big.Room, want)
	}
	p.ContextWindow = 100 // under Window: Window counts
	if got := p.SplitHole(prefix, suffix); got.Room != small.Room {
		t.Errorf("ContextWindow under Window: room %v, want %v", got.Room, small.Room)
	}
	p.ContextWindow = -1
	o := DefaultOptions()
	o.Plan = p.withDefaults("")
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "plan-context-window") {
		t.Errorf("a negative ContextWindow: %v, want an error naming plan-context-window", err)
	}
}

// TestSplitHoleLongPrefix: a long prefix keeps its last whole lines (nearest the
// cursor) and the unfinished cursor line; the short suffix is untouched.
func TestSplitHoleLongPrefix(t *testing.T) {
	p := Plan{Window: repoctx.MaxNewTokens + 400, Tokens: byteTokens{}, Share: 0.5} // allowance 200 tokens
	prefix := numbered("pre", 0, 90) + "    x = "
	suffix := numbered("suf", 0, 3) // 21 tokens
	s := p.SplitHole(prefix, suffix)
	if !s.PrefixTrimmed || s.SuffixTrimmed {
		t.Fatalf("trimmed prefix %v suffix %v, want prefix only", s.PrefixTrimmed, s.SuffixTrimmed)
	}
	if !strings.HasSuffix(prefix, s.Prefix) || prefix[s.PrefixCut:] != s.Prefix || prefix[s.PrefixCut-1] != '\n' {
		t.Fatalf("prefix %q is not whole lines at the end of the original", s.Prefix)
	}
	if !strings.HasSuffix(s.Prefix, "pre 89\n    x = ") {
		t.Errorf("the lines nearest the cursor are missing: %q", s.Prefix)
	}
	// 200 - 21 (suffix) = 179 tokens for the prefix: the cursor line (8) + 24 lines of 7.
	if got, want := len(s.Prefix), 8+24*7; got != want {
		t.Errorf("prefix kept %d tokens, want %d (the most whole lines within the allowance)", got, want)
	}
	if s.Suffix != suffix {
		t.Errorf("suffix changed: %q", s.Suffix)
	}
	if want := float64(400 - len(s.Prefix) - len(s.Suffix)); s.Room != want {
		t.Errorf("room %v, want %v", s.Room, want)
	}
}

// TestSplitHoleSuffix: a long suffix keeps its first lines within its share; when
// the prefix needs less than its part, the suffix may use the rest.
func TestSplitHoleSuffix(t *testing.T) {
	p := Plan{Window: repoctx.MaxNewTokens + 400, Tokens: byteTokens{}, Share: 0.5, SuffixShare: 0.25} // allowance 200
	prefix := numbered("pre", 0, 90) + "x"
	suffix := "rest of line\n" + numbered("suf", 0, 90)
	s := p.SplitHole(prefix, suffix)
	if !s.SuffixTrimmed || !strings.HasPrefix(suffix, s.Suffix) || !strings.HasSuffix(s.Suffix, "\n") {
		t.Fatalf("suffix %q: want the first whole lines", s.Suffix)
	}
	if len(s.Suffix) > 50 || len(s.Suffix)+7 <= 50 {
		t.Errorf("suffix kept %d tokens, want the most whole lines within 50", len(s.Suffix))
	}
	if total := len(s.Prefix) + len(s.Suffix); total > 200 {
		t.Errorf("prefix+suffix %d tokens over the allowance 200", total)
	}
	// Short prefix: the suffix takes what the prefix does not need.
	s = p.SplitHole("short\n", suffix)
	if s.PrefixTrimmed || len(s.Suffix) > 194 || len(s.Suffix) < 194-7 {
		t.Errorf("short prefix: suffix kept %d tokens, want about 194", len(s.Suffix))
	}
	// The cursor's own line is kept even when it alone is over the allowance.
	long := strings.Repeat("z", 500)
	s = p.SplitHole(numbered("pre", 0, 5)+long, long+"\n"+numbered("suf", 0, 5))
	if s.Prefix != long || s.Suffix != long+"\n" {
		t.Errorf("cursor line lost: prefix %d bytes, suffix %d bytes", len(s.Prefix), len(s.Suffix))
	}
	if s.Room != 0 {
		t.Errorf("room %v, want 0 when the cursor lines fill the window", s.Room)
	}
	// Share >= 1: never trimmed.
	s = Plan{Window: repoctx.MaxNewTokens + 400, Tokens: byteTokens{}, Share: 1}.SplitHole(prefix, suffix)
	if s.PrefixTrimmed || s.SuffixTrimmed || s.Room != 0 {
		t.Errorf("share 1 trimmed: %+v", s)
	}
}

// TestSplitHoleRealCounts: with a non-additive counter (whole-text count above the
// sum of the lines'), the kept prefix still fits the allowance.
func TestSplitHoleRealCounts(t *testing.T) {
	tc := countFunc(func(s string) float64 { return float64(len(s) + strings.Count(s, "\n")*strings.Count(s, "\n")/10) })
	p := Plan{Window: repoctx.MaxNewTokens + 1000, Tokens: tc, Share: 0.5}
	s := p.SplitHole(numbered("pre", 0, 99)+"x", "")
	if n := tc.Count(s.Prefix); n > 500 {
		t.Errorf("prefix %v tokens over the allowance 500", n)
	}
}

type countFunc func(string) float64

func (f countFunc) Count(s string) float64 { return f(s) }
func (f countFunc) Name() string           { return "func" }

// TestFitTokens: parts are dropped least relevant first until the lines, counted one
// by one, fit; the best part ends the context; the most relevant dropped part keeps
// its last lines when at least minTailLines fit.
func TestFitTokens(t *testing.T) {
	parts := []repoctx.Part{
		{Path: "a", Text: numbered("aaa", 0, 20), StartLine: 1, EndLine: 20, Score: 1},
		{Path: "b", Text: numbered("bbb", 0, 20), StartLine: 1, EndLine: 20, Score: 2},
		{Path: "c", Text: numbered("ccc", 0, 4), StartLine: 1, EndLine: 4, Score: 3},
	}
	hdr := float64(len(repoctx.FileSep) + 2)
	cost := func(ps []repoctx.Part) float64 { return float64(len(render(ps))) }
	// Room for c and 5 lines of b under its header.
	room := hdr + 28 + hdr + 5*7 + 3
	got := fitTokens(parts, room, byteTokens{})
	if len(got) != 2 || got[1].Path != "c" || got[0].Path != "b" {
		t.Fatalf("kept %+v, want the tail of b, then c", got)
	}
	if got[0].Text != numbered("bbb", 15, 5) || got[0].StartLine != 16 {
		t.Errorf("tail of b = %q from line %d, want its last 5 lines from 16", got[0].Text, got[0].StartLine)
	}
	if c := cost(got); c > room {
		t.Errorf("context %v tokens over room %v", c, room)
	}
	// Too little room for minTailLines of b: only c.
	got = fitTokens(parts, hdr+28+hdr+2*7, byteTokens{})
	if len(got) != 1 || got[0].Path != "c" {
		t.Errorf("kept %+v, want c only", got)
	}
	// Everything fits: unchanged.
	if got = fitTokens(parts, 1e6, byteTokens{}); len(got) != 3 {
		t.Errorf("kept %d parts, want 3", len(got))
	}
	// No room: nothing.
	if got = fitTokens(parts, 0, byteTokens{}); len(got) != 0 {
		t.Errorf("kept %+v with no room", got)
	}
	// A part without a final newline gets one, so the next header starts a line.
	got = fitTokens([]repoctx.Part{{Path: "a", Text: "x"}, {Path: "b", Text: "y\n"}}, 1e6, byteTokens{})
	if render(got) != repoctx.FileSep+"a\nx\n"+repoctx.FileSep+"b\ny\n" {
		t.Errorf("render = %q", render(got))
	}
}

// TestFitTokensSkipsLargePart: a large part near the most relevant end is skipped
// (or cut to its tail) and the less relevant parts before it are kept while they
// fit, in their order.
func TestFitTokensSkipsLargePart(t *testing.T) {
	parts := []repoctx.Part{
		{Path: "a", Text: numbered("aaa", 0, 4), StartLine: 1, EndLine: 4, Score: 1},
		{Path: "d", Text: numbered("ddd", 0, 30), StartLine: 1, EndLine: 30, Score: 1.5},
		{Path: "e", Text: numbered("eee", 0, 3), StartLine: 1, EndLine: 3, Score: 1.7},
		{Path: "b", Text: numbered("bbb", 0, 40), StartLine: 1, EndLine: 40, Score: 2},
		{Path: "c", Text: numbered("ccc", 0, 4), StartLine: 1, EndLine: 4, Score: 3},
	}
	hdr := float64(len(repoctx.FileSep) + 2)
	cost := func(ps ...repoctx.Part) float64 { return float64(len(render(ps))) }
	paths := func(ps []repoctx.Part) string {
		var s []string
		for _, p := range ps {
			s = append(s, p.Path)
		}
		return strings.Join(s, ",")
	}
	// Room for a, e and c whole and 2 lines of b (under minTailLines): b and d are
	// skipped, a and e kept.
	room := cost(parts[0], parts[2], parts[4]) + hdr + 2*7
	got := fitTokens(parts, room, byteTokens{})
	if paths(got) != "a,e,c" {
		t.Fatalf("kept %s, want a,e,c", paths(got))
	}
	for i, p := range got {
		if want := map[string]string{"a": parts[0].Text, "e": parts[2].Text, "c": parts[4].Text}[p.Path]; p.Text != want {
			t.Errorf("part %d (%s) changed to %q", i, p.Path, p.Text)
		}
	}
	// Room for 6 lines of b besides: its tail in its place, between e and c.
	room = cost(parts[0], parts[2], parts[4]) + hdr + 6*7
	got = fitTokens(parts, room, byteTokens{})
	if paths(got) != "a,e,b,c" {
		t.Fatalf("kept %s, want a,e,b,c", paths(got))
	}
	if got[2].Text != numbered("bbb", 34, 6) || got[2].StartLine != 35 || got[2].Why[len(got[2].Why)-1] != "tail" {
		t.Errorf("tail of b = %q from line %d (why %v), want its last 6 lines from 35", got[2].Text, got[2].StartLine, got[2].Why)
	}
	if c := cost(got...); c > room {
		t.Errorf("context %v tokens over room %v", c, room)
	}
	// The more relevant part first: e takes what a would need.
	room = cost(parts[0], parts[4]) + 10
	if got = fitTokens(parts, room, byteTokens{}); paths(got) != "e,c" {
		t.Errorf("kept %s, want e,c", paths(got))
	}
	// The most relevant part alone over the room: its last lines fill the room.
	big := []repoctx.Part{parts[0], parts[3]}
	room = hdr + 10*7
	got = fitTokens(big, room, byteTokens{})
	if paths(got) != "b" || got[0].Text != numbered("bbb", 30, 10) {
		t.Errorf("kept %+v, want the last 10 lines of b alone", got)
	}
	// ... unless fewer than minTailLines of it fit: then it is skipped like any other.
	small := []repoctx.Part{{Path: "a", Text: "x\n"}, parts[3]}
	if got = fitTokens(small, hdr+2*7, byteTokens{}); paths(got) != "a" {
		t.Errorf("kept %s, want a", paths(got))
	}
	// The input is not modified.
	if parts[3].Text != numbered("bbb", 0, 40) || len(parts[3].Why) != 0 {
		t.Errorf("input part changed: %+v", parts[3])
	}
}

// longOld is a completion file whose far top holds a helper the hole needs. The
// fillers are just too big for the chunker to merge as small definitions (over
// 40 non-space characters), so each stays a chunk of its own.
func longOld() string {
	var sb strings.Builder
	sb.WriteString("def far_helper_function(value):\n    return value * 42\n\n\n")
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&sb, "def filler_%02d(x):\n    total = x + %d\n    return total * total - x\n\n\n", i, i)
	}
	return sb.String()
}

// TestComposePlanned: with the planner on, a long prefix is trimmed to its last lines,
// the trimmed far part stays available (the old file's chunk holding it enters the
// context), the overrides are set and the context fits the room left in tokens; with
// the planner off nothing is overridden.
func TestComposePlanned(t *testing.T) {
	old := longOld()
	ix := buildIndex(t, map[string]string{"m.py": old})
	hole := repoctx.Hole{Path: "m.py", Prefix: old + "def use(v):\n    return far_helper_function(", Suffix: "v)\n"}
	off, err := Compose(context.Background(), ix, hole, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if off.Prefix != nil || off.Suffix != nil {
		t.Errorf("planner off gave overrides")
	}
	plan := Plan{Window: 800, Tokens: repoctx.CharEstimate{}, Share: DefaultPlanShare, SuffixShare: DefaultPlanSuffixShare}
	// Top 8 per query: in an 800-token window, 12 filler hits would crowd out the
	// helper's chunk, and this test is about the planner, not the ranking.
	on, err := Compose(context.Background(), ix, hole, with(func(o *Options) { o.Plan, o.NoDense, o.TopK = plan, true, 8 }))
	if err != nil {
		t.Fatal(err)
	}
	if on.Prefix == nil || !strings.HasSuffix(hole.Prefix, *on.Prefix) || len(*on.Prefix) >= len(hole.Prefix) {
		t.Fatalf("prefix not trimmed: %v", on.Prefix)
	}
	if on.Suffix != nil {
		t.Errorf("short suffix overridden: %q", *on.Suffix)
	}
	if strings.Contains(*on.Prefix, "far_helper_function(value)") {
		t.Fatalf("test premise: the far definition should be trimmed off")
	}
	if !strings.Contains(on.Text, "def far_helper_function(value):") {
		t.Errorf("the trimmed far part is not available to the context:\n%s", on.Text)
	}
	split := plan.SplitHole(hole.Prefix, hole.Suffix)
	lc := &lineCounter{tc: repoctx.CharEstimate{}, cache: map[string]float64{}}
	if used := lc.text(on.Text); used > split.Room || split.Room <= 0 {
		t.Errorf("context %v tokens, room %v", used, split.Room)
	}
	room := float64(plan.Window-repoctx.MaxNewTokens) - repoctx.CharEstimate{}.Count(*on.Prefix) - repoctx.CharEstimate{}.Count(hole.Suffix)
	if split.Room != room || split.Prefix != *on.Prefix {
		t.Errorf("room %v, want %v", split.Room, room)
	}
}

// TestComposePlannedNoContext: when the trimmed hole would get no context, the
// planner gives the model its whole prefix back.
func TestComposePlannedNoContext(t *testing.T) {
	ix := buildIndex(t, map[string]string{"other.py": "def qqq():\n    return 1\n"})
	prefix := numbered("zzz", 0, 99)
	on, err := Compose(context.Background(), ix, repoctx.Hole{Path: "new.py", Prefix: prefix, Suffix: ""},
		with(func(o *Options) { o.Plan.Window, o.Plan.Tokens = 600, byteTokens{} }))
	if err != nil {
		t.Fatal(err)
	}
	if on.Text != "" || on.Prefix != nil {
		t.Errorf("got context %q, override %v; want none", on.Text, on.Prefix)
	}
}

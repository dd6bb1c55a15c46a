package assemble

import (
	"fmt"
	"strings"
	"testing"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/chunker"
)

// marginFile is a 30-line file "l01\n" ... "l30\n" and the byte offset of the start
// of its 1-based line n (n = 31: the file's end).
func marginFile() (text string, off func(n int) int) {
	var b strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&b, "l%02d\n", i)
	}
	return b.String(), func(n int) int { return (n - 1) * 4 }
}

// marginComposer is a composer over files (path -> text) with options opts and the
// completion file at holePath, whose visible prefix is visible.
func marginComposer(files map[string]string, opts Options, holePath, visible string) *composer {
	return &composer{opts: opts, h: repoctx.Hole{Path: holePath}, visible: LineSet(visible),
		files: &fileTexts{cache: files}, cands: newCandidates(), modified: map[string]bool{}}
}

func noChunks(string) (*chunker.Chunk, bool) { return nil, false }

// lines returns each part's (start, end) lines.
func partLines(parts []repoctx.Part) [][2]int {
	var out [][2]int
	for _, p := range parts {
		out = append(out, [2]int{p.StartLine, p.EndLine})
	}
	return out
}

// TestHitSpanMargin: a hit is shown with up to HitMargin lines on each side,
// clipped at the file's ends.
func TestHitSpanMargin(t *testing.T) {
	text, off := marginFile()
	for _, tc := range []struct {
		margin, from, to int // the chunk's lines [from, to]
		wantFrom, wantTo int
	}{
		{5, 10, 14, 5, 19},
		{5, 3, 6, 1, 11},    // clipped at the top
		{5, 27, 29, 22, 30}, // clipped at the bottom
		{40, 10, 12, 1, 30}, // the whole file
		{1, 1, 30, 1, 30},   // nothing around
	} {
		c := marginComposer(map[string]string{"a.kt": text}, Options{HitMargin: tc.margin}, "z.kt", "")
		ch := &chunker.Chunk{Path: "a.kt", StartByte: off(tc.from), EndByte: off(tc.to + 1)}
		lo, hi := c.hitSpan(ch, noChunks)
		if lo != off(tc.wantFrom) || hi != off(tc.wantTo+1) {
			t.Errorf("margin %d, lines %d-%d: shown bytes [%d, %d), want lines %d-%d = [%d, %d)",
				tc.margin, tc.from, tc.to, lo, hi, tc.wantFrom, tc.wantTo, off(tc.wantFrom), off(tc.wantTo+1))
		}
	}
	// A chunk starting after the indentation of its first line: the margin starts
	// at whole lines.
	c := marginComposer(map[string]string{"a.kt": text}, Options{HitMargin: 2}, "z.kt", "")
	lo, hi := c.hitSpan(&chunker.Chunk{Path: "a.kt", StartByte: off(10) + 1, EndByte: off(12) + 2}, noChunks)
	if lo != off(8) || hi != off(15) {
		t.Errorf("mid-line chunk: [%d, %d), want lines 8-14 = [%d, %d)", lo, hi, off(8), off(15))
	}
}

// TestHitSpanVisible: in the completion file's old copy, a side whose lines the
// prefix and suffix show is not added.
func TestHitSpanVisible(t *testing.T) {
	text, off := marginFile()
	c := marginComposer(map[string]string{"a.kt": text}, Options{HitMargin: 3}, "a.kt", "l07\nl08\nl09\n")
	lo, hi := c.hitSpan(&chunker.Chunk{Path: "a.kt", StartByte: off(10), EndByte: off(13)}, noChunks)
	if lo != off(10) || hi != off(16) {
		t.Errorf("visible lines before: [%d, %d), want lines 10-15 = [%d, %d)", lo, hi, off(10), off(16))
	}
}

// TestHitSpanGap: with HitGap the margin covers only the chunks back to the
// previous function or class chunk, at most HitMargin lines, and nothing after.
func TestHitSpanGap(t *testing.T) {
	text, off := marginFile()
	// Chunks: a function (1-8), a comment run (9-10), a property (11-12), the hit
	// (13-20), a class (21-30).
	kinds := []chunker.Kind{chunker.KindFunction, chunker.KindCode, chunker.KindProperty, chunker.KindFunction, chunker.KindClass}
	starts := []int{1, 9, 11, 13, 21, 31}
	byID := map[string]*chunker.Chunk{}
	for i, k := range kinds {
		ch := &chunker.Chunk{ID: chunker.ChunkID("a.kt", i), Path: "a.kt", Ordinal: i, Kind: k,
			StartByte: off(starts[i]), EndByte: off(starts[i+1])}
		if i > 0 {
			ch.Prev = chunker.ChunkID("a.kt", i-1)
		}
		byID[ch.ID] = ch
	}
	lookup := func(id string) (*chunker.Chunk, bool) { ch, ok := byID[id]; return ch, ok }
	hit := byID[chunker.ChunkID("a.kt", 3)]
	for _, tc := range []struct{ margin, wantFrom int }{{10, 9}, {3, 10}, {1, 12}} {
		c := marginComposer(map[string]string{"a.kt": text}, Options{HitMargin: tc.margin, HitGap: true}, "z.kt", "")
		lo, hi := c.hitSpan(hit, lookup)
		if lo != off(tc.wantFrom) || hi != hit.EndByte {
			t.Errorf("gap, margin %d: [%d, %d), want lines %d-20 = [%d, %d)", tc.margin, lo, hi, tc.wantFrom, off(tc.wantFrom), hit.EndByte)
		}
	}
	// Right after a function: no gap to cover.
	c := marginComposer(map[string]string{"a.kt": text}, Options{HitMargin: 10, HitGap: true}, "z.kt", "")
	if lo, hi := c.hitSpan(byID[chunker.ChunkID("a.kt", 4)], lookup); lo != off(21) || hi != off(31) {
		t.Errorf("gap after a function: [%d, %d), want the chunk alone [%d, %d)", lo, hi, off(21), off(31))
	}
}

// TestHitMarginParts: margins merge with overlapping and touching parts of the
// same file so that no line appears twice; a hit keeps its score; a chunk found
// twice sums its scores and shows the union of its margins; the budget counts the
// margin's lines.
func TestHitMarginParts(t *testing.T) {
	text, off := marginFile()
	files := map[string]string{"a.kt": text, "b.kt": text}
	c := marginComposer(files, Options{HitMargin: 3}, "z.kt", "")
	hit := func(path string, from, to int) *chunker.Chunk {
		return &chunker.Chunk{Path: path, StartByte: off(from), EndByte: off(to + 1)}
	}
	c.addHit(hit("a.kt", 5, 8), 1, "prefix#1", noChunks)   // shown 2-11
	c.addHit(hit("a.kt", 15, 16), 2, "prefix#2", noChunks) // shown 12-19: touches 2-11
	c.addHit(hit("a.kt", 15, 16), 1, "suffix#1", noChunks) // the same chunk again
	c.add(hit("a.kt", 25, 26), 0.5, "old-file")            // no margin: 25-26
	c.addHit(hit("b.kt", 28, 30), 0.1, "suffix#9", noChunks)
	parts := c.cands.parts(c.files)
	got := partLines(parts)
	want := [][2]int{{25, 30}, {25, 26}, {2, 19}} // ascending relevance (b.kt, a.kt, a.kt)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("parts %v, want %v", got, want)
	}
	if parts[2].Score != 3 {
		t.Errorf("merged part's score %g, want 3 (the chunk found twice: 2+1)", parts[2].Score)
	}
	seen := map[string]bool{}
	for _, p := range parts {
		for _, l := range strings.SplitAfter(strings.TrimSuffix(p.Text, "\n"), "\n") {
			k := p.Path + ":" + l
			if seen[k] {
				t.Errorf("line %q of %s appears twice", l, p.Path)
			}
			seen[k] = true
		}
	}
	// Budget: the parts' token cost includes the margin lines; a room that holds
	// the two most relevant parts only drops the least relevant one.
	tc := repoctx.CharEstimate{}
	cost := func(p repoctx.Part) float64 { return tc.Count(header(p)) + tc.Count(p.Text) }
	room := cost(parts[1]) + cost(parts[2])
	fitted := fitTokens(parts, room, tc)
	if fmt.Sprint(partLines(fitted)) != fmt.Sprint(want[1:]) {
		t.Errorf("fitted to %g tokens: %v, want %v", room, partLines(fitted), want[1:])
	}
	total := 0.0
	for _, p := range fitted {
		total += cost(p)
	}
	if total > room {
		t.Errorf("fitted parts cost %g tokens, room %g", total, room)
	}
}

// TestHitMarginOff: with HitMargin 0 addHit adds the chunk's span alone, as add.
func TestHitMarginOff(t *testing.T) {
	text, off := marginFile()
	c := marginComposer(map[string]string{"a.kt": text}, Options{}, "z.kt", "")
	c.addHit(&chunker.Chunk{Path: "a.kt", StartByte: off(5), EndByte: off(9)}, 1, "prefix#1", noChunks)
	if got := partLines(c.cands.parts(c.files)); fmt.Sprint(got) != "[[5 8]]" {
		t.Errorf("margin 0: parts %v, want [[5 8]]", got)
	}
}

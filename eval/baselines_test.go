package eval

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/batch"
	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/index"
	"github.com/repoctx/repoctx/retrieve"
	"github.com/repoctx/repoctx/snapshot"
	"github.com/repoctx/repoctx/store"
)

// numbered returns n lines "prefix i\n".
func numbered(prefix string, n int) string {
	var sb strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&sb, "%s %d\n", prefix, i)
	}
	return sb.String()
}

// testSnapshot writes a small Python repository and opens it.
func testSnapshot(t *testing.T) (snapshot.Snapshot, *snapData) {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, dir, "src/app.py", "import util\n\n"+numbered("x = compute_total", 12))
	writeFile(t, dir, "src/util.py", "def compute_total(items):\n    return sum(i.price for i in items)\n"+numbered("# util note", 10))
	writeFile(t, dir, "src/small.py", "def tiny():\n    pass\n")
	writeFile(t, dir, "src/other.py", numbered("print('other')", 45))
	writeFile(t, dir, "src/stub.pyi", numbered("def stub() -> int: ...", 12))
	writeFile(t, dir, "src/crlf.py", strings.ReplaceAll(numbered("crlf_line", 11), "\n", "\r\n"))
	writeFile(t, dir, "src/latin1.py", "s = '\xe9'\n"+numbered("latin", 10))
	writeFile(t, dir, "README.md", numbered("readme", 20))
	snap, err := snapshot.OpenDir(dir, snapshot.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return snap, newSnapData(snap, grammars.Lookup("python"))
}

func TestSnapData(t *testing.T) {
	_, sd := testSnapshot(t)
	var paths, kit []string
	for _, f := range sd.files {
		paths = append(paths, f.path)
		if f.path == "src/crlf.py" && (strings.Contains(f.text, "\r") || f.lines != 11) {
			t.Errorf("crlf.py: text %q, %d lines", f.text[:20], f.lines)
		}
	}
	for _, i := range sd.kit {
		kit = append(kit, sd.files[i].path)
	}
	// latin1.py is not UTF-8 (skipped, as the starter kit's reader fails on it);
	// README.md is not Python.
	if got := strings.Join(paths, " "); got != "src/app.py src/crlf.py src/other.py src/small.py src/stub.pyi src/util.py" {
		t.Errorf("files: %s", got)
	}
	// The starter kit's corpus: .py files with at least 10 lines.
	if got := strings.Join(kit, " "); got != "src/app.py src/crlf.py src/other.py src/util.py" {
		t.Errorf("starter kit corpus: %s", got)
	}
}

func TestRecentContext(t *testing.T) {
	_, sd := testSnapshot(t)
	d := &batch.Datapoint{Path: "src/app.py", Modified: []string{"src/small.py", "src/util.py", "README.md", "src/app.py", "gone.py"}}
	seen := map[string]int{}
	for i := 0; i < 40; i++ {
		d.ID = fmt.Sprintf("dp-%d", i)
		ctx := sd.recentContext(d)
		if again := sd.recentContext(d); again != ctx {
			t.Fatalf("id %s: not deterministic", d.ID)
		}
		path := strings.TrimPrefix(strings.SplitN(ctx, "\n", 2)[0], repoctx.FileSep)
		seen[path]++
	}
	// Only modified .py files with >= 10 lines are candidates.
	if len(seen) != 2 || seen["src/util.py"] == 0 || seen["src/app.py"] == 0 {
		t.Errorf("chosen files: %v", seen)
	}
	// Without a usable modified file, any file of the starter kit's corpus.
	d.Modified = []string{"src/small.py"}
	seen = map[string]int{}
	for i := 0; i < 60; i++ {
		d.ID = fmt.Sprintf("dp-%d", i)
		ctx := sd.recentContext(d)
		seen[strings.TrimPrefix(strings.SplitN(ctx, "\n", 2)[0], repoctx.FileSep)]++
	}
	if len(seen) != 4 {
		t.Errorf("fallback chose %v, want all 4 files of the corpus", seen)
	}
	d.ID = "fixed"
	want := sd.recentContext(d)
	if !strings.HasPrefix(want, repoctx.FileSep+"src/") || !strings.HasSuffix(want, "\n") {
		t.Errorf("context %q", want)
	}
}

func TestOkapiHandComputed(t *testing.T) {
	// N = 3, avgdl = 2. n(a) = 2: idf = ln(1.5/2.5) < 0, replaced by
	// 0.25 · mean idf = 0.25 · (ln 0.6 + 3 ln(2.5/1.5)) / 4; idf(b, c, d) = ln(2.5/1.5).
	o := newOkapi([][]string{{"a", "b"}, {"a", "c", "c"}, {"d"}})
	idfC := math.Log(2.5 / 1.5)
	eps := 0.25 * (math.Log(0.6) + 3*idfC) / 4
	norm := func(dl float64) float64 { return 1.5 * (0.25 + 0.75*dl/2) }
	want := []float64{
		eps * 1 * 2.5 / (1 + norm(2)),
		eps*1*2.5/(1+norm(3)) + 2*(idfC*2*2.5/(2+norm(3))), // "c" asked twice counts twice
		0,
	}
	got := o.scores([]string{"a", "c", "c", "zzz"})
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("score[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	if b := o.best([]string{"c"}); b != 1 {
		t.Errorf("best(c) = %d", b)
	}
	if b := o.best([]string{"a"}); b != 0 { // the shorter document
		t.Errorf("best(a) = %d", b)
	}
	if b := o.best([]string{"zzz"}); b != 0 { // all zero: the first
		t.Errorf("best(zzz) = %d", b)
	}
	if b := newOkapi(nil).best([]string{"a"}); b != -1 {
		t.Errorf("empty corpus: %d", b)
	}
	if got := starterKitTokens("Foo_bar(x1, Ünïcode)"); strings.Join(got, " ") != "foo bar x1 ünïcode" {
		t.Errorf("starterKitTokens = %q", got)
	}
}

func TestBM25FileContext(t *testing.T) {
	_, sd := testSnapshot(t)
	d := &batch.Datapoint{ID: "q", Path: "src/app.py", Prefix: "def compute_total(items):\n    return sum(i.price ", Suffix: "\n"}
	ctx := sd.bm25FileContext(d)
	if !strings.HasPrefix(ctx, repoctx.FileSep+"src/util.py\ndef compute_total") {
		t.Errorf("bm25file chose %.40q", ctx)
	}
}

func TestWindowsContext(t *testing.T) {
	_, sd := testSnapshot(t)
	// other.py has 45 lines: windows start at 0, 10, 20, 30 (the last one ends
	// the file); the query matches its lines 40..44 best. No other window
	// shares a token with the query, so only these 4 are kept (of WindowsTopK).
	d := &batch.Datapoint{ID: "w", Path: "src/app.py", Prefix: "print('other') 40\nprint('other') 41\n"}
	ctx := sd.windowsContext(d)
	parts := strings.Split(ctx, repoctx.FileSep)[1:]
	if len(parts) != 4 {
		t.Fatalf("%d parts, want 4", len(parts))
	}
	last := parts[len(parts)-1]
	if !strings.HasPrefix(last, "src/other.py\nprint('other') 30\n") || !strings.HasSuffix(last, "print('other') 44\n") {
		t.Errorf("best window (last part) = %q", last)
	}
	n := 0
	for _, w := range sd.windows {
		if sd.files[w.file].path == "src/other.py" {
			n++
		}
	}
	if n != 4 {
		t.Errorf("other.py has %d windows, want 4", n)
	}
	// Windows of the completion file that the prefix and suffix show are left out.
	d = &batch.Datapoint{ID: "v", Path: "src/util.py", Prefix: sd.files[5].text}
	for _, p := range strings.Split(sd.windowsContext(d), repoctx.FileSep)[1:] {
		if strings.HasPrefix(p, "src/util.py\n") {
			t.Errorf("a visible window of the completion file was kept: %q", p)
		}
	}
}

// seedIndex indexes the snapshot in fixed 8/2 windows, as Run does.
func seedIndex(t *testing.T, snap snapshot.Snapshot, o SeedOptions) *retrieve.Index {
	t.Helper()
	st := store.Open(t.TempDir())
	t.Cleanup(func() { st.Close() })
	ix, err := index.Open(st, "test/seed", index.Options{Strategy: chunker.StrategyFixed, Chunk: o.chunkOptions()})
	if err != nil {
		t.Fatal(err)
	}
	r, err := ix.View(context.Background(), snap)
	ix.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r.Retriever()
}

func TestSeedContext(t *testing.T) {
	snap, _ := testSnapshot(t)
	ix := seedIndex(t, snap, SeedOptions{})
	d := &batch.Datapoint{ID: "s", Path: "src/app.py", Modified: []string{"src/app.py", "README.md", "src/small.py"},
		Prefix: "print('other') 17\n", Suffix: "crlf_line 3\n"}
	ctx, err := seedContext(context.Background(), ix, snap, d, SeedOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(ctx, repoctx.FileSep)[1:]
	var heads []string
	for _, p := range parts {
		heads = append(heads, strings.SplitN(p, "\n", 3)[0]+":"+strings.SplitN(p, "\n", 3)[1])
	}
	// Old completion file and modified source files whole, first; README.md is not source.
	if len(parts) < 4 || !strings.HasPrefix(parts[0], "src/app.py\nimport util\n") || !strings.HasPrefix(parts[1], "src/small.py\ndef tiny") {
		t.Fatalf("parts: %q", heads)
	}
	// Then the prefix hits, best first, each with its next window: the window
	// holding "print('other') 17" comes first among the other.py windows, and the
	// window after it right after it.
	if !strings.Contains(parts[2], "print('other') 17\n") || !strings.HasPrefix(parts[2], "src/other.py\n") {
		t.Errorf("first hit: %q", parts[2])
	}
	first := strings.Split(strings.TrimSuffix(parts[2], "\n"), "\n")
	if next := strings.SplitN(parts[3], "\n", 3); next[0] != "src/other.py" || !strings.Contains(parts[3], first[len(first)-1]+"\n") {
		t.Errorf("window after the first hit should overlap its last line: %q then %q", parts[2], parts[3])
	}
	// Files shown whole are not searched, and no window repeats.
	seen := map[string]bool{}
	for _, p := range parts[2:] {
		if strings.HasPrefix(p, "src/app.py\n") || strings.HasPrefix(p, "src/small.py\n") {
			t.Errorf("window of a whole file: %q", p)
		}
		if seen[p] {
			t.Errorf("window repeated: %q", p)
		}
		seen[p] = true
	}
	// The suffix hits, each preceded by the window before it, come after.
	idx := strings.Index(ctx, "crlf_line 3\n")
	if idx < strings.Index(ctx, "print('other') 17\n") {
		t.Errorf("suffix hits should follow prefix hits")
	}
	if SeedOptions.Name(SeedOptions{}) != "seed-bm25" {
		t.Errorf("name %q", SeedOptions{}.Name())
	}
}

// TestSeedPluggableRanker plugs a second ranker in, as a dense ranker will be.
func TestSeedPluggableRanker(t *testing.T) {
	snap, _ := testSnapshot(t)
	o := SeedOptions{TopK: 1}
	ix := seedIndex(t, snap, o)
	var stubID string
	for _, c := range ix.Chunks() {
		if c.Path == "src/stub.pyi" {
			stubID = c.ID
			break
		}
	}
	dense := func(_ context.Context, ix *retrieve.Index, query string, k int, filter func(*chunker.Chunk) bool) ([]retrieve.FusedHit, error) {
		return []retrieve.FusedHit{{ID: stubID, Score: 1, Rank: 1}}, nil
	}
	o.Rankers = append(DefaultSeedRankers(), WeightedRanker{Name: "dense", Weight: 0.8, Rank: dense})
	if o.Name() != "seed-bm25+dense" {
		t.Errorf("name %q", o.Name())
	}
	d := &batch.Datapoint{ID: "s", Path: "src/app.py", Prefix: "print('other') 17\n"}
	ctx, err := seedContext(context.Background(), ix, snap, d, o, nil)
	if err != nil {
		t.Fatal(err)
	}
	// With TopK 1 the dense ranker's hit (weight 0.8/61) beats BM25's (0.2/61).
	// The old completion file comes first, whole.
	parts := strings.Split(ctx, repoctx.FileSep)[1:]
	if len(parts) < 2 || !strings.HasPrefix(parts[0], "src/app.py\n") || !strings.HasPrefix(parts[1], "src/stub.pyi\ndef stub()") ||
		strings.Contains(ctx, "print('other') 17") {
		t.Errorf("context %q", ctx)
	}
	failing := func(context.Context, *retrieve.Index, string, int, func(*chunker.Chunk) bool) ([]retrieve.FusedHit, error) {
		return nil, fmt.Errorf("boom")
	}
	o.Rankers = []WeightedRanker{{Name: "broken", Weight: 1, Rank: failing}}
	if _, err := seedContext(context.Background(), ix, snap, d, o, nil); err == nil || !strings.Contains(err.Error(), "broken ranker: boom") {
		t.Errorf("error %v", err)
	}
}

// TestWindowsOld checks that windows-old searches the old completion file,
// leaves out its windows that the prefix and suffix show, and gives the
// windows baseline's context (which has always followed the same rule).
func TestWindowsOld(t *testing.T) {
	snap, sd := testSnapshot(t)
	answer := func(config string, d *batch.Datapoint) string {
		a, err := (&baseline{config: config, spec: grammars.Lookup("python")}).Open(context.Background(), snap, "acme/x")
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		c, err := a.Answer(context.Background(), d)
		if err != nil {
			t.Fatal(err)
		}
		return c.Text
	}
	// The completion file is other.py; the prefix shows its lines 0..9 only.
	d := &batch.Datapoint{ID: "o", Path: "src/other.py", Prefix: numbered("print('other')", 10) + "print('other') 4"}
	got := answer(ConfigWindowsOld, d)
	if got != answer(ConfigWindows, d) || got != sd.windowsContext(d) {
		t.Errorf("windows-old differs from windows")
	}
	var starts []string
	for _, p := range strings.Split(got, repoctx.FileSep)[1:] {
		if !strings.HasPrefix(p, "src/other.py\n") {
			continue
		}
		starts = append(starts, strings.SplitN(p, "\n", 3)[1])
	}
	// other.py's windows start at lines 0, 10, 20, 30; the first (lines 0..19)
	// is not all shown (10..19 are not in the prefix), so all four are kept.
	if len(starts) != 4 {
		t.Errorf("old-file windows starting with %q, want 4", starts)
	}
	// With the whole file in the prefix, none of its windows is kept.
	d.Prefix = sd.files[2].text
	if sd.files[2].path != "src/other.py" {
		t.Fatalf("files[2] is %s", sd.files[2].path)
	}
	if strings.Contains(answer(ConfigWindowsOld, d), "src/other.py\n") {
		t.Error("a window the prefix shows was kept")
	}
}

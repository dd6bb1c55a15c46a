package assemble

import (
	"context"
	"os"
	"path/filepath"

	"strings"
	"testing"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/index"
	"github.com/repoctx/repoctx/snapshot"
	"github.com/repoctx/repoctx/store"
)

func TestQueryText(t *testing.T) {
	tests := []struct {
		prefix, suffix string
		n              int
		wantP, wantS   string
	}{
		{"a\nb\nc\n", "d\ne\nf\n", 2, "b\nc\n", "d\ne\n"},
		{"a\nb\nc\n    x = ", "\ne\n", 1, "c\n    x = ", "\n"},
		{"a\nb", "", 5, "a\nb", ""},
		{"", "only", 3, "", "only"},
	}
	for _, tt := range tests {
		p, s := QueryText(tt.prefix, tt.suffix, tt.n)
		if p != tt.wantP || s != tt.wantS {
			t.Errorf("QueryText(%q, %q, %d) = %q, %q; want %q, %q", tt.prefix, tt.suffix, tt.n, p, s, tt.wantP, tt.wantS)
		}
	}
}

// writeSnapshot writes the given files (slash paths to texts) into a new folder and
// opens it as a snapshot.
func writeSnapshot(t *testing.T, files map[string]string) snapshot.Snapshot {
	t.Helper()
	dir := t.TempDir()
	for p, text := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := snapshot.OpenDir(dir, snapshot.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// buildIndex writes the given files into a repository folder and opens it (default
// options: structural chunks, BM25 + LSA, the symbol table) with a cache of its own.
func buildIndex(t *testing.T, files map[string]string) *index.View {
	t.Helper()
	snap := writeSnapshot(t, files)
	st := store.Open(t.TempDir())
	t.Cleanup(func() { st.Close() })
	ix, err := index.Open(st, "test/repo", index.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	r, err := ix.View(context.Background(), snap)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// with returns DefaultOptions changed by f.
func with(f func(*Options)) Options {
	o := DefaultOptions()
	f(&o)
	return o
}

// compose is Compose with a background context, returning text and parts.
func compose(t *testing.T, r *index.View, h repoctx.Hole, o Options) (string, []repoctx.Part, error) {
	t.Helper()
	c, err := Compose(context.Background(), r, h, o)
	return c.Text, c.Parts, err
}

const shapes = `import math


def circle_area(radius):
    """Area of a circle."""
    check_positive(radius)
    return math.pi * radius ** 2


def circle_perimeter(radius):
    check_positive(radius)
    return 2 * math.pi * radius


def unrelated_logger(msg):
    print("log:", msg)
`

// TestRelativePositioning: the prefix matches circle_area; relative positioning must
// bring the chunk after it (circle_perimeter), and the best part ends the context.
func TestRelativePositioning(t *testing.T) {
	ix := buildIndex(t, map[string]string{
		"geo/shapes.py": shapes,
		"geo/other.py":  "def helper():\n    return 42\n",
	})
	hole := repoctx.Hole{
		Path:   "geo/new_shapes.py",
		Prefix: "import math\n\n\ndef sphere_area(radius):\n    \"\"\"Area of a sphere.\"\"\"\n    check_positive(radius)\n    return 4 * math.pi * radius ** 2\n\n\n",
		Suffix: "\n",
	}
	ctx, parts, err := compose(t, ix, hole, with(func(o *Options) { o.TopK = 2 }))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ctx, "def circle_perimeter") {
		t.Fatalf("next chunk of the prefix match missing:\n%s", ctx)
	}
	last := parts[len(parts)-1]
	if last.Path != "geo/shapes.py" || !strings.Contains(last.Text, "circle_area") || !strings.Contains(last.Text, "circle_perimeter") {
		t.Errorf("last part %+v, want the merged circle_area+circle_perimeter span", last)
	}
	if !strings.HasPrefix(ctx, repoctx.FileSep) {
		t.Errorf("context does not start with a file separator: %q", ctx[:20])
	}
	// Without relative positioning the next chunk is not brought in by the match.
	_, parts2, _ := compose(t, ix, hole, with(func(o *Options) { o.TopK, o.NoRelative = 1, true }))
	for _, p := range parts2 {
		if strings.Contains(p.Text, "circle_perimeter") && !strings.Contains(p.Text, "circle_area") {
			t.Errorf("NoRelative still added the next chunk: %+v", p)
		}
	}
}

// TestSuffixBringsPrev: a suffix match brings the chunk before it.
func TestSuffixBringsPrev(t *testing.T) {
	ix := buildIndex(t, map[string]string{"geo/shapes.py": shapes})
	hole := repoctx.Hole{Path: "x.py", Prefix: "", Suffix: "def unrelated_logger(msg):\n    print(\"log:\", msg)\n"}
	_, parts, err := compose(t, ix, hole, with(func(o *Options) { o.TopK = 1 }))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range parts {
		found = found || strings.Contains(p.Text, "def circle_perimeter")
	}
	if !found {
		t.Errorf("prev chunk of the suffix match missing: %+v", parts)
	}
}

// TestCompletionFileRedundancy: chunks of the completion file whose lines are all
// visible in prefix/suffix are left out; a chunk holding a changed line stays.
func TestCompletionFileRedundancy(t *testing.T) {
	old := "def a():\n    return 1\n\n\ndef b():\n    return old_value_here\n"
	ix := buildIndex(t, map[string]string{"m.py": old})
	hole := repoctx.Hole{Path: "m.py", Prefix: "def a():\n    return 1\n\n\ndef b():\n", Suffix: "\n"}
	_, parts, err := compose(t, ix, hole, with(func(o *Options) { o.TopK = 5 }))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range parts {
		if strings.Contains(p.Text, "def a():") && !strings.Contains(p.Text, "old_value_here") {
			t.Errorf("redundant chunk kept: %q", p.Text)
		}
	}
	kept := false
	for _, p := range parts {
		kept = kept || strings.Contains(p.Text, "old_value_here")
	}
	if !kept {
		t.Errorf("changed region of the old file dropped: %+v", parts)
	}
}

func TestFitBudget(t *testing.T) {
	parts := []repoctx.Part{
		{Path: "a", Text: strings.Repeat("x\n", 50), Score: 1},
		{Path: "b", Text: strings.Repeat("y\n", 50), Score: 2},
		{Path: "c", Text: "1\n2\n3\n4\n", Score: 3},
	}
	got := fitBudget(append([]repoctx.Part(nil), parts...), partLen(parts[1])+partLen(parts[2]))
	if len(got) != 2 || got[0].Path != "b" || got[1].Path != "c" {
		t.Errorf("fitBudget kept %v, want b, c", got)
	}
	one := fitBudget([]repoctx.Part{{Path: "c", Text: "1\n2\n3\n4\n", StartLine: 1, EndLine: 4}}, len(repoctx.FileSep)+2+5)
	if len(one) != 1 || one[0].Text != "3\n4\n" || one[0].StartLine != 3 {
		t.Errorf("single oversized part trimmed to %+v, want its last lines", one)
	}
	if ctx := render(fitBudget(parts, 10)); len(ctx) > 10 {
		t.Errorf("context %d bytes over budget 10", len(ctx))
	}
}

// TestFitBudgetSkipsLargePart: a part that does not fit in what the more relevant
// parts leave is skipped, and the less relevant parts before it are kept while they
// fit, in their order.
func TestFitBudgetSkipsLargePart(t *testing.T) {
	parts := []repoctx.Part{
		{Path: "a", Text: "a1\na2\n", Score: 1},
		{Path: "d", Text: strings.Repeat("d\n", 40), Score: 1.5},
		{Path: "e", Text: "e1\n", Score: 1.7},
		{Path: "b", Text: strings.Repeat("b\n", 100), Score: 2},
		{Path: "c", Text: "1\n2\n3\n4\n", Score: 3},
	}
	paths := func(ps []repoctx.Part) string {
		var s []string
		for _, p := range ps {
			s = append(s, p.Path)
		}
		return strings.Join(s, ",")
	}
	budget := partLen(parts[0]) + partLen(parts[2]) + partLen(parts[4]) + 20
	got := fitBudget(parts, budget)
	if paths(got) != "a,e,c" {
		t.Fatalf("fitBudget kept %s, want a,e,c", paths(got))
	}
	if got[0].Text != parts[0].Text || got[1].Text != parts[2].Text || got[2].Text != parts[4].Text {
		t.Errorf("kept parts changed: %+v", got)
	}
	if n := len(render(got)); n > budget {
		t.Errorf("context %d bytes over budget %d", n, budget)
	}
	// d fits once b is skipped and e is not there: less relevant than a skipped part.
	budget = partLen(parts[1]) + partLen(parts[4])
	if got = fitBudget([]repoctx.Part{parts[0], parts[1], parts[3], parts[4]}, budget); paths(got) != "d,c" {
		t.Errorf("fitBudget kept %s, want d,c", paths(got))
	}
	// The most relevant part over the budget keeps its last lines alone, even when a
	// less relevant part would fit.
	budget = len(repoctx.FileSep) + 2 + 10
	got = fitBudget([]repoctx.Part{parts[2], parts[3]}, budget)
	if paths(got) != "b" || got[0].Text != strings.Repeat("b\n", 4) || got[0].StartLine != 96 {
		t.Errorf("fitBudget kept %+v, want the last 4 whole lines of b in the budget", got)
	}
	if parts[3].Text != strings.Repeat("b\n", 100) {
		t.Error("input part changed")
	}
}

func TestEditRegion(t *testing.T) {
	old := "a = 1\nb = 2\nc = 3\nd = 4\n"
	// The user replaced "b = 2" by two lines and is writing a third after them.
	prefix := "a = 1\nb = compute(x)\nb2 = helper(b)\nnew"
	suffix := "_line\nc = 3\nd = 4\n"
	lines, dist := editRegion(old, prefix, suffix)
	if len(lines) != 2 || lines[0] != "b = compute(x)" || lines[1] != "b2 = helper(b)" || dist[0] != 2 || dist[1] != 1 {
		t.Errorf("editRegion = %q %v", lines, dist)
	}
	ids := editIdentifiers(old, prefix, suffix, nil, 10)
	if ids != "b2 helper compute" {
		t.Errorf("editIdentifiers = %q, want nearest first", ids)
	}
	if l, _ := editRegion(old, "a = 1\nb = 2\n", "c = 3\nd = 4\n"); len(l) != 0 {
		t.Errorf("pure insertion at the cursor: region %q, want none", l)
	}
}

// TestDefinitionsSource: an identifier at the cursor that the file does not define
// is resolved through its import to the right file, not to a same-named one.
func TestDefinitionsSource(t *testing.T) {
	files := map[string]string{
		"app/pricing.py": "def vat_rate(country):\n    \"\"\"VAT percent for a country.\"\"\"\n    return RATES[country]\n",
		"old/pricing.py": "def vat_rate(country):\n    return 0\n",
		"app/report.py":  "from .pricing import vat_rate\n\n\ndef line(x):\n    return x\n",
	}
	ix := buildIndex(t, files)
	hole := repoctx.Hole{Path: "app/report.py", Prefix: "from .pricing import vat_rate\n\n\ndef gross(net, country):\n    rate = vat_rate(", Suffix: ")\n"}
	_, parts, err := compose(t, ix, hole, with(func(o *Options) { o.TopK, o.NoOldFile = 1, true }))
	if err != nil {
		t.Fatal(err)
	}
	var def *repoctx.Part
	for i := range parts {
		for _, w := range parts[i].Why {
			if strings.HasPrefix(w, "def:vat_rate(import)") {
				def = &parts[i]
			}
		}
	}
	if def == nil || def.Path != "app/pricing.py" || !strings.Contains(def.Text, "VAT percent") {
		t.Fatalf("definition part %+v; parts %+v", def, parts)
	}
	_, without, _ := compose(t, ix, hole, with(func(o *Options) { o.TopK, o.NoOldFile, o.NoDefinitions = 1, true, true }))
	for _, p := range without {
		for _, w := range p.Why {
			if strings.HasPrefix(w, "def:") {
				t.Errorf("NoDefinitions still added %v", w)
			}
		}
	}
}

func TestReplacedRegion(t *testing.T) {
	old := "fun a() {\n  val x = 1\n  val y = 2\n  if (x > y) {\n    old()\n  }\n}\n"
	// The user rewrites "if (x > y) {" as something else: prefix ends before it.
	prefix := "fun a() {\n  val x = 1\n  val y = 2\n"
	suffix := "    old()\n  }\n}\n"
	from, to, ok := replacedRegion(old, prefix, suffix, 3)
	if !ok || from != 0 || to != 5 {
		t.Fatalf("replacedRegion = %d, %d, %v; want 0, 5, true", from, to, ok)
	}
	a, b := lineSpan(old, from, to)
	if got := old[a:b]; !strings.HasSuffix(got, "  if (x > y) {\n    old()\n") {
		t.Errorf("span text %q", got)
	}
	// A pure insertion: nothing replaced.
	if _, _, ok := replacedRegion(old, prefix, "  if (x > y) {\n    old()\n  }\n}\n", 3); ok {
		t.Errorf("pure insertion reported as a replacement")
	}
}

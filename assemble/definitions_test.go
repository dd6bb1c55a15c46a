package assemble

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/repoctx/repoctx"
	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/grammars"
	"github.com/repoctx/repoctx/index"
	"github.com/repoctx/repoctx/symbols"
)

// definitionsOnly returns the parts the definitions source alone adds for h (no
// retrieval, no old file), merged as Compose merges them.
func definitionsOnly(t *testing.T, r *index.View, h repoctx.Hole) []repoctx.Part {
	t.Helper()
	ix := r.Retriever()
	c := &composer{ctx: context.Background(), ix: ix, syms: r.Symbols(), h: h, opts: DefaultOptions(),
		seen: Split{Prefix: h.Prefix, Suffix: h.Suffix, SuffixCut: len(h.Suffix)}, visible: LineSet(h.Prefix, h.Suffix),
		modified: map[string]bool{}, spec: grammars.ForPath(h.Path), files: newFileTexts(ix), cands: newCandidates()}
	c.definitions()
	return c.cands.parts(c.files)
}

// defPart returns the part that holds the definition tagged why (e.g.
// "def:find(receiver)"), or nil.
func defPart(parts []repoctx.Part, why string) *repoctx.Part {
	for i := range parts {
		for _, w := range parts[i].Why {
			if w == why {
				return &parts[i]
			}
		}
	}
	return nil
}

// sourceLines reports whether p's text is lines StartLine..EndLine of src exactly as
// they are (indentation included).
func sourceLines(src string, p *repoctx.Part) bool {
	lines := strings.SplitAfter(src, "\n")
	if p.StartLine < 1 || p.EndLine > len(lines) {
		return false
	}
	return strings.Join(lines[p.StartLine-1:p.EndLine], "") == p.Text
}

// TestDefinitionsKeepIndentation: a method found through its receiver's type is shown
// as the source lines it spans, its first line (an annotation, a decorator, the
// signature) with its indentation, in Kotlin and Python.
func TestDefinitionsKeepIndentation(t *testing.T) {
	// Filler methods make the class longer than maxDefBytes, so that the class's own
	// definition (its head) does not merge with the method's.
	var pyFill, ktFill strings.Builder
	for i := range 30 {
		fmt.Fprintf(&pyFill, "    def other%d(self):\n        return %d * self.base + len(self.items)\n\n", i, i)
		fmt.Fprintf(&ktFill, "    fun other%d(): Int = %d * base + items.size\n\n", i, i)
	}
	for _, c := range []struct {
		name, path, src string
		hole            repoctx.Hole
		why, firstLine  string
	}{
		{"python", "shop/store.py",
			"class Store:\n    \"\"\"A store.\"\"\"\n\n" + pyFill.String() + "    @staticmethod\n    def find(key):\n        \"\"\"Find one item by key.\"\"\"\n        if key:\n            return None\n        return 1\n",
			repoctx.Hole{Path: "shop/app.py", Prefix: "from shop.store import Store\n\n\ndef f():\n    s = Store()\n    return s.find(", Suffix: ")\n"},
			"def:find(receiver)", "    @staticmethod\n    def find(key):\n"},
		{"kotlin", "src/model/Repo.kt",
			"package com.acme.model\n\nclass Repo {\n" + ktFill.String() + "    /** Finds one. */\n    @Throws(IllegalStateException::class)\n    fun find(id: Long): String? {\n        if (id < 0) error(\"bad\")\n        return null\n    }\n}\n",
			repoctx.Hole{Path: "src/app/App.kt", Prefix: "package com.acme.app\n\nimport com.acme.model.Repo\n\nfun f(repo: Repo) {\n    repo.find(", Suffix: ")\n}\n"},
			"def:find(receiver)", "    @Throws(IllegalStateException::class)\n    fun find(id: Long): String? {\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			files := map[string]string{c.path: c.src}
			r := buildIndex(t, files)
			parts := definitionsOnly(t, r, c.hole)
			p := defPart(parts, c.why)
			if p == nil {
				t.Fatalf("no %s part: %+v", c.why, parts)
			}
			if p.Path != c.path || !sourceLines(c.src, p) || !strings.Contains(p.Text, c.firstLine) {
				t.Errorf("definition part is not the source lines as they are:\n%q (lines %d-%d)", p.Text, p.StartLine, p.EndLine)
			}
		})
	}
}

// TestDefinitionsForEach: through Compose, forEach resolves to the imported module's
// definition and never to the test helper of the same name, in Kotlin and Python;
// a Kotlin hole gets no Python definition.
func TestDefinitionsForEach(t *testing.T) {
	files := map[string]string{
		"src/main/kotlin/com/acme/util/Iter.kt":       "package com.acme.util\n\nfun <T> Iterable<T>.forEach(action: (T) -> Unit) {\n    for (e in this) action(e)\n}\n",
		"src/test/kotlin/com/acme/app/TestHelpers.kt": "package com.acme.app\n\nfun forEach(times: Int, block: () -> Unit) = repeat(times) { block() }\n",
		"shop/__init__.py":                            "",
		"shop/iters.py":                               "def forEach(items, fn):\n    for x in items:\n        fn(x)\n",
		"tests/helpers.py":                            "def forEach(fn):\n    pass\n",
	}
	r := buildIndex(t, files)
	for _, c := range []struct {
		hole     repoctx.Hole
		wantPath string
	}{
		{repoctx.Hole{Path: "src/main/kotlin/com/acme/app/Show.kt", Prefix: "package com.acme.app\n\nimport com.acme.util.forEach\n\nfun show(items: List<String>) {\n    items.forEach { ", Suffix: "}\n}\n"}, "src/main/kotlin/com/acme/util/Iter.kt"},
		{repoctx.Hole{Path: "src/main/kotlin/com/acme/app/Show.kt", Prefix: "package com.acme.app\n\nfun show(items: List<String>) {\n    items.forEach { ", Suffix: "}\n}\n"}, ""},
		{repoctx.Hole{Path: "shop/app.py", Prefix: "from shop.iters import forEach\n\n\ndef run(xs):\n    forEach(xs, ", Suffix: ")\n"}, "shop/iters.py"},
		{repoctx.Hole{Path: "shop/app.py", Prefix: "def run(xs):\n    forEach(xs, ", Suffix: ")\n"}, ""},
	} {
		_, parts, err := compose(t, r, c.hole, with(func(o *Options) { o.TopK, o.NoOldFile = 1, true }))
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for _, p := range parts {
			for _, w := range p.Why {
				if strings.HasPrefix(w, "def:forEach(") {
					got += p.Path + " "
				}
			}
		}
		if strings.TrimSpace(got) != c.wantPath {
			t.Errorf("%s %q: forEach resolved to %q, want %q", c.hole.Path, c.hole.Prefix, got, c.wantPath)
		}
	}
}

// TestVisibleDefs: with a trimmed hole, a name counts as defined when the given text
// shows it: a definition whose decorator alone was cut off is, one wholly in the cut
// top or past the cut suffix is not, nor a class whose header was cut (its methods
// that the given text shows are).
func TestVisibleDefs(t *testing.T) {
	top := "def far_only(z):\n    return z\n\n\nclass Far:\n"
	given := "    def method_shown(self):\n        return 1\n\n\n@decorator_far\n"
	given2 := "def cut_decorator(x):\n    return x\n\n\ndef shown(y):\n    return y\n"
	tail := "\n\ndef beyond(q):\n    return q\n"
	text := top + given + given2 + tail
	from := len(top) + len(given) - len("@decorator_far\n") // the decorator is cut off too
	to := len(top) + len(given) + len(given2)
	ex := symbols.NewExtractor(0)
	sf, err := ex.Extract(&chunker.File{Path: "m.py", Lang: "python", Text: []byte(text)})
	if err != nil {
		t.Fatal(err)
	}
	defined := map[string]bool{}
	visibleDefs(defined, sf.Defs, text, from, to)
	want := map[string]bool{"cut_decorator": true, "shown": true}
	if fmt.Sprint(defined) != fmt.Sprint(want) {
		t.Errorf("from %d: defined %v, want %v", from, defined, want)
	}
	defined = map[string]bool{}
	visibleDefs(defined, sf.Defs, text, len(top), to)
	want = map[string]bool{"method_shown": true, "cut_decorator": true, "shown": true}
	if fmt.Sprint(defined) != fmt.Sprint(want) {
		t.Errorf("from %d: defined %v, want %v", len(top), defined, want)
	}
	// Offsets past the text (a stale table) or reversed are skipped, not a panic.
	visibleDefs(defined, []symbols.Def{{Name: "x", StartByte: 0, EndByte: len(text) + 5}, {Name: "y", StartByte: 10, EndByte: 5}}, text, 0, len(text))
	if defined["x"] || defined["y"] {
		t.Errorf("a definition past the text counted")
	}
}

// TestNameAfterAnnotations: a name the decorators or annotations of its definition
// also spell counts where the declaration spells it: cut between the decorator and
// the declaration, the name is visible; with only the decorator given, it is not.
func TestNameAfterAnnotations(t *testing.T) {
	for _, c := range []struct{ path, lang, top, rest string }{
		{"m.py", "python", "import flask\n\n@app.route(\"/users\")\n", "def users():\n    return 1\n"},
		{"m.py", "python", "class A:\n    @property\n    def x(self):\n        return 1\n\n    @x.setter\n", "    def x(self, v):\n        pass\n"},
		{"M.kt", "kotlin", "class C {\n    @GetMapping(\"/users\", params = [\"a)\"])\n", "    fun users() = 1\n}\n"},
	} {
		text := c.top + c.rest
		sf, err := symbols.NewExtractor(0).Extract(&chunker.File{Path: c.path, Lang: c.lang, Text: []byte(text)})
		if err != nil {
			t.Fatal(err)
		}
		name := map[string]string{"python": "users", "kotlin": "users"}[c.lang]
		if strings.Contains(c.top, "setter") {
			name = "x"
		}
		defined := map[string]bool{}
		visibleDefs(defined, sf.Defs, text, len(c.top), len(text))
		if !defined[name] {
			t.Errorf("%q | %q: %q not visible in the given text (defs %+v)", c.top, c.rest, name, sf.Defs)
		}
		if name == "x" {
			continue // the getter's name is in the top too
		}
		defined = map[string]bool{}
		visibleDefs(defined, sf.Defs, text, 0, len(c.top))
		if defined[name] {
			t.Errorf("%q: %q visible with only its decorator given", c.top, name)
		}
	}
}

package serve

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/repoctx/repoctx"
)

// crossWorkspaces writes an app workspace whose main.py calls a function of a library
// workspace beside it, and returns their folders.
func crossWorkspaces(t *testing.T) (app, lib string) {
	root := t.TempDir()
	app, lib = filepath.Join(root, "app"), filepath.Join(root, "geomlib")
	write(t, lib, "geomlib/area.py", "def polygon_area_shoelace(points):\n    total = 0.0\n    for (x1, y1), (x2, y2) in zip(points, points[1:] + points[:1]):\n        total += x1 * y2 - x2 * y1\n    return abs(total) / 2.0\n")
	write(t, lib, "geomlib/unused.py", "def unrelated_helper_zebra():\n    return 42\n")
	write(t, app, "main.py", "from geomlib.area import polygon_area_shoelace\n\n\ndef report(shape):\n    return 1\n")
	return app, lib
}

// libHits counts the parts of resp from the library workspace holding text.
func libHits(resp ContextResponse, text string) int {
	n := 0
	for _, p := range resp.Parts {
		if strings.HasPrefix(p.Path, "geomlib/geomlib/") && strings.Contains(p.Text, text) {
			n++
		}
	}
	return n
}

func TestCrossRepoServe(t *testing.T) {
	app, lib := crossWorkspaces(t)
	ts := startServer(t, []Folder{{Dir: app}, {Dir: lib}}, func(c *Config) { c.CrossRepo = true; c.Debounce = time.Millisecond })
	hole := func(call string) map[string]any {
		return map[string]any{"workspace": "app", "path": "main.py",
			"prefix": "from geomlib.area import polygon_area_shoelace\n\n\ndef report(shape):\n    area = " + call + "(", "suffix": ")\n"}
	}
	resp := ts.context(t, hole("polygon_area_shoelace"))
	if libHits(resp, "def polygon_area_shoelace") == 0 {
		t.Fatalf("the library's function is not in the app's context: %+v", resp.Parts)
	}
	// Without --cross-repo, the same request sees the app alone.
	plain := startServer(t, []Folder{{Dir: app}, {Dir: lib}}, nil)
	if n := libHits(plain.context(t, hole("polygon_area_shoelace")), "polygon_area_shoelace"); n != 0 {
		t.Errorf("without cross-repo the app's context holds %d library parts", n)
	}
	// A request's "with" names the workspaces searched: none but the app's own here
	// (itself), an unknown one is refused, and without --cross-repo "with" is refused.
	withSelf := hole("polygon_area_shoelace")
	withSelf["with"] = []string{"app"}
	if n := libHits(ts.context(t, withSelf), "polygon_area_shoelace"); n != 0 {
		t.Errorf("with [app]: %d library parts", n)
	}
	withLib := hole("polygon_area_shoelace")
	withLib["with"] = []string{"geomlib"}
	if libHits(ts.context(t, withLib), "def polygon_area_shoelace") == 0 {
		t.Errorf("with [geomlib]: no library part")
	}
	withNone := hole("x")
	withNone["with"] = []string{"nowhere"}
	if code, body := ts.post(t, withNone); code != 400 || !strings.Contains(string(body), "nowhere") {
		t.Errorf("with an unknown workspace: %d %s", code, body)
	}
	if code, body := plain.post(t, withLib); code != 400 || !strings.Contains(string(body), "--cross-repo") {
		t.Errorf("with, without --cross-repo: %d %s", code, body)
	}
	// Status shows each bleve index.
	for _, w := range ts.status(t).Workspaces {
		if w.SearchIndex == nil || w.SearchIndex.Documents == 0 || w.SearchIndex.Bytes == 0 || w.SearchIndex.Updated.IsZero() {
			t.Errorf("status of %s: search index %+v", w.Name, w.SearchIndex)
		}
	}
	// A new function saved in the library is found by the next request.
	write(t, lib, "geomlib/area.py", "def polygon_area_shoelace(points):\n    return 0.0\n\n\ndef triangle_perimeter_heron(a, b, c):\n    return a + b + c\n")
	waitFor(t, "the library's new function", func() bool {
		return libHits(ts.context(t, hole("triangle_perimeter_heron")), "def triangle_perimeter_heron") > 0
	})
	// A deleted file's chunks leave the bleve index.
	var libWS *Workspace
	for _, w := range ts.ws {
		if w.name == "geomlib" {
			libWS = w
		}
	}
	before := libWS.bix.Status().Documents
	if err := os.Remove(filepath.Join(lib, "geomlib", "unused.py")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the deleted file's chunks to leave the index", func() bool { return libWS.bix.Status().Documents < before })
	hits, err := ts.cross.Search(context.Background(), "unrelated_helper_zebra", 5, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if strings.HasPrefix(h.ID, "geomlib/unused.py") {
			t.Errorf("deleted file's chunk still found: %+v", h)
		}
	}
}

// defPart returns the part of resp whose why holds a definition of name and whose
// path starts with pathPrefix, or false.
func defPart(resp ContextResponse, name, pathPrefix string) (repoctx.Part, bool) {
	for _, p := range resp.Parts {
		if !strings.HasPrefix(p.Path, pathPrefix) {
			continue
		}
		for _, w := range p.Why {
			if strings.HasPrefix(w, "def:"+name+"(") {
				return p, true
			}
		}
	}
	return repoctx.Part{}, false
}

// TestCrossRepoDefinitions: with --cross-repo, a Python app's use of a function it
// imports from a library workspace gets the function's definition part from the
// library, sees a function saved in the library by the next request, and the app's
// own definition wins once the app has one.
func TestCrossRepoDefinitions(t *testing.T) {
	app, lib := crossWorkspaces(t)
	ts := startServer(t, []Folder{{Dir: app}, {Dir: lib}}, func(c *Config) { c.CrossRepo = true; c.Debounce = time.Millisecond })
	hole := func(imports, call string) map[string]any {
		return map[string]any{"workspace": "app", "path": "main.py",
			"prefix": "from geomlib.area import " + imports + "\n\n\ndef report(shape):\n    area = " + call + "(", "suffix": ")\n"}
	}
	resp := ts.context(t, hole("polygon_area_shoelace", "polygon_area_shoelace"))
	p, ok := defPart(resp, "polygon_area_shoelace", "geomlib/")
	if !ok {
		t.Fatalf("no definition part from the library: %+v", resp.Parts)
	}
	if p.Path != "geomlib/geomlib/area.py" || !strings.Contains(p.Text, "def polygon_area_shoelace(points):") ||
		!slices.Contains(p.Why, "def:polygon_area_shoelace(cross-repo import)") {
		t.Errorf("definition part: %+v", p)
	}
	// Without --cross-repo, and with "with" naming the app alone, no library definition.
	plain := startServer(t, []Folder{{Dir: app}, {Dir: lib}}, nil)
	if p, ok := defPart(plain.context(t, hole("polygon_area_shoelace", "polygon_area_shoelace")), "polygon_area_shoelace", ""); ok {
		t.Errorf("without cross-repo: %+v", p)
	}
	withSelf := hole("polygon_area_shoelace", "polygon_area_shoelace")
	withSelf["with"] = []string{"app"}
	if p, ok := defPart(ts.context(t, withSelf), "polygon_area_shoelace", ""); ok {
		t.Errorf("with [app]: %+v", p)
	}
	withLib := hole("polygon_area_shoelace", "polygon_area_shoelace")
	withLib["with"] = []string{"geomlib"}
	if _, ok := defPart(ts.context(t, withLib), "polygon_area_shoelace", "geomlib/geomlib/area.py"); !ok {
		t.Errorf("with [geomlib]: no library definition")
	}
	// A module-qualified use of an imported module resolves too.
	qual := map[string]any{"workspace": "app", "path": "main.py",
		"prefix": "import geomlib.area\n\n\ndef report(shape):\n    area = geomlib.area.polygon_area_shoelace(", "suffix": ")\n"}
	if _, ok := defPart(ts.context(t, qual), "polygon_area_shoelace", "geomlib/geomlib/area.py"); !ok {
		t.Errorf("geomlib.area.polygon_area_shoelace: no library definition")
	}
	// A function saved in the library: the next request's definition part shows it.
	write(t, lib, "geomlib/area.py", "def polygon_area_shoelace(points):\n    return 0.0\n\n\ndef triangle_perimeter_heron(a, b, c):\n    return a + b + c\n")
	waitFor(t, "the library's new function as a definition", func() bool {
		p, ok := defPart(ts.context(t, hole("polygon_area_shoelace, triangle_perimeter_heron", "triangle_perimeter_heron")), "triangle_perimeter_heron", "geomlib/")
		return ok && strings.Contains(p.Text, "def triangle_perimeter_heron(a, b, c):")
	})
	// The app's own module of that name wins.
	write(t, app, "geomlib/area.py", "def polygon_area_shoelace(points):\n    return -1.0\n")
	waitFor(t, "the app's own definition", func() bool {
		resp := ts.context(t, hole("polygon_area_shoelace", "polygon_area_shoelace"))
		_, own := defPart(resp, "polygon_area_shoelace", "geomlib/area.py")
		_, other := defPart(resp, "polygon_area_shoelace", "geomlib/geomlib/")
		return own && !other
	})
}

// TestCrossRepoDefinitionsPaths: Go and TypeScript imports name a library workspace
// by its go.mod module path and its package.json name (a re-export in its index
// file followed to the function).
func TestCrossRepoDefinitionsPaths(t *testing.T) {
	for _, tc := range []struct {
		name      string
		lib, app  map[string]string
		path      string
		prefix    string
		use, want string // the name used, the definition part's path
		text      string // a line of the part's text
	}{{
		name: "go",
		lib: map[string]string{"go.mod": "module example.com/geomlib\n\ngo 1.22\n",
			"area/area.go":  "package area\n\n// PolygonAreaShoelace returns the area of a polygon.\nfunc PolygonAreaShoelace(pts [][2]float64) float64 {\n\treturn 0\n}\n",
			"area/other.go": "package area\n\nfunc unrelatedZebra() int { return 1 }\n"},
		app: map[string]string{"go.mod": "module example.com/app\n\ngo 1.22\n",
			"main.go": "package main\n\nimport \"example.com/geomlib/area\"\n\nfunc main() {\n\t_ = area.PolygonAreaShoelace(nil)\n}\n"},
		path:   "main.go",
		prefix: "package main\n\nimport \"example.com/geomlib/area\"\n\nfunc main() {\n\tx := area.PolygonAreaShoelace(",
		use:    "PolygonAreaShoelace", want: "geomlib/area/area.go", text: "// PolygonAreaShoelace returns",
	}, {
		name: "typescript",
		lib: map[string]string{"package.json": "{\"name\": \"@acme/geom\", \"version\": \"1.0.0\"}\n",
			"src/index.ts": "export { polygonAreaShoelace } from \"./area\";\n",
			"src/area.ts":  "export function polygonAreaShoelace(points: number[][]): number {\n  return 0;\n}\n"},
		app: map[string]string{"package.json": "{\"name\": \"app\"}\n",
			"main.ts": "import { polygonAreaShoelace } from \"@acme/geom\";\n\nexport const a = polygonAreaShoelace([]);\n"},
		path:   "main.ts",
		prefix: "import { polygonAreaShoelace } from \"@acme/geom\";\n\nexport const a = polygonAreaShoelace(",
		use:    "polygonAreaShoelace", want: "geomlib/src/area.ts", text: "export function polygonAreaShoelace(",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			app, lib := filepath.Join(root, "app"), filepath.Join(root, "geomlib")
			for p, text := range tc.lib {
				write(t, lib, p, text)
			}
			for p, text := range tc.app {
				write(t, app, p, text)
			}
			ts := startServer(t, []Folder{{Dir: app}, {Dir: lib}}, func(c *Config) { c.CrossRepo = true })
			resp := ts.context(t, map[string]any{"workspace": "app", "path": tc.path, "prefix": tc.prefix, "suffix": ")\n"})
			p, ok := defPart(resp, tc.use, "geomlib/")
			if !ok || p.Path != tc.want || !strings.Contains(p.Text, tc.text) {
				t.Fatalf("definition part of %s: %+v (found %v); parts %+v", tc.use, p, ok, resp.Parts)
			}
			plain := startServer(t, []Folder{{Dir: app}, {Dir: lib}}, nil)
			if p, ok := defPart(plain.context(t, map[string]any{"workspace": "app", "path": tc.path, "prefix": tc.prefix, "suffix": ")\n"}), tc.use, ""); ok {
				t.Errorf("without cross-repo: %+v", p)
			}
		})
	}
}

package serve

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/repoctx/repoctx"
)

// TestQueryWith: query --with brings a library folder's function into an app's
// context, under the library folder's name, and cache stats counts its bleve index.
func TestQueryWith(t *testing.T) {
	root := t.TempDir()
	app, lib := filepath.Join(root, "app"), filepath.Join(root, "mylib")
	for p, text := range map[string]string{
		filepath.Join(lib, "geometry.py"): "def polygon_area_shoelace(points):\n    total = 0.0\n    for (x1, y1), (x2, y2) in zip(points, points[1:] + points[:1]):\n        total += x1 * y2 - x2 * y1\n    return abs(total) / 2.0\n",
		filepath.Join(app, "main.py"):     "from mylib.geometry import polygon_area_shoelace\n\ndef report(shape):\n    return 1\n",
		filepath.Join(root, "pre.txt"):    "from mylib.geometry import polygon_area_shoelace\n\ndef report(shape):\n    area = polygon_area_shoelace(",
	} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cache := t.TempDir()
	args := []string{"query", app, "--file", "main.py", "--prefix-file", filepath.Join(root, "pre.txt"), "--cache-dir", cache, "--json"}
	code, out, stderr := run(t, append(args, "--with", lib)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res struct{ Parts []repoctx.Part }
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range res.Parts {
		found = found || p.Path == "mylib/geometry.py" && strings.Contains(p.Text, "def polygon_area_shoelace")
	}
	if !found {
		t.Errorf("no mylib/geometry.py part: %s", out)
	}
	// The function the app imports from the library is its definition part.
	def := false
	for _, p := range res.Parts {
		def = def || p.Path == "mylib/geometry.py" && slices.Contains(p.Why, "def:polygon_area_shoelace(cross-repo import)") &&
			strings.Contains(p.Text, "def polygon_area_shoelace(points):")
	}
	if !def {
		t.Errorf("no definition part from mylib/geometry.py: %s", out)
	}
	if code, out, stderr := run(t, append(args, "--with", lib, "--no-definitions")...); code != 0 || strings.Contains(out, "def:") {
		t.Errorf("--no-definitions: exit %d, a definition part: %s %s", code, out, stderr)
	}
	if _, out, _ := run(t, args...); strings.Contains(out, "mylib/geometry.py") {
		t.Errorf("without --with the library's part is there: %s", out)
	}
	if _, out, _ := run(t, "cache", "stats", "--cache-dir", cache); !strings.Contains(out, "search indexes") {
		t.Errorf("cache stats does not count the bleve indexes: %s", out)
	}
}

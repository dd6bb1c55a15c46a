package symbols

import (
	"testing"
	"testing/fstest"
)

// resolveForeign resolves name as the app file at path with text prefix+suffix uses
// it, in the library table lib imported by names (the way assemble's definitions
// do: the current text's imports and scope).
func resolveForeign(t *testing.T, lib *Table, names []string, path, prefix, suffix, name string) []Candidate {
	t.Helper()
	u, site := useAt(t, path, prefix, suffix, name)
	return lib.ResolveForeign(u, site, names, 3)
}

func TestResolveForeign(t *testing.T) {
	lib := extractAll(t, map[string]string{
		"src/geomlib/__init__.py":                 "from .area import polygon_area\n",
		"src/geomlib/area.py":                     "class Polygon:\n    def area(self):\n        return 0\n\n\ndef polygon_area(points):\n    return 0\n",
		"src/geomlib/util.py":                     "def helper_only_here():\n    return 1\n",
		"area/area.go":                            "package area\n\nfunc PolygonArea() float64 { return 0 }\n",
		"src/index.ts":                            "export { polygonArea } from \"./shapes/area\";\n",
		"src/shapes/area.ts":                      "export function polygonArea(): number { return 0; }\nexport function perimeter(): number { return 0; }\n",
		"src/main/java/com/acme/geom/Area.java":   "package com.acme.geom;\n\npublic class Area {\n    public static double polygon() { return 0; }\n}\n",
		"src/main/kotlin/com/acme/geom/Shapes.kt": "package com.acme.geom\n\nfun shoelace(): Double = 0.0\n",
		"src/Geom/Area.cs":                        "namespace Acme.Geom\n{\n    public static class Area\n    {\n        public static double Polygon() { return 0; }\n    }\n}\n",
		"include/area.h":                          "double polygon_area_c(int n);\n",
		"src/area.c":                              "#include \"area.h\"\n\ndouble polygon_area_c(int n) {\n    return 0;\n}\n",
	})
	names := []string{"geomlib", "example.com/acme/geomlib", "@acme/geom"}
	for _, tc := range []struct {
		name, path, prefix, use, want string
	}{
		{"python from-import", "app/main.py", "from geomlib.area import polygon_area\n\nx = polygon_area(", "polygon_area", "src/geomlib/area.py:6(import)"},
		{"python package re-export", "main.py", "from geomlib import polygon_area\n\nx = polygon_area(", "polygon_area", "src/geomlib/area.py:6(import)"},
		{"python module-qualified", "main.py", "import geomlib.area\n\nx = geomlib.area.polygon_area(", "polygon_area", "src/geomlib/area.py:6(module)"},
		{"python imported class's member", "main.py", "from geomlib.area import Polygon\n\np: Polygon = Polygon()\nx = p.area(", "area", "src/geomlib/area.py:2(receiver)"},
		{"python relative import: the app's", "main.py", "from .geomlib.area import polygon_area\n\nx = polygon_area(", "polygon_area", ""},
		{"python other top-level package", "main.py", "from area import polygon_area\n\nx = polygon_area(", "polygon_area", ""},
		{"python bare name not imported", "main.py", "x = helper_only_here(", "helper_only_here", ""},
		{"go module path", "cmd/main.go", "package main\n\nimport \"example.com/acme/geomlib/area\"\n\nfunc main() {\n\tarea.PolygonArea(", "PolygonArea", "area/area.go:3(module)"},
		{"go folder name in the path", "main.go", "package main\n\nimport geo \"github.com/fork/geomlib/area\"\n\nfunc main() {\n\tgeo.PolygonArea(", "PolygonArea", "area/area.go:3(module)"},
		{"go other module", "main.go", "package main\n\nimport \"example.com/other/area\"\n\nfunc main() {\n\tarea.PolygonArea(", "PolygonArea", ""},
		{"ts package name", "src/app.ts", "import { polygonArea } from \"@acme/geom\";\n\nconst a = polygonArea(", "polygonArea", "src/shapes/area.ts:1(import)"},
		{"ts sub-path", "src/app.ts", "import { perimeter } from \"@acme/geom/shapes/area\";\n\nconst a = perimeter(", "perimeter", "src/shapes/area.ts:2(import)"},
		{"ts namespace import", "src/app.ts", "import * as g from \"geomlib\";\n\nconst a = g.polygonArea(", "polygonArea", "src/shapes/area.ts:1(module)"},
		{"ts relative import: the app's", "src/app.ts", "import { polygonArea } from \"./shapes/area\";\n\nconst a = polygonArea(", "polygonArea", ""},
		{"java class import", "src/main/java/com/app/Main.java", "package com.app;\n\nimport com.acme.geom.Area;\n\nclass Main {\n    double x = Area.polygon(", "polygon", "src/main/java/com/acme/geom/Area.java:4(receiver)"},
		{"c include", "main.c", "#include \"geomlib/area.h\"\n\nint main(void) {\n    double a = polygon_area_c(", "polygon_area_c", "include/area.h:1(star-import) src/area.c:3(star-import)"},
		{"csharp namespace using", "App/Main.cs", "using Acme.Geom;\n\nclass Main\n{\n    double x = Area.Polygon(", "Polygon", "src/Geom/Area.cs:5(receiver)"},
		{"kotlin function import", "src/main/kotlin/com/app/Main.kt", "package com.app\n\nimport com.acme.geom.shoelace\n\nval x = shoelace(", "shoelace", "src/main/kotlin/com/acme/geom/Shapes.kt:3(import)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := where(resolveForeign(t, lib, names, tc.path, tc.prefix, ")\n", tc.use)); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestResolveForeignFolderPackage: a library folder whose files are the package's
// modules (geometry.py at its root) is imported by the folder's name.
func TestResolveForeignFolderPackage(t *testing.T) {
	lib := extractAll(t, map[string]string{"geometry.py": "def polygon_area(points):\n    return 0\n"})
	names := []string{"mylib"}
	for _, prefix := range []string{
		"from mylib.geometry import polygon_area\n\nx = polygon_area(",
		"import mylib.geometry\n\nx = mylib.geometry.polygon_area(",
		"from mylib import geometry\n\nx = geometry.polygon_area(",
	} {
		if got := where(resolveForeign(t, lib, names, "main.py", prefix, ")\n", "polygon_area")); got == "" {
			t.Errorf("%q: not resolved", prefix)
		}
	}
	if got := where(resolveForeign(t, lib, []string{"other"}, "main.py", "from mylib.geometry import polygon_area\n\nx = polygon_area(", ")\n", "polygon_area")); got != "" {
		t.Errorf("another library's name: %s", got)
	}
}

func TestImportNames(t *testing.T) {
	fsys := fstest.MapFS{
		"go.mod":       {Data: []byte("// the library\nmodule \"example.com/acme/geomlib\"\n\ngo 1.22\n")},
		"package.json": {Data: []byte(`{"name": "@acme/geom", "version": "1.0.0"}`)},
	}
	if got := ImportNames(fsys); len(got) != 2 || got[0] != "example.com/acme/geomlib" || got[1] != "@acme/geom" {
		t.Errorf("ImportNames = %q", got)
	}
	if got := ImportNames(fstest.MapFS{"package.json": {Data: []byte("{")}}); len(got) != 0 {
		t.Errorf("a package.json that does not parse: %q", got)
	}
}

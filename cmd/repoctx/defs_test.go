package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// queryDefs runs `repoctx query` on the repository files (written to a new folder)
// for a completion in the file from whose prefix is prefix, and returns the "def:"
// reasons of the parts, as "path why".
func queryDefs(t *testing.T, files map[string]string, from, prefix string) []string {
	t.Helper()
	repo := t.TempDir()
	for p, text := range files {
		full := filepath.Join(repo, filepath.FromSlash(p))
		must(t, os.MkdirAll(filepath.Dir(full), 0o755))
		must(t, os.WriteFile(full, []byte(text), 0o644))
	}
	pf := filepath.Join(t.TempDir(), "prefix.txt")
	must(t, os.WriteFile(pf, []byte(prefix), 0o644))
	code, out, stderr := run(t, "query", repo, "--file", from, "--prefix-file", pf, "--cache-dir", t.TempDir(), "--json")
	if code != 0 {
		t.Fatalf("query: exit %d: %s", code, stderr)
	}
	var v struct {
		Parts []struct {
			Path string
			Why  []string
		}
	}
	must(t, json.Unmarshal([]byte(out), &v))
	var defs []string
	for _, p := range v.Parts {
		for _, w := range p.Why {
			if strings.HasPrefix(w, "def:") {
				defs = append(defs, p.Path+" "+w)
			}
		}
	}
	return defs
}

// TestQueryDefinitionsGo: in a three-file Go module, a function called through its
// package's import (`util.ParseAmount(`, the import path under go.mod's module path)
// and called bare from another file of its package both reach the context as a
// "def:" part of the file that defines it, not of another package's function of the
// same name.
func TestQueryDefinitionsGo(t *testing.T) {
	files := map[string]string{
		"go.mod":          "module example.com/shop\n\ngo 1.22\n",
		"util/money.go":   "package util\n\nimport \"strconv\"\n\n// ParseAmount reads an amount in cents.\nfunc ParseAmount(s string) int {\n\tn, _ := strconv.Atoi(s)\n\treturn n * 100\n}\n",
		"util/report.go":  "package util\n\nfunc Total(xs []string) int {\n\tt := 0\n\tfor _, x := range xs {\n\t\tt += 1\n\t}\n\treturn t\n}\n",
		"main.go":         "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(1)\n}\n",
		"other/parse.go":  "package other\n\nfunc ParseAmount(s string) float64 {\n\treturn 0\n}\n",
		"other/parse2.go": "package other\n\nfunc Unrelated() {}\n",
	}
	for _, c := range []struct{ name, from, prefix string }{
		{"import", "main.go", "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/shop/util\"\n)\n\nfunc main() {\n\tfmt.Println(util.ParseAmount("},
		{"alias", "main.go", "package main\n\nimport (\n\tu \"example.com/shop/util\"\n)\n\nfunc main() {\n\tprintln(u.ParseAmount("},
		{"same package", "util/report.go", "package util\n\nfunc Total(xs []string) int {\n\tt := 0\n\tfor _, x := range xs {\n\t\tt += ParseAmount("},
	} {
		t.Run(c.name, func(t *testing.T) {
			defs := queryDefs(t, files, c.from, c.prefix)
			found := false
			for _, d := range defs {
				if strings.HasPrefix(d, "other/") {
					t.Errorf("another package's definition: %q", d)
				}
				found = found || strings.HasPrefix(d, "util/money.go def:ParseAmount")
			}
			if !found {
				t.Errorf("no def part of util/money.go; def parts %q", defs)
			}
		})
	}
}

// TestQueryDefinitionsCpp: in a three-file C++ module, a function of a namespace
// called as `shop::parse_amount(` from a file that includes its header, and called
// bare from a file of the same namespace, reaches the context as a "def:" part (its
// declaration in the header or its definition), not another namespace's function of
// the same name.
func TestQueryDefinitionsCpp(t *testing.T) {
	files := map[string]string{
		"include/shop/money.h": "#pragma once\n\nnamespace shop {\n\n// Reads an amount in cents.\nint parse_amount(const char* s);\n\n}  // namespace shop\n",
		"src/money.cc":         "#include \"shop/money.h\"\n\n#include <cstdlib>\n\nnamespace shop {\n\nint parse_amount(const char* s) {\n  return std::atoi(s) * 100;\n}\n\n}  // namespace shop\n",
		"src/report.cc":        "#include \"shop/money.h\"\n\nnamespace shop {\n\nint total() { return 0; }\n\n}  // namespace shop\n",
		"src/main.cc":          "#include <cstdio>\n\nint main() { return 0; }\n",
		"other/parse.cc":       "namespace other {\n\ndouble parse_amount(const char* s) { return 0; }\n\n}  // namespace other\n",
	}
	for _, c := range []struct{ name, from, prefix string }{
		{"namespaced", "src/main.cc", "#include <cstdio>\n\n#include \"shop/money.h\"\n\nint main() {\n  std::printf(\"%d\\n\", shop::parse_amount("},
		{"same namespace", "src/report.cc", "#include \"shop/money.h\"\n\nnamespace shop {\n\nint total() { return parse_amount("},
	} {
		t.Run(c.name, func(t *testing.T) {
			defs := queryDefs(t, files, c.from, c.prefix)
			found := false
			for _, d := range defs {
				if strings.HasPrefix(d, "other/") {
					t.Errorf("another namespace's definition: %q", d)
				}
				found = found || strings.HasPrefix(d, "include/shop/money.h def:parse_amount") || strings.HasPrefix(d, "src/money.cc def:parse_amount")
			}
			if !found {
				t.Errorf("no def part of parse_amount in shop; def parts %q", defs)
			}
		})
	}
}

// TestQueryDefinitionsSwift: in a Swift package, a top-level function of module
// ShopKit called bare from another file of ShopKit, and from a file of another
// module that imports ShopKit, reaches the context as a "def:" part, not another
// module's function of the same name.
func TestQueryDefinitionsSwift(t *testing.T) {
	files := map[string]string{
		"Package.swift":                    "// swift-tools-version:5.9\nimport PackageDescription\n\nlet package = Package(name: \"Shop\")\n",
		"Sources/ShopKit/Money.swift":      "/// Reads an amount in cents.\npublic func parseAmount(_ s: String) -> Int {\n    return (Int(s) ?? 0) * 100\n}\n",
		"Sources/ShopKit/Report.swift":     "func total(_ xs: [String]) -> Int {\n    return xs.count\n}\n",
		"Sources/App/main.swift":           "print(1)\n",
		"Sources/Other/Parse.swift":        "func parseAmount(_ s: String) -> Double {\n    return 0\n}\n",
		"Sources/Other/OtherHelpers.swift": "func unrelated() {}\n",
	}
	for _, c := range []struct{ name, from, prefix string }{
		{"same module", "Sources/ShopKit/Report.swift", "func total(_ xs: [String]) -> Int {\n    return xs.map { parseAmount("},
		{"import", "Sources/App/main.swift", "import ShopKit\n\nlet cents = parseAmount("},
	} {
		t.Run(c.name, func(t *testing.T) {
			defs := queryDefs(t, files, c.from, c.prefix)
			found := false
			for _, d := range defs {
				if strings.HasPrefix(d, "Sources/Other/") {
					t.Errorf("another module's definition: %q", d)
				}
				found = found || strings.HasPrefix(d, "Sources/ShopKit/Money.swift def:parseAmount")
			}
			if !found {
				t.Errorf("no def part of Sources/ShopKit/Money.swift; def parts %q", defs)
			}
		})
	}
}

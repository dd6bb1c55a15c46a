package symbols

import (
	"path"
	"slices"
	"strings"
)

// Go's name binding: a package is a folder, its files see each other's top-level
// names without an import, and another package's exported names are used as
// `pkg.Name`, pkg being the import's explicit name or the package's own name (by
// convention the import path's last element, a major-version element `v2` or a
// gopkg.in `.v3` suffix left out). The import path is matched against the
// repository's folders by suffix (Table.pathFiles), which covers go.mod's module
// path prefix without reading go.mod.

// goPackageQualified resolves Go's `q.name`, q a package an import of the completion
// file names: the top-level definitions of name in the files of the imported folder.
// It reports whether q named an import (found in the repository or not), so that a
// package from outside the repository ends the search.
func (r *resolver) goPackageQualified(name, q string) bool {
	if strings.ContainsAny(q, ".()") || r.site.Scope.Local(q) {
		return false
	}
	for _, im := range r.imports {
		if im.Star || !goBinds(im.Alias, im.Module, q) {
			continue
		}
		for _, f := range r.t.pathFiles(im.Module, r.site.From) {
			if path.Ext(f.Path) != ".go" {
				continue
			}
			for i := range f.Defs {
				if d := &f.Defs[i]; d.Name == name && d.Container == "" && r.inFamily(d) && (r.site.Keep == nil || r.site.Keep(d)) {
					r.add(d, ViaModule)
				}
			}
		}
		return true
	}
	return false
}

// goBinds reports whether a Go import of path mod, with explicit name alias ("" for
// none), binds the package name q in the importing file.
func goBinds(alias, mod, q string) bool {
	if alias != "" {
		return alias == q
	}
	return slices.Contains(goNames(mod), q)
}

// goNames returns the package names a Go import of path mod without an explicit
// name may bind: the path's last element (a major-version element `v2` or a
// gopkg.in `.v3` suffix left out), also without a "go-" prefix or a "-go" or ".go"
// suffix, with "-" as written and as "_"; in that order, without duplicates.
func goNames(mod string) []string {
	elems := strings.Split(strings.Trim(mod, "/"), "/")
	last := elems[len(elems)-1]
	if len(elems) > 1 && isMajorVersion(last) {
		last = elems[len(elems)-2]
	}
	if i := strings.LastIndex(last, ".v"); i > 0 && isMajorVersion(last[i+1:]) {
		last = last[:i] // gopkg.in/yaml.v3
	}
	var out []string
	for _, n := range []string{last, strings.TrimPrefix(last, "go-"), strings.TrimSuffix(last, "-go"), strings.TrimSuffix(last, ".go")} {
		for _, v := range []string{n, strings.ReplaceAll(n, "-", "_")} {
			if v != "" && !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	return out
}

// isMajorVersion reports whether s is a Go major-version path element: v and digits.
func isMajorVersion(s string) bool {
	if len(s) < 2 || s[0] != 'v' {
		return false
	}
	for _, c := range s[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

package symbols

import (
	"path"
	"sort"
	"strings"
)

// Swift's name binding: the files of one module (a build target) see each other's
// top-level declarations without an import, and `import M` makes module M's public
// ones visible. Files do not name their module: swiftModule takes it from the path,
// as Swift Package Manager lays targets out.

// swiftModule returns the folder of the module the Swift file at p belongs to: the
// folder right below the deepest Sources or Tests folder above it (SwiftPM's
// Sources/<Target>/...), else its top folder; "" for a file at the root.
func swiftModule(p string) string {
	elems := strings.Split(p, "/")
	for i := len(elems) - 3; i >= 0; i-- {
		if elems[i] == "Sources" || elems[i] == "Tests" {
			return strings.Join(elems[:i+2], "/")
		}
	}
	if len(elems) > 1 {
		return elems[0]
	}
	return ""
}

// swiftModuleNames adds the top-level definitions of name, used bare in a Swift
// file, from its own module (the same folder first, ViaSameDir, then the module's
// other files, ViaSamePkg), else from the modules it imports (ViaStarImport: a
// module whose folder's name is the import's). It reports whether one was found.
func (r *resolver) swiftModuleNames(name string) bool {
	mod := swiftModule(r.site.From)
	imported := map[string]bool{}
	for _, im := range r.imports {
		imported[im.Module] = true
	}
	dir := path.Dir(r.site.From)
	var same, other, imp []*Def
	for _, d := range r.t.named(name) {
		if d.Container != "" || d.Path == r.site.From || !r.inFamily(d) || path.Ext(d.Path) != ".swift" ||
			!r.test && IsTestPath(d.Path) || r.site.Keep != nil && !r.site.Keep(d) {
			continue
		}
		switch m := swiftModule(d.Path); {
		case m == mod && path.Dir(d.Path) == dir:
			same = append(same, d)
		case m == mod:
			other = append(other, d)
		case m != "" && imported[path.Base(m)]:
			imp = append(imp, d)
		}
	}
	found := false
	for _, tier := range []struct {
		defs []*Def
		via  string
	}{{same, ViaSameDir}, {other, ViaSamePkg}, {imp, ViaStarImport}} {
		if found {
			break
		}
		for _, d := range sortedByPath(tier.defs) {
			found = r.add(d, tier.via) || found
		}
	}
	return found
}

// sortedByPath returns defs ordered by path, then position.
func sortedByPath(defs []*Def) []*Def {
	sort.SliceStable(defs, func(i, j int) bool {
		if defs[i].Path != defs[j].Path {
			return defs[i].Path < defs[j].Path
		}
		return defs[i].StartByte < defs[j].StartByte
	})
	return defs
}

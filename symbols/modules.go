package symbols

import (
	"path"
	"strings"

	sitter "github.com/smacker/go-tree-sitter"

	"github.com/repoctx/repoctx/grammars"
)

// Name binding through modules, for the languages whose imports name paths or
// packages: re-exports (JavaScript's `export { a } from './m'` and `export * from`,
// Rust's `pub use`, Python's imports in `__init__.py`), whole-module imports used as
// qualifiers (`import * as m` then `m.name`, Rust's `m::name`), the crate root of
// Rust's `use crate::name`, C/C++ definitions of functions a header declares, and
// names written with their package (`com.acme.Money.parse`, PHP's `\App\Money::`).

// maxReExports bounds the chain of re-exports followed from an import.
const maxReExports = 3

// jsReExports returns the re-exports of a JavaScript or TypeScript module (root, its
// text src) as imports of the module they name: `export { a, b as c } from './m'`
// gives m|a| and m|b|c, `export * from './m'` a wildcard import of m, `export * as
// ns from './m'` m||ns.
func jsReExports(root *sitter.Node, src []byte) []grammars.Import {
	var out []grammars.Import
	for _, c := range grammars.Children(root) {
		if c.Type() != "export_statement" {
			continue
		}
		source := c.ChildByFieldName("source")
		if source == nil {
			continue
		}
		mod := strings.Trim(source.Content(src), "\"'`")
		base := grammars.Import{Module: mod, Line: int(c.StartPoint().Row) + 1}
		n := len(out)
		for _, k := range grammars.Children(c) {
			switch k.Type() {
			case "export_clause":
				for _, s := range grammars.Children(k) {
					if s.Type() != "export_specifier" {
						continue
					}
					im := base
					if name := s.ChildByFieldName("name"); name != nil {
						im.Name = strings.Trim(name.Content(src), "\"'")
					}
					if alias := s.ChildByFieldName("alias"); alias != nil {
						im.Alias = strings.Trim(alias.Content(src), "\"'")
					}
					if im.Name != "" {
						out = append(out, im)
					}
				}
			case "namespace_export":
				im := base
				for _, id := range grammars.Children(k) {
					if id.IsNamed() {
						im.Alias = strings.Trim(id.Content(src), "\"'")
					}
				}
				out = append(out, im)
			}
		}
		if len(out) == n {
			im := base
			im.Star = true
			out = append(out, im)
		}
	}
	return out
}

// reExported returns the top-level definitions named target (kept by keep) that the
// files fs re-export: through their explicit imports of target (the name they give
// it) and their wildcard imports, followed up to maxReExports modules deep. Only
// modules of path-importing languages and Python packages re-export.
func (r *resolver) reExported(fs []*File, target string, keep func(*Def) bool, depth int) []*Def {
	if depth >= maxReExports {
		return nil
	}
	var out []*Def
	for _, f := range fs {
		spec := grammars.Lookup(f.Lang)
		if spec == nil || !spec.ImportsByPath && f.Lang != "python" {
			continue
		}
		for _, im := range f.Imports {
			if im.Star {
				mfs := r.t.moduleFiles(im, f.Path)
				for _, g := range mfs {
					for i := range g.Defs {
						if d := &g.Defs[i]; d.Name == target && d.Container == "" && (keep == nil || keep(d)) && r.inFamily(d) {
							out = append(out, d)
						}
					}
				}
				if len(out) == 0 {
					out = append(out, r.reExported(mfs, target, keep, depth+1)...)
				}
				continue
			}
			if im.Local() != target || im.Name == "" {
				continue
			}
			out = append(out, r.importTargetsDepth(im, f.Path, keep, depth+1)...)
		}
	}
	return out
}

// rustCrateRoot returns the crate root of the Rust file at from: the lib.rs or
// main.rs of the nearest folder above it holding one.
func (t *Table) rustCrateRoot(from string) []*File {
	for dir := path.Dir(from); ; dir = path.Dir(dir) {
		for _, root := range []string{"lib.rs", "main.rs"} {
			p := root
			if dir != "." && dir != "/" {
				p = dir + "/" + root
			}
			if f := t.File(p); f != nil {
				return []*File{f}
			}
		}
		if dir == "." || dir == "/" || dir == "" {
			return nil
		}
	}
}

// pathModuleQualified resolves `q.name` (JavaScript, TypeScript) and `q::name`
// (Rust), q a whole module an import binds (`import * as q`, `const q =
// require(...)`, `use crate::q`), else for Rust a module the repository declares
// (`mod q;`, for `crate::q::name`; not std's `mem::swap`): the top-level definitions of name in that module's files or
// re-exported by them. It reports whether q named such a module.
func (r *resolver) pathModuleQualified(name, q string) bool {
	if strings.ContainsAny(q, ".()") {
		return false
	}
	var files []*File
	bound := false
	for _, im := range r.imports {
		if im.Star || im.Local() != q {
			continue
		}
		switch {
		case r.lang == "rust":
			files = r.t.pathFiles(strings.Trim(im.Module+"/"+im.Name, "/"), r.site.From)
		case im.Name == "":
			files = r.t.pathFiles(im.Module, r.site.From)
		default:
			continue // a name from a module, not the module
		}
		bound = true
		break
	}
	if !bound && r.lang == "rust" && !r.site.foreign && r.rustModDeclared(q) {
		files = r.t.pathFiles(q, r.site.From)
	}
	var rs []*File
	for _, f := range files {
		if r.fam[f.Lang] {
			rs = append(rs, f)
		}
	}
	if len(rs) == 0 {
		return bound
	}
	found := false
	for _, f := range rs {
		for i := range f.Defs {
			if d := &f.Defs[i]; d.Name == name && d.Container == "" {
				found = r.add(d, ViaModule) || found
			}
		}
	}
	if !found {
		for _, d := range r.reExported(rs, name, nil, 0) {
			r.add(d, ViaModule)
		}
	}
	return true
}

// swiftModuleQualified resolves Swift's `M.name`, M the name of a module of the
// repository (its folder's name, see swiftModule): M's top-level definitions of
// name. It reports whether one was found.
func (r *resolver) swiftModuleQualified(name, q string) bool {
	if strings.ContainsAny(q, ".()") {
		return false
	}
	found := false
	for _, d := range sortedByPath(append([]*Def(nil), r.t.named(name)...)) {
		if d.Container == "" && path.Ext(d.Path) == ".swift" && path.Base(swiftModule(d.Path)) == q && r.inFamily(d) {
			found = r.add(d, ViaModule) || found
		}
	}
	return found
}

// packageClasses reads a receiver chain written with its package (`com.acme.Money`,
// C#'s `Acme.Util.Money`, PHP's `\App\Util\Money`): the classes named parts[k] in
// the files of package parts[:k] (the longest such package). k is 0 when none.
func (r *resolver) packageClasses(parts []string) ([]*Def, int) {
	for k := len(parts) - 1; k >= 1; k-- {
		fs := r.t.pkgFiles(strings.Join(parts[:k], "."))
		var cs []*Def
		for _, f := range fs {
			for i := range f.Defs {
				if d := &f.Defs[i]; d.Name == parts[k] && d.Kind == grammars.Class && r.inFamily(d) {
					cs = append(cs, d)
				}
			}
		}
		if len(cs) > 0 {
			return cs, k
		}
	}
	return nil, 0
}

// classMembersStar adds the members named name of the class a wildcard import names
// with its package (Java's `import static a.b.Money.*`, C#'s `using static
// A.B.Money;`), for the languages whose imports name packages. It reports whether one
// was found.
func (r *resolver) classMembersStar(im grammars.Import, name string, keep func(*Def) bool) bool {
	i := strings.LastIndexByte(im.Module, '.')
	if i < 0 {
		return false
	}
	pkg, cls := im.Module[:i], im.Module[i+1:]
	found := false
	for _, f := range r.t.pkgFiles(pkg) {
		for j := range f.Defs {
			if d := &f.Defs[j]; d.Name == name && d.Container == cls && (keep == nil || keep(d)) {
				found = r.add(d, ViaStarImport) || found
			}
		}
	}
	return found
}

// withDefinitions returns out with, right after each C or C++ declaration of a
// function (a prototype in a header), the function's definitions: functions of that
// name and container in the files that include the declaring header or share its
// name ("money.h", "money.c"), at most max in all.
func (r *resolver) withDefinitions(out []Candidate) []Candidate {
	var res []Candidate
	seen := map[*Def]bool{}
	for _, c := range out {
		seen[c.Def] = true
	}
	for _, c := range out {
		res = append(res, c)
		d := c.Def
		if d.Kind == grammars.Function || !strings.HasSuffix(d.Signature, ");") {
			continue
		}
		stem := strings.TrimSuffix(path.Base(d.Path), path.Ext(d.Path))
		for _, e := range sortedByPath(append([]*Def(nil), r.t.named(d.Name)...)) {
			if seen[e] || e.Kind != grammars.Function || e.Container != d.Container || !r.inFamily(e) {
				continue
			}
			f := r.t.File(e.Path)
			if f == nil {
				continue
			}
			ok := strings.TrimSuffix(path.Base(e.Path), path.Ext(e.Path)) == stem
			for _, im := range f.Imports {
				if ok {
					break
				}
				for _, h := range r.t.pathFiles(im.Module, f.Path) {
					ok = ok || h.Path == d.Path
				}
			}
			if ok {
				seen[e] = true
				res = append(res, Candidate{e, c.Via})
			}
		}
	}
	if len(res) > r.max {
		res = res[:r.max]
	}
	return res
}

// rustModDeclared reports whether a Rust file of the repository declares the module
// q (`mod q;`, `pub mod q {`).
func (r *resolver) rustModDeclared(q string) bool {
	for _, d := range r.t.named(q) {
		if d.Kind == grammars.Class && path.Ext(d.Path) == ".rs" && strings.HasPrefix(strings.TrimPrefix(strings.TrimPrefix(d.Signature, "pub(crate) "), "pub "), "mod ") {
			return true
		}
	}
	return false
}

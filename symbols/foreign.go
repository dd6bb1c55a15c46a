package symbols

import (
	"encoding/json"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"

	"golang.org/x/mod/modfile"

	"github.com/repoctx/repoctx/grammars"
)

// Resolution across repositories: a file of one repository (an app) imports a
// module of another (a library) that is searched beside it. The library's table
// resolves the use through the app file's imports alone (ResolveForeign): an import
// names the library's module the way the language's packaging does it, so
//
//   - Python, Java, Kotlin, C#, Scala, PHP: the dotted module or package is looked up
//     as in the library itself (Python: only when its first component is one of the
//     library's top-level packages, a module or folder at the root or under src/, or
//     is the library's name, its folder then being the package);
//   - Go, JavaScript, TypeScript, C and C++ (paths): the import path starts with a
//     name the library is imported by (ImportNames: its Go module path, its npm
//     package name, its folder's name, or any path element equal to a single-element
//     name: "github.com/acme/geomlib/area" for a folder "geomlib"); the rest of the
//     path is a folder or file from the library's root (JavaScript also under src/
//     and lib/, and a package's own name its index file);
//   - relative imports (Python's leading dots, "./" and "../" paths) name the app's
//     own files and Rust's `use` paths its crates: they never resolve in another
//     repository.
//
// Nothing else binds a name across repositories: no same folder, same package or
// repository-wide fallback, no class of the app's around the cursor.

// ImportNames returns the names other repositories' code imports the repository at
// fsys by, besides its folder's name: the module path of a go.mod at its root and
// the "name" of a package.json there. A file that is missing or does not parse adds
// nothing (its name is not needed to search the repository).
func ImportNames(fsys fs.FS) []string {
	var out []string
	if b, err := fs.ReadFile(fsys, "go.mod"); err == nil {
		if m := modfile.ModulePath(b); m != "" {
			out = append(out, m)
		}
	}
	if b, err := fs.ReadFile(fsys, "package.json"); err == nil {
		var pkg struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(b, &pkg) == nil && pkg.Name != "" {
			out = append(out, pkg.Name)
		}
	}
	return out
}

// foreignFrom is the path an app file's imports are resolved from in another
// repository's table: its base name at the root, marked by a NUL byte so that it is no
// file of the table (its extension still gives the language).
func foreignFrom(from string) string { return "\x00" + path.Base(from) }

// ResolveForeign returns the definitions of t, another repository's table, that u
// names when used in the file site.From of an app whose imports there are
// site.Imports, most certain first, at most max (0 means 5). names are the names the
// app's code imports t's repository by (its folder or workspace name and
// ImportNames). Only the imports bind a name across repositories (see the rules
// above): a qualified use resolves when its receiver is an imported module, package
// or class, or a variable of an imported class; a bare use when an import names it.
// site.Current is not used (the app's own classes are not t's), site.Scope and
// site.Keep are. The result is nil when no import of the app names t's modules.
func (t *Table) ResolveForeign(u Use, site Site, names []string, max int) []Candidate {
	if max <= 0 {
		max = 5
	}
	spec := grammars.ForPath(site.From)
	if spec == nil || spec.Name == "rust" || len(site.Imports) == 0 {
		return nil
	}
	imports := t.foreignImports(spec, site.Imports, names)
	if len(imports) == 0 {
		return nil
	}
	fs := Site{From: foreignFrom(site.From), Imports: imports, Scope: site.Scope, Keep: site.Keep, foreign: true}
	r := t.newResolver(fs, max)
	out := r.resolve(u)
	if r.lang == "c" || r.lang == "cpp" {
		out = r.withDefinitions(out)
	}
	return out
}

// foreignImports returns the app's imports that name modules of t, rewritten, for
// path imports, to paths from t's root (the stand-in file foreignFrom sits there).
func (t *Table) foreignImports(spec *grammars.Spec, imports []grammars.Import, names []string) []grammars.Import {
	var out []grammars.Import
	switch {
	case spec.Name == "python":
		tops := t.pythonTops()
		for _, im := range imports {
			first, rest, _ := strings.Cut(im.Module, ".")
			switch {
			case im.Level > 0:
			case tops[first]:
				out = append(out, im)
			case slices.Contains(names, first):
				// The repository's folder is the package: `from mylib.geometry import f`
				// names its geometry.py; `import mylib.geometry` still binds the
				// whole chain.
				if im.Name == "" && im.Alias == "" {
					im.Alias = im.Module
				}
				im.Module = rest
				out = append(out, im)
			}
		}
	case spec.ImportsByPath:
		names = byLength(names)
		for _, im := range imports {
			rest, ok := foreignRest(im.Module, names)
			if !ok {
				continue
			}
			mod := t.rootModule(spec, rest)
			if mod == "" {
				continue
			}
			if spec.Name == "go" && im.Alias == "" {
				// The package name the import binds is the original path's.
				for _, n := range goNames(im.Module) {
					a := im
					a.Module, a.Alias = mod, n
					out = append(out, a)
				}
				continue
			}
			im.Module = mod
			out = append(out, im)
		}
	default:
		out = slices.Clone(imports) // packages are named the same in every repository
	}
	return out
}

// byLength returns names without empty or duplicate ones, longest first (ties by
// name), so that the most specific name matches first.
func byLength(names []string) []string {
	var out []string
	for _, n := range names {
		if n = strings.Trim(n, "/"); n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if len(out[i]) != len(out[j]) {
			return len(out[i]) > len(out[j])
		}
		return out[i] < out[j]
	})
	return out
}

// foreignRest returns the part of the path import mod after the name of the
// repository it names ("" for the repository's root), and whether it names one of
// names: mod is a name or starts with one and "/", or, for a name of one element,
// holds it as an element (the first such).
func foreignRest(mod string, names []string) (string, bool) {
	if mod == "" || strings.HasPrefix(mod, "./") || strings.HasPrefix(mod, "../") || strings.HasPrefix(mod, "/") {
		return "", false
	}
	for _, n := range names {
		if mod == n {
			return "", true
		}
		if rest, ok := strings.CutPrefix(mod, n+"/"); ok {
			return rest, true
		}
	}
	elems := strings.Split(mod, "/")
	for i, e := range elems {
		for _, n := range names {
			if !strings.Contains(n, "/") && e == n {
				return strings.Join(elems[i+1:], "/"), true
			}
		}
	}
	return "", false
}

// rootModule returns the module, relative to the root ("./x"), that t holds for the
// path rest of an import of language spec (files of its family), or "" when t holds
// none: Go's folder (the
// root's files for ""), JavaScript's file or folder at the root, under src/ or lib/
// (for "" an index file there), C's file at the root or under include/ or src/.
func (t *Table) rootModule(spec *grammars.Spec, rest string) string {
	from := foreignFrom("x" + spec.Extensions[0])
	var cands []string
	switch {
	case spec.Name == "go":
		cands = []string{"./" + rest}
	case spec.Family == "javascript" && rest == "":
		cands = []string{"./index", "./src/index", "./lib/index"}
	case spec.Family == "javascript":
		cands = []string{"./" + rest, "./src/" + rest, "./lib/" + rest}
	default:
		cands = []string{"./" + rest, "./include/" + rest, "./src/" + rest}
	}
	fam := grammars.Family(spec.Name)
	for _, c := range cands {
		for _, f := range t.pathFiles(c, from) {
			if slices.Contains(fam, f.Lang) {
				return c
			}
		}
	}
	return ""
}

// pythonTops returns the top-level Python packages of t: the first component of its
// Python files' modules, or the second when the first is src.
func (t *Table) pythonTops() map[string]bool {
	t.pyTopsOnce.Do(func() { t.pyTops = t.findPythonTops() })
	return t.pyTops
}

// findPythonTops is pythonTops without its cache.
func (t *Table) findPythonTops() map[string]bool {
	tops := map[string]bool{}
	t.eachKey(KeyPackage, func(p string) {
		if t.firstLang(KeyPackage, p) != "python" {
			return
		}
		parts := strings.Split(p, ".")
		if parts[0] == "src" && len(parts) > 1 {
			parts = parts[1:]
		}
		tops[parts[0]] = true
	})
	return tops
}

package symbols

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/repoctx/repoctx/grammars"
)

// Site is where names are used: the completion file and what its current text shows.
type Site struct {
	// From is the completion file's path, slash-separated, relative to the root.
	From string
	// Imports are the current text's imports; nil means those of the indexed file at
	// From (the file being edited may differ from its indexed copy).
	Imports []grammars.Import
	// Current holds the symbols of the current text (its definitions' byte ranges are
	// of that text), for the classes the text defines; nil means none.
	Current *File
	// Scope is what the current text declares around the cursor; nil means nothing
	// is known (receivers then have no known type).
	Scope *Scope
	// Keep, when not nil, accepts the definitions that may be returned (such as those
	// of the languages a run selected, assemble's Options.Languages); rejected ones do
	// not count toward max.
	Keep func(*Def) bool

	// foreign marks a resolution in another repository's table (ResolveForeign):
	// only the imports bind names.
	foreign bool
}

// Via values of a Candidate, most certain first.
const (
	ViaImport     = "import"       // an explicit import of the name (or of its alias)
	ViaModule     = "module"       // `m.name` with m an imported module (Python)
	ViaReceiver   = "receiver"     // a member of the receiver's class or its supertypes, or a Kotlin extension on it
	ViaStarImport = "star-import"  // a wildcard import's module defines it
	ViaSameFile   = "same-file"    // the indexed copy of the completion file
	ViaFixture    = "fixture"      // a pytest fixture (a test function's parameter) in a conftest.py above
	ViaSameDir    = "same-dir"     // bare name, a file of the same folder
	ViaSamePkg    = "same-package" // bare name, a file of the same Kotlin package
	ViaImportedMd = "imported-module"
	ViaGlobal     = "global" // bare name, the only definition of that name anywhere
)

// maxSupers bounds the supertype levels searched for a member.
const maxSupers = 3

// Resolve returns the definitions that name, used bare in the file at from, most
// likely refers to, most certain first, at most max (0 means 5). imports are the
// importing file's imports (nil: those of the indexed file at from). It is
// [Table.ResolveUse] for a bare use with no scope known.
func (t *Table) Resolve(name, from string, imports []grammars.Import, max int) []Candidate {
	return t.ResolveUse(Use{Name: name, Bare: true}, Site{From: from, Imports: imports}, max)
}

// ResolveUse returns the definitions that u, used in the file at site.From, most
// likely refers to, most certain first, at most max (0 means 5). Only definitions in
// files of the completion file's language family (grammars.Family) are returned, and
// never one of the members every object has (equals, __repr__, ...).
//
// The rules follow the languages' own name binding as far as the text shows it:
//
//  1. A receiver whose meaning the text shows: `self.name`/`this.name` (the class
//     around the cursor), `x.name` with x's type declared (Scope.TypeOf), `Foo.name`
//     with Foo a class or object, `m.name` with m an imported Python module or Go
//     package (its folder's top-level definitions, see goPackageQualified), C++'s
//     `ns::name` with ns no class (a namespace, see cppNamespaceQualified),
//     JavaScript's `m.name` with m a whole module an import binds and Rust's
//     `m::name` with m a module (pathModuleQualified), Swift's `M.name` with M a
//     module of the repository (swiftModuleQualified), a class written with its
//     package (`com.acme.Money.name`, PHP's `\App\Money::name`: packageClasses),
//     `super.name`, and chains of these through the declared types of properties and
//     return types (`self.client.name`). The name is looked up in that class and its
//     supertypes (up to 3 levels), and for Kotlin among the extensions on those
//     types; or in that module. A receiver of known type without such a member, or a
//     type or module outside the repository (String, os), ends the search there: a
//     definition found by the bare name would be another thing of the same name.
//  2. An explicit import of the name or of an alias of it (for Kotlin also for member
//     uses: extension functions are imported by name), following the re-exports of
//     the module it names (reExported: index files, `pub use`), then wildcard imports
//     (Java's `import static a.Money.*` and C#'s `using static a.Money;`: the class's
//     members), then the indexed copy of the completion file. A name an import binds but the
//     repository does not define is not looked up further.
//  3. A bare use of a local of the functions around the cursor (Scope.Local) refers
//     to it, except that in Python test files a parameter is a pytest fixture: the
//     fixture in a conftest.py of the folder or a folder above.
//  4. A bare Kotlin use inside a class: a member of the class or its supertypes
//     (implicit this).
//  5. By bare name, unless it is a keyword (a soft keyword that may name a
//     definition does not count, see IsReserved) or a very common standard-library or
//     member name of the language (IsCommonName), and leaving out test code when the
//     completion file is not test code (IsTestPath): for a bare Kotlin use, a
//     top-level definition of the same package (Kotlin needs an import otherwise),
//     for a bare Go use one of the same folder (Go's package), for a bare Swift use
//     one of the same module, else of a module it imports (see swiftModuleNames);
//     for a member use whose receiver's type is unknown, a member (or Kotlin
//     extension) in the same folder, the same Kotlin package or a module the file
//     imports, else the only declaration of that name in the repository (the
//     expect/actual copies of one Kotlin declaration count once). A bare Python use
//     is never resolved by name alone: Python binds a name only by assignment,
//     definition or import.
//
// In C and C++, a function declaration found in a header is followed by the
// function's definitions (withDefinitions).
func (t *Table) ResolveUse(u Use, site Site, max int) []Candidate {
	if max <= 0 {
		max = 5
	}
	r := t.newResolver(site, max)
	out := r.resolve(u)
	if r.lang == "c" || r.lang == "cpp" {
		out = r.withDefinitions(out)
	}
	return out
}

// resolve is ResolveUse's search, without C/C++'s definitions of declarations.
func (r *resolver) resolve(u Use) []Candidate {
	t, site := r.t, r.site
	if universalMembers[r.lang][u.Name] {
		return nil
	}
	unknown := false // a member use whose receiver's type is unknown
	for _, q := range u.Qualifiers {
		if r.full() {
			break
		}
		if !r.qualified(u.Name, q) {
			unknown = true
		}
	}
	bare := u.Bare || len(u.Qualifiers) == 0
	if len(r.out) > 0 {
		return r.out
	}
	if bare || r.lang == "kotlin" {
		// Kotlin imports extension functions by name, and the receiver's type may be a
		// subtype of the one the extension is declared on.
		var keep func(*Def) bool
		if !bare {
			keep = func(d *Def) bool { return extReceiver(d) != "" }
		}
		if r.imported(u.Name, keep, ViaImport) || r.starImported(u.Name, keep) {
			return r.out
		}
	}
	if !bare && !unknown || site.foreign {
		return r.out
	}
	if bare {
		if f := t.File(site.From); f != nil {
			for i := range f.Defs {
				if f.Defs[i].Name == u.Name {
					r.add(&f.Defs[i], ViaSameFile)
				}
			}
		}
		if len(r.out) > 0 || r.bindsImport(u.Name) {
			return r.out // an imported name not found here is outside the repository
		}
		if site.Scope.Local(u.Name) {
			if r.lang == "python" && r.test && site.Scope.Param(u.Name) {
				r.fixture(u.Name)
			}
			if !unknown {
				return r.out
			}
		} else if r.lang == "kotlin" && site.Scope.Class() != "" {
			// Implicit this: a member of the class around the cursor or its supertypes.
			if r.lookupMember(r.classes(site.Scope.Class(), nil), site.Scope.Class(), u.Name) {
				return r.out
			}
		}
	}
	if IsCommonName(r.lang, u.Name) {
		return r.out
	}
	if IsReserved(grammars.Lookup(r.lang), u.Name) {
		return r.out
	}
	if bare && (r.lang == "kotlin" || r.lang == "go") && !site.Scope.Local(u.Name) {
		// A top-level function or property used bare without an import is in the
		// same package (or an extension in scope there); a Go package is a folder.
		r.byBareName(u.Name, false, func(d *Def) bool { return d.Container == "" })
	}
	if bare && r.lang == "swift" && !site.Scope.Local(u.Name) {
		r.swiftModuleNames(u.Name) // the module's own names, then imported modules'
	}
	if unknown && len(r.out) == 0 {
		r.byBareName(u.Name, true, func(d *Def) bool {
			return d.Container != "" || r.lang == "kotlin" && extReceiver(d) != ""
		})
	}
	return r.out
}

// universalMembers are, per language, the members every object has, whose
// definitions say nothing about the receiver: never resolved.
var universalMembers = map[string]map[string]bool{
	"kotlin": wordSet("equals hashCode toString"),
	"python": wordSet("__eq__ __ne__ __hash__ __repr__ __str__"),
}

type resolver struct {
	t       *Table
	site    Site
	lang    string
	fam     map[string]bool // the family's languages; nil: any
	imports []grammars.Import
	test    bool // the completion file is test code
	max     int
	out     []Candidate
	seen    map[*Def]bool
}

func (t *Table) newResolver(site Site, max int) *resolver {
	r := &resolver{t: t, site: site, max: max, seen: map[*Def]bool{}, imports: site.Imports, test: IsTestPath(site.From)}
	if f := t.File(site.From); f != nil {
		r.lang = f.Lang
		if r.imports == nil {
			r.imports = f.Imports
		}
	} else if s := grammars.ForPath(site.From); s != nil {
		r.lang = s.Name
	}
	if r.lang != "" {
		r.fam = map[string]bool{}
		for _, l := range grammars.Family(r.lang) {
			r.fam[l] = true
		}
	}
	return r
}

func (r *resolver) full() bool { return len(r.out) >= r.max }

// inFamily reports whether d is in a file of the completion's language family and
// Site.Keep accepts it.
func (r *resolver) inFamily(d *Def) bool {
	if r.site.Keep != nil && !r.site.Keep(d) {
		return false
	}
	if r.fam == nil {
		return true
	}
	if f := r.t.File(d.Path); f != nil {
		return r.fam[f.Lang]
	}
	if s := grammars.ForPath(d.Path); s != nil {
		return r.fam[s.Name]
	}
	return false
}

// add adds d unless it is a duplicate, outside the family or over max; it reports
// whether d is (now) among the results.
func (r *resolver) add(d *Def, via string) bool {
	if r.seen[d] {
		return true
	}
	if r.full() || !r.inFamily(d) {
		return false
	}
	r.seen[d] = true
	r.out = append(r.out, Candidate{d, via})
	return true
}

// fileOf returns the symbols d belongs to: the current text's for a definition of
// site.Current, else the indexed file's.
func (r *resolver) fileOf(d *Def) *File {
	if c := r.site.Current; c != nil {
		for i := range c.Defs {
			if &c.Defs[i] == d {
				return c
			}
		}
	}
	return r.t.File(d.Path)
}

// importsOf returns the imports in effect in the file f (the current ones for the
// completion file).
func (r *resolver) importsOf(f *File) []grammars.Import {
	if f == nil || f.Path == r.site.From {
		return r.imports
	}
	return f.Imports
}

// importTargets returns the definitions an explicit (non-wildcard) import im names,
// kept by keep (nil: any).
func (r *resolver) importTargets(im grammars.Import, from string, keep func(*Def) bool) []*Def {
	return r.importTargetsDepth(im, from, keep, 0)
}

// importTargetsDepth is importTargets at depth re-exports from the completion file.
func (r *resolver) importTargetsDepth(im grammars.Import, from string, keep func(*Def) bool, depth int) []*Def {
	var out []*Def
	target := im.Name
	if target == "" {
		return nil
	}
	ok := func(d *Def) bool { return d.Name == target && (keep == nil || keep(d)) && r.inFamily(d) }
	mfs := r.t.moduleFiles(im, from)
	for _, f := range mfs {
		for i := range f.Defs {
			if d := &f.Defs[i]; ok(d) && d.Container == "" {
				out = append(out, d)
			}
		}
	}
	if len(out) == 0 {
		// `export { name } from './m'` in an index file, Rust's `pub use m::name`.
		out = r.reExported(mfs, target, keep, depth)
	}
	if len(out) == 0 && r.lang != "python" {
		// `import a.b.Outer.Inner`, `import a.b.Obj.member`, `import a.b.C.Companion.f`:
		// the module's last components are classes or objects of the package before
		// them.
		comps := strings.Split(im.Module, ".")
		for k := len(comps) - 1; k >= 1 && len(out) == 0; k-- {
			classes := comps[k:]
			for _, f := range r.t.pkgFiles(strings.Join(comps[:k], ".")) {
				for j := range f.Defs {
					if d := &f.Defs[j]; ok(d) && d.Container == classes[len(classes)-1] && nestedIn(f, d, classes) {
						out = append(out, d)
					}
				}
			}
		}
	}
	if len(out) == 0 {
		// Python re-exported names, nested Kotlin packages: the name below the module.
		for _, d := range r.t.named(target) {
			if ok(d) && strings.HasPrefix(r.t.File(d.Path).Package, im.Module) {
				out = append(out, d)
			}
		}
	}
	return out
}

// nestedIn reports whether d sits in the classes named by classes, outermost first,
// the last one holding it directly (`ByteString.Companion` for a companion object's
// member), in f.
func nestedIn(f *File, d *Def, classes []string) bool {
	inner := d
	for k := len(classes) - 1; k >= 0; k-- {
		var holder *Def
		for i := range f.Defs {
			c := &f.Defs[i]
			if c.Kind == grammars.Class && c.Name == classes[k] && c.Name == inner.Container && c != inner &&
				c.StartByte <= inner.StartByte && c.EndByte >= inner.EndByte {
				holder = c
				break
			}
		}
		if holder == nil {
			return false
		}
		inner = holder
	}
	return true
}

// imported adds the targets of the explicit imports of name in effect in the
// completion file (imports nil) or given; it reports whether one was found.
func (r *resolver) imported(name string, keep func(*Def) bool, via string) bool {
	found := false
	for _, im := range r.imports {
		if im.Star || im.Local() != name {
			continue
		}
		for _, d := range r.importTargets(im, r.site.From, keep) {
			found = r.add(d, via) || found
		}
	}
	return found
}

// starImported adds the top-level definitions of name in the wildcard imports' modules.
func (r *resolver) starImported(name string, keep func(*Def) bool) bool {
	found := false
	byPath := false
	if spec := grammars.Lookup(r.lang); spec != nil {
		byPath = spec.ImportsByPath
	}
	for _, im := range r.imports {
		if !im.Star {
			continue
		}
		fs := r.t.moduleFiles(im, r.site.From)
		for _, f := range fs {
			for i := range f.Defs {
				if d := &f.Defs[i]; d.Name == name && d.Container == "" && (keep == nil || keep(d)) {
					found = r.add(d, ViaStarImport) || found
				}
			}
		}
		if len(fs) == 0 && !byPath && r.lang != "python" && r.classMembersStar(im, name, keep) {
			found = true
		}
	}
	return found
}

// fixture adds the pytest fixtures named name in conftest.py files of the completion
// file's folder and the folders above it, nearest first.
func (r *resolver) fixture(name string) {
	for dir := path.Dir(r.site.From); ; dir = path.Dir(dir) {
		p := "conftest.py"
		if dir != "." && dir != "/" {
			p = dir + "/conftest.py"
		}
		if f := r.t.File(p); f != nil {
			for i := range f.Defs {
				if d := &f.Defs[i]; d.Name == name && d.Container == "" {
					r.add(d, ViaFixture)
				}
			}
		}
		if dir == "." || dir == "/" || dir == "" {
			return
		}
	}
}

// byBareName adds the definitions of name that keep accepts by the nearness of their
// file (see ResolveUse, rule 4): for a member use (member) the same folder, the same
// Kotlin package, the modules the completion file imports, else the only declaration
// of the name; for a bare Kotlin use the same package (the same folder when the file
// has none).
func (r *resolver) byBareName(name string, member bool, keep func(*Def) bool) {
	var cands []*Def
	for _, d := range r.t.named(name) {
		if r.inFamily(d) && (keep == nil || keep(d)) && d.Path != r.site.From && (r.test || !IsTestPath(d.Path)) {
			cands = append(cands, d)
		}
	}
	if len(cands) == 0 {
		return
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].Path < cands[j].Path })
	dir := path.Dir(r.site.From)
	pkg := ""
	if f := r.t.File(r.site.From); f != nil {
		pkg = f.Package
	} else if c := r.site.Current; c != nil {
		pkg = c.Package
	}
	tiers := []string{ViaSameDir, ViaSamePkg, ViaImportedMd}
	if !member {
		tiers = []string{ViaSamePkg}
		if pkg == "" {
			tiers = []string{ViaSameDir}
		}
	}
	var imported map[string]bool
	if member {
		imported = r.importedFiles()
	}
	for _, via := range tiers {
		for _, d := range cands {
			f := r.t.File(d.Path)
			ok := false
			switch via {
			case ViaSameDir:
				ok = path.Dir(d.Path) == dir
			case ViaSamePkg:
				ok = pkg != "" && r.lang != "python" && f != nil && f.Package == pkg
			case ViaImportedMd:
				ok = imported[d.Path]
			}
			if ok {
				r.add(d, via)
			}
		}
	}
	if len(r.out) > 0 || !member {
		return
	}
	// Nowhere near: only a name defined once is taken.
	if declarations(cands) == 1 {
		for _, d := range cands {
			r.add(d, ViaGlobal)
		}
	}
}

// declarations counts the declarations defs are: the platform copies of one Kotlin
// expect/actual declaration count once.
func declarations(defs []*Def) int {
	keys := map[string]bool{}
	for i, d := range defs {
		k := fmt.Sprint(i)
		if strings.Contains(d.Signature, "expect ") || strings.Contains(d.Signature, "actual ") {
			k = normalSignature(d.Signature)
		}
		keys[k] = true
	}
	return len(keys)
}

// normalSignature is a signature without Kotlin's expect/actual and visibility
// modifiers, to tell one declaration's platform copies from different declarations.
func normalSignature(s string) string {
	var out []string
	for _, w := range strings.Fields(s) {
		switch w {
		case "expect", "actual", "public", "internal", "private", "protected", "override", "open":
			continue
		}
		out = append(out, w)
	}
	return strings.Join(out, " ")
}

// importedFiles returns the files of the modules the completion file imports from.
func (r *resolver) importedFiles() map[string]bool {
	m := map[string]bool{}
	for _, im := range r.imports {
		mod := im
		if !im.Star && im.Name != "" {
			mod.Name = "" // the module the name comes from
		}
		for _, f := range r.t.moduleFiles(mod, r.site.From) {
			m[f.Path] = true
		}
	}
	return m
}

// classes resolves a type name used in the file ctx (imports in effect there) to
// class definitions: the current text's classes, explicit imports, wildcard imports,
// the same file, the same folder, the same Kotlin package, else the only class of
// that name. It returns nil for a type outside the repository.
func (r *resolver) classes(name string, ctx *File) []*Def {
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	isClass := func(d *Def) bool { return d.Kind == grammars.Class && d.Name == name && r.inFamily(d) }
	var out []*Def
	take := func(d *Def) {
		if isClass(d) && !containsDef(out, d) && len(out) < 4 {
			out = append(out, d)
		}
	}
	from := r.site.From
	if ctx != nil {
		from = ctx.Path
	}
	if from == r.site.From && r.site.Current != nil {
		for i := range r.site.Current.Defs {
			take(&r.site.Current.Defs[i])
		}
		if len(out) > 0 {
			// The indexed copy's class too: the text around a hole often does not
			// parse, and a class broken by it shows no members.
			if f := r.t.File(from); f != nil {
				for i := range f.Defs {
					take(&f.Defs[i])
				}
			}
			return out
		}
	}
	imports := r.importsOf(ctx)
	if ctx == nil {
		imports = r.imports
	}
	for _, im := range imports {
		if !im.Star && im.Local() == name {
			for _, d := range r.importTargets(grammars.Import{Module: im.Module, Level: im.Level, Name: im.Name}, from, nil) {
				if d.Kind == grammars.Class && d.Name == im.Name && d.Name != name && r.inFamily(d) && !containsDef(out, d) && len(out) < 4 {
					out = append(out, d) // an alias (`import a.Money as M`)
				}
				take(d)
			}
		}
	}
	if len(out) > 0 {
		return out
	}
	for _, im := range imports {
		if im.Star {
			for _, f := range r.t.moduleFiles(im, from) {
				for i := range f.Defs {
					take(&f.Defs[i])
				}
			}
		}
	}
	if len(out) > 0 || r.site.foreign {
		return out // another repository's classes are named by imports only
	}
	defs := r.t.named(name)
	var pkg string
	if f := r.t.File(from); f != nil {
		pkg = f.Package
	}
	for _, near := range []func(d *Def) bool{
		func(d *Def) bool { return d.Path == from },
		func(d *Def) bool { return path.Dir(d.Path) == path.Dir(from) },
		func(d *Def) bool { return pkg != "" && r.lang != "python" && r.t.File(d.Path).Package == pkg },
	} {
		for _, d := range defs {
			if near(d) {
				take(d)
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	var all []*Def
	for _, d := range defs {
		if isClass(d) {
			all = append(all, d)
		}
	}
	if declarations(all) == 1 {
		for _, d := range all {
			take(d)
		}
	}
	return out
}

func containsDef(list []*Def, d *Def) bool {
	for _, x := range list {
		if x == d {
			return true
		}
	}
	return false
}

// members returns the definitions named name directly inside class c (its members
// and, for Kotlin, its companion object's) of the file f holding c.
func members(f *File, c *Def, name string) []*Def {
	if f == nil {
		return nil
	}
	var out []*Def
	for i := range f.Defs {
		d := &f.Defs[i]
		if d.Name != name || d.StartByte < c.StartByte || d.EndByte > c.EndByte || d == c {
			continue
		}
		if d.Container == c.Name {
			out = append(out, d)
			continue
		}
		// A companion object's member: its container is an object directly in c.
		for j := range f.Defs {
			o := &f.Defs[j]
			if o.Kind == grammars.Class && o.Name == d.Container && o.Container == c.Name &&
				o.StartByte >= c.StartByte && o.EndByte <= c.EndByte && d.StartByte >= o.StartByte && d.EndByte <= o.EndByte &&
				strings.Contains(o.Signature, "companion object") {
				out = append(out, d)
				break
			}
		}
	}
	return out
}

// supertypes returns the names of the supertypes a class signature lists: Kotlin's
// `class A(...) : B(), C<T>`, Python's `class A(B, C, metaclass=M):`.
func supertypes(lang, sig string) []string {
	var list string
	if lang == "python" {
		i := strings.IndexByte(sig, '(')
		if i < 0 {
			return nil
		}
		list = sig[i+1:]
		if j := closing(list); j >= 0 {
			list = list[:j]
		}
	} else {
		// The first ':' outside parentheses and angle brackets.
		depth := 0
		at := -1
		for i := 0; i < len(sig) && at < 0; i++ {
			switch sig[i] {
			case '(', '<', '[':
				depth++
			case ')', '>', ']':
				depth--
			case ':':
				if depth == 0 {
					at = i
				}
			case '{', '=':
				if depth == 0 {
					i = len(sig)
				}
			}
		}
		if at < 0 {
			return nil
		}
		list = sig[at+1:]
		if j := strings.Index(list, " where "); j >= 0 {
			list = list[:j]
		}
		if j := strings.IndexByte(list, '{'); j >= 0 {
			list = list[:j]
		}
	}
	var out []string
	depth, from := 0, 0
	for i := 0; i <= len(list); i++ {
		if i < len(list) {
			switch list[i] {
			case '(', '<', '[':
				depth++
				continue
			case ')', '>', ']':
				depth--
				continue
			}
			if list[i] != ',' || depth != 0 {
				continue
			}
		}
		part := strings.TrimSpace(list[from:i])
		from = i + 1
		if part == "" || lang == "python" && strings.Contains(part, "=") {
			continue
		}
		if n := typeName(lang, part); n != "" && n != "object" && n != "Any" {
			out = append(out, n)
		}
	}
	return out
}

// closing returns the index of the ')' that closes an already opened parenthesis in
// s, or -1.
func closing(s string) int {
	depth := 1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// walkSupers visits the classes cs, then their supertypes breadth-first, each class
// once, down to maxSupers levels below cs. visit gets a class and the file declaring
// it and returns true to stop once the current level is done. It returns the names of
// the supertypes met, for matching the receivers of extensions.
func (r *resolver) walkSupers(cs []*Def, visit func(c *Def, f *File) bool) []string {
	var types []string
	level := cs
	visited := map[*Def]bool{}
	for depth := 0; depth <= maxSupers && len(level) > 0; depth++ {
		var next []*Def
		stop := false
		for _, c := range level {
			if visited[c] {
				continue
			}
			visited[c] = true
			f := r.fileOf(c)
			if visit(c, f) {
				stop = true
			}
			for _, s := range supertypes(r.lang, c.Signature) {
				types = append(types, s)
				next = append(next, r.classes(s, f)...)
			}
		}
		if stop {
			break
		}
		level = next
	}
	return types
}

// lookupMember adds the members named name of the classes cs or of their supertypes
// (breadth-first, up to maxSupers levels: the nearest level that has one) and, for
// Kotlin, the extensions named name on typ or one of those supertypes; it reports
// whether any was found.
func (r *resolver) lookupMember(cs []*Def, typ, name string) bool {
	found := false
	types := append([]string{typ}, r.walkSupers(cs, func(c *Def, f *File) bool {
		for _, m := range members(f, c, name) {
			found = r.add(m, ViaReceiver) || found
		}
		return found
	})...)
	if !found && r.lang == "kotlin" {
		for _, d := range r.t.named(name) {
			if recv := extReceiver(d); recv != "" && containsString(types, recv) && r.extensionInScope(d) {
				found = r.add(d, ViaReceiver) || found
			}
		}
	}
	return found
}

// extensionInScope reports whether the completion file can call the Kotlin extension
// d without qualification: it is declared in the file's package, or the file imports
// it by name or imports its package with a wildcard.
func (r *resolver) extensionInScope(d *Def) bool {
	f := r.t.File(d.Path)
	if f == nil {
		return false
	}
	pkg := ""
	if c := r.site.Current; c != nil {
		pkg = c.Package
	} else if cf := r.t.File(r.site.From); cf != nil {
		pkg = cf.Package
	}
	if f.Package == pkg && !r.site.foreign {
		return true
	}
	for _, im := range r.imports {
		if im.Star && im.Module == f.Package || !im.Star && im.Name == d.Name && strings.HasPrefix(im.Module, f.Package) {
			return true
		}
	}
	return false
}

// memberType returns the declared type of the member name of the classes cs or their
// supertypes, or of a Kotlin extension on one of them (a property's type, a
// function's return type), with the file that declares it; "" when unknown.
func (r *resolver) memberType(cs []*Def, name string) (string, *File) {
	var typ string
	var in *File
	types := r.walkSupers(cs, func(c *Def, f *File) bool {
		if typ != "" {
			return true
		}
		for _, m := range members(f, c, name) {
			if t := declaredType(r.lang, m); t != "" {
				typ, in = t, f
				return true
			}
		}
		return false
	})
	if typ != "" {
		return typ, in
	}
	for _, c := range cs {
		types = append(types, c.Name)
	}
	if r.lang == "kotlin" {
		for _, d := range r.t.named(name) {
			if recv := extReceiver(d); recv != "" && containsString(types, recv) && r.inFamily(d) && r.extensionInScope(d) {
				if t := declaredType(r.lang, d); t != "" {
					return t, r.t.File(d.Path)
				}
			}
		}
	}
	return "", nil
}

// declaredType reads the type a definition's signature declares: Kotlin's
// `val x: T`, `fun f(...): T`; Python's `def f(...) -> T`.
func declaredType(lang string, d *Def) string {
	sig := d.Signature
	if lang == "python" {
		if i := strings.LastIndex(sig, "->"); i >= 0 {
			return typeChain(lang, strings.TrimSuffix(strings.TrimSpace(sig[i+2:]), ":"))
		}
		return ""
	}
	i := WordIndex(sig, d.Name)
	if i < 0 {
		return ""
	}
	rest := sig[i+len(d.Name):]
	if strings.HasPrefix(strings.TrimSpace(rest), "(") {
		j := strings.IndexByte(rest, '(')
		k := closing(rest[j+1:])
		if k < 0 {
			return ""
		}
		rest = rest[j+1+k+1:]
	}
	rest = strings.TrimSpace(rest)
	if !strings.HasPrefix(rest, ":") {
		return ""
	}
	return typeChain(lang, rest[1:])
}

// WordIndex returns the byte index of the first occurrence of the identifier w in s
// that is not part of a longer identifier (see [IsIdentByte]), or -1.
func WordIndex(s, w string) int {
	for from := 0; ; {
		i := strings.Index(s[from:], w)
		if i < 0 {
			return -1
		}
		i += from
		end := i + len(w)
		if (i == 0 || !IsIdentByte(s[i-1])) && (end == len(s) || !IsIdentByte(s[end])) {
			return i
		}
		from = i + 1
	}
}

// extReceiver returns the receiver type name of a Kotlin extension function or
// property (`fun Foo.name(`, `val <T> List<T>.name`), top-level or declared in an
// object, or "".
func extReceiver(d *Def) string {
	sig := d.Signature
	for _, kw := range []string{"fun ", "val ", "var "} {
		i := strings.Index(sig, kw)
		if i < 0 {
			continue
		}
		head := strings.TrimSpace(sig[i+len(kw):])
		if strings.HasPrefix(head, "<") {
			if j := closingAngle(head); j >= 0 {
				head = strings.TrimSpace(head[j+1:])
			}
		}
		j := strings.Index(head, "."+d.Name)
		if j <= 0 {
			return ""
		}
		return typeName("kotlin", strings.TrimSuffix(head[:j], "?"))
	}
	return ""
}

func closingAngle(s string) int {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '<':
			depth++
		case '>':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// qualified resolves name after receiver q (see ResolveUse, rule 1). It reports
// whether q's meaning is known: then a bare-name fallback does not apply.
func (r *resolver) qualified(name, q string) bool {
	if q == ExprReceiver {
		return false
	}
	if r.lang == "go" && r.goPackageQualified(name, q) || r.lang == "cpp" && r.cppNamespaceQualified(name, q) ||
		r.lang == "swift" && r.swiftModuleQualified(name, q) {
		return true
	}
	if spec := grammars.Lookup(r.lang); spec != nil && spec.ImportsByPath && (spec.Family == "javascript" || r.lang == "rust") && r.pathModuleQualified(name, q) {
		return true
	}
	parts := strings.Split(q, ".")
	if r.lang == "python" && !strings.Contains(q, "()") && r.site.Scope.TypeOf(parts[0]) == "" && r.moduleQualified(name, parts) {
		return true
	}
	typ, cs, known := r.chainType(parts, 0)
	if !known {
		return false
	}
	if typ == "" || len(cs) == 0 && r.lang != "kotlin" {
		return true // a type outside the repository (Kotlin may extend it)
	}
	r.lookupMember(cs, typ, name)
	return true
}

// maxChain bounds the nesting of declarations evaluated to type a receiver
// (`val a = b.c()` where b is `val b = d.e()` ...).
const maxChain = 4

// chainType returns the type of a receiver chain (parts of a Use qualifier: `self`,
// `x`, `Foo()`, `repo.find()`, ...) with the class definitions of that type. known is
// false when the chain's head means nothing the text or the imports explain; typ is
// "" (and known true) when the chain leads out of the repository or to a member
// without a declared type.
func (r *resolver) chainType(parts []string, depth int) (typ string, cs []*Def, known bool) {
	if depth > maxChain || len(parts) == 0 {
		return "", nil, false
	}
	scope := r.site.Scope
	rest := parts[1:]
	head, call := parts[0], false
	if head != ExprReceiver {
		head, call = strings.CutSuffix(head, "()")
	}
	var ctx *File // the file the type name is written in (nil: the completion file)
	switch {
	case head == ExprReceiver:
		// `"x".encodeUtf8().name`: the first call's declared return type (a function
		// or an extension the file imports).
		if len(rest) == 0 || !strings.HasSuffix(rest[0], "()") {
			return "", nil, false
		}
		t, f := r.functionType(strings.TrimSuffix(rest[0], "()"))
		if t == "" {
			return "", nil, false
		}
		typ, ctx, rest = t, f, rest[1:]
	case call && !startsUpper(head):
		// `make().name`: the declared return type of a function the file sees.
		t, f := r.functionType(head)
		if t == "" {
			return "", nil, false
		}
		typ, ctx = t, f
	case head == "super":
		cls := r.classes(scope.Class(), nil)
		if len(cls) == 0 {
			return "", nil, scope.Class() != ""
		}
		f := r.fileOf(cls[0])
		for _, s := range supertypes(r.lang, cls[0].Signature) {
			cs = append(cs, r.classes(s, f)...)
			if typ == "" {
				typ = s
			}
		}
		if typ == "" {
			return "", nil, true
		}
	case (head == "self" || head == "cls") && r.lang == "python" || head == "this" && r.lang == "kotlin":
		// `self.a.b`: the declared type of the longest chain the text declares.
		typ = scope.Class()
		if len(rest) > 0 {
			if t := scope.TypeOf(head + "." + strings.TrimSuffix(rest[0], "()")); t != "" {
				typ, rest = t, rest[1:]
			}
		}
		if typ == "" {
			return "", nil, false
		}
	default:
		if t := scope.TypeOf(head); t != "" && !call {
			typ = t
			break
		}
		if len(rest) > 0 && r.lang != "python" && !call {
			// `com.acme.Money.name`: a class written with its package.
			if pcs, k := r.packageClasses(parts); k > 0 {
				typ, cs, rest = parts[k], pcs, parts[k+1:]
				break
			}
		}
		if r.isImportedName(head) || startsUpper(head) {
			if r.lang == "kotlin" && !call && isConstantName(head) {
				if t, f := r.propertyType(head); t != "" {
					typ, ctx = t, f // `SYSTEM_FILE_SYSTEM.name`: a constant's type
					break
				}
			}
			typ = head // a class or object (companion, static or class members); a call constructs it
			break
		}
		if r.lang == "kotlin" && !call && !scope.Local(head) {
			if t, f := r.propertyType(head); t != "" {
				typ, ctx = t, f
				break
			}
		}
		return "", nil, false
	}
	if expr, ok := strings.CutPrefix(typ, "="); ok {
		// The receiver was assigned an expression: its type is the expression's.
		t, c, k := r.chainType(strings.Split(expr, "."), depth+1)
		if !k || t == "" {
			return "", nil, k
		}
		typ, cs = t, c
	}
	if cs == nil && r.lang == "python" && len(rest) > 0 {
		// `mod.Foo()`: a class of an imported module.
		if files, ok := r.importedModule(head); ok {
			name := strings.TrimSuffix(rest[0], "()")
			for _, f := range files {
				for i := range f.Defs {
					if d := &f.Defs[i]; d.Name == name && d.Container == "" && d.Kind == grammars.Class {
						cs = append(cs, d)
					}
				}
			}
			if len(cs) == 0 {
				return "", nil, true
			}
			typ, rest = name, rest[1:]
		}
	}
	if cs == nil {
		if r.externalType(typ, ctx) {
			return "", nil, true
		}
		cs = r.classes(typ, ctx)
	}
	for _, p := range rest {
		if len(cs) == 0 {
			return "", nil, true
		}
		p = strings.TrimSuffix(p, "()") // a method's return type is its declared type too
		t, f := r.memberType(cs, p)
		if t == "" {
			// A nested class or object (`Outer.Inner.name`)?
			var nested []*Def
			for _, c := range cs {
				for _, m := range members(r.fileOf(c), c, p) {
					if m.Kind == grammars.Class {
						nested = append(nested, m)
					}
				}
			}
			if len(nested) == 0 {
				return "", nil, true
			}
			cs, typ = nested, p
			continue
		}
		if r.externalType(t, f) {
			return "", nil, true
		}
		cs, typ = r.classes(t, f), t
	}
	if i := strings.LastIndexByte(typ, '.'); i >= 0 {
		typ = typ[i+1:]
	}
	return typ, cs, true
}

// importedModule returns the files of the Python module that an import of the
// completion file binds to name (`import a.b as name`, `import name`, `from a import
// name` when a.name is a module), and whether one does (in the repository or not).
func (r *resolver) importedModule(name string) ([]*File, bool) {
	for _, im := range r.imports {
		if im.Star || im.Local() != name {
			continue
		}
		if im.Name == "" {
			if im.Alias == "" && im.Module != name {
				continue // `import a.b` binds a, the package
			}
			return r.t.pyModule(im.Module, im.Level, r.site.From), true
		}
		mod := strings.Trim(im.Module+"."+im.Name, ".")
		if fs := r.t.pyModule(mod, im.Level, r.site.From); len(fs) > 0 {
			return fs, true
		}
	}
	return nil, false
}

// externalType reports whether a qualified type name (`httpx.Response`) written in
// the file ctx (nil: the completion file) names a module that file imports from
// outside the repository: its last component must then not be matched by name.
func (r *resolver) externalType(typ string, ctx *File) bool {
	i := strings.IndexByte(typ, '.')
	if i < 0 {
		return false
	}
	head := typ[:i]
	imports := r.imports
	from := r.site.From
	if ctx != nil && ctx.Path != r.site.From {
		imports, from = ctx.Imports, ctx.Path
	}
	for _, im := range imports {
		if im.Star || im.Local() != head {
			continue
		}
		if r.lang == "python" {
			mod := im.Module
			if im.Name != "" {
				mod = strings.Trim(im.Module+"."+im.Name, ".")
			}
			return len(r.t.pyModule(mod, im.Level, from)) == 0
		}
		return false
	}
	return false
}

// bindsImport reports whether an explicit import of the completion file binds name
// (`import a.b.name`, `from a import b as name`, `import name`).
func (r *resolver) bindsImport(name string) bool {
	for _, im := range r.imports {
		if !im.Star && im.Local() == name {
			return true
		}
	}
	return false
}

// functionType returns the declared return type of the function name as the
// completion file sees it (a top-level one of its current text, an imported one, for
// Kotlin a member of the class around the cursor or its supertypes), with the file
// that declares it; "" when unknown.
func (r *resolver) functionType(name string) (string, *File) {
	var defs []*Def
	if c := r.site.Current; c != nil {
		for i := range c.Defs {
			if d := &c.Defs[i]; d.Name == name && d.Container == "" {
				defs = append(defs, d)
			}
		}
	}
	for _, im := range r.imports {
		if !im.Star && im.Local() == name {
			defs = append(defs, r.importTargets(im, r.site.From, nil)...)
		}
	}
	if cls := r.site.Scope.Class(); cls != "" && r.lang == "kotlin" {
		defs = append(defs, r.classMembers(cls, name)...) // implicit this
	}
	for _, d := range defs {
		if t := declaredType(r.lang, d); t != "" {
			return t, r.fileOf(d)
		}
	}
	return "", nil
}

// classMembers returns the members named name of the class cls around the cursor or
// of its supertypes, nearest first (up to maxSupers levels).
func (r *resolver) classMembers(cls, name string) []*Def {
	var defs []*Def
	level := r.classes(cls, nil)
	seen := map[*Def]bool{}
	for depth := 0; depth <= maxSupers && len(level) > 0 && len(defs) == 0; depth++ {
		var next []*Def
		for _, c := range level {
			if seen[c] {
				continue
			}
			seen[c] = true
			f := r.fileOf(c)
			defs = append(defs, members(f, c, name)...)
			for _, st := range supertypes(r.lang, c.Signature) {
				next = append(next, r.classes(st, f)...)
			}
		}
		level = next
	}
	return defs
}

// propertyType returns the type of a Kotlin property the text uses without declaring
// it: a member of the class around the cursor or its supertypes (implicit this), an
// imported property, a top-level property of the same package. The type is the
// declared one, else the initializer's receiver chain ("=Foo.SYSTEM", see
// Scope.TypeOf) when the initializer is one; "" when unknown.
func (r *resolver) propertyType(name string) (string, *File) {
	var defs []*Def
	if cls := r.site.Scope.Class(); cls != "" {
		defs = r.classMembers(cls, name)
	}
	for _, im := range r.imports {
		if !im.Star && im.Local() == name {
			defs = append(defs, r.importTargets(im, r.site.From, nil)...)
		}
	}
	pkg := ""
	if c := r.site.Current; c != nil {
		pkg = c.Package
	}
	if pkg != "" {
		for _, d := range r.t.named(name) {
			if f := r.t.File(d.Path); d.Container == "" && f != nil && f.Package == pkg && r.inFamily(d) && (r.test || !IsTestPath(d.Path)) {
				defs = append(defs, d)
			}
		}
	}
	for _, d := range defs {
		if d.Kind != grammars.Property {
			continue
		}
		if t := declaredType(r.lang, d); t != "" {
			return t, r.fileOf(d)
		}
		if i := strings.IndexByte(d.Signature, '='); i >= 0 {
			if expr, n := leadingChain(d.Signature[i+1:]); expr != "" && strings.TrimSpace(d.Signature[i+1+n:]) == "" {
				return "=" + expr, r.fileOf(d)
			}
		}
	}
	return "", nil
}

// isImportedName reports whether the completion file explicitly imports name.
func (r *resolver) isImportedName(name string) bool {
	for _, im := range r.imports {
		if !im.Star && im.Local() == name && (im.Name != "" || r.lang == "python") {
			return true
		}
	}
	return false
}

// moduleQualified resolves Python's `m.name` / `a.b.name` where the chain parts is an
// imported module (`import a.b`, `import a.b as m`, `from a import m`); it reports
// whether parts named an imported module (found in the repository or not).
func (r *resolver) moduleQualified(name string, parts []string) bool {
	chain := strings.Join(parts, ".")
	for _, im := range r.imports {
		if im.Star {
			continue
		}
		var files []*File
		switch {
		case im.Name == "" && (im.Alias == chain || im.Alias == "" && im.Module == chain):
			files = r.t.pyModule(im.Module, im.Level, r.site.From)
		case im.Name == "" && im.Alias == "" && strings.HasPrefix(im.Module, chain+"."):
			continue // `import a.b` then `a.name`: a's own module, not b
		case im.Name != "" && im.Local() == chain:
			mod := im.Name
			if im.Module != "" {
				mod = im.Module + "." + im.Name
			}
			files = r.t.pyModule(mod, im.Level, r.site.From)
			if len(files) == 0 {
				continue // `from a import Foo`: a class, not a module
			}
		default:
			continue
		}
		for _, f := range files {
			for i := range f.Defs {
				if d := &f.Defs[i]; d.Name == name && d.Container == "" {
					r.add(d, ViaModule)
				}
			}
		}
		return true
	}
	return false
}

func startsUpper(s string) bool { return s != "" && s[0] >= 'A' && s[0] <= 'Z' }

// isConstantName reports whether s is written like a constant (SYSTEM, MAX_SIZE):
// upper-case letters, digits and underscores, two or more.
func isConstantName(s string) bool {
	if len(s) < 2 || !startsUpper(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

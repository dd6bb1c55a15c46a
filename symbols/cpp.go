package symbols

import "strings"

// cppNamespaceQualified resolves C++'s `ns::name` where ns is not a class of the
// repository (a namespace: the chunker flattens namespaces, so their functions are
// top-level definitions): the top-level definitions of name in the files the
// completion file includes, else by the nearness of their file (the same folder,
// the included files, else the only declaration of the name). It reports whether
// one was found; else the search goes on as for a receiver of unknown type. The
// standard library's std is never the repository's.
func (r *resolver) cppNamespaceQualified(name, q string) bool {
	if q == "" || q == "std" || strings.ContainsAny(q, "().") || len(r.classes(q, nil)) > 0 {
		return false
	}
	top := func(d *Def) bool { return d.Container == "" }
	if r.starImported(name, top) {
		return true
	}
	r.byBareName(name, true, top)
	return len(r.out) > 0
}

// Package kotlin holds Kotlin's text-level rules (see grammars.Rules): the
// length-preserving rewrite ([Rewrite]: line rewrites, then token rewrites) that lets
// the compiled-in Kotlin grammar (grammars.KotlinGrammar) parse Kotlin 2.x, and the
// text outline ([Recovery]) along which the chunker chunks a file whose parse still
// has errors. The spec is grammars.Kotlin; package languages attaches both to it.
package kotlin

import "github.com/repoctx/repoctx/grammars"

// Recovery is the Kotlin spec's Recover: the outline of ktOutline, members wrapped
// in a stand-in class, enum entries in a stand-in enum class.
var Recovery = &grammars.Recovery{
	Outline:      ktOutline,
	MemberPrefix: "class Q{", MemberSuffix: "\n}",
	GapPrefix: "enum class Q{", GapSuffix: "\n}",
}

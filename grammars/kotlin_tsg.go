//go:build kotlin2

package grammars

import "github.com/repoctx/repoctx/grammars/kotlin2"

// KotlinGrammar names the Kotlin grammar compiled in: tree-sitter-grammars/
// tree-sitter-kotlin (package grammars/kotlin2; a build with the tag kotlin2).
const KotlinGrammar = "tsg-kotlin-" + kotlin2.Version

var kotlinLanguage = kotlin2.GetLanguage

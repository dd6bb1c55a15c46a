//go:build !kotlin2

package grammars

import "github.com/smacker/go-tree-sitter/kotlin"

// KotlinGrammar names the Kotlin grammar compiled in: fwcd tree-sitter-kotlin 0.3.8 as
// bundled by smacker/go-tree-sitter (a build without the tag kotlin2).
const KotlinGrammar = "fwcd-kotlin-0.3.8"

var kotlinLanguage = kotlin.GetLanguage

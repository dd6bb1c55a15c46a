// Package kotlin2 is the Kotlin grammar of tree-sitter-grammars/tree-sitter-kotlin
// (npm package @tree-sitter-grammars/tree-sitter-kotlin, version [Version], MIT
// licence), compiled through cgo when the build tag kotlin2 is set. Its generated C
// source (src/parser.c, src/scanner.c and src/tree_sitter/*.h, about 22 MB) is not
// committed: `make grammar` runs `go run ./grammars/kotlin2/install`, which downloads
// the package tarball from the npm registry, checks its SHA-256 and extracts the source
// into the gitignored folder src/ next to this file (Go alone is needed).
//
// Without the tag, [Available] is false and [GetLanguage] returns nil: a plain
// `go build` needs no C source beyond the modules' and package grammars uses the
// bundled fwcd 0.3.8 grammar of github.com/smacker/go-tree-sitter.
//
// The C symbols are renamed (tree_sitter_kotlin becomes tree_sitter_kotlin2, and the
// external scanner's five functions likewise), so that this grammar links next to
// smacker's, which exports the same names.
package kotlin2

// Version is the npm package version that the install command puts into src/.
const Version = "1.1.0"
